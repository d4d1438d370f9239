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
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Storage from "../domain/storage/Storage.ts"

/**
 * Why `given` (a `--storage` or `$PARLEY_STORAGE`) that starts like a
 * PostgreSQL url is not one (`postgres:/bad` was taken for a directory of
 * that name; `postgres://` names nothing), or undefined. Other names, `backup:old` included, are
 * directories; one really named `postgres:…` is written `./postgres:…`. A
 * password in the value is not repeated.
 */
export const databaseUrlProblem = (given: string): string | undefined => {
  if (!/^postgres(ql)?:/i.test(given)) return undefined
  if (Storage.of(given)._tag === "Database" && URL.canParse(given) && namesSomething(new URL(given))) return undefined
  const shown = given.replace(/:[^:@/]*@/, ":***@")
  return `${shown} is not a PostgreSQL connection url: expected postgres://[user[:password]@]host[:port]/database (a directory of that name is written ./${shown})`
}

/**
 * Whether a parsed url names a server or a database (`postgres://`, empty,
 * names neither: a typo taken for "every default" would connect somewhere
 * no one asked for); a `?host=` socket directory counts.
 */
const namesSomething = (u: URL): boolean =>
  u.hostname !== "" || (u.pathname !== "" && u.pathname !== "/") || u.searchParams.has("host")

/**
 * What names a database for the files this machine keeps about it (host
 * sockets, the serve token): its url without the password, `postgres:` for
 * `postgresql:`, the host in lower case, the default port written out, so each spelling of one
 * database finds the same runs (and a password never reaches a file name).
 */
export const databaseKey = (url: string): string => {
  try {
    const u = new URL(url.replace(/^postgresql:/i, "postgres:"))
    u.password = ""
    // Host names are case-insensitive; URL lowercases them only for http-like schemes.
    u.hostname = u.hostname.toLowerCase()
    if (u.port === "" && u.hostname !== "") u.port = "5432"
    return u.toString()
  } catch {
    return url
  }
}

/** The storage as parley shows it (printed commands, warnings): a database url without its password, a directory as it is. */
export const shownStorage = (storage: string): string =>
  Storage.match(Storage.of(storage), { Database: ({ url }) => databaseKey(url), Directory: (dir) => dir.path })

/** Where the storage directory is (contract §2): `--storage`, else `$PARLEY_STORAGE`, else the nearest ancestor `.parley/`, else `./.parley`. A `postgres://` url is returned as it is. */
export const resolveStorageDir = (options: {
  readonly flag: string | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  readonly cwd: string
}): string => {
  const given = options.flag !== undefined && options.flag !== "" ? options.flag : options.env["PARLEY_STORAGE"]
  if (given !== undefined && given !== "")
    return Storage.match(Storage.of(given), {
      // A database is kept as given, never resolved as a path.
      Database: ({ url }) => url,
      Directory: (dir) => path.resolve(options.cwd, dir.path)
    })
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
