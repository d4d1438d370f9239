/**
 * The database password when the url carries none (docs/postgres.md#passwords), found as libpq finds
 * it: `$PGPASSWORD`, else the first matching line of `$PGPASSFILE` (default `~/.pgpass`). A password
 * in the url is visible in `ps` when given as `--storage`, and a printed command repeats the url
 * without it; this is how that command still connects. `@effect/sql-pg` reads neither by itself.
 *
 * A `.pgpass` line is `host:port:database:user:password`; `*` matches anything; `\:` and `\\` stand
 * for `:` and `\`; `#` starts a comment line. As libpq does, a file that its group or others may read
 * is ignored: a password there is not private.
 *
 * @example
 * ```ts
 * import * as PgPass from "parley/layers/store/pg/PgPass"
 * PgPass.match("*:5432:parley:alice:s3cret\n", { host: "db", port: "5432", database: "parley", user: "alice" })
 * // "s3cret"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Which connection a password is looked up for. */
export interface Target {
  readonly host: string
  readonly port: string
  readonly database: string
  readonly user: string
}

// One line's five fields, unescaped; undefined for a comment, a blank or a malformed line.
const fields = (line: string): ReadonlyArray<string> | undefined => {
  if (line.startsWith("#") || line.trim() === "") return undefined
  const out: Array<string> = []
  let current = ""
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "\\" && i + 1 < line.length) current += line[++i]
    else if (c === ":" && out.length < 4) {
      out.push(current)
      current = ""
    } else current += c
  }
  out.push(current)
  return out.length === 5 ? out : undefined
}

/** The password of the first line of a `.pgpass` text that matches `target`, if any. */
export const match = (text: string, target: Target): string | undefined => {
  const wanted = [target.host, target.port, target.database, target.user]
  for (const line of text.split(/\r?\n/)) {
    const f = fields(line)
    if (f !== undefined && wanted.every((value, i) => f[i] === "*" || f[i] === value)) return f[4]
  }
  return undefined
}

/** What a url connects to, with libpq's defaults (a socket directory host is `localhost` to `.pgpass`). */
const targetOf = (u: URL, env: Readonly<Record<string, string | undefined>>): Target => {
  const socket = u.searchParams.get("host")
  const host = u.hostname === "" || socket?.startsWith("/") === true ? "localhost" : u.hostname
  const user = decodeURIComponent(u.username) || env["USER"] || ""
  return { host, port: u.port || "5432", database: decodeURIComponent(u.pathname.slice(1)) || user, user }
}

/** The password for `url` when it carries none: `$PGPASSWORD`, else `$PGPASSFILE` / `~/.pgpass` (private files only). */
export const passwordFor = (url: string, env: Readonly<Record<string, string | undefined>>): string | undefined => {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return undefined
  }
  if (u.password !== "") return undefined
  const given = env["PGPASSWORD"]
  if (given !== undefined && given !== "") return given
  const file = env["PGPASSFILE"] || path.join(env["HOME"] || os.homedir(), ".pgpass")
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile() || (stat.mode & 0o077) !== 0) return undefined
    return match(fs.readFileSync(file, "utf8"), targetOf(u, env))
  } catch {
    return undefined
  }
}
