/**
 * Whether a database error means the PostgreSQL server went away or cannot
 * be reached (docs/postgres.md#guarantees: a server that goes away mid-run stops
 * the run like an interrupt), and which server that is, for the error's line:
 * effect/sql's `ConnectionError` (a closed socket, a refused connection,
 * SQLSTATE class 08) and the server's own shutdown codes (class 57P:
 * administrator shutdown, crash shutdown, cannot connect now).
 *
 * @example
 * ```ts
 * import * as ServerLost from "parley/layers/store/pg/ServerLost"
 * ServerLost.serverOf("postgres://me@db.internal/parley#17738399468") // { host: "db.internal:5432", database: "parley" }
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import type { SqlError } from "effect/sql/SqlError"
import * as ErrorCode from "../../ErrorCode.ts"

/** The host (with its port) and database a url names; `?` for what it does not say. */
export const serverOf = (url: string): { readonly host: string; readonly database: string } => {
  try {
    const u = new URL(url.replace(/#.*$/, ""))
    return {
      host: `${u.hostname || u.searchParams.get("host") || "localhost"}:${u.port || "5432"}`,
      database: decodeURIComponent(u.pathname.replace(/^\//, "")) || "(default)"
    }
  } catch {
    return { host: "?", database: "?" }
  }
}

/** Whether `error` is the server going away (or not answering), not something wrong with the statement. */
export const isServerLost = (error: SqlError): boolean => {
  if (error.reason._tag === "ConnectionError") return true
  const code = ErrorCode.codeOf(error.reason.cause)
  return typeof code === "string" && code.startsWith("57P")
}
