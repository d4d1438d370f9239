/**
 * `parley conversation ls [--archived] [--format json]`: conversations,
 * most recently active first, with their incomplete-turn state (RFD 023).
 * Reads metadata and a validated sidecar index, never whole event logs that
 * did not change.
 *
 * @example
 * ```sh
 * parley conversation ls --archived --format json
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { printable } from "../../domain/render/TerminalText.ts"
import { ConversationStore, type ConversationSummary } from "../../services/ConversationStore.ts"
import { formatFlag } from "../Format.ts"
import * as Hint from "../Hint.ts"
import { storage } from "../Root.ts"
import * as Running from "../Running.ts"
import { withStore } from "./Shared.ts"

/** The JSON row of contract §3. */
export const toJsonRow = (s: ConversationSummary) => ({
  id: s.id,
  title: s.title,
  events: s.events,
  last_event_at: s.lastEventAt,
  archived: s.archived,
  incomplete: s.incomplete === null ? null : { state: s.incomplete.state, ...(s.incomplete.tool !== undefined ? { tool: s.incomplete.tool } : {}) },
  tokens: s.tokens
})

const textRow = (s: ConversationSummary): string => {
  const status = s.incomplete === null
    ? ""
    : `  [incomplete: ${s.incomplete.state}${s.incomplete.tool !== undefined ? ` (${s.incomplete.tool})` : ""}]`
  const when = s.lastEventAt === null ? "-" : s.lastEventAt.replace("T", " ").replace(/\.\d+Z$|Z$/, "")
  return `${s.id}  ${when.padEnd(19)}  ${String(s.events).padStart(5)} events  ${s.archived ? "(archived) " : ""}${s.title === null ? "(untitled)" : printable(s.title)}${status}`
}

export const ls = Command.make(
  "ls",
  {
    archived: Flag.Boolean("archived").pipe(Flag.withDescription("Include archived conversations"), Flag.withDefault(false)),
    format: formatFlag
  },
  ({ archived, format }) =>
    withStore(Effect.gen(function*() {
      const { conversations: rows, damaged } = yield* ConversationStore.use((s) => s.list({ archived }))
      // A damaged conversation is skipped with one line naming it; the rest are listed.
      const { given } = yield* storage
      for (const d of damaged) {
        yield* Console.error(`parley: skipped ${d.id} (${printable(d.reason)}); run \`${Hint.check(d.id, { storage: given })}\` for details`)
      }
      // Live runs answer on their sockets (issue 22): pid and open questions.
      const running = yield* Running.of((yield* storage).dir, rows.map((r) => r.id))
      if (format === "json") return yield* Console.log(JSON.stringify(rows.map((r) => ({ ...toJsonRow(r), running: Running.jsonOf(running.get(r.id)) })), null, 2))
      if (rows.length === 0) return yield* Console.log(`No conversations yet. Start one with \`${Hint.invokedAs()} query "…"\`.`)
      for (const row of rows) yield* Console.log(textRow(row) + Running.textOf(running.get(row.id)))
    }))
).pipe(Command.withDescription("List conversations (most recently active first)"))
