/**
 * Where the `parley` executable keeps Node's compile cache (Node ≥ 22.1,
 * `module.enableCompileCache`): V8 keeps the compiled chunks on disk, so a
 * later run skips compiling them (docs/decisions.md#fast-start).
 *
 * The directory is `$XDG_CACHE_HOME/parley/compile-cache` (else
 * `~/.cache/parley/compile-cache`), not the temp directory a person or a tool
 * may expect parley to leave as it found it. Code read from it runs as the
 * user, so it is used only when it is the user's alone: created 0700 when
 * missing (and `parley/` above it), and checked with `lstat` like a runtime
 * directory (`domain/storage/PrivateDir`): not a symlink, a directory, owned
 * by the user, closed to group and others. One left open by an earlier
 * parley, ours and writable by nobody else, is closed (`chmod 0700`): nobody
 * else can have written into it. Each directory above it must be owned by the
 * user or root and not writable by others unless sticky (ssh's rule: nobody
 * else can swap `compile-cache` for a directory of theirs between the check
 * and the use); a relative `$XDG_CACHE_HOME` or `$HOME` is not used (the XDG
 * rule). Anything else turns the cache off, silently: it only makes start-up
 * slower. `$NODE_COMPILE_CACHE` or `$NODE_DISABLE_COMPILE_CACHE`, when set,
 * is the person's own choice of how Node caches compiled code: parley then
 * keeps no cache of its own (nor the fast paths' code caches, `CodeCache.ts`).
 *
 * @example
 * ```ts
 * import * as CompileCache from "parley/layers/file/CompileCache"
 * CompileCache.directory({ HOME: "/home/ada" }) // "/home/ada/.cache/parley/compile-cache"
 * CompileCache.enable(process.env) // true when Node caches compiled code there
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as nodeModule from "node:module"
import * as path from "node:path"
import { ancestorProblem, DIR_MODE, problemOf, type Seen } from "../../domain/storage/PrivateDir.ts"

/** The cache directory for this environment, if there is an absolute home or XDG cache directory. */
export const directory = (env: NodeJS.ProcessEnv): string | undefined => {
  const absolute = (p: string | undefined) => (p !== undefined && path.isAbsolute(p) ? p : undefined)
  const home = absolute(env["HOME"])
  const cache = absolute(env["XDG_CACHE_HOME"]) ?? (home === undefined ? undefined : path.join(home, ".cache"))
  return cache === undefined ? undefined : path.join(cache, "parley", "compile-cache")
}

/**
 * What `lstat` says of `p`, as the private-directory rules read it. (`layers/file/PrivateDir.inspect`
 * says the same, but its module loads Effect and the refusal's Schema class, which the entry that
 * calls this must not: it runs before anything is cached.)
 */
const seenAt = (p: string): Seen => {
  const stat = fs.lstatSync(p)
  const kind = stat.isSymbolicLink() ? "symlink" : stat.isDirectory() ? "directory" : "other"
  return { kind, uid: stat.uid, mode: stat.mode & 0o7777 }
}

/**
 * Whether every directory above `dir` passes `ancestorProblem` for `uid`, on its real path (as ssh's
 * `safe_path` does: a home under a linked `/home`, a `~/.cache` linked to another disk).
 */
const ancestorsSafe = (dir: string, uid: number): boolean => {
  for (let d = path.dirname(fs.realpathSync(dir)); ; d = path.dirname(d)) {
    if (ancestorProblem(seenAt(d), uid) !== undefined) return false
    if (d === path.dirname(d)) return true
  }
}

/**
 * Makes `dir` 0700 when missing and says whether it is the user's alone (closing an old one of ours
 * that others could only read), under directories nobody else can rename things in.
 */
export const ready = (dir: string): boolean => {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE })
    const uid = process.getuid?.()
    if (uid === undefined) return true
    const seen = seenAt(dir)
    if (!ancestorsSafe(dir, uid)) return false
    const problem = problemOf(seen, "directory", uid)
    if (problem === "open" && (seen.mode & 0o022) === 0) {
      fs.chmodSync(dir, DIR_MODE)
      return true
    }
    return problem === undefined
  } catch {
    return false
  }
}

// One answer per process, across the copies of this module the built files hold (the entry's, for Node's
// compile cache; the fast paths' file's, for their code caches: `CodeCache.ts`): a global under a registered
// symbol, since nothing else is shared between them.
const PREPARED = Symbol.for("parley.compileCache.prepared")
type Prepared = { readonly dir: string | undefined }

/**
 * The private cache directory for `env` ({@link directory}), made and checked
 * once per process ({@link ready}); `undefined` when there is none fit for
 * use, or when the person chose how Node caches compiled code
 * (`$NODE_COMPILE_CACHE`, `$NODE_DISABLE_COMPILE_CACHE`).
 */
export const prepare = (env: NodeJS.ProcessEnv): string | undefined => {
  // Reflect.get reads `any`: only this function writes the property, always a Prepared.
  const known: Prepared | undefined = Reflect.get(globalThis, PREPARED)
  if (known !== undefined) return known.dir
  const chosen = env["NODE_COMPILE_CACHE"] !== undefined || env["NODE_DISABLE_COMPILE_CACHE"] !== undefined
  const dir = chosen ? undefined : directory(env)
  const prepared: Prepared = { dir: dir !== undefined && ready(dir) ? dir : undefined }
  Reflect.set(globalThis, PREPARED, prepared)
  return prepared.dir
}

/** Turns Node's compile cache on in {@link directory} when this Node has one and the directory is {@link ready}. */
export const enable = (env: NodeJS.ProcessEnv): boolean => {
  // Absent before Node 22.1; typed by @types/node 22 only from a later minor.
  const turnOn = (nodeModule as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache
  const dir = prepare(env)
  if (turnOn === undefined || dir === undefined) return false
  turnOn(dir)
  return true
}
