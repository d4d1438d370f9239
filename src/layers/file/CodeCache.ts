/**
 * How the built `parley` runs its fast paths' bundles (`dist/parley-*.cjs`:
 * `conversation ls` / `print`, a plain `query`, `ask`, `conversation attach`)
 * with V8's code cache taken after the run, not before it
 * (docs/startup.md#the-code-cache-of-a-fast-path).
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
 * (`CompileCache.ready`: 0700, owned by the user, no symlink, nothing above
 * it another user could rename), since V8 runs what it reads there; a file
 * in it is read only when it is a plain file of the user's that nobody else
 * can write. Each file is named by the bundle, a profile (the command: a
 * `ls` and a `print` run different functions of the same bundle), the
 * build (the bundle's content hash, its last line `//parley-bundle <hash>`,
 * with its file's size, time and inode, for an edit in place: V8 checks
 * only the source's length), Node's version and architecture, and its
 * options (a preloaded module's path aside). V8 checks no checksum of a code cache in a release
 * build, and a damaged one aborts the process: a run that died in its first
 * seconds with a cache has it removed by the next run (`guard`).
 *
 * A run writes its cache when it found none, or none V8 took (another
 * Node's flags), and only when it succeeds or is ended by a signal it
 * handles (a failure runs little of the command, so its cache would hold
 * little). The first such run decides what later ones find compiled (an
 * `ls` of an empty storage, a `print` cut short by `| head`): taking it
 * again now and then cost an exit 10 ms or more (an `ask`'s p99).
 * The file is written privately, synced, and renamed into place; of the same
 * command's files (of other builds, Node versions or options) the four newest
 * stay. Without a directory, the bundle runs without a cache.
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

// Node's own options, which V8 never sees: a preloaded module's path must not make a cache of its own.
const LOADER_OPTION = /^(--require|-r|--import|--loader|--experimental-loader|--env-file|--env-file-if-exists)(=|$)/

/** The options of this process that may bear on V8's flags: Node's command line and `NODE_OPTIONS`, its loaders left out. */
export const flagsOf = (execArgv: ReadonlyArray<string>, nodeOptions: string | undefined): string => {
  const words = [...execArgv, ...(nodeOptions ?? "").split(/\s+/).filter((w) => w !== "")]
  const kept: Array<string> = []
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (!LOADER_OPTION.test(word)) kept.push(word)
    else if (!word.includes("=")) i++
  }
  return kept.join("\0")
}

/**
 * Whether process `pid` is another process still running (or its id is taken again: the same answer).
 * This process's own pid is another's that died before it: in a container every run may be pid 1.
 */
const alive = (pid: number): boolean => {
  if (pid === process.pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "EPERM"
  }
}

/**
 * Keeps `cache` from crashing run after run. V8 checks no checksum of a code cache in a release
 * build, and a damaged one (a bit flipped on disk) aborts the process, as it deserializes it or as
 * a damaged function first runs. So a run marks that it reads the cache (`<cache>.<pid>.run`,
 * {@link markUse}) for its first seconds ({@link MARKED_MS}) and until its exit; a mark left by a
 * process that is gone makes the next run remove the cache and run without it, writing a new one at
 * its end. A mark is also left when the script throws as it is evaluated. A long run killed later
 * (an `attach` ended with kill -9) leaves none; one killed sooner costs the next run its cache. A
 * checksum of the file would cost more at each start than the listing's other work (1.8 ms for
 * `ls`'s 443 KB in JavaScript; node:zlib's crc32 takes 2 ms to load).
 */
const guard = (cache: string): boolean => {
  const dir = path.dirname(cache)
  const name = path.basename(cache)
  let sound = true
  for (const f of fs.readdirSync(dir)) {
    const left = leftover(f)
    if (left?.cache !== name || left.kind !== "run" || alive(left.pid)) continue
    sound = false
    fs.rmSync(path.join(dir, f), { force: true })
  }
  if (!sound) fs.rmSync(cache, { force: true })
  return sound
}

/** A mark ({@link markUse}) or a temporary file ({@link save}) by its name: the cache it is of, its process, which. */
const leftover = (
  name: string
): { readonly cache: string; readonly pid: number; readonly kind: string } | undefined => {
  const left = /^(.+\.v8)\.(\d+)\.(run|tmp)$/.exec(name)
  return left === null ? undefined : { cache: left[1]!, pid: Number(left[2]), kind: left[3]! }
}

// How long a run's mark stays at least (unless it exits first): a short command's whole run (`ls`,
// `print`, a scripted turn), where most of a cache's functions first run.
const MARKED_MS = 2_000

/**
 * Marks that this process reads `cache` ({@link guard}). The returned function is called once the
 * script is evaluated: the mark then goes at the process's exit or after {@link MARKED_MS}, whichever
 * comes first (a timer that keeps no process alive).
 */
const markUse = (cache: string): (() => void) => {
  const mark = `${cache}.${process.pid}.run`
  try {
    fs.writeFileSync(mark, "", { mode: FILE_MODE })
  } catch {
    // Unmarked: a damaged cache would then crash runs until it is removed by hand, as without the guard.
    return () => undefined
  }
  const unmark = () => fs.rmSync(mark, { force: true })
  return () => {
    process.once("exit", unmark)
    setTimeout(unmark, MARKED_MS).unref()
  }
}

/**
 * A CommonJS module's wrapper, as Node's own loader makes it (on the first line: a stack trace's lines are the
 * file's; V8's coverage offsets count it); the newline of `TAIL` ends the key line's comment.
 */
