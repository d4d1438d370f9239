/**
 * The executable's `--version` fast path (cold start; docs/benchmarks.md) answers
 * without loading the command tree; it must print exactly what the command
 * tree prints, in a pipe and on a terminal (where effect/cli colours it).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "./support/Cli.ts"
import { repoRoot, tempDir } from "./support/Fixtures.ts"

const version = (JSON.parse(fs.readFileSync(`${repoRoot}/package.json`, "utf8")) as { version: string }).version

/** `script` from util-linux runs a command on a pseudo-terminal. */
const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0

/** The bytes `parley <args>` writes on a terminal (the pty turns `\n` into `\r\n`). */
const onTerminal = (args: ReadonlyArray<string>, env: Record<string, string> = {}): string => {
  const command = [process.execPath, binary, ...args].map((w) => `'${w}'`).join(" ")
  const r = spawnSync("script", ["-q", "-e", "-c", command, "/dev/null"], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "", ...env },
    timeout: 60_000
  })
  expect(r.status).toBe(0)
  return r.stdout
}

describe("parley --version", () => {
  it("alone, or as -v, prints what the command tree prints with other flags around it", () => {
    const storage = tempDir()
    const full = runParley(["--storage", storage, "--version"])
    expect(full).toStrictEqual({ code: 0, stdout: `parley v${version}\n`, stderr: "" })
    expect(runParley(["--version"])).toStrictEqual(full)
    expect(runParley(["-v"])).toStrictEqual(full)
    // Nothing was created by asking for the version.
    expect(fs.readdirSync(storage)).toStrictEqual([])
    fs.rmSync(storage, { recursive: true, force: true })
  })

  it.skipIf(!hasScript)("on a terminal: the same colours as the command tree, and none with NO_COLOR", () => {
    const storage = tempDir()
    const full = onTerminal(["--storage", storage, "--version"])
    expect(full).toContain("\x1b[1m") // effect/cli colours it on a terminal
    expect(onTerminal(["--version"])).toBe(full)
    expect(onTerminal(["-v"])).toBe(full)
    const plain = onTerminal(["--storage", storage, "--version"], { NO_COLOR: "1" })
    expect(plain).toBe(`parley v${version}\r\n`)
    expect(onTerminal(["--version"], { NO_COLOR: "1" })).toBe(plain)
    fs.rmSync(storage, { recursive: true, force: true })
  })
})
