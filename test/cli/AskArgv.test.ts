// Start-up (docs/decisions.md#fast-start): which `parley ask` command lines the fast path takes,
// that it reads them as effect/cli does, and that it declines everything effect/cli must answer.
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"
import { BOOLEAN, parse, VALUED } from "../../src/cli/AskArgv.ts"
import { bundle } from "../support/Cli.ts"

const plain = {
  text: Option.some("Deploy?"),
  type: "boolean",
  option: [],
  default: Option.none(),
  context: Option.none(),
  key: Option.none(),
  conversation: Option.none(),
  new: false,
  source: Option.none(),
  timeout: Option.none(),
  onTimeout: "fail",
  format: "text",
  claudeCodeHook: false
}

describe("AskArgv.parse", () => {
  it("reads every flag, the root's before or after, both value forms, --option repeated", () => {
    expect(parse(["ask", "Deploy?"])).toStrictEqual({ storage: undefined, config: undefined, flags: plain })
    expect(
      parse([
        "--storage",
        "s",
        "ask",
        "--type=select",
        "Region?",
        "--option",
        "eu",
        "--option=us",
        "--default",
        "eu",
        "--context",
        "c",
        "--key=k",
        "--conversation",
        "17738399468",
        "--source",
        "deploy.sh",
        "--timeout",
        "10m",
        "--on-timeout",
        "default",
        "--format",
        "json",
        "--config",
        "p.toml"
      ])
    ).toStrictEqual({
      storage: "s",
      config: "p.toml",
      flags: {
        ...plain,
        text: Option.some("Region?"),
        type: "select",
        option: ["eu", "us"],
        default: Option.some("eu"),
        context: Option.some("c"),
        key: Option.some("k"),
        conversation: Option.some("17738399468"),
        source: Option.some("deploy.sh"),
        timeout: Option.some("10m"),
        onTimeout: "default",
        format: "json"
      }
    })
    expect(parse(["ask", "--new", "Deploy?", "--claude-code-hook"])?.flags).toStrictEqual({
      ...plain,
      new: true,
      claudeCodeHook: true
    })
    // No question: the command's own usage error, as on the full command line.
    expect(parse(["ask"])?.flags.text).toStrictEqual(Option.none())
  })

  it("declines what effect/cli must answer: help, unknown or repeated flags, missing or refused values, other commands", () => {
    for (const argv of [
      [],
      ["ask", "--help"],
      ["ask", "-h"],
      ["ask", "x", "--neww"],
      ["ask", "x", "--new", "--new"],
      ["ask", "x", "--new", "false"],
      ["ask", "x", "--new=true"],
      ["ask", "x", "--type"],
      ["ask", "x", "--type", "number"],
      ["ask", "x", "--format", "yaml"],
      ["ask", "x", "--on-timeout", "later"],
      ["ask", "x", "--key", "a", "--key", "b"],
      ["ask", "x", "--default", "--new"],
      ["ask", "x", "y"],
      ["ask", "--", "-x"],
      ["ask", "x", "--log-level", "debug"],
      ["--storage", "a", "ask", "x", "--storage", "b"],
      ["--storage", "ask", "x"],
      ["--type", "text", "ask", "x"],
      ["query", "ask"],
      ["conversation", "ls"],
      ["--version"]
    ])
      expect(parse(argv), argv.join(" ")).toBeUndefined()
  })

  it("knows exactly the flags of the command and the root (as `parley ask --help` lists them)", () => {
    const help = spawnSync(process.execPath, [bundle, "ask", "--help"], { encoding: "utf8", timeout: 60_000 })
    expect(help.status, help.stderr).toBe(0)
    const builtIn = new Set(["--help", "--version", "--completions", "--log-level", "--wizard"])
    const listed = new Set(help.stdout.match(/--[a-z][a-z-]*/g)!.filter((f) => !builtIn.has(f)))
    expect([...listed].sort()).toStrictEqual([...Object.keys(VALUED), ...BOOLEAN].map((f) => `--${f}`).sort())
  })
})
