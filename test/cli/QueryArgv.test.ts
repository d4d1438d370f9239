// Start-up (docs/startup.md#start-up-of-a-query): which `parley query` command lines the fast
// path takes, that it reads them as effect/cli does, and that it declines everything effect/cli
// must answer.
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import { BOOLEAN, DECLINED, parse, VALUED } from "../../src/cli/QueryArgv.ts"
import { bundle } from "../support/Cli.ts"

const plain = {
  storage: undefined,
  config: undefined,
  message: "hi",
  target: { _tag: "MostRecent" },
  model: undefined,
  script: undefined,
  continueTurn: false,
  discardTurn: false,
  detachedPolicy: undefined,
  format: "text",
  persistOnSigpipe: false
}

describe("QueryArgv.parse", () => {
  it("reads every flag it takes, the root's before or after, both value forms", () => {
    expect(parse(["query", "hi"])).toStrictEqual(plain)
    expect(parse(["query"])).toStrictEqual({ ...plain, message: undefined })
    expect(
      parse([
        "--storage",
        "s",
        "query",
        "--new",
        "hi",
        "--model=scripted",
        "--script",
        "steps.json",
        "--detached-policy",
        "deny",
        "--format=jsonl",
        "--persist-on-sigpipe",
        "--config",
        "p.toml"
      ])
    ).toStrictEqual({
      ...plain,
      storage: "s",
      config: "p.toml",
      target: { _tag: "New" },
      model: "scripted",
      script: "steps.json",
      detachedPolicy: "deny",
      format: "jsonl",
      persistOnSigpipe: true
    })
    expect(parse(["query", "--continue-turn", "--id", "jp-c17738399468"])).toStrictEqual({
      ...plain,
      message: undefined,
      target: { _tag: "Id", id: "17738399468" },
      continueTurn: true
    })
    expect(parse(["--config=p.toml", "query", "--discard-turn", "--storage=s"])).toStrictEqual({
      ...plain,
      storage: "s",
      config: "p.toml",
      message: undefined,
      discardTurn: true
    })
  })

  it("declines what effect/cli must answer: help, unknown, repeated or conflicting flags, refused values, a bad id, --detach, --compact, other commands", () => {
    for (const argv of [
      [],
      ["query", "--help"],
      ["query", "-h"],
      ["query", "hi", "--neww"],
      ["query", "hi", "--new", "--new"],
      ["query", "hi", "--new", "false"],
      ["query", "hi", "--new=true"],
      ["query", "hi", "--model"],
      ["query", "hi", "--format", "yaml"],
      ["query", "hi", "--detached-policy", "later"],
      ["query", "hi", "--model", "a", "--model", "b"],
      ["query", "hi", "--script", "--new"],
      ["query", "hi", "there"],
      ["query", "--", "-x"],
      ["query", "hi", "--log-level", "debug"],
      ["query", "hi", "--new", "--id", "17738399468"],
      ["query", "--continue-turn", "--discard-turn"],
      ["query", "--id", "nope"],
      ["query", "--id", ""],
      ["query", "hi", "--detach"],
      ["query", "hi", "--compact"],
      ["query", "hi", "-k"],
      ["--storage", "a", "query", "hi", "--storage", "b"],
      ["--storage", "query", "hi"],
      ["--new", "query", "hi"],
      ["ask", "query"],
      ["conversation", "ls"],
      ["--version"]
    ])
      expect(parse(argv), argv.join(" ")).toBeUndefined()
  })

  it("knows every flag of the command and the root (as `parley query --help` lists them): read, or declined", () => {
    const help = spawnSync(process.execPath, [bundle, "query", "--help"], { encoding: "utf8", timeout: 60_000 })
    expect(help.status, help.stderr).toBe(0)
    const builtIn = new Set(["--help", "--version", "--completions", "--log-level", "--wizard"])
    const listed = new Set(help.stdout.match(/--[a-z][a-z-]*/g)!.filter((f) => !builtIn.has(f)))
    expect([...listed].sort()).toStrictEqual(
      [...Object.keys(VALUED), ...BOOLEAN, ...DECLINED].map((f) => `--${f}`).sort()
    )
  })
})
