/**
 * `conversation print --format html` (docs/cli.md#viewing-a-conversation-as-a-page): one self-contained page
 * that shows a conversation the way RFD 005 imagined a viewer, with every
 * question inside the tool call that asked it.
 *
 * - Turns in order; the person's messages and the assistant's replies as
 *   Markdown (through the injected {@link MarkdownToHtml}, which must never
 *   pass HTML through); reasoning collapsed.
 * - Each tool call is a `<details>` block: its arguments, its inquiries in
 *   order (see `HtmlInquiry.ts`), its result. Failed calls stand out. Which
 *   inquiry belongs to which call, and which response closes which request,
 *   come from the stream rules (`IncompleteTurn.analyze`), not from here.
 * - An incomplete last turn (RFD 023) is marked with its state, the status of
 *   each tool call, and what resuming would do — with the commands that
 *   resume or drop it when the caller gives them ({@link HtmlOptions}; the
 *   CLI renders them, docs/decisions.md#errors-carry-data).
 * - Everything from the conversation is escaped; the page has no script, a
 *   Content-Security-Policy that forbids loading anything, and no `src`,
 *   `href` (other than `#` links within the page) or `@import`.
 * - A hidden tool's call (RFD 083 `style.hidden`: `ask_user`) is not drawn;
 *   its questions are, where it was called.
 * - Long tool results and arguments are clipped with a "show all".
 * - Each compaction (RFD 064) is an aside at the top of the first turn it
 *   covers: its range, what the model sees instead, and its summary.
 *
 * The input is the decoded entries (storage base64 removed), the same data as
 * `--format json`.
 *
 * @example
 * ```ts
 * import { renderHtml } from "parley/domain/render/Html"
 * import type { Conversation } from "parley/domain/storage/Conversation"
 * declare const c: Conversation
 * declare const markdownToHtml: (source: string) => string // e.g. parley/layers/render/SafeMarkdown
 * const page = renderHtml({ id: c.id, title: c.metadata.title, entries: c.entries }, { markdown: markdownToHtml })
 * ```
 *
 * @since 0.1.0
 */
import type { Json, JsonObject } from "effect/Schema"
import { type Compaction, describeRule, turnsText } from "../event/Compaction.ts"
import * as JsonText from "../storage/JsonText.ts"
import * as EventOverlay from "../event/EventOverlay.ts"
import * as ToolStyle from "../tool/ToolStyle.ts"
import * as Labels from "../storage/Labels.ts"
import type { Label } from "../storage/Labels.ts"
import type { StreamEntry } from "../event/ConversationEvent.ts"
import { isConversationEvent } from "../event/ConversationEvent.ts"
import type { ChatRequest } from "../event/ChatRequest.ts"
import type { ChatResponse } from "../event/ChatResponse.ts"
import type { IncompleteSummary, ToolCallStatus, TurnAnalysis } from "../stream/IncompleteTurn.ts"
import { analyze, splitIncompleteTurn, summaryOf } from "../stream/IncompleteTurn.ts"
import { turns } from "../stream/Turns.ts"
import { type InquiryPair, inquiryList } from "./HtmlInquiry.ts"
import { PAGE_CSS } from "./HtmlStyle.ts"
import {
  CLIP_ARGUMENT_LINES,
  escapeHtml,
  formatCount,
  icon,
  jsonBlock,
  oneLine,
  preBlock,
  timeTag
} from "./HtmlText.ts"
import { INCOMPLETE_LABEL, placeCompactions } from "./Render.ts"

/** Markdown → HTML that is safe to embed: no HTML from the source, no `src`/`href` that leaves the page. */
export type MarkdownToHtml = (source: string) => string

/** What the page is made from. */
export interface HtmlConversation {
  readonly id: string
  readonly title?: string | undefined
  readonly entries: ReadonlyArray<StreamEntry>
  /** Its labels (JP RFD 101), shown beside its id. */
  readonly labels?: ReadonlyArray<Label> | undefined
}

/** Counters for the page header, filled while the turns are drawn. */
interface Stats {
  calls: number
  questions: number
  errors: number
}

