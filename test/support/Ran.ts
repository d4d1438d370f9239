/**
 * Which modules of the build a `parley` process ran, read from V8's coverage
 * of it (`NODE_V8_COVERAGE`): every module of an ES module file of `dist/`
 * it loaded (`dist/parley.chunks.json` says which modules each file holds),
 * and of a fast path's CommonJS script (`dist/parley-*.cjs`, one file holding
 * a whole path) the modules one of whose functions ran, found through the
 * script's source map (a vendor's script, which has none, counts whole). A module of such a script that is never imported never
 * runs: its lazy initializer (esbuild's) is a function that was not called.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { HEAD } from "../../src/layers/file/CodeCache.ts"
import { repoRoot } from "./Fixtures.ts"

const dist = path.join(repoRoot, "dist")

/** What `dist/parley.chunks.json` says each built file holds. */
const holds = (): Record<string, Array<string>> =>
  JSON.parse(fs.readFileSync(path.join(dist, "parley.chunks.json"), "utf8")) as Record<string, Array<string>>

/** What `dist/parley.static.json` says each file built whole evaluates as it loads (its static imports). */
const statics = (): Record<string, Array<string>> =>
  JSON.parse(fs.readFileSync(path.join(dist, "parley.static.json"), "utf8")) as Record<string, Array<string>>

interface Coverage {
  readonly result: ReadonlyArray<{
    readonly url: string
    readonly functions: ReadonlyArray<{
      readonly ranges: ReadonlyArray<{ readonly startOffset: number; readonly count: number }>
    }>
  }>
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** A source map's segments, per generated line: [generated column, source index], in column order. */
const decode = (mappings: string): Array<Array<readonly [number, number]>> => {
  const lines: Array<Array<readonly [number, number]>> = []
  let source = 0
  for (const line of mappings.split(";")) {
    const segments: Array<readonly [number, number]> = []
    let column = 0
    for (const segment of line.split(",")) {
      if (segment === "") continue
      const fields: Array<number> = []
      let value = 0
      let shift = 0
      for (const ch of segment) {
        const digit = BASE64.indexOf(ch)
        value += (digit & 31) << shift
        if (digit & 32) shift += 5
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1)
          value = 0
          shift = 0
        }
      }
      column += fields[0]!
      if (fields.length >= 4) {
        source += fields[1]!
        segments.push([column, source])
      }
    }
    lines.push(segments)
  }
  return lines
}

/**
 * A source map's source as the chunk map names it, from the repository's root: the map was written
 * in a scratch directory of dist/, and a package that ships its own source maps (effect) is named by
 * its TypeScript source there, by its built file in the chunk map.
 */
const moduleOf = (source: string): string =>
  source.replace(/^(\.\.\/)+/, "").replace(/^(node_modules\/(?:@[^/]+\/)?[^/]+)\/src\/(.+)\.ts$/, "$1/dist/$2.js")

/** The sources of `file` (a file of dist/ with its source map) whose functions ran, from their start offsets. */
const sourcesRan = (file: string, starts: ReadonlyArray<number>): Array<string> => {
  const code = fs.readFileSync(file, "utf8")
  // A fast path's script (its last line the build's key) runs in that wrapper; an ES module as it is.
  const head = code.includes("\n//parley-bundle ") ? HEAD.length : 0
  const map = JSON.parse(fs.readFileSync(`${file}.map`, "utf8")) as { sources: Array<string>; mappings: string }
  const lines = decode(map.mappings)
  const lineStarts = [0]
  for (let i = code.indexOf("\n"); i >= 0; i = code.indexOf("\n", i + 1)) lineStarts.push(i + 1)
  const ran = new Set<string>()
  for (const start of starts) {
    const offset = start - head
    if (offset < 0) continue
    let line = lineStarts.findLastIndex((s) => s <= offset)
    let column = offset - lineStarts[line]!
    // The first mapping at or after the function's start: a module's lazy initializer begins with
    // the wrapper's own code, and its first mapped token is the module's first statement.
    for (; line < lines.length; line++, column = 0) {
      const found = lines[line]!.find(([c]) => c >= column)
      if (found !== undefined) {
        ran.add(moduleOf(map.sources[found[1]]!))
        break
      }
    }
  }
  return [...ran]
}

/** The built files a process loaded and the modules (paths from the repository's root) it ran, from the coverage in `coverageDir`. */
export const ranOf = (coverageDir: string): { readonly files: Array<string>; readonly modules: Array<string> } => {
  const chunks = holds()
  const atLoad = statics()
  const files: Array<string> = []
  const modules = new Set<string>()
  for (const name of fs.existsSync(coverageDir) ? fs.readdirSync(coverageDir) : []) {
    const coverage = JSON.parse(fs.readFileSync(path.join(coverageDir, name), "utf8")) as Coverage
    for (const script of coverage.result) {
      if (!script.url.startsWith(`file://${dist}/`)) continue
      const file = decodeURIComponent(new URL(script.url).pathname)
      const base = path.basename(file)
      files.push(base)
      if (fs.existsSync(`${file}.map`)) {
        // What it evaluates as it loads (esbuild puts that code at the file's top level, in no function of its
        // own), then what it ran later: the modules one of whose functions ran.
        for (const m of atLoad[base] ?? [`${base}: not in parley.static.json`]) modules.add(m)
        const starts = script.functions.filter((f) => f.ranges[0]!.count > 0).map((f) => f.ranges[0]!.startOffset)
        for (const m of sourcesRan(file, starts)) modules.add(m)
      } else for (const m of chunks[base] ?? [`${base}: not in parley.chunks.json`]) modules.add(m)
    }
  }
  return { files, modules: [...modules] }
}