export const HEAD = "(function (exports, require, module, __filename, __dirname) {"
const TAIL = "\n})"

type Wrapper = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  file: string,
  dir: string
) => void

// How many cache files of one command are kept (of other builds, Node versions or options): two
// installs run in turn (a global one and an `npx` one) each keep theirs, and old builds' go.
const KEEP = 4

/** Removes the files of `prefix` in `dir` but the `KEEP` newest. */
const prune = (dir: string, prefix: string): void => {
  const names = fs.readdirSync(dir)
  const files = names
    .filter((f) => f.startsWith(prefix) && f.endsWith(".v8"))
    .map((f) => {
      try {
        return { f, at: fs.statSync(path.join(dir, f)).mtimeMs }
      } catch {
        return { f, at: Number.POSITIVE_INFINITY }
      }
    })
    .sort((a, b) => b.at - a.at)
  for (const { f } of files.slice(KEEP)) fs.rmSync(path.join(dir, f), { force: true })
  // A temporary file or a mark (`….v8.<pid>.tmp`, `….v8.<pid>.run`) of a process that is gone, of any command: a
  // mark's cache goes with it, as `guard` would have it.
  // This process's own are not left behind: its mark goes at its exit, after this.
  for (const f of names) {
    const left = leftover(f)
    if (left === undefined || left.pid === process.pid || alive(left.pid)) continue
    if (left.kind === "run") fs.rmSync(path.join(dir, left.cache), { force: true })
    fs.rmSync(path.join(dir, f), { force: true })
  }
}

/**
 * Writes `data` as `file` through a private temporary file, synced before it is renamed into place
 * (a crash leaves the old file or the whole new one); then only the newest files of `prefix` stay.
 */
const save = (file: string, prefix: string, data: Buffer): void => {
  const temporary = `${file}.${process.pid}.tmp`
  try {
    const fd = fs.openSync(temporary, "wx", FILE_MODE)
    try {
      fs.writeSync(fd, data)
      fs.fdatasyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(temporary, file)
    prune(path.dirname(file), prefix)
  } catch {
    // Only start-up is slower without it.
    fs.rmSync(temporary, { force: true })
  }
}

/**
 * The cache file's bytes, when it is a plain file of this user's that nobody else can write (its
 * directory was checked: `CompileCache.ready`); `undefined` otherwise, or when there is none.
 */
const readPrivate = (file: string): Buffer | undefined => {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
    const stat = fs.fstatSync(fd)
    const uid = process.getuid?.()
    if (!stat.isFile() || stat.nlink !== 1 || (stat.mode & 0o077) !== 0 || (uid !== undefined && stat.uid !== uid))
      return undefined
    const bytes = Buffer.allocUnsafe(stat.size)
    let at = 0
    while (at < bytes.length) {
      const n = fs.readSync(fd, bytes, at, bytes.length - at, at)
      if (n === 0) return undefined
      at += n
    }
    return bytes
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** {@link guard}; `false` when the directory cannot be read (the cache is then not used). */
const guarded = (cache: string): boolean => {
  try {
    return guard(cache)
  } catch {
    return false
  }
}

// The exit codes of a run worth keeping the cache of: a success, and an end asked for by a signal
// (SIGHUP, SIGINT, SIGTERM: src/layers/ProcessMain.ts), as an `ask` is ended by Ctrl-C or an `attach` left. A
// failure (1, 2) ran little of the command.
const KEPT = new Set([0, 129, 130, 143])

/** The build's identity of `file`: its content hash, and its file's size, time and inode (an edit in place). */
const buildOf = (file: string, source: string): string | undefined => {
  const key = keyOf(source)
  if (key === undefined) return undefined
  const stat = fs.statSync(file)
  return `${key}-${hash(`${stat.size}:${stat.mtimeMs}:${stat.ino}`)}`
}

/**
 * Runs the CommonJS bundle `file` and returns its exports; compiled with the
 * cache of `profile` in `dir` when there is a sound one, and writing it at a
 * kept exit ({@link KEPT}) when there was none.
 */
export const load = (file: string, profile: string, dir: string | undefined): unknown => {
  const source = fs.readFileSync(file, "utf8")
  const build = dir === undefined ? undefined : buildOf(file, source)
  const bundle = path.basename(file)
  const cache =
    dir === undefined || build === undefined
      ? undefined
      : cacheFile(
          dir,
          bundle,
          profile,
          build,
          `${process.version}-${process.arch}`,
          flagsOf(process.execArgv, process.env["NODE_OPTIONS"])
        )
  const cachedData = cache === undefined || !guarded(cache) ? undefined : readPrivate(cache)
  const evaluated = cachedData === undefined || cache === undefined ? undefined : markUse(cache)
  const module = { exports: {} }
  const script = new vm.Script(HEAD + source + TAIL, { filename: file, cachedData })
  if (cache !== undefined && (cachedData === undefined || script.cachedDataRejected === true))
    process.once("exit", (code) => {
      if (KEPT.has(code)) save(cache, prefixOf(bundle, profile), script.createCachedData())
    })
  // A function expression is what the script evaluates to (HEAD and TAIL above); vm types its value `any`.
  const wrapper: Wrapper = script.runInThisContext()
  wrapper(module.exports, createRequire(file), module, file, path.dirname(file))
  // Not reached when the script throws as it is evaluated: its mark stays, and the next run does without the cache.
  evaluated?.()
  return module.exports
}
