/**
 * Where the notification spool lives (`Spool.ts`), and the failures it keeps
 * for a listing to show once: plain file work, no Schema, so `conversation
 * ls` (which shows a failed notification on its row) loads no codec
 * (docs/startup.md#start-up-of-the-reading-commands).
 *
 * @example
 * ```ts
 * import * as SpoolDir from "parley/layers/notify/SpoolDir"
 * SpoolDir.dirOf("/home/me/project/.parley") // "/home/me/project/.parley/run/notify"
 * SpoolDir.takeErrors("/home/me/project/.parley", ["17738399468"]) // Map { "17738399468" => "webhook: 500" } once
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Storage from "../../domain/storage/Storage.ts"
import { databaseKey } from "../../programs/StorageDir.ts"
import { sha256 } from "../../domain/storage/Sha256.ts"
import * as HostPath from "../host/HostPath.ts"

/** The spool directory of `storage`. */
export const dirOf = (storage: string): string =>
  Storage.match(Storage.of(storage), {
    // The per-user runtime directory holds every database's runs: the spool is keyed by the url (without its password).
    Database: ({ url }) => path.join(HostPath.runDir(storage), `notify-${sha256(databaseKey(url)).slice(0, 16)}`),
    Directory: () => path.join(HostPath.runDir(storage), "notify")
  })

/** Where the spool `dir` keeps each conversation's last failure. */
export const errorsDir = (dir: string): string => path.join(dir, "errors")

/**
 * The recorded notification failures of `ids` in `storage`'s spool, each
 * removed as it is read: a row shows a failure once (`notify_error`).
 */
export const takeErrors = (storage: string, ids: ReadonlyArray<string>): Map<string, string> => {
  const dir = errorsDir(dirOf(storage))
  const found = new Map<string, string>()
  let names: ReadonlySet<string>
  try {
    names = new Set(fs.readdirSync(dir))
  } catch {
    return found
  }
  for (const id of ids) {
    const file = path.join(dir, `${id}.txt`)
    if (!names.has(`${id}.txt`)) continue
    try {
      found.set(id, fs.readFileSync(file, "utf8"))
      fs.rmSync(file, { force: true })
    } catch {
      // Taken by another listing at the same time: it shows it.
    }
  }
  return found
}
