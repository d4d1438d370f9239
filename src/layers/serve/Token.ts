/**
 * The token of `parley serve` (docs/serve.md#security): 256 random bits as hex, kept in
 * `<storage>/serve-token` (for a database: this user's `~/.config/parley/postgres/<hash>/`,
 * `StorageStore.stateDirOf`) (mode 0600, created once and reused, so a page
 * opened yesterday still works after a restart), compared in constant time.
 * A token file that is not ours to trust — readable by others, not a regular
 * file — is replaced with a new token. A database's directory is checked
 * first (`PrivateDir`: this user's alone, not a link), and refused when it
 * is not; a storage directory is the person's, and is used as it is.
 *
 * @example
 * ```ts
 * import * as Token from "parley/layers/serve/Token"
 * const token = Token.loadOrCreate("/home/me/.parley")
 * Token.matches(token, "…") // false
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/** The token file of a storage directory. */
export const fileOf = (storage: string): string => path.join(storage, "serve-token")

const TOKEN = /^[0-9a-f]{64}$/

/**
 * The token in `file` when it is a regular file of ours with no group/other
 * bits. Judged on the opened file (`fstat`), not the path: a check of the
 * path and then a read of it would read whatever was put there between the
 * two. `O_NOFOLLOW` refuses a link; `O_NONBLOCK` keeps a FIFO left there from
 * blocking the open.
 */
const readPrivate = (file: string): string | undefined => {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants
  let fd: number
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK)
  } catch {
    // None yet, or a link (ELOOP): a new one is made.
    return undefined
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile() || (stat.mode & 0o077) !== 0 || stat.uid !== process.getuid?.()) return undefined
    const text = fs.readFileSync(fd, "utf8").trim()
    return TOKEN.test(text) ? text : undefined
  } finally {
    fs.closeSync(fd)
  }
}

/** The token of `storage`: read when a private, well-formed one is there, else made and written 0600. */
export const loadOrCreate = (storage: string): string => {
  const file = fileOf(storage)
  const found = readPrivate(file)
  if (found !== undefined) return found
  const token = crypto.randomBytes(32).toString("hex")
  // A directory made here is private (a database's is in the per-user config directory).
  fs.mkdirSync(storage, { recursive: true, mode: 0o700 })
  // A fresh file under a unique name (O_EXCL: never one, nor a link, someone left there), renamed over.
  const scratch = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants
  const fd = fs.openSync(scratch, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
  try {
    fs.writeSync(fd, `${token}\n`)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(scratch, file)
  return token
}

const digest = (text: string): Buffer => crypto.createHash("sha256").update(text).digest()

/** Whether `given` is `token`, in time that does not depend on where they differ (digests: equal lengths). */
export const matches = (token: string, given: string | undefined): boolean =>
  given !== undefined && crypto.timingSafeEqual(digest(token), digest(given))
