/**
 * What `parley conversation ls` shows of a listing (`layers/host/Listing.ts`): its rows as text
 * or JSON, and the line said of each damaged conversation. Plain code, shared by the listing
 * of the effect/cli command and of the fast paths (`LsRun.ts`, `LsFast.ts`), so both print the
 * same bytes.
 *
 * @example
 * ```ts
 * import { render } from "./LsText.ts"
 * const storage = { dir: "/work/.parley", given: undefined }
 * render({ rows: [], damaged: [], running: new Map(), failed: new Map() }, { archived: false, format: "text" }, storage)
 * // { warnings: [], text: "No conversations yet. Start one with `parley query \"…\"`.\n" }
 * ```
 */
import { printable } from "../../domain/render/TerminalText.ts"
import * as Running from "../../domain/run/Running.ts"
import * as LastError from "../../domain/run/LastErrorText.ts"
import * as Labels from "../../domain/storage/Labels.ts"
import * as QueueLog from "../../domain/storage/QueueLog.ts"
import * as QueueCount from "../../layers/store/QueueCount.ts"
import type { ConversationSummary, DamagedConversation } from "../../services/ConversationStoreTag.ts"
import { damagedJsonRow, lsJsonRow } from "../../services/ConversationRows.ts"
import * as Hint from "../Hint.ts"
import type { StorageAt } from "./Store.ts"

/** What a listing found (`layers/host/Listing.ts`, `gather`). */
export interface Gathered {
  readonly rows: ReadonlyArray<ConversationSummary>
  readonly damaged: ReadonlyArray<DamagedConversation>
  readonly running: ReadonlyMap<string, Running.Running>
  readonly failed: ReadonlyMap<string, string>
}

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
  row: ConversationSummary,
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

/**
 * The listing as `ls` prints it: `text` for stdout (the whole listing, one write), `warnings` for
 * stderr (a line for each damaged conversation, saying what to run). Every field a row shows is
 * made printable here, so a terminal gets the same text.
 */
export const render = (
  { rows, damaged, running, failed }: Gathered,
  options: ListOptions,
  storage: StorageAt
): { readonly warnings: ReadonlyArray<string>; readonly text: string } => {
  const hinted = { storage: storage.given, config: storage.configGiven }
  // A damaged conversation is listed as such (after the others), never left out, and one line says what to run.
  const warnings = damaged.map((d) => `parley: ${d.id} cannot be read; run \`${Hint.check(d.id, hinted)}\` for details`)
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
        ? `No conversations yet. Start one with \`${Hint.command(["query"], hinted, '"…"')}\`.\n`
        : [...rows.map((row) => textLine(row, running, failed)), ...damaged.map(damagedTextRow)]
            .map((line) => `${line}\n`)
            .join("")
  return { warnings, text }
}
