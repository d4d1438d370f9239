/**
 * One line of `parley query --format jsonl` (RFD 027's NDJSON output): a
 * {@link RunEvent.RunEvent} as a JSON object whose `type` names the event in
 * snake_case (`text_delta`, `tool_finished`, …) and whose other fields are
 * the event's own, encoded by its Schema. The shape is the run event's, so a
 * reader of the stream and a follower of the live view (`_tag`) see the same
 * fields; only the discriminator differs, named as the rest of parley's JSON
 * names things. A secret never appears: the events carry none (a closed
 * secret question is `Redacted`, a tool's echo of one is scrubbed).
 *
 * @example
 * ```ts
 * import * as RunEvent from "parley/domain/run/RunEvent"
 * import * as RunEventLine from "parley/domain/run/RunEventLine"
 * RunEventLine.encode(RunEvent.make.TextDelta({ text: "Hi" })) // { type: "text_delta", text: "Hi" }
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Struct from "effect/Struct"
import * as RunEvent from "./RunEvent.ts"

/**
 * A variant whose `_tag` is written as `type`, with the snake_case name
 * (`Schema.Literal(type).transform(tag)`: the line's value decodes to the tag).
 */
const line = <const Tag extends string, const Fields extends Schema.Struct.Fields, const Type extends string>(
  variant: Schema.TaggedStruct<Tag, Fields>,
  type: Type
) =>
  variant
    .mapFields(Struct.assign({ _tag: Schema.Literal(type).transform(variant.fields._tag.schema.literal) }))
    .pipe(Schema.encodeKeys({ _tag: "type" }))

/** Every run event as a line: the `type` of each, stable (documented in docs/cli.md#machine-output). */
export const RunEventLine = Schema.Union([
  line(RunEvent.ConversationKnown, "conversation_known"),
  line(RunEvent.ModelChosen, "model_chosen"),
  line(RunEvent.Waiting, "waiting"),
  line(RunEvent.TextDelta, "text_delta"),
  line(RunEvent.ReasoningDelta, "reasoning_delta"),
  line(RunEvent.ReplyFinished, "reply_finished"),
  line(RunEvent.ToolCallsAnnounced, "tool_calls_announced"),
  line(RunEvent.ToolStarted, "tool_started"),
  line(RunEvent.ToolFinished, "tool_finished"),
  line(RunEvent.QuestionOpened, "question_opened"),
  line(RunEvent.QuestionClosed, "question_closed"),
  line(RunEvent.Warning, "warning"),
  line(RunEvent.MessageDelivered, "message_delivered"),
  line(RunEvent.Stopped, "stopped")
])

/** A run event as its line's JSON object. */
export const encode: (event: RunEvent.RunEvent) => typeof RunEventLine.Encoded = Schema.encodeSync(RunEventLine)

/** A line's JSON object back as its run event. */
export const decode: (line: unknown) => RunEvent.RunEvent = Schema.decodeUnknownSync(RunEventLine)
