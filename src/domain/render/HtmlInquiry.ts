/**
 * The inquiries of the conversation page (docs/cli.md#viewing-a-conversation-as-a-page; RFD 005's "collapsible
 * sub-flow within a tool call"): who asked, the question, its answer type,
 * options and default, and how it closed, as a badge that reads like RFD 082
 * "Reader behavior" (`answered` with the value, `redacted`,
 * `cancelled (<reason>)` with unknown reasons verbatim).
 *
 * Attempts of one question are grouped: within one tool call, requests with
 * the same asker, text and answer type are one question asked again (RFD 082
 * re-asks after an invalid answer). Ids are not parsed for this: readers
 * treat inquiry ids as opaque (RFD 082).
 *
 * An answer to a secret question is never shown, even if one were on disk
 * (parley and JP store `redacted` instead).
 *
 * @example
 * ```ts
 * import { inquiryList, type InquiryPair } from "parley/domain/render/HtmlInquiry"
 * declare const call: { readonly inquiries: ReadonlyArray<InquiryPair> }
 * declare const markdown: (source: string) => string
 * inquiryList(call.inquiries, { markdown, callOpen: false })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as JsonText from "../storage/JsonText.ts"
import type { InquiryRequest } from "../event/InquiryRequest.ts"
import type { InquiryResponse } from "../event/InquiryResponse.ts"
import type { InquirySource } from "../event/InquirySource.ts"
import * as CancellationReason from "../event/CancellationReason.ts"
import * as QuestionPolicy from "../tool/QuestionPolicy.ts"
import { escapeHtml, jsonBlock, timeTag } from "./HtmlText.ts"

/** A question and the response that closed it, if any. */
export interface InquiryPair {
  readonly request: InquiryRequest
  readonly response: InquiryResponse | null
}

/** How inquiries are drawn: Markdown for question text, and whether the owning tool call is still running. */
export interface InquiryContext {
  readonly markdown: (source: string) => string
  /** True when the tool call has no response yet, so an unanswered question is still open. */
  readonly callOpen: boolean
  /** The turn is being run now: an open question waits for an answer here, not for a resume. */
  readonly running?: boolean
}

/** What each known cancellation reason means, for people (RFD 082). */
export const REASON_NOTE: Readonly<Record<CancellationReason.KnownCancellationReason, string>> = {
  user: "the person cancelled the question",
  backend_error: "the backend that was to answer failed",
  no_prompt_backend: "no person could be asked (no terminal)",
  assistant_routing_denied: "the question may not be answered by the assistant",
  invalid_static_answer: "the answer configured for it does not fit the question"
}

/**
 * Groups attempts of one question (same asker, text and answer type), in the
 * order their first attempt was asked.
 *
 * @example
 * ```ts
 * import { groupAttempts, type InquiryPair } from "parley/domain/render/HtmlInquiry"
 * declare const ask1: InquiryPair, ask2: InquiryPair, askOther: InquiryPair
 * groupAttempts([ask1, ask2, askOther]).map((g) => g.length) // [2, 1] when ask2 repeats ask1
 * ```
 */
export const groupAttempts = (pairs: ReadonlyArray<InquiryPair>): Array<Array<InquiryPair>> => {
  const groups = new Map<string, Array<InquiryPair>>()
  const out: Array<Array<InquiryPair>> = []
  for (const p of pairs) {
    const q = p.request
    const key = JSON.stringify([q.source, q.question.text, q.question.answer_type])
    const group = groups.get(key)
    if (group !== undefined) group.push(p)
    else {
      const fresh = [p]
      groups.set(key, fresh)
      out.push(fresh)
    }
  }
  return out
}

const asker = (s: InquirySource): string => {
  switch (s.source) {
    case "tool":
      return `tool <code>${escapeHtml(s.name)}</code>`
    case "other":
      return `other: <code>${escapeHtml(s.name)}</code>`
    case "assistant":
      return "the assistant"
    case "user":
      return "the user"
  }
}

const badge = (kind: string, text: string): string => `<span class="badge b-${kind}">${escapeHtml(text)}</span>`
const note = (text: string): string => ` <span class="note">${escapeHtml(text)}</span>`

