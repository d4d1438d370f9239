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
 * 100,000 deltas on a loaded machine.
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
 * The JSON size of the object measured last, kept while the next one asked
 * is the same: the events of one call follow each other (its four to six
 * events show the same arguments; a question's opening and closing, the
 * same question). A `WeakMap` of every object measured cost more than it
 * saved (an ephemeron per call, microseconds each).
 */
class LastSize {
  private value: object | undefined
  private size = 0

  of(value: object): number {
    if (value !== this.value) {
      this.size = JSON.stringify(value).length
      this.value = value
    }
    return this.size
  }
}

const lastArguments = new LastSize()
const lastQuestion = new LastSize()

/** A shown call's size: `{"id":…,"name":…,"arguments":…}`. */
const callSize = (call: RunEvent.ToolCall): number =>
  32 + call.id.length + call.name.length + lastArguments.of(call.arguments)

/** One field's JSON size: a string's without its escapes, a call's or a question's as measured last, the rest measured. */
const fieldSize = (key: string, value: unknown): number => {
  switch (typeof value) {
    case "string":
      return value.length + 2
    case "boolean":
      return value ? 4 : 5
    case "object":
      if (value === null) return 4
      if (key === "call" && isToolCall(value)) return callSize(value)
      if (key === "question") return lastQuestion.of(value)
      // An approval's `arguments` are its call's.
      return key === "arguments" ? lastArguments.of(value) : JSON.stringify(value).length
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

/**
 * An estimate of an event's JSON size, for the byte bounds: exact enough for
 * text (the text and its frame); for the rest, the sum of its fields
 * (exact but for escapes in strings), the arguments and the question its
 * events share measured once (a `JSON.stringify` of every whole event was
 * a twentieth of the coordinator bench, docs/benchmarks.md).
 */
export const sizeOf = (event: RunEvent.RunEvent): number => {
  if (event._tag === "TextDelta" || event._tag === "ReasoningDelta") return event.text.length + 40
  let size = 1
  for (const key in event) {
    const value: unknown = Reflect.get(event, key)
    // `"key":value,` (the last comma is the closing brace); an undefined field is not written.
    if (value !== undefined) size += key.length + 4 + fieldSize(key, value)
  }
  return size
}