/**
 * The commands that resume or drop the incomplete turn, as the caller
 * renders them (the CLI: `Hint.resume` / `Hint.discard`, which name parley as
 * it was started and repeat `--storage`). The page shows them as given.
 */
export interface IncompleteCommands {
  readonly resume: string
  readonly discard: string
}

/**
 * A page served live (`parley serve`, docs/serve.md): it loads one script from
 * its own server (`script`, a path) and may connect back to it; the live
 * part (events as they happen, forms for open questions) is drawn by that
 * script into `<section id="live">`, whose `data-` attributes carry the
 * conversation id and the extra markup the server adds (`controls`: escaped
 * HTML of its own, never conversation text).
 */
export interface LivePage {
  readonly script: string
  readonly controls: string
  readonly css: string
  /**
   * A run is going on the conversation's last turn: that turn is drawn as
   * running, not incomplete (no "resuming" advice), and each of its open
   * questions leaves a place (`.ask[data-inquiry]`) where the script puts
   * its form.
   */
  readonly running?: boolean
  /** Markup put above the turns (the server's own, e.g. the "Waiting for you" bar). */
  readonly top?: string
  /** Markup put before `<main>` (the server's own navigation). */
  readonly nav?: string
  /** The body's `data-state` (the script reads it as the page loads). */
  readonly state?: string
  /** How many questions wait: the title says so before the script runs (none when 0). */
  readonly waiting?: number
}

/** How a page is drawn: the Markdown renderer, and the commands shown for an incomplete turn (none when absent). */
export interface HtmlOptions {
  readonly markdown: MarkdownToHtml
  readonly commands?: IncompleteCommands
  readonly live?: LivePage
}

const STATIC_FOOTER =
  "<footer>Written by <code>parley conversation print --format html</code>. This page runs no script and loads nothing.</footer>"
const LIVE_FOOTER = "<footer>Served live: new events appear as they happen.</footer>"
const STATIC_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
const LIVE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'"

interface Ctx {
  readonly markdown: MarkdownToHtml
  readonly commands: IncompleteCommands | undefined
  readonly stats: Stats
  /** The last turn is being run now (`LivePage.running`). */
  readonly running: boolean
}

const STATUS_MARK: Readonly<Record<ToolCallStatus["status"], string>> = {
  completed: icon("completed"),
  failed: icon("failed"),
  pending: icon("pending"),
  "waiting-for-input": icon("waiting-for-input")
}

const STATUS_TEXT: Readonly<Record<ToolCallStatus["status"], string>> = {
  completed: "completed",
  failed: "failed",
  pending: "pending execution",
  "waiting-for-input": "waiting for input"
}

const argValue = (v: Json): string => {
  if (typeof v === "string") {
    return v.includes("\n") || v.length > 120
      ? preBlock(v, "text", CLIP_ARGUMENT_LINES)
      : `<code class="str">${escapeHtml(v)}</code>`
  }
  const json = JsonText.shown(v) ?? "null"
  return json.length <= 120 ? `<code>${escapeHtml(json)}</code>` : jsonBlock(v, CLIP_ARGUMENT_LINES)
}

const argsHtml = (args: JsonObject): string => {
  const keys = Object.keys(args)
  if (keys.length === 0) return `<div class="args"><h4>Arguments</h4><p class="note">none</p></div>`
  const rows = keys.map((k) => `<dt>${escapeHtml(k)}</dt><dd>${argValue(args[k]!)}</dd>`)
  return `<div class="args"><h4>Arguments</h4><dl>${rows.join("")}</dl></div>`
}

/** A one-line hint of what the call was about: its first string argument, else its arguments as JSON. */
const argsPreview = (args: JsonObject): string => {
  for (const v of Object.values(args)) if (typeof v === "string" && v.trim() !== "") return oneLine(v, 60)
  const json = JsonText.shown(args)!
  return json === "{}" ? "" : oneLine(json, 60)
}

