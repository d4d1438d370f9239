/**
 * The token of `parley serve` (issue 23): 256 random bits as hex, kept in
 * `<storage>/serve-token` — for a PostgreSQL storage in the per-user config
 * directory — (mode 0600, created once and reused, so a page
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
import * as os from "node:os"
import * as path from "node:path"
import { isDatabaseUrl } from "../../programs/StorageDir.ts"

/**
 * The token file of a storage: in its directory; for a PostgreSQL storage,
 * which has none, in the per-user config directory, one per database url
 * (named by its hash: the url may hold a password).
 */
export const fileOf = (storage: string, env: Readonly<Record<string, string | undefined>> = process.env): string => {
  if (!isDatabaseUrl(storage)) return path.join(storage, "serve-token")
  const config = env["XDG_CONFIG_HOME"] || path.join(os.homedir(), ".config")
  return path.join(config, "parley", `serve-token-${crypto.createHash("sha256").update(storage).digest("hex").slice(0, 16)}`)
}

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
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
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
