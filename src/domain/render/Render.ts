/**
 * `conversation print` output: markdown for people, JSON for scripts.
 *
 * Markdown renders each complete turn, then the incomplete turn (RFD 023)
 * with its events and a marker block:
 *
 * ```text
 * ⏳ Incomplete turn (waiting for input)
 *   ✓ cargo_check — completed
 *   ⏸ fs_modify_file — waiting for input: "Overwrite existing file?"
 * ```
 *
 * Inquiry responses follow RFD 082 "Reader behavior": `Answer: <value>` (the
 * answer as JSON), `Answer: <redacted>`, `Cancelled (<reason>)` with the
 * reason tag verbatim, unknown tags included.
 *
 * A hidden tool's call and result (RFD 083 `style.hidden`: `ask_user`) are
 * not shown; its question and answer are.
 *
 * Each compaction (RFD 064) is shown where it applies: at the top of the
 * first turn it covers, with its range, what it does and its summary text
 * (the model sees that instead of the turns); one that starts after the last
 * turn is shown at the end.
 *
 * @example
 * ```ts
 * import * as Render from "parley/domain/render/Render"
 * import type { StreamEntry } from "parley/domain/event/ConversationEvent"
 * declare const entries: ReadonlyArray<StreamEntry>
 * process.stdout.write(Render.renderMarkdown({ id: "17738399468", title: "Hello", entries }))
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as JsonText from "../storage/JsonText.ts"
import { type Compaction, describeRule, turnsText } from "../event/Compaction.ts"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import * as EntryCodec from "../storage/EntryCodec.ts"
import * as EventOverlay from "../event/EventOverlay.ts"
import * as Labels from "../storage/Labels.ts"
import type { Label } from "../storage/Labels.ts"
import type { IncompleteState, ToolCallStatus } from "../stream/IncompleteTurn.ts"
import { analyze, splitIncompleteTurn, summaryOf } from "../stream/IncompleteTurn.ts"
import type { InquiryRequest } from "../event/InquiryRequest.ts"
import type { InquiryResponse } from "../event/InquiryResponse.ts"
import { describe as describeSource } from "../event/InquirySource.ts"
import * as Timestamp from "../event/Timestamp.ts"
import * as ToolStyle from "../tool/ToolStyle.ts"
import { turnCount, turns } from "../stream/Turns.ts"

/** The words of the incomplete-turn marker for each state. */
export const INCOMPLETE_LABEL: Readonly<Record<IncompleteState, string>> = {
  "waiting-for-input": "waiting for input",
  "pending-tool-execution": "pending tool execution",
  "pending-follow-up": "pending follow-up",
  "pending-llm-response": "pending LLM response"
}

/** How an inquiry response reads (RFD 082 "Reader behavior"). */
export const inquiryOutcomeText = (response: InquiryResponse): string => {
  switch (response.outcome) {
    case "answered":
      return `Answer: ${JsonText.shown(response.answer)}`
    case "redacted":
      return "Answer: <redacted>"
    case "cancelled":
      return `Cancelled (${response.reason})`
  }
}