const resultHtml = (call: ToolCallStatus): string => {
  const r = call.response
  if (r === null)
    return `<div class="result pending"><h4>Result</h4><p class="note">No result yet: ${STATUS_TEXT[call.status]}.</p></div>`
  const body = r.content === "" ? `<p class="note">(empty)</p>` : preBlock(r.content)
  return `<div class="result${r.is_error ? " error" : ""}"><h4>${r.is_error ? "Error" : "Result"} · ${timeTag(r.timestamp)}</h4>${body}</div>`
}

const toolCallHtml = (call: ToolCallStatus, ctx: Ctx): string => {
  const n = ++ctx.stats.calls
  const { request, status } = call
  if (status === "failed") ctx.stats.errors++
  ctx.stats.questions += call.inquiries.length
  const chips: Array<string> = []
  if (call.inquiries.length > 0)
    chips.push(
      `<span class="chip c-q">${call.inquiries.length === 1 ? "1 question" : `${call.inquiries.length} questions`}</span>`
    )
  if (status !== "completed") chips.push(`<span class="chip c-${status}">${STATUS_TEXT[status]}</span>`)
  const summary =
    `<summary><span class="mark m-${status}" title="${STATUS_TEXT[status]}">${STATUS_MARK[status]}</span> ` +
    `<code class="tool-name">${escapeHtml(request.name)}</code> <span class="preview">${escapeHtml(argsPreview(request.arguments))}</span>` +
    `${chips.length > 0 ? ` <span class="chips">${chips.join(" ")}</span>` : ""}</summary>`
  const callOpen = call.response === null
  const body =
    `<div class="call-body"><div class="call-id">Tool call <code>${escapeHtml(request.id)}</code> · ${timeTag(request.timestamp)}</div>` +
    argsHtml(request.arguments) +
    (call.inquiries.length > 0
      ? `<h4>Questions</h4>${inquiryList(call.inquiries, { markdown: ctx.markdown, callOpen, running: ctx.running })}`
      : "") +
    resultHtml(call) +
    `</div>`
  const open = status === "pending" || status === "waiting-for-input" ? " open" : ""
  return `<details class="tool-call s-${status}" id="call-${n}" data-call-id="${escapeHtml(request.id)}"${open}>${summary}${body}</details>`
}

const chatRequestHtml = (e: ChatRequest, ctx: Ctx): string => {
  const author = e.author === undefined ? "" : ` <span class="author">(${escapeHtml(e.author)})</span>`
  const schema =
    e.schema === undefined
      ? ""
      : `<details class="schema"><summary>Asks for a structured reply</summary>${jsonBlock(e.schema)}</details>`
  return `<div class="msg user"><div class="who">You${author} · ${timeTag(e.timestamp)}</div><div class="md">${ctx.markdown(e.content)}</div>${schema}</div>`
}

const chatResponseHtml = (e: ChatResponse, ctx: Ctx): string => {
  if (e.message !== undefined) {
    return `<div class="msg assistant"><div class="who">Assistant · ${timeTag(e.timestamp)}</div><div class="md">${ctx.markdown(e.message)}</div></div>`
  }
  if (e.reasoning !== undefined) {
    return (
      `<details class="reasoning"><summary>Reasoning · ${timeTag(e.timestamp)} <span class="preview">${escapeHtml(oneLine(e.reasoning, 70))}</span></summary>` +
      `<div class="md">${ctx.markdown(e.reasoning)}</div></details>`
    )
  }
  return `<div class="msg assistant structured"><div class="who">Assistant (structured reply) · ${timeTag(e.timestamp)}</div>${jsonBlock(e.data ?? null)}</div>`
}

/** Inquiries outside any tool call (an assistant question, a damaged stream), shown where they were asked. */
const looseInquiryHtml = (pair: InquiryPair, ctx: Ctx): string => {
  ctx.stats.questions++
  return `<div class="loose">${inquiryList([pair], { markdown: ctx.markdown, callOpen: ctx.running, running: ctx.running })}</div>`
}

