/**
 * The live view's bounds and what a follower is told when it cannot go on
 * (RFD 027 "a late client sees the turn whole", within bounds): a run keeps
 * its last events for replay (`REPLAY`), and each follower may fall a
 * bounded way behind (`BEHIND`) before it is closed, so one client that
 * stops reading costs the run and the other clients nothing but that bound.
 *
 * - `LiveViewLagged`: the follower fell more than `BEHIND` behind; `last` is
 *   the sequence number of the last event it was given. Subscribing again
 *   after `last` (an SSE `Last-Event-ID`, `Subscribe({ after })`) goes on
 *   without a gap or a duplicate while the replay still holds what follows.
 * - `LiveViewGone`: what follows `after` is no longer kept (or the run is
 *   over and nothing follows): `ended` is the sequence number of the run's
 *   `Stopped` (null while it runs), `latest` the last one published. The
 *   stored conversation is the record; run events such as text deltas are
 *   not stored, only what they built (the reply, the tool calls, the
 *   answers).
 *
 * @example
 * ```ts
 * import * as LiveView from "parley/domain/run/LiveView"
 * new LiveView.LiveViewLagged({ last: 41 }).message
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type * as RunEvent from "./RunEvent.ts"

/** A bound on events: at most `events` of them and at most `bytes` of their JSON. */
export interface Bound {
  readonly events: number
  readonly bytes: number
}

/**
 * What a run keeps for followers that reconnect: its last 100,000 events, at
 * most 16 MiB of their JSON. A server relaying a run the scripted model
 * streams (faster than any model) resumes its subscription from here when it
 * falls behind: 20,000 events was less than it fell behind in a run of
 * 100,000 deltas on a loaded machine. (Nobody following, the hub may
 * measure a tool call's events in batches: until then it holds up to 8,191
 * more of them, whose arguments, questions and results are the
 * conversation's own, `layers/RunEventsLive.ts`.)
 */
export const REPLAY: Bound = { events: 100_000, bytes: 16 * 1024 * 1024 }

/**
 * How far one follower may fall behind before it is closed: 20,000 events or
 * 1 MiB of their JSON. A client that stopped reading holds at most about
 * twice that in the server (its queue, and the chunk its connection is stuck
 * on) until it is closed.
 */
export const BEHIND: Bound = { events: 20_000, bytes: 1024 * 1024 }

/** The follower fell too far behind and was closed; it resumes after `last`. */
export class LiveViewLagged extends Schema.TaggedError<LiveViewLagged>()("LiveViewLagged", {
  last: Schema.Number
}) {
  override get message() {
    return `This follower fell too far behind the run and was closed after event ${this.last}; subscribe again after ${this.last} to go on.`
  }
}

/** What follows `after` is not kept (or the run is over); the stored conversation is the record. */
export class LiveViewGone extends Schema.TaggedError<LiveViewGone>()("LiveViewGone", {
  after: Schema.Number,
  latest: Schema.Number,
  ended: Schema.NullOr(Schema.Number)
}) {
  override get message() {
    const where = this.ended === null ? `the run is at event ${this.latest}` : `the run ended at event ${this.ended}`
    return `The live view no longer holds the events after ${this.after} (${where}); the stored conversation is the record (text deltas are not stored, only the reply they built).`
  }
}

/** Why a follower's stream stopped before the run's end. */
export type Lost = LiveViewLagged | LiveViewGone

/** The follower errors, as a schema (they cross the host's socket). */
export const LostSchema = Schema.Union([LiveViewLagged, LiveViewGone])

/**
 * The JSON sizes of the objects a run's events share, measured once each: a
 * call's arguments (in each of its four to six events) and a question (in
 * its opening and its closing). Keyed by the object itself, for the hub
 * that measures (its events only): the calls of a run interleave, so the
 * size of the object measured last, kept before, was measured again for
 * most events (a `JSON.stringify` each, docs/benchmarks.md#coordinator). A
 * `WeakMap` costs every collection an ephemeron per entry; this map holds
 * what it measured, so it holds little: it is emptied past 4,096 objects or
 * 1 MiB of their JSON (a hub's replay may have dropped them, and a server's
 * relay holds its own copies), and an object of more than 16 KiB is kept
 * alone, the last one measured.
 */
export class Sizes {
  private readonly known = new Map<object, number>()
  private bytes = 0
  private large: object | undefined
  private largeSize = 0

  of(value: object): number {
    if (value === this.large) return this.largeSize
    const known = this.known.get(value)
    if (known !== undefined) return known
    const size = JSON.stringify(value).length
    if (size > 16 * 1024) {
      this.large = value
      this.largeSize = size
      return size
    }
    if (this.known.size >= 4096 || this.bytes + size > 1024 * 1024) this.clear()
    this.known.set(value, size)
    this.bytes += size
    return size
  }

  /** Forgets every object measured (a hub's new run). */
  clear(): void {
    this.known.clear()
    this.bytes = 0
    this.large = undefined
  }
}

/** Measures every time (no hub to keep sizes for). */
const measured: Pick<Sizes, "of"> = { of: (value) => JSON.stringify(value).length }

/** A shown call's size: `{"id":…,"name":…,"arguments":…}`. */
const callSize = (call: RunEvent.ToolCall, sizes: Pick<Sizes, "of">): number =>
  32 + call.id.length + call.name.length + sizes.of(call.arguments)