/** A code fence longer than any backtick run inside `text`. */
const fenced = (text: string, info = ""): string => {
  // A loop, not Math.max(...runs): a long tool output can hold more runs than the stack has room for arguments.
  let longest = 2
  for (const m of text.matchAll(/`+/g)) if (m[0].length > longest) longest = m[0].length
  const fence = "`".repeat(longest + 1)
  return `${fence}${info}\n${text}${text.endsWith("\n") ? "" : "\n"}${fence}`
}

const when = (t: string): string => Timestamp.toRfc3339(t)

const questionBlock = (q: InquiryRequest): string => {
  const lines = [q.question.text]
  const type = q.question.answer_type
  const details: Array<string> = [`Answer type: ${type.type}`]
  if (type.type === "select") details.push(`Options: ${type.options.map((o) => JsonText.shown(o.value)).join(", ")}`)
  if (q.question.default !== undefined) details.push(`Default: ${JsonText.shown(q.question.default)}`)
  lines.push("", `_${details.join(" · ")}_`)
  return lines.join("\n")
}

/** Markdown for the events of one turn. */
const renderEvents = (entries: ReadonlyArray<StreamEntry>): Array<string> => {
  const blocks: Array<string> = []
  const toolNames = new Map<string, string>()
  for (const e of entries) {
    switch (e.type) {
      case "turn_start":
      case "config_delta":
      case "compaction":
        break
      case "unknown": {
        const overlay = EventOverlay.describe(e.raw)
        blocks.push(
          overlay === undefined
            ? `_Entry of unknown kind \`${e.kind}\` (kept, not shown)._`
            : `_Event overlay: ${overlay}._`
        )
        break
      }
      case "chat_request":
        blocks.push(`### You · ${when(e.timestamp)}\n\n${e.content}`)
        break
      case "chat_response":
        if (e.message !== undefined) blocks.push(`### Assistant · ${when(e.timestamp)}\n\n${e.message}`)
        else if (e.reasoning !== undefined)
          blocks.push(`### Assistant (reasoning) · ${when(e.timestamp)}\n\n${e.reasoning}`)
        else
          blocks.push(
            `### Assistant (structured) · ${when(e.timestamp)}\n\n${fenced(JsonText.shown(e.data ?? null, 2)!, "json")}`
          )
        break
      case "tool_call_request":
        toolNames.set(e.id, e.name)
        // A hidden tool (RFD 083 `style.hidden`, `ask_user`): its question and answer are the whole story.
        if (ToolStyle.isHidden(e.name)) break
        blocks.push(
          `### Tool call \`${e.name}\` (\`${e.id}\`) · ${when(e.timestamp)}\n\n${fenced(JsonText.shown(e.arguments, 2)!, "json")}`
        )
        break
      case "tool_call_response": {
        const name = toolNames.get(e.id)
        if (name !== undefined && ToolStyle.isHidden(name)) break
        const label = e.is_error ? "Tool error" : "Tool result"
        blocks.push(
          `### ${label}${name === undefined ? "" : ` \`${name}\``} (\`${e.id}\`) · ${when(e.timestamp)}\n\n${fenced(e.content)}`
        )
        break
      }
      case "inquiry_request":
        blocks.push(
          `### Question from ${describeSource(e.source)} (\`${e.id}\`) · ${when(e.timestamp)}\n\n${questionBlock(e)}`
        )
        break
      case "inquiry_response":
        blocks.push(`### Inquiry response (\`${e.id}\`) · ${when(e.timestamp)}\n\n${inquiryOutcomeText(e)}`)
        break
    }
  }
  return blocks
}

const firstLine = (text: string): string => {
  const line = text.split("\n", 1)[0]!.trim()
  return line.length < text.trim().length ? `${line} …` : line
}

const toolLine = (call: ToolCallStatus): string => {
  const name = call.request.name
  switch (call.status) {
    case "completed":
      return `  ✓ ${name} — completed`
    case "failed":
      return `  ✗ ${name} — failed`
    case "pending":
      return `  ⏳ ${name} — pending execution`
    case "waiting-for-input": {
      const open = call.inquiries.find((q) => q.response === null)!
      return `  ⏸ ${name} — waiting for input: ${JSON.stringify(firstLine(open.request.question.text))}`
    }
  }
}

/**
 * The RFD 023 marker block of an incomplete turn (its state, then each tool
 * call of the turn with a status mark).
 *
 * @example
 * ```ts
 * import { incompleteMarker } from "parley/domain/render/Render"
 * import type { StreamEntry } from "parley/domain/event/ConversationEvent"
 * declare const entriesOfTheTurn: ReadonlyArray<StreamEntry>
 * incompleteMarker(entriesOfTheTurn) // "⏳ Incomplete turn (pending LLM response)"
 * ```
 */
export const incompleteMarker = (entries: ReadonlyArray<StreamEntry>): string => {
  const incomplete = { entries }
  const summary = summaryOf(incomplete)
  const label = summary === null ? "incomplete" : INCOMPLETE_LABEL[summary.state]
  return [`⏳ Incomplete turn (${label})`, ...analyze(incomplete).toolCalls.map(toolLine)].join("\n")
}

/** Where each compaction is shown: at the first turn it covers, or after the last turn. */
export interface CompactionPlacement {
  readonly byTurn: ReadonlyMap<number, ReadonlyArray<Compaction>>
  readonly afterLast: ReadonlyArray<Compaction>
}

/**
 * Places the compactions of `entries` (in stream order) at the turn each
 * starts at (`from_turn`, JP's 0-based numbering over the whole stream).
 *
 * @example
 * ```ts
 * import { placeCompactions } from "parley/domain/render/Render"
 * import type { StreamEntry } from "parley/domain/event/ConversationEvent"
 * declare const entries: ReadonlyArray<StreamEntry>
 * placeCompactions(entries).byTurn.get(0) // the compactions that start at the first turn
 * ```
 */
export const placeCompactions = (entries: ReadonlyArray<StreamEntry>): CompactionPlacement => {
  const count = turnCount(entries)
  const byTurn = new Map<number, Array<Compaction>>()
  const afterLast: Array<Compaction> = []
  for (const e of entries) {
    if (e.type !== "compaction") continue
    const turn = e.rule.from_turn
    if (turn >= count) afterLast.push(e)
    else byTurn.set(turn, [...(byTurn.get(turn) ?? []), e])
  }
  return { byTurn, afterLast }
}

/** A compaction as a Markdown quote: range, when, what it does; then its summary. */
const compactionBlock = (c: Compaction): string => {
  // D50: an automatic compaction says so, so that a reader knows nobody asked for it.
  const auto = c.rule.source === "auto" ? " (automatic)" : ""
  const head = `> **Compaction**${auto} of ${turnsText(c.rule)} · ${when(c.rule.timestamp)}`
  if (c.rule.summary === undefined) return `${head}: for the model, ${describeRule(c.rule)}.`
  const quoted = c.rule.summary
    .split("\n")
    .map((line) => (line === "" ? ">" : `> ${line}`))
    .join("\n")
  return `${head}: the model sees this summary instead:\n>\n${quoted}`
}

/**
 * The conversation as a person reads it. Turns are numbered from 1;
 * timestamps are shown in RFC 3339 (UTC); config deltas are not shown;
 * compactions are shown at the first turn they cover.
 *
 * @example
 * ```ts
 * import { renderMarkdown } from "parley/domain/render/Render"
 * import type { StreamEntry } from "parley/domain/event/ConversationEvent"
 * declare const entries: ReadonlyArray<StreamEntry>
 * renderMarkdown({ id: "17738399468", entries }).startsWith("# Conversation jp-c17738399468") // true
 * ```
 */
export const renderMarkdown = (conversation: {
  readonly id: string
  readonly title?: string | undefined
  readonly entries: ReadonlyArray<StreamEntry>
  /** Its labels (JP RFD 101), one line under the heading. */
  readonly labels?: ReadonlyArray<Label> | undefined
}): string => {
  const { complete, incomplete } = splitIncompleteTurn(conversation.entries)
  const out: Array<string> = []
  const heading =
    conversation.title !== undefined && conversation.title.length > 0
      ? conversation.title
      : `Conversation jp-c${conversation.id}`
  out.push(`# ${heading}`)
  if (heading !== `Conversation jp-c${conversation.id}`) out.push(`Conversation \`jp-c${conversation.id}\``)
  if (conversation.labels !== undefined && conversation.labels.length > 0)
    out.push(`Labels: ${Labels.text(conversation.labels)}`)
  const all = turns(complete)
  const { byTurn, afterLast } = placeCompactions(conversation.entries)
  const compactionsAt = (turn: number) => (byTurn.get(turn) ?? []).map(compactionBlock)
  for (const turn of all) {
    out.push(`## Turn ${turn.index + 1}`, ...compactionsAt(turn.index), ...renderEvents(turn.entries))
  }
  if (incomplete !== null) {
    out.push(
      `## Turn ${all.length + 1} (incomplete)`,
      ...compactionsAt(all.length),
      ...renderEvents(incomplete.entries),
      incompleteMarker(incomplete.entries)
    )
  }
  out.push(...afterLast.map(compactionBlock))
  if (all.length === 0 && incomplete === null && !conversation.entries.some(isConversationEvent)) {
    out.push("_No messages yet._")
  }
  return out.join("\n\n") + "\n"
}

/**
 * `conversation print --format json`: a JSON array of every entry in file
 * order, with on-disk field names and shapes and the storage base64 removed
 * (config deltas, compactions and unknown entries included, as stored).
 * Any depth `JSON.parse` read is printed; an entry whose indented text
 * would pass the longest string JS can hold is the failure
 * {@link EntryTooDeep}, naming it.
 *
 * @example
 * ```ts
 * import * as Result from "effect/Result"
 * import { renderJson } from "parley/domain/render/Render"
 * import type { StreamEntry } from "parley/domain/event/ConversationEvent"
 * declare const entries: ReadonlyArray<StreamEntry>
 * const text = renderJson(entries)
 * if (Result.isSuccess(text)) JSON.parse(text.success)[0].type // "turn_start"
 * ```
 */
export const renderJson = (entries: ReadonlyArray<StreamEntry>): Result.Result<string, EntryTooDeep> => {
  if (entries.length === 0) return Result.succeed("[]\n")
  // Entry by entry, the same text as one JSON.stringify of the array, so a
  // value too deep to print as text (it grows with the square of the depth)
  // is named by its index.
  const pieces: Array<string> = []
  for (const [index, entry] of entries.entries()) {
    const json = EntryCodec.toPlainJson(entry)
    const text = indented(json)
    if (text === undefined) return Result.fail(new EntryTooDeep({ entry: index, depth: JsonText.depth(json) }))
    pieces.push(text)
  }
  return Result.succeed("[\n" + pieces.join(",\n") + "\n]\n")
}

/** `json` as indented text, one level in; undefined when it is too deep to write (a RangeError: the stack, or the longest string). */
const indented = (json: unknown): string | undefined => {
  try {
    return "  " + JsonText.stringify(json, 2).replaceAll("\n", "\n  ")
  } catch (error) {
    if (error instanceof RangeError) return undefined
    throw error
  }
}

/** An entry nested too deeply to print as indented JSON: its index in the file and its depth. */
export class EntryTooDeep extends Schema.TaggedError<EntryTooDeep>()("EntryTooDeep", {
  entry: Schema.Number,
  depth: Schema.Number
}) {}