/** What the events of one turn look like, in stream order; responses are drawn inside what they answer. */
const eventsHtml = (entries: ReadonlyArray<StreamEntry>, analysis: TurnAnalysis, ctx: Ctx): Array<string> => {
  const calls = new Map<StreamEntry, ToolCallStatus>(analysis.toolCalls.map((c) => [c.request, c]))
  const loose = new Map<StreamEntry, InquiryPair>(analysis.unattachedInquiries.map((q) => [q.request, q]))
  const drawn = new Set<StreamEntry>()
  for (const c of analysis.toolCalls) {
    if (c.response !== null) drawn.add(c.response)
    for (const q of c.inquiries) if (q.response !== null) drawn.add(q.response)
  }
  for (const q of analysis.unattachedInquiries) if (q.response !== null) drawn.add(q.response)
  const out: Array<string> = []
  for (const e of entries) {
    switch (e.type) {
      case "chat_request":
        out.push(chatRequestHtml(e, ctx))
        break
      case "chat_response":
        out.push(chatResponseHtml(e, ctx))
        break
      case "tool_call_request": {
        const call = calls.get(e)
        // A hidden tool (RFD 083 `style.hidden`, `ask_user`): its questions alone, where the call was.
        if (call !== undefined && ToolStyle.isHidden(e.name))
          out.push(...call.inquiries.map((q) => looseInquiryHtml(q, ctx)))
        else if (call !== undefined) out.push(toolCallHtml(call, ctx))
        break
      }
      case "inquiry_request": {
        const pair = loose.get(e)
        if (pair !== undefined) out.push(looseInquiryHtml(pair, ctx))
        break
      }
      case "tool_call_response":
      case "inquiry_response":
        if (!drawn.has(e))
          out.push(
            `<p class="orphan">A ${e.type === "tool_call_response" ? "tool result" : "question response"} for <code>${escapeHtml(e.id)}</code>, which matches no request of this turn · ${timeTag(e.timestamp)}</p>`
          )
        break
      case "unknown": {
        const overlay = EventOverlay.describe(e.raw)
        out.push(
          overlay === undefined
            ? `<p class="note">An entry of unknown kind <code>${escapeHtml(e.kind)}</code> (kept, not shown).</p>`
            : `<p class="note">Event overlay: ${escapeHtml(overlay)}.</p>`
        )
        break
      }
      case "turn_start":
      case "config_delta":
      case "compaction":
        break
    }
  }
  return out
}

const namesOf = (names: ReadonlyArray<string>): string => names.map((n) => `<code>${escapeHtml(n)}</code>`).join(", ")

/** What `parley query --continue-turn` would do with this turn (RFD 023's resume phases). */
const resumeHtml = (
  summary: IncompleteSummary,
  analysis: TurnAnalysis,
  commands: IncompleteCommands | undefined
): string => {
  const pending = analysis.pendingToolCalls.map((c) => c.name)
  let what: string
  switch (summary.state) {
    case "waiting-for-input": {
      const open = analysis.pendingInquiries.map((q) => `“${escapeHtml(oneLine(q.request.question.text))}”`).join(", ")
      what = `runs the tool calls without a result again (${namesOf(pending)}) and asks the open question again under its recorded id (${open}); answers already given are handed back to their tools.`
      break
    }
    case "pending-tool-execution":
      what = `runs the tool calls that have no result (${namesOf(pending)}), then sends their results to the model.`
      break
    case "pending-follow-up":
      what = "sends the tool results to the model for its follow-up reply."
      break
    case "pending-llm-response":
      what = "asks the model again for a reply to the last message."
      break
  }
  return (
    `<p>Resuming ${what}</p>` +
    (commands === undefined
      ? ""
      : `<p class="commands">Resume: <code>${escapeHtml(commands.resume)}</code><br>Drop it: <code>${escapeHtml(commands.discard)}</code></p>`)
  )
}

