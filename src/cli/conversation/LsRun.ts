/**
 * What `parley conversation ls` does, once its command line is read (issue
 * 28: no effect/cli here, so the fast path of `ReadingRun.ts` and the
 * effect/cli command of `Ls.ts` run the same code).
 *
 * @example
 * ```ts
 * import { list } from "./LsRun.ts"
 * list({ archived: false, format: "json" }, { dir: "/work/.parley", given: undefined })
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { printable } from "../../domain/render/TerminalText.ts"
import * as Labels from "../../domain/storage/Labels.ts"
import * as LastError from "../../domain/run/LastErrorText.ts"
import type { ConversationSummary, DamagedConversation } from "../../services/ConversationStoreTag.ts"
import { damagedJsonRow, lsJsonRow } from "../../services/ConversationRows.ts"
import * as Hint from "../Hint.ts"
import * as Stdout from "../Stdout.ts"
import * as Listing from "../../layers/host/Listing.ts"
import * as Running from "../../layers/host/Running.ts"
import * as QueueCount from "../../layers/store/QueueCount.ts"
import * as QueueLog from "../../domain/storage/QueueLog.ts"
import { type StorageAt, withStoreAt } from "./Store.ts"

const textRow = (s: ConversationSummary): string => {
  const status =
    s.incomplete === null
      ? ""
      : `  [incomplete: ${s.incomplete.state}${s.incomplete.tool !== undefined ? ` (${s.incomplete.tool})` : ""}]`
  const when = s.lastEventAt === null ? "-" : s.lastEventAt.replace("T", " ").replace(/\.\d+Z$|Z$/, "")
  const labels = s.labels.length === 0 ? "" : `  {${printable(Labels.text(s.labels))}}`
  // Its last run's error, until its next run: a run nobody watched says here that it failed.
  const failed = s.lastError === null ? "" : `  [${printable(LastError.text(s.lastError))}]`
  return `${s.id}  ${when.padEnd(19)}  ${String(s.events).padStart(5)} events  ${s.archived ? "(archived) " : ""}${s.title === null ? "(untitled)" : printable(s.title)}${labels}${status}${failed}`
}

const damagedTextRow = (d: DamagedConversation): string =>
  `${d.id}  ${"-".padEnd(19)}  damaged       ${d.archived ? "(archived) " : ""}${printable(d.reason)}`

/** What `ls` was asked. */
export interface ListOptions {
  readonly archived: boolean
  readonly format: "text" | "json"
}

/** `notify_error` when a notification of the conversation failed since the last listing (absent otherwise). */
const notifyError = (error: string | undefined): { readonly notify_error?: string } =>
  error === undefined ? {} : { notify_error: error }

/** A row of the text listing: the conversation, whether a run holds it, its queue, its failed notification. */
const textLine = (
  row: ConversationSummary & { readonly path: string },
  running: ReadonlyMap<string, Running.Running>,
  failed: ReadonlyMap<string, string>
): string => {
  const error = failed.get(row.id)
  const queued = QueueLog.describe(QueueCount.queuedIn(row.path))
  return (
    textRow(row) +
    Running.textOf(running.get(row.id)) +
    (queued === "" ? "" : `  [${queued}]`) +
    (error === undefined ? "" : `  (notify: ${printable(error)})`)
  )
}

/** Lists the conversations of `storage` on stdout. */
export const list = (options: ListOptions, storage: StorageAt) =>
  withStoreAt(
    storage,
    Effect.gen(function* () {
      const { rows, damaged, running, failed } = yield* Listing.gather(storage.dir, options.archived)
      // A damaged conversation is listed as such (after the others), never left out, and one line says what to run.
      for (const d of damaged) {
        yield* Console.error(
          `parley: ${d.id} cannot be read; run \`${Hint.check(d.id, { storage: storage.given, config: storage.configGiven })}\` for details`
        )
      }
      // The whole listing in one write (Stdout.ts: into a pipe or a file without building
      // process.stdout, and one write for 10,000 rows instead of one each). Every field a row
      // shows is made printable where the row is made, so a terminal gets the same text.
      const text =
        options.format === "json"
          ? `${JSON.stringify(
              [
                ...rows.map((r) => ({
                  ...lsJsonRow(r),
                  running: Running.jsonOf(running.get(r.id)),
                  ...notifyError(failed.get(r.id))
                })),
                ...damaged.map(damagedJsonRow)
              ],
              null,
              2
            )}\n`
          : rows.length === 0 && damaged.length === 0
            ? `No conversations yet. Start one with \`${Hint.command(["query"], { storage: storage.given, config: storage.configGiven }, '"…"')}\`.\n`
            : [...rows.map((row) => textLine(row, running, failed)), ...damaged.map(damagedTextRow)]
                .map((line) => `${line}\n`)
                .join("")
      yield* Effect.sync(() => Stdout.write(text, (shown) => shown))
    })
  )
