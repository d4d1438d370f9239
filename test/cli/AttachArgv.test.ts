// Start-up (docs/decisions.md#fast-start): which `parley conversation attach` command lines the
// fast path takes, that it reads them as effect/cli does, and that it declines everything
// effect/cli must answer.
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import { parse, VALUED } from "../../src/cli/conversation/AttachArgv.ts"
import { bundle } from "../support/Cli.ts"

describe("AttachArgv.parse", () => {
  it("reads the id, --tail and the root's flags before or after, in both value forms", () => {
    expect(parse(["conversation", "attach"])).toStrictEqual({
      storage: undefined,
      config: undefined,
      id: undefined,
      tail: undefined
    })
    expect(
      parse(["--storage", "s", "conversation", "attach", "jp-c17738399468", "--tail=0", "--config", "p.toml"])
    ).toStrictEqual({ storage: "s", config: "p.toml", id: "17738399468", tail: 0 })
    expect(parse(["--config=p.toml", "conversation", "attach", "--tail", "12", "--storage=s"])).toStrictEqual({
      storage: "s",
      config: "p.toml",
      id: undefined,
      tail: 12
    })
  })

  it("declines what effect/cli must answer: help, unknown or repeated flags, refused values, a bad id, other commands", () => {
    for (const argv of [
      [],
      ["conversation", "attach", "--help"],
      ["conversation", "attach", "-h"],
      ["conversation", "attach", "--neww"],
      ["conversation", "attach", "--tail"],
      ["conversation", "attach", "--tail", "-1"],
      ["conversation", "attach", "--tail", "many"],
      ["conversation", "attach", "--tail=1.5"],
      ["conversation", "attach", "--tail", "1", "--tail", "2"],
      ["conversation", "attach", "nope"],
      ["conversation", "attach", "17738399468", "17738399469"],
      ["conversation", "attach", "--", "17738399468"],
      ["conversation", "attach", "--log-level", "debug"],
      ["--storage", "a", "conversation", "attach", "--storage", "b"],
      ["--storage", "conversation", "attach"],
      ["--tail", "1", "conversation", "attach"],
      ["query", "conversation", "attach"],
      ["conversation", "ls"],
      ["conversation", "print", "17738399468"],
      ["--version"]
    ])
      expect(parse(argv), argv.join(" ")).toBeUndefined()
  })

  it("knows exactly the flags of the command and the root (as `parley conversation attach --help` lists them)", () => {
    const help = spawnSync(process.execPath, [bundle, "conversation", "attach", "--help"], {
      encoding: "utf8",
      timeout: 60_000
    })
    expect(help.status, help.stderr).toBe(0)
    const builtIn = new Set(["--help", "--version", "--completions", "--log-level", "--wizard"])
    const listed = new Set(help.stdout.match(/--[a-z][a-z-]*/g)!.filter((f) => !builtIn.has(f)))
    expect([...listed].sort()).toStrictEqual(VALUED.map((f) => `--${f}`).sort())
  })
})
