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
 * else can have written into it. Anything else turns the cache off, silently:
 * it only makes start-up slower. `$NODE_COMPILE_CACHE`, when set, is Node's
 * own choice and wins.
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
import { DIR_MODE, problemOf } from "../../domain/storage/PrivateDir.ts"

/** The cache directory for this environment, if there is a home or an XDG cache directory. */
export const directory = (env: NodeJS.ProcessEnv): string | undefined => {
  const home = env["HOME"]
  const cache = env["XDG_CACHE_HOME"] || (home === undefined || home === "" ? undefined : path.join(home, ".cache"))
  return cache === undefined ? undefined : path.join(cache, "parley", "compile-cache")
}

/** Makes `dir` 0700 when missing and says whether it is the user's alone (closing an old one of ours that others could only read). */
export const ready = (dir: string): boolean => {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE })
    const uid = process.getuid?.()
    if (uid === undefined) return true
    const stat = fs.lstatSync(dir)
    const seen = {
      kind: stat.isSymbolicLink()
        ? ("symlink" as const)
        : stat.isDirectory()
          ? ("directory" as const)
          : ("other" as const),
      uid: stat.uid,
      mode: stat.mode & 0o7777
    }
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

let prepared: { readonly dir: string | undefined } | undefined

/**
 * The private cache directory for `env` ({@link directory}), made and checked
 * once per process ({@link ready}); `undefined` when there is none fit for use.
 * Node's compile cache and the fast paths' code caches (`CodeCache.ts`) share it.
 */
export const prepare = (env: NodeJS.ProcessEnv): string | undefined => {
  if (prepared === undefined) {
    const dir = directory(env)
    prepared = { dir: dir !== undefined && ready(dir) ? dir : undefined }
  }
  return prepared.dir
}

/** Turns Node's compile cache on in {@link directory} when this Node has one and the directory is {@link ready}. */
export const enable = (env: NodeJS.ProcessEnv): boolean => {
  // Absent before Node 22.1; typed by @types/node 22 only from a later minor.
  const turnOn = (nodeModule as { enableCompileCache?: (dir?: string) => unknown }).enableCompileCache
  if (turnOn === undefined || env["NODE_COMPILE_CACHE"] !== undefined) return false
  const dir = prepare(env)
  if (dir === undefined) return false
  turnOn(dir)
  return true
}