const incompleteHtml = (
  entries: ReadonlyArray<StreamEntry>,
  analysis: TurnAnalysis,
  commands: IncompleteCommands | undefined
): string => {
  const summary = summaryOf({ entries })
  const state = summary === null ? "incomplete" : INCOMPLETE_LABEL[summary.state]
  const calls = analysis.toolCalls.map(
    (c) =>
      `<li class="m-${c.status}"><span class="mark m-${c.status}">${STATUS_MARK[c.status]}</span> <code>${escapeHtml(c.request.name)}</code> — ${STATUS_TEXT[c.status]}</li>`
  )
  return (
    `<div class="incomplete" role="status" data-state="${summary === null ? "" : summary.state}">` +
    `<p class="state">${icon("pending")} Incomplete turn (${state})</p>` +
    (calls.length > 0 ? `<ul class="call-states">${calls.join("")}</ul>` : "") +
    (summary === null ? "" : resumeHtml(summary, analysis, commands)) +
    `</div>`
  )
}

/** A compaction as an aside: range, when, what the model sees instead (its summary as Markdown). */
const compactionHtml = (c: Compaction, ctx: Ctx): string => {
  const auto = c.rule.source === "auto" ? " (automatic)" : ""
  const head = `<p class="what"><strong>Compaction</strong>${auto} of ${escapeHtml(turnsText(c.rule))} · ${timeTag(c.rule.timestamp, true)}`
  if (c.rule.summary === undefined)
    return `<aside class="compaction">${head}: for the model, ${escapeHtml(describeRule(c.rule))}.</p></aside>`
  return `<aside class="compaction">${head}: the model sees this summary instead:</p><div class="md">${ctx.markdown(c.rule.summary)}</div></aside>`
}

/** One turn as a `<section>`; `incomplete` adds RFD 023's marker. */
const turnHtml = (
  entries: ReadonlyArray<StreamEntry>,
  n: number,
  ctx: Ctx,
  incomplete: boolean,
  compactions: ReadonlyArray<Compaction>
): string => {
  const analysis = analyze({ entries })
  const first =
    entries.find((e) => isConversationEvent(e) && e.type !== "turn_start") ?? entries.find(isConversationEvent)
  const when = first !== undefined && isConversationEvent(first) ? ` ${timeTag(first.timestamp, true)}` : ""
  // A turn being run is not incomplete to the person watching it: it is running, and says nothing of resuming.
  const live = incomplete && ctx.running
  const tag = live
    ? ` <span class="chip c-running">running</span>`
    : incomplete
      ? ` <span class="chip c-incomplete">incomplete</span>`
      : ""
  return (
    `<section class="turn${incomplete ? " incomplete-turn" : ""}" id="turn-${n}">` +
    `<h2><a href="#turn-${n}">Turn ${n}</a>${tag}${when}</h2>` +
    compactions.map((c) => compactionHtml(c, ctx)).join("\n") +
    eventsHtml(entries, analysis, { ...ctx, running: live }).join("\n") +
    (incomplete && !live ? incompleteHtml(entries, analysis, ctx.commands) : "") +
    `</section>`
  )
}

const tocEntry = (entries: ReadonlyArray<StreamEntry>, n: number): string => {
  const request = entries.find((e): e is ChatRequest => e.type === "chat_request")
  const label = request === undefined ? "(no message)" : oneLine(request.content, 90)
  return `<li><a href="#turn-${n}">${escapeHtml(label === "" ? "(empty message)" : label)}</a></li>`
}

/** The page's heading, and its `<header>`: the heading, the facts line, the incomplete turn's link, the turns' list. */
const headerHtml = (
  conversation: HtmlConversation,
  { calls, questions, errors }: Stats,
  toc: ReadonlyArray<string>,
  incompleteLink: boolean
): { readonly heading: string; readonly html: string } => {
  const heading =
    conversation.title !== undefined && conversation.title.length > 0
      ? conversation.title
      : `Conversation jp-c${conversation.id}`
  const facts = [
    `<code>jp-c${escapeHtml(conversation.id)}</code>`,
    ...(conversation.labels !== undefined && conversation.labels.length > 0
      ? [`<span class="labels">${escapeHtml(Labels.text(conversation.labels))}</span>`]
      : []),
    `${formatCount(toc.length)} ${toc.length === 1 ? "turn" : "turns"}`,
    `${formatCount(calls)} tool ${calls === 1 ? "call" : "calls"}`,
    `${formatCount(questions)} ${questions === 1 ? "question" : "questions"}`,
    ...(errors > 0 ? [`<span class="err-text">${formatCount(errors)} failed</span>`] : [])
  ]
  const banner = incompleteLink
    ? `<p class="incomplete-link">${icon("pending")} <a href="#turn-${toc.length}">The last turn is incomplete</a></p>`
    : ""
  const nav = toc.length > 1 ? `<details class="toc"><summary>Turns</summary><ol>${toc.join("")}</ol></details>` : ""
  return {
    heading,
    html: `<header><h1>${escapeHtml(heading)}</h1><p class="facts">${facts.join(" · ")}</p>${banner}${nav}</header>`
  }
}

