/**
 * The notification spool (docs/questions-and-approvals.md#delivery): one file per
 * notification and target under the storage's run directory
 * (`<storage>/run/notify/`; for a database, a directory of its own in this
 * user's runtime directory), private like every runtime directory
 * (`PrivateDir.ensure`). A notification is written here before anyone tries
 * to deliver it, so one a process could not deliver before it ended is
 * delivered by the next parley process of that storage.
 *
 * The webhook's backoff is the spool's too (`webhook.backoff`): a receiver
 * that did not take a try is not tried again, by any process of the
 * storage, before the backoff ends.
 *
 * A process delivers an entry after renaming it to `<entry>.claimed-<pid>`
 * (a rename succeeds for one process only); it deletes it once delivered or
 * given up, and renames it back when it stops first. A claim whose process
 * is gone is taken back by the next process that looks.
 *
 * @example
 * ```ts
 * import * as Spool from "parley/layers/notify/Spool"
 * const dir = Spool.dirOf("/home/me/project/.parley") // "/home/me/project/.parley/run/notify"
 * const next = Spool.claimNext(dir, "webhook") // the oldest entry for the webhook, claimed, or undefined
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Schema from "effect/Schema"
import * as Delivery from "../../domain/notify/Delivery.ts"
import * as JsonText from "../../domain/storage/JsonText.ts"
import { FILE_MODE } from "../../domain/storage/PrivateDir.ts"
import * as ErrorCode from "../ErrorCode.ts"
import * as PrivateDir from "../file/PrivateDir.ts"
import { errorsDir } from "./SpoolDir.ts"

// Where the spool lives and the failures a listing takes: SpoolDir.ts, without Schema (ls loads it).
export { dirOf, takeErrors } from "./SpoolDir.ts"

/** Makes (0700) and checks the spool directory; throws `NotPrivate` when it is not this user's alone. */
export const ensure = (dir: string): void => PrivateDir.ensure(dir)

/**
 * Writes the file `name` of the spool whole: to a temporary name first, so a reader never sees half of it.
 * The temporary name is made afresh: one left by a process of the same pid that died between write and rename
 * is removed first (with `wx` alone, that write would fail).
 */
const writeWhole = (dir: string, name: string, text: string): void => {
  const temp = path.join(dir, `.${name}.${process.pid}.tmp`)
  fs.rmSync(temp, { force: true })
  fs.writeFileSync(temp, text, { mode: FILE_MODE, flag: "wx" })
  fs.renameSync(temp, path.join(dir, name))
}

/** Writes an entry whole. */
export const append = (dir: string, entry: Delivery.Entry): void =>
  writeWhole(dir, Delivery.entryName(entry), JSON.stringify(entry))

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return ErrorCode.of(error) === "EPERM"
  }
}

const listing = (dir: string): Array<string> => {
  try {
    return fs.readdirSync(dir).sort()
  } catch {
    return []
  }
}

const rename = (from: string, to: string): boolean => {
  try {
    fs.renameSync(from, to)
    return true
  } catch (error) {
    if (ErrorCode.of(error) === "ENOENT") return false
    throw error
  }
}

const targetOf = (entry: string): string => entry.split("-")[2] ?? ""

/** A claimed entry: its file (claimed) and its contents. */
export interface Claimed {
  readonly file: string
  readonly entry: Delivery.Entry
}

const decodeEntry = Schema.decodeUnknownSync(Schema.fromJsonString(Delivery.Entry))

/** Reads a claimed file; an unreadable one is dropped (it can never be delivered). */
const read = (dir: string, file: string): Claimed | undefined => {
  try {
    return { file, entry: decodeEntry(fs.readFileSync(path.join(dir, file), "utf8")) }
  } catch {
    fs.rmSync(path.join(dir, file), { force: true })
    return undefined
  }
}

/**
 * Claims the oldest entry for `target`. Stops at an older one a live process
 * holds: that process delivers the target's entries in order, and this one
 * waits its turn rather than overtake it. A dead process's claim is taken.
 */
export const claimNext = (dir: string, target: Delivery.Target): Claimed | undefined => {
  for (const name of listing(dir)) {
    const held = Delivery.claimant(name)
    const entry = held?.entry ?? name
    if (!Delivery.isEntry(entry) || targetOf(entry) !== target) continue
    if (held !== undefined && held.pid !== process.pid && alive(held.pid)) return undefined
    if (held !== undefined && held.pid === process.pid) continue
    const mine = `${entry}${Delivery.CLAIMED}${process.pid}`
    if (!rename(path.join(dir, name), path.join(dir, mine))) continue
    const claimed = read(dir, mine)
    if (claimed !== undefined) return claimed
  }
  return undefined
}

/** Whether `dir` holds an entry, claimed or not (none when it does not exist). */
export const pending = (dir: string): boolean =>
  listing(dir).some((name) => Delivery.isEntry(Delivery.claimant(name)?.entry ?? name))

/** Removes a delivered (or given-up) entry. */
export const done = (dir: string, claimed: Claimed): void => fs.rmSync(path.join(dir, claimed.file), { force: true })

/** Gives a claimed entry back (this process stops before delivering it). */
export const release = (dir: string, claimed: Claimed): void =>
  void rename(path.join(dir, claimed.file), path.join(dir, Delivery.entryName(claimed.entry)))

const backoffName = (target: Delivery.Target): string => `${target}.backoff`

/** The target's backoff every process of the storage keeps to (`Delivery.Backoff`); none when none is kept or it does not read. */
export const readBackoff = (dir: string, target: Delivery.Target): Delivery.Backoff | undefined => {
  try {
    return Delivery.backoffOf(JsonText.parse(fs.readFileSync(path.join(dir, backoffName(target)), "utf8")))
  } catch {
    return undefined
  }
}

/** Keeps the target's backoff for every process of the storage: written whole, best effort. */
export const writeBackoff = (dir: string, target: Delivery.Target, backoff: Delivery.Backoff): void => {
  try {
    writeWhole(dir, backoffName(target), JSON.stringify(backoff))
  } catch {
    // A backoff not kept costs a try too many, never a notification.
  }
}

/** Ends the target's backoff: the receiver took a try (or answered it). */
export const clearBackoff = (dir: string, target: Delivery.Target): void => {
  try {
    fs.rmSync(path.join(dir, backoffName(target)), { force: true })
  } catch {
    // Best effort, as writing it.
  }
}

/** Appends one line to the spool's log (`notify.log`): what failed, for whom. */
export const log = (dir: string, line: string): void => {
  try {
    fs.appendFileSync(path.join(dir, "notify.log"), `${new Date().toISOString()} ${line}\n`, { mode: FILE_MODE })
  } catch {
    // The log is best effort: a notification never fails a run.
  }
}

/** Keeps the last failure of a conversation's notifications, until a listing shows it ({@link takeErrors}). */
export const recordError = (dir: string, conversationId: string, line: string): void => {
  try {
    fs.mkdirSync(errorsDir(dir), { mode: 0o700, recursive: true })
    fs.writeFileSync(path.join(errorsDir(dir), `${conversationId}.txt`), line, { mode: FILE_MODE })
  } catch {
    // Best effort, as the log.
  }
}