const valueHtml = (value: unknown): string => {
  const json = JsonText.shown(value) ?? "null"
  return json.length <= 160 ? ` <code class="value">${escapeHtml(json)}</code>` : jsonBlock(value)
}

/** The outcome of one attempt, as a badge and, for answers, the value. */
export const outcomeHtml = (pair: InquiryPair, ctx: InquiryContext): string => {
  const r = pair.response
  if (r === null) {
    // While the turn runs, the page's script puts the question's form in the place left for it.
    if (ctx.callOpen && ctx.running === true)
      return badge("open", "waiting for you") + `<div class="ask" data-inquiry="${escapeHtml(pair.request.id)}"></div>`
    return ctx.callOpen
      ? badge("open", "waiting for an answer") + note("resuming the turn asks it again")
      : badge("none", "no answer recorded")
  }
  switch (r.outcome) {
    case "answered":
      return QuestionPolicy.of(pair.request.question).redact
        ? badge("answered", "answered") + note("a secret: the answer is not shown")
        : badge("answered", "answered") + valueHtml(r.answer)
    case "redacted":
      return badge("redacted", "redacted") + note("a secret answer: given to the tool, never stored")
    case "cancelled":
      return (
        badge("cancelled", `cancelled (${r.reason})`) +
        note(
          CancellationReason.isKnown(r.reason) ? REASON_NOTE[r.reason] : "a reason this version of parley does not know"
        )
      )
  }
}

const questionMeta = (q: InquiryRequest): string => {
  const type = q.question.answer_type
  const parts = [`answer type <code>${escapeHtml(type.type)}</code>`]
  if (q.question.default !== undefined)
    parts.push(`default <code>${escapeHtml(JsonText.shown(q.question.default) ?? "null")}</code>`)
  let html = `<div class="q-meta">${parts.join(" · ")}</div>`
  if (type.type === "select") {
    const def = q.question.default === undefined ? undefined : JsonText.shown(q.question.default)
    const items = type.options.map((o) => {
      const value = JsonText.shown(o.value) ?? "null"
      const desc = o.description === undefined ? "" : ` <span class="desc">${escapeHtml(o.description)}</span>`
      return `<li><code>${escapeHtml(value)}</code>${desc}${value === def ? ` <span class="tag">default</span>` : ""}</li>`
    })
    html += `<ul class="options">${items.join("")}</ul>`
  }
  return html
}

const attemptHtml = (pair: InquiryPair, n: number, many: boolean, ctx: InquiryContext): string => {
  const kind = pair.response === null ? (ctx.callOpen ? "open" : "none") : pair.response.outcome
  const label = many ? `<span class="attempt-n">attempt ${n}</span> ` : ""
  return (
    `<li class="attempt o-${kind}" data-inquiry-id="${escapeHtml(pair.request.id)}">${label}` +
    `<span class="outcome">${outcomeHtml(pair, ctx)}</span></li>`
  )
}

/** One question with all its attempts. */
export const inquiryGroup = (group: ReadonlyArray<InquiryPair>, ctx: InquiryContext): string => {
  const first = group[0]!.request
  const many = group.length > 1
  const attempts = group.map((p, i) => attemptHtml(p, i + 1, many, ctx)).join("")
  const count = many ? ` · asked ${group.length} times` : ""
  return (
    `<li class="inquiry src-${first.source.source}">` +
    `<div class="q-head">Asked by ${asker(first.source)} · ${timeTag(first.timestamp)}${count}</div>` +
    `<div class="q-text md">${ctx.markdown(first.question.text)}</div>` +
    questionMeta(first) +
    `<ol class="attempts">${attempts}</ol></li>`
  )
}

/** Every question of a tool call (or of a turn, for those outside any call), in order. */
export const inquiryList = (pairs: ReadonlyArray<InquiryPair>, ctx: InquiryContext): string =>
  pairs.length === 0
    ? ""
    : `<ol class="inquiries">${groupAttempts(pairs)
        .map((g) => inquiryGroup(g, ctx))
        .join("")}</ol>`
