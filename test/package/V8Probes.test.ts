// The CLI build writes V8's answers into effect's two load-time probes of how the engine
// writes a stack trace (scripts/build.mjs, v8Probes): each probe formats a stack, which in a
// bundle run from a code cache makes V8 recompile for source positions (~4 ms of a start-up).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot } from "../support/Fixtures.ts"

const dist = path.join(repoRoot, "dist")

/** The files of the current build: the fast paths' scripts, and the command tree's entry with every chunk it reaches. */
const builtFiles = (): Array<string> => {
  const closures = JSON.parse(fs.readFileSync(path.join(dist, "parley.static.json"), "utf8")) as Record<string, unknown>
  const files = new Set(Object.keys(closures))
  const queue = ["parley-main.mjs"]
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (files.has(file) && file !== "parley-main.mjs") continue
    files.add(file)
    for (const [, next] of fs.readFileSync(path.join(dist, file), "utf8").matchAll(/["']\.\/([\w.-]+\.mjs)["']/g))
      if (next !== undefined && !files.has(next)) queue.push(next)
  }
  return [...files]
}

describe("effect's stack-trace probes in the built CLI", () => {
  it("are answered at build time: no built file makes the probes' Errors as it loads", () => {
    const files = builtFiles()
    expect(files.length).toBeGreaterThan(10)
    const probing = files.filter((f) =>
      /~effect\/Effect\/stackProbe|~effect\/Utils\/internal/.test(fs.readFileSync(path.join(dist, f), "utf8"))
    )
    expect(probing).toStrictEqual([])
  })

  it("which are V8's own answers: the probes, run as effect runs them, give the same", () => {
    const probe = `
      const marker = "~effect/Effect/stackProbe"
      const p = { [marker]: function stackProbe() { return new Error() } }
      Error.stackTraceLimit = 1
      const marks = p[marker]().stack.includes("[as " + marker + "]")
      const I = "~effect/Utils/internal"
      const s = { [I]: (body) => body() }
      Error.stackTraceLimit = 2
      const named = s[I](() => new Error()).stack.includes(I)
      process.stdout.write(JSON.stringify([marks, named]))`
    const out = spawnSync(process.execPath, ["-e", probe], { encoding: "utf8", timeout: 20_000 })
    expect(JSON.parse(out.stdout)).toStrictEqual([true, true])
  })
})
