import { readFileSync } from "node:fs"
import * as path from "node:path"

// An esbuild plugin of the CLI build (scripts/build.mjs), in a module of its own so a test
// (test/package/V8Probes.test.ts) can read what it writes.
//
// Two of effect's modules ask the engine, as they load, how it writes a stack trace: each makes
// an Error and reads its `stack` (internal/effect.js's `continuationMarksStack`, Utils.js's
// `internalCall`). In a bundle run from a code cache that costs ~4 ms the first time (of a
// scripted query's ~90): V8 compiled the bundle without source positions and recompiles to
// find them for the first stack it formats. Node is always V8, whose answers are known: a
// stored continuation's property name shows in a stack trace (true), and so does the name of
// the plain call, which must stay `~effect/Utils/internal`: effect's stack cleaner cuts a
// trace at that frame. They are written in, and a pattern not found fails the build.
// (Start-up of a query, docs/startup.md#where-a-querys-time-goes-now.)
const sep = path.sep
export const V8_PROBES = [
  {
    file: `${sep}effect${sep}dist${sep}internal${sep}effect.js`,
    from: /const continuationMarksStack = \/\*#__PURE__\*\/\(\(\) => \{[\s\S]*?\n\}\)\(\);/,
    to: "const continuationMarksStack = true;"
  },
  {
    file: `${sep}effect${sep}dist${sep}Utils.js`,
    from: /export const internalCall = \/\*#__PURE__\*\/pickInternalCall\(\);/,
    // A computed key, as effect's own: esbuild folds a literal one (`{ "k": f }["k"]`) into `f`, nameless.
    to: 'const internalCallName = "~effect/Utils/internal"; export const internalCall = { [internalCallName]: (body) => body() }[internalCallName];'
  }
]

export const v8Probes = {
  name: "v8-probes",
  setup(b) {
    b.onLoad({ filter: /[\\/]effect[\\/]dist[\\/](internal[\\/]effect|Utils)\.js$/ }, (args) => {
      const probe = V8_PROBES.find((p) => args.path.endsWith(p.file))
      if (probe === undefined) return undefined
      const code = readFileSync(args.path, "utf8")
      if (!probe.from.test(code)) throw new Error(`v8-probes: ${args.path} no longer has ${probe.from}`)
      return { contents: code.replace(probe.from, probe.to), loader: "js" }
    })
  }
}
