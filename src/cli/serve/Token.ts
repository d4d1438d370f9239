/**
 * The token of `parley serve` (issue 23): 256 random bits as hex, kept in
 * `<storage>/serve-token` (for a database: this user's `~/.config/parley/postgres/<hash>/`,
 * `StorageStore.stateDirOf`) (mode 0600, created once and reused, so a page
 * opened yesterday still works after a restart), compared in constant time.
 * A token file that is not ours to trust — readable by others, not a regular
 * file — is replaced with a new token.
 *
 * @example
 * ```ts
 * import * as Token from "./Token.ts"
 * const token = Token.loadOrCreate("/home/me/.parley")
 * Token.matches(token, "…") // false
 * ```
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/** The token file of a storage directory. */
export const fileOf = (storage: string): string => path.join(storage, "serve-token")

const TOKEN = /^[0-9a-f]{64}$/

/** The token of `storage`: read when a private, well-formed one is there, else made and written 0600. */
export const loadOrCreate = (storage: string): string => {
  const file = fileOf(storage)
  try {
    const stat = fs.lstatSync(file)
    if (stat.isFile() && (stat.mode & 0o077) === 0 && stat.uid === process.getuid?.()) {
      const text = fs.readFileSync(file, "utf8").trim()
      if (TOKEN.test(text)) return text
    }
  } catch {
    // None yet: made below.
  }
  const token = crypto.randomBytes(32).toString("hex")
  // A directory made here is private (a database's is in the per-user config directory).
  fs.mkdirSync(storage, { recursive: true, mode: 0o700 })
  // A fresh file under a unique name, renamed over: never written through a link someone left there.
  const scratch = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`
  fs.writeFileSync(scratch, `${token}\n`, { mode: 0o600, flag: "wx" })
  fs.renameSync(scratch, file)
  return token
}

const digest = (text: string): Buffer => crypto.createHash("sha256").update(text).digest()

/** Whether `given` is `token`, in time that does not depend on where they differ (digests: equal lengths). */
export const matches = (token: string, given: string | undefined): boolean =>
  given !== undefined && crypto.timingSafeEqual(digest(token), digest(given))
