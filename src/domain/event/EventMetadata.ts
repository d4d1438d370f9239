/**
 * The free-form metadata map of a conversation event (provider signatures,
 * rendered arguments…). Opaque to parley; omitted on disk when empty.
 *
 * @example
 * ```ts
 * import { EventMetadata } from "parley/domain/event/EventMetadata"
 * const m: EventMetadata = { anthropic_thinking_signature: "c2ln" }
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * The free-form metadata map of a conversation event (provider signatures,
 * rendered arguments…). Opaque to parley; omitted on disk when empty.
 *
 * @example
 * ```ts
 * import { EventMetadata } from "parley/domain/event/EventMetadata"
 * const m: EventMetadata = { anthropic_thinking_signature: "c2ln" }
 * ```
 */
export const EventMetadata = Schema.Record(Schema.String, Schema.Json)
export type EventMetadata = typeof EventMetadata.Type

/** The `metadata` field of every event class: defaults to `{}` on construction. */
export const metadataField = EventMetadata.pipe(Schema.withConstructorDefault(Effect.succeed({})))

/**
 * No metadata: one object for every event made without any, frozen, as
 * nothing changes an event's metadata in place. A new `{}` for each was one
 * more object a run kept per recorded event (docs/benchmarks.md#coordinator).
 */
export const empty: EventMetadata = Object.freeze({})

/**
 * parley's own metadata key on an `inquiry_request` (docs/mcp.md#rounds-2026-07-28): what the
 * executor needs to carry the asking tool call on after a crash (an MCP
 * server's open `input_required` round with its `requestState`). JP treats
 * metadata as opaque, so the key is kept and ignored there.
 */
export const executorState = "parley_executor_state"

/**
 * parley's metadata key on an `inquiry_response` answered with `Y`/`N`
 * (docs/decisions.md#remembered-answers-recorded): the answer is remembered for the rest of the turn, so a turn
 * resumed after a crash rebuilds that memory from its events instead of
 * asking again. JP ignores it.
 */
export const rememberedAnswer = "parley_remembered"

/**
 * parley's metadata key on an `inquiry_request` that records a permission
 * decision (`true`; `PermissionInquiry`, docs/decisions.md#permission-decisions-recorded): the decision is recorded
 * the moment it is typed, before the tool runs, so a resumed turn does not
 * ask again. Earlier parley put `"y"`/`"n"` under this key on the call's
 * `tool_call_response` for a remembered decision; resume still reads that.
 * JP ignores it.
 */
export const rememberedPermission = "parley_permission"

/**
 * parley's metadata key on an `inquiry_request` for an approval a running
 * tool asks of a person with nobody at the run's terminal (an MCP server's
 * URL request, its filled-in form before it is sent:
 * docs/mcp.md#approvals-with-nobody-at-the-terminal): what it approves, as
 * a JSON object (the URL and the server's message; the form's values), so a
 * waiting turn lists it as an approval with those arguments. JP ignores it.
 */
export const approval = "parley_approval"

/**
 * parley's metadata key on the `inquiry_response` of a permission decision
 * whose person edited the call's arguments before it ran (JP's `run =
 * "edit"`, or `e` at the permission prompt; docs/tools.md#editing-a-calls-arguments):
 * the arguments the tool ran with, a JSON object. The `tool_call_request`
 * keeps what the model asked for; the tool, the run's events and a resumed
 * turn use these. JP ignores it.
 */
export const editedArguments = "parley_arguments"

/**
 * parley's metadata key on a `tool_call_response` whose result a person
 * reviewed before the model saw it (JP's `result = "ask" | "edit"`, or
 * `skip`; docs/tools.md#reviewing-a-result): `delivered`, `edited` (the
 * response holds the edited text), `skipped` or `cancelled`. JP ignores it.
 */
export const resultReview = "parley_result_review"