/** One field's JSON size: a string's without its escapes, a call's or a question's as measured once, the rest measured. */
const fieldSize = (key: string, value: unknown, sizes: Pick<Sizes, "of">): number => {
  switch (typeof value) {
    case "string":
      return text(value)
    case "boolean":
      return bool(value)
    case "object":
      if (value === null) return 4
      if (key === "call" && isToolCall(value)) return callSize(value, sizes)
      // An approval's `arguments` are its call's.
      if (key === "question" || key === "arguments") return sizes.of(value)
      return JSON.stringify(value).length
    default:
      return JSON.stringify(value)?.length ?? 0
  }
}

const isToolCall = (value: object): value is RunEvent.ToolCall =>
  "id" in value &&
  typeof value.id === "string" &&
  "name" in value &&
  typeof value.name === "string" &&
  "arguments" in value &&
  typeof value.arguments === "object" &&
  value.arguments !== null

/** A field's size: `"key":`, its value, and the comma after it (the last comma is the closing brace). */
const field = (key: string, value: number): number => key.length + 4 + value

/** A string's JSON size, without its escapes. */
const text = (value: string): number => value.length + 2

const bool = (value: boolean): number => (value ? 4 : 5)

/** An optional string field: nothing when absent. */
const optional = (key: string, value: string | undefined): number => (value === undefined ? 0 : field(key, text(value)))

/** `{` and the event's tag. */
const head = (tag: string): number => 1 + field("_tag", text(tag))

/** `{"source":…}` and its `name` when it has one. */
const sourceSize = (source: RunEvent.Of<"QuestionOpened">["source"]): number =>
  1 + field("source", text(source.source)) + ("name" in source ? field("name", text(source.name)) : 0)

/** `{"_tag":…}` and its one field. */
const outcomeSize = (outcome: RunEvent.Of<"QuestionClosed">["outcome"]): number => {
  switch (outcome._tag) {
    case "Answered":
      return head(outcome._tag) + field("answer", fieldSize("answer", outcome.answer, measured))
    case "Redacted":
      return head(outcome._tag)
    case "Cancelled":
      return head(outcome._tag) + field("reason", text(outcome.reason))
  }
}

/** What a question's opening and closing both carry: its id, kind, call and question. */
const questionFields = (event: RunEvent.Of<"QuestionOpened" | "QuestionClosed">, sizes: Pick<Sizes, "of">): number =>
  head(event._tag) +
  field("inquiry_id", text(event.inquiry_id)) +
  field("kind", text(event.kind)) +
  field("call", callSize(event.call, sizes)) +
  field("question", sizes.of(event.question))

/**
 * The events a tool call publishes (its start, its questions' opening and
 * closing, its end), sized field by field as the general walk below would:
 * that walk reads every event's fields by name, one shape after another,
 * and cost about a microsecond an event (docs/benchmarks.md#coordinator).
 * `test/domain/run/LiveView.test.ts` holds the two equal.
 */
const callEventSize = (event: RunEvent.RunEvent, sizes: Pick<Sizes, "of">): number | undefined => {
  switch (event._tag) {
    case "ToolStarted":
      return head(event._tag) + field("call", callSize(event.call, sizes)) + field("resumed", bool(event.resumed))
    case "ToolFinished": {
      const response =
        1 + field("content", text(event.response.content)) + field("is_error", bool(event.response.is_error))
      return (
        head(event._tag) +
        field("call", callSize(event.call, sizes)) +
        field("ran", bool(event.ran)) +
        field("response", response)
      )
    }
    case "QuestionOpened":
      return (
        questionFields(event, sizes) +
        field("source", sourceSize(event.source)) +
        field("audience", text(event.audience)) +
        field("since", text(event.since)) +
        optional("label", event.label) +
        optional("tool", event.tool) +
        (event.arguments === undefined ? 0 : field("arguments", sizes.of(event.arguments)))
      )
    case "QuestionClosed":
      return (
        questionFields(event, sizes) +
        field("by", text(event.by)) +
        field("answered_by", text(event.answered_by)) +
        optional("via", event.via) +
        field("outcome", outcomeSize(event.outcome))
      )
    default:
      return undefined
  }
}

/**
 * An estimate of an event's JSON size, for the byte bounds: exact enough for
 * text (the text and its frame); for the rest, the sum of its fields
 * (exact but for escapes in strings), the arguments and the question its
 * events share measured once by `sizes` (a `JSON.stringify` of every whole
 * event was a twentieth of the coordinator bench, docs/benchmarks.md); without
 * it, measured each time.
 */
export const sizeOf = (event: RunEvent.RunEvent, sizes: Pick<Sizes, "of"> = measured): number => {
  if (event._tag === "TextDelta" || event._tag === "ReasoningDelta") return event.text.length + 40
  const known = callEventSize(event, sizes)
  if (known !== undefined) return known
  let size = 1
  for (const key in event) {
    const value: unknown = Reflect.get(event, key)
    // `"key":value,` (the last comma is the closing brace); an undefined field is not written.
    if (value !== undefined) size += key.length + 4 + fieldSize(key, value, sizes)
  }
  return size
}
