// The CLI build writes V8's answers into effect's two load-time probes of how the engine
// writes a stack trace (scripts/v8Probes.mjs): each probe formats a stack, which in a bundle
// run from a code cache makes V8 recompile for source positions (~4 ms of a start-up).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot } from "../support/Fixtures.ts"

// @ts-expect-error: a plain .mjs build script, no declarations (scripts/ is not TypeScript)
const { V8_PROBES } = (await import("../../scripts/v8Probes.mjs")) as {
  V8_PROBES: ReadonlyArray<{ readonly file: string; readonly from: RegExp; readonly to: string }>
}

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

/** Runs `code` in a Node of its own, returning what it wrote as JSON. */
const inNode = (code: string): unknown => {
  const out = spawnSync(process.execPath, ["-e", code], { encoding: "utf8", timeout: 20_000 })
  expect(out.status, out.stderr).toBe(0)
  return JSON.parse(out.stdout)
}

describe("effect's stack-trace probes in the built CLI", () => {
  it("are answered at build time: no built file probes as it loads, and every internalCall is the named one", () => {
    const files = builtFiles()
    expect(files.length).toBeGreaterThan(10)
    const code = (f: string) => fs.readFileSync(path.join(dist, f), "utf8")
    expect(files.filter((f) => code(f).includes("~effect/Effect/stackProbe"))).toStrictEqual([])
    // Effect's probe names the marker once and indexes two objects with it; the answer written in, one.
    const named = /([\w$]+)="~effect\/Utils\/internal",[\w$]+=\{\[\1\]:([\w$]+)=>\2\(\)\}\[\1\]/g
    const with_ = files.filter((f) => code(f).includes('"~effect/Utils/internal"'))
    expect(with_.length).toBeGreaterThan(0)
    expect(
      with_.filter((f) => code(f).split('"~effect/Utils/internal"').length - 1 !== [...code(f).matchAll(named)].length)
    ).toStrictEqual([])
  })

  it("are V8's own answers, and the call written in keeps the frame name effect's stack cleaner cuts at", () => {
    const probes = `
      const marker = "~effect/Effect/stackProbe"
      const p = { [marker]: function stackProbe() { return new Error() } }
      Error.stackTraceLimit = 1
      const marks = p[marker]().stack.includes("[as " + marker + "]")
      const I = "~effect/Utils/internal"
      const s = { [I]: (body) => body() }
      Error.stackTraceLimit = 2
      const named = s[I](() => new Error()).stack.includes(I)
      process.stdout.write(JSON.stringify([marks, named]))`
    expect(inNode(probes)).toStrictEqual([true, true])
    const written = V8_PROBES.find((p) => p.file.endsWith("Utils.js"))!.to.replace("export ", "")
    const framed = `${written}
      Error.stackTraceLimit = 10
      const stack = internalCall(() => new Error()).stack
      process.stdout.write(JSON.stringify([internalCall.name, /~effect\\/(?:Effect|Utils)/.test(stack)]))`
    expect(inNode(framed)).toStrictEqual(["~effect/Utils/internal", true])
    expect(V8_PROBES.find((p) => p.file.endsWith("effect.js"))!.to).toBe("const continuationMarksStack = true;")
  })
})