/**
 * The whole page.
 *
 * @example
 * ```ts
 * import { renderHtml } from "parley/domain/render/Html"
 * import type { StreamEntry } from "parley/domain/event/ConversationEvent"
 * declare const entries: ReadonlyArray<StreamEntry>
 * declare const markdownToHtml: (source: string) => string
 * renderHtml({ id: "17738399468", entries }, { markdown: markdownToHtml }).startsWith("<!doctype html>") // true
 * ```
 */
export const renderHtml = (conversation: HtmlConversation, options: HtmlOptions): string =>
  renderHtmlParts(conversation, options).join("")

/**
 * The whole page as pieces, in order ({@link renderHtml} joins them). A server
 * that encodes the page to bytes encodes the pieces one by one: joined, the
 * page is one string of half a megabyte or more, copied again by each step
 * that reads it whole, and a single character outside Latin-1 anywhere (the
 * served page's "←") makes all of it two bytes a character.
 */
export const renderHtmlParts = (conversation: HtmlConversation, options: HtmlOptions): Array<string> => {
  const { complete, incomplete } = splitIncompleteTurn(conversation.entries)
  const ctx: Ctx = {
    markdown: options.markdown,
    commands: options.commands,
    stats: { calls: 0, questions: 0, errors: 0 },
    running: options.live?.running === true
  }
  const all = turns(complete).map((t) => t.entries)
  const { byTurn, afterLast } = placeCompactions(conversation.entries)
  const sections = all.map((entries, i) => turnHtml(entries, i + 1, ctx, false, byTurn.get(i) ?? []))
  const toc = all.map((entries, i) => tocEntry(entries, i + 1))
  if (incomplete !== null) {
    sections.push(turnHtml(incomplete.entries, all.length + 1, ctx, true, byTurn.get(all.length) ?? []))
    toc.push(tocEntry(incomplete.entries, all.length + 1))
  }
  sections.push(...afterLast.map((c) => compactionHtml(c, ctx)))
  const header = headerHtml(conversation, ctx.stats, toc, incomplete !== null && !ctx.running)
  const live = options.live
  const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${live === undefined ? STATIC_CSP : LIVE_CSP}">
<meta name="color-scheme" content="light dark">
<meta name="generator" content="parley">
<title>${live?.waiting !== undefined && live.waiting > 0 ? `(${live.waiting}) ` : ""}${escapeHtml(header.heading)}</title>
<style>${PAGE_CSS}${live === undefined ? "" : live.css}</style>${live === undefined ? "" : `\n<script src="${escapeHtml(live.script)}" defer></script>`}
</head>
<body${live?.state === undefined ? "" : ` data-state="${escapeHtml(live.state)}"`}>
${header.html}
${live?.nav ?? ""}<main>
${live === undefined ? "" : `${live.top ?? ""}<div id="turns">`}`
  const end = `${live === undefined ? "" : `</div>\n<section id="live" data-conversation="${escapeHtml(conversation.id)}">${live.controls}</section>`}
</main>
${live === undefined ? STATIC_FOOTER : LIVE_FOOTER}
</body>
</html>
`
  const body =
    sections.length > 0
      ? sections.flatMap((s, i) => (i === 0 ? [s] : ["\n", s]))
      : [`<p class="note">No messages yet.</p>`]
  return [head, ...body, end]
}
