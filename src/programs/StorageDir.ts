/**
 * Which storage directory a command works on (contract §2): `--storage DIR`,
 * else `$PARLEY_STORAGE`, else the nearest ancestor directory containing
 * `.parley/` (that `.parley/`), else `./.parley` (created on first write).
 *
 * @example
 * ```ts
 * import { resolveStorageDir } from "parley/programs/StorageDir"
 * resolveStorageDir({ flag: undefined, env: {}, cwd: "/home/me/project" }) // "/home/me/project/.parley" (or an ancestor's)
 * ```
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** Where the storage directory is (contract §2): `--storage`, else `$PARLEY_STORAGE`, else the nearest ancestor `.parley/`, else `./.parley`. */
export const resolveStorageDir = (options: {
  readonly flag: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
}): string => {
  if (options.flag !== undefined && options.flag !== "") return path.resolve(options.cwd, options.flag)
  const fromEnv = options.env["PARLEY_STORAGE"]
  if (fromEnv !== undefined && fromEnv !== "") return path.resolve(options.cwd, fromEnv)
  let dir = path.resolve(options.cwd)
  for (;;) {
    const candidate = path.join(dir, ".parley")
    try {
      if (fs.statSync(candidate).isDirectory()) return candidate
    } catch {
      // not here; keep walking up
    }
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return path.join(path.resolve(options.cwd), ".parley")
}
