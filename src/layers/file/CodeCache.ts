/**
 * How the built `parley` runs its fast paths' bundles (`dist/parley-*.cjs`:
 * `conversation ls` / `print`, a plain `query`, `ask`, `conversation attach`)
 * with V8's code cache taken after the run, not before it
 * (docs/benchmarks.md#the-code-cache-of-a-fast-path).
 *
 * Why: Node's compile cache (`CompileCache.ts`) stores what V8 compiled
 * when it compiled a module, and V8 compiles a function only when it is
 * first called: a cached chunk still has every function it runs compiled
 * again at each start, a third of a scripted turn's instructions. A script
 * compiled with `vm.Script` can hand V8 a cache made at the end of a run
 * (`createCachedData` then holds every function that ran), so the next run
 * compiles almost nothing. A fast path's bundle is one CommonJS script for
 * this: the same modules, evaluated in the same order, its lazily loaded
 * parts behind esbuild's lazy initializers instead of chunk files.
 *
 * The cache is the user's private compile-cache directory
 * (`CompileCache.ready`: 0700, owned by the user, no symlink), since V8
 * runs what it reads there. Each file is named by the bundle, a profile
 * (the command: a `ls` and a `print` run different functions of the same
 * bundle), the bundle's content hash (the build's last line,
 * `//parley-bundle <hash>`: V8 checks only the source's length), Node's
 * version and options. A run writes one when it found none or V8 refused it (another
 * Node's flags), and only when it ends with exit code 0 (a failure runs
 * little of the command, so its cache would hold little), by a private
 * temporary file renamed into place; the same command's files of other
 * builds of the bundle go then. Without a directory, the bundle runs without a cache.
 *
 * @example
 * ```ts
 * import * as CodeCache from "parley/layers/file/CodeCache"
 * const exported = CodeCache.load("/opt/parley/dist/parley-reading.cjs", "Ls-text", "/home/ada/.cache/parley/compile-cache")
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import * as vm from "node:vm"
import { FILE_MODE } from "../../domain/storage/PrivateDir.ts"

/** The line the build puts last in a bundle: its content hash. */
const KEY = /\n\/\/parley-bundle ([0-9a-f]{16,64})\n$/

/** The content hash a bundle's last line names; `undefined` for a file the build did not mark. */
export const keyOf = (source: string): string | undefined => KEY.exec(source.slice(-100))?.[1]

/** What every cache file of `bundle` (a file name) run as `profile` is named first. */
const prefixOf = (bundle: string, profile: string): string => `${bundle}~${profile.replace(/[^A-Za-z0-9_-]/g, "_")}~`

/** The cache file of `bundle` run as `profile`, built as `key`, on Node `node` with `flags`, in `dir`. */
export const cacheFile = (
  dir: string,
  bundle: string,
  profile: string,
  key: string,
  node: string,
  flags: string
): string => path.join(dir, `${prefixOf(bundle, profile)}${key}~${node}~${hash(flags)}.v8`)

/**
 * FNV-1a of `text`, in hex: V8 refuses a cache made under other flags, so each set of Node's options
 * (`--max-old-space-size`, …) has a file of its own rather than each run rewriting the other's.
 */
const hash = (text: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(16)
}

/** The Node options of this process, as they bear on V8's flags. */
const flagsOf = (): string => `${process.execArgv.join("\0")}\0${process.env["NODE_OPTIONS"] ?? ""}`

// A CommonJS module's wrapper, as Node's own loader makes it (on the first line: a stack trace's lines are the
// file's); the newline ends the key line's comment.
const HEAD = "(function (exports, require, module, __filename, __dirname) {"
const TAIL = "\n})"

type Wrapper = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  file: string,
  dir: string
) => void

/** Writes `data` as `file` through a private temporary file; the files of `prefix` for other builds than `key` go. */
const save = (file: string, prefix: string, key: string, data: Buffer): void => {
  const temporary = `${file}.${process.pid}.tmp`
  try {
    fs.writeFileSync(temporary, data, { mode: FILE_MODE, flag: "wx" })
    fs.renameSync(temporary, file)
    const dir = path.dirname(file)
    for (const other of fs.readdirSync(dir))
      if (other.startsWith(prefix) && !other.startsWith(`${prefix}${key}~`) && other.endsWith(".v8"))
        fs.rmSync(path.join(dir, other), { force: true })
  } catch {
    // Only start-up is slower without it.
    fs.rmSync(temporary, { force: true })
  }
}

/**
 * Runs the CommonJS bundle `file` and returns its exports; compiled with the
 * cache of `profile` in `dir` when there is one, and writing it at a
 * successful exit when there was none.
 */
export const load = (file: string, profile: string, dir: string | undefined): unknown => {
  const source = fs.readFileSync(file, "utf8")
  const key = keyOf(source)
  const bundle = path.basename(file)
  const cache =
    dir === undefined || key === undefined
      ? undefined
      : cacheFile(dir, bundle, profile, key, process.version, flagsOf())
  let cachedData: Buffer | undefined
  if (cache !== undefined)
    try {
      cachedData = fs.readFileSync(cache)
    } catch {
      // None yet: this run makes it.
    }
  const script = new vm.Script(HEAD + source + TAIL, { filename: file, cachedData })
  if (cache !== undefined && (cachedData === undefined || script.cachedDataRejected === true))
    process.once("exit", (code) => {
      if (code === 0 && key !== undefined) save(cache, prefixOf(bundle, profile), key, script.createCachedData())
    })
  const module = { exports: {} }
  // A function expression is what the script evaluates to (HEAD and TAIL above); vm types its value `any`.
  const wrapper: Wrapper = script.runInThisContext()
  wrapper(module.exports, createRequire(file), module, file, path.dirname(file))
  return module.exports
}
