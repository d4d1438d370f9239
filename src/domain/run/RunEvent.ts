/**
 * What a run shows to anyone watching it (docs/decisions.md#one-run-event-stream; RFD 027's "client
 * receives events"): one typed union, published through the `RunEvents`
 * service and consumed by the terminal's status lines, `query --format
 * json` (a pure fold: `RunReport`), and — in the next steps — attached
 * terminals, the web page and the HTTP API. Nothing here is written to the
 * conversation: every event describes what the conversation already holds
 * or what the run is doing now (text as it streams, a tool running).
 *
 * Events are Schemas, so they cross a socket or an SSE stream as JSON; field
 * names are snake_case like the rest of parley's JSON. A secret never
 * appears: a closed secret question carries `Redacted`, not the answer.
 *
 * @example
 * ```ts
 * import * as RunEvent from "parley/domain/run/RunEvent"
 * const event = RunEvent.make.TextDelta({ text: "Hello" })
 * RunEvent.isEnd(event) // false
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { InquirySource } from "../event/InquirySource.ts"
import { DetachedPolicy } from "../tool/Config.ts"
import { Question } from "../tool/Question.ts"
import * as QueuedMessage from "../storage/QueuedMessage.ts"

/** A tool call as the run shows it. */
export const ToolCall = Schema.Struct({ id: Schema.String, name: Schema.String, arguments: Schema.JsonObject })
export type ToolCall = typeof ToolCall.Type

/** What a tool call ended with. */
export const ToolResult = Schema.Struct({ content: Schema.String, is_error: Schema.Boolean })
export type ToolResult = typeof ToolResult.Type

/**
 * Who answers (or answered) a question: the person (at this terminal or any
 * other answerer), the model's side call, a static answer in config, an
 * answer remembered this turn, or parley itself (a refusal, an interrupt).
 */
export const Answerer = Schema.Literals(["you", "assistant", "config", "remembered", "parley", "other"])
export type Answerer = typeof Answerer.Type

/**
 * What an open question asks (contract §8): a tool's `question`, or an
 * `approval` — may this call run? (`run = "ask"`, effect/ai
 * `needsApproval`; a boolean question answered `yes`/`no`/`always`/`never`).
 */
export const QuestionKind = Schema.Literals(["question", "approval"])
export type QuestionKind = typeof QuestionKind.Type

/**
 * Through which surface an answer came (contract §8): this run's own
 * terminal, an attached terminal, the web page, the HTTP API, another
 * runner of a cluster, `parley inbox`, `parley ask`.
 */
export const Via = Schema.Literals(["terminal", "attach", "page", "api", "cluster", "inbox", "ask"])
export type Via = typeof Via.Type

/** How a question closed. A secret answer is never carried: it is `Redacted`. */
export const QuestionOutcome = Schema.Union([
  Schema.TaggedStruct("Answered", { answer: Schema.Json }),
  Schema.TaggedStruct("Redacted", {}),
  Schema.TaggedStruct("Cancelled", { reason: Schema.String })
])
export type QuestionOutcome = typeof QuestionOutcome.Type

/**
 * Who may answer an open question (RFD 082 routing, after remembered and
 * static answers); `nobody` when it is deferred at once (the `defer` policy).
 */
export const Audience = Schema.Literals(["person", "assistant", "config", "remembered", "parley", "nobody"])
export type Audience = typeof Audience.Type

/** How a turn was left (contract §3 `incomplete`), or null when it is complete. */
export const Incomplete = Schema.NullOr(
  Schema.Struct({
    state: Schema.Literals([
      "waiting-for-input",
      "pending-tool-execution",
      "pending-follow-up",
      "pending-llm-response"
    ]),
    tool: Schema.optionalKey(Schema.String)
  })
)
export type Incomplete = typeof Incomplete.Type

/** How a run ended, as `query --format json` names it. */
export const Ending = Schema.Literals([
  "completed",
  "resumed",
  "discarded",
  "quit",
  "nothing_to_resume",
  "nothing_to_discard",
  "edit_abandoned",
  "deferred",
  "interrupted",
  "failed"
])
export type Ending = typeof Ending.Type

const StopReason = Schema.Literals(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"])

/**
 * The conversation of the run is known (`created`: it is new), and the
 * `detached` policy the run follows whatever happens to its terminal
 * (config's or the flag's, else the one the resumed turn recorded); absent:
 * the prompter's default (`PromptBackend.detachedDefault`). `title`: the
 * conversation's title when it has one (what a notification names it by).
 */
export const ConversationKnown = Schema.TaggedStruct("ConversationKnown", {
  conversation_id: Schema.String,
  created: Schema.Boolean,
  detached_policy: Schema.optionalKey(DetachedPolicy),
  title: Schema.optionalKey(Schema.String)
})
/** The model was chosen (once, when first needed). */
export const ModelChosen = Schema.TaggedStruct("ModelChosen", { model: Schema.String })
/** `true` when a model request starts, `false` once its first output (or its end) arrives. */
export const Waiting = Schema.TaggedStruct("Waiting", { waiting: Schema.Boolean })
/** Reply text as it streams. */
export const TextDelta = Schema.TaggedStruct("TextDelta", { text: Schema.String })
/** Reasoning text as it streams. */
export const ReasoningDelta = Schema.TaggedStruct("ReasoningDelta", { text: Schema.String })
/** A reply is recorded (its stop reason). */
export const ReplyFinished = Schema.TaggedStruct("ReplyFinished", { stop_reason: Schema.NullOr(StopReason) })
/** The model called tools (they run next). */
export const ToolCallsAnnounced = Schema.TaggedStruct("ToolCallsAnnounced", { calls: Schema.Array(ToolCall) })
/** A call passed its permission step and its tool is about to run (`resumed`: in a resumed turn). */
export const ToolStarted = Schema.TaggedStruct("ToolStarted", { call: ToolCall, resumed: Schema.Boolean })
/** A call's response is recorded (`ran`: false when it was skipped before running). */
export const ToolFinished = Schema.TaggedStruct("ToolFinished", {
  call: ToolCall,
  ran: Schema.Boolean,
  response: ToolResult
})
/**
 * A question is recorded and routed: what it asks (`kind`; an approval also
 * names its `tool` and the call's `arguments`), who may answer it, since
 * when, and who is asking (`label`, RFD 083 `prompt_label`: the header every
 * prompt shows, here or at an attached terminal; absent when there is none).
 */
export const QuestionOpened = Schema.TaggedStruct("QuestionOpened", {
  inquiry_id: Schema.String,
  kind: QuestionKind,
  call: ToolCall,
  question: Question,
  source: InquirySource,
  audience: Audience,
  since: Schema.String,
  label: Schema.optionalKey(Schema.String),
  tool: Schema.optionalKey(Schema.String),
  arguments: Schema.optionalKey(Schema.JsonObject)
})
/**
 * A question's response is recorded: who answered (`answered_by`; `by` is
 * its earlier name, kept), through which surface (`via`, when a person's
 * answer came through one), and how.
 */
export const QuestionClosed = Schema.TaggedStruct("QuestionClosed", {
  inquiry_id: Schema.String,
  kind: QuestionKind,
  call: ToolCall,
  question: Question,
  by: Answerer,
  answered_by: Answerer,
  via: Schema.optionalKey(Via),
  outcome: QuestionOutcome
})
/** Something the person should know (a reply cut at the token limit, a question deferred). */
export const Warning = Schema.TaggedStruct("Warning", { text: Schema.String })
/**
 * A message sent to the running turn (`conversation send`, attach, the page,
 * the API, a runner) was recorded in the conversation: `id` is its queue id,
 * `via` where it was typed, `when` whether it joined the running turn
 * (`next`, `now`) or started a turn of its own (`after`).
 */
export const MessageDelivered = Schema.TaggedStruct("MessageDelivered", {
  id: Schema.Number,
  message: Schema.String,
  via: QueuedMessage.Surface,
  when: QueuedMessage.When
})
/** The run is over: how it ended and how it left the turn. Always the last event of a run. */
export const Stopped = Schema.TaggedStruct("Stopped", { ending: Ending, incomplete: Incomplete })

/** Everything a run shows, as it happens. */
export const RunEvent = Schema.Union([
  ConversationKnown,
  ModelChosen,
  Waiting,
  TextDelta,
  ReasoningDelta,
  ReplyFinished,
  ToolCallsAnnounced,
  ToolStarted,
  ToolFinished,
  QuestionOpened,
  QuestionClosed,
  Warning,
  MessageDelivered,
  Stopped
])
export type RunEvent = typeof RunEvent.Type

/** One variant by its tag. */
export type Of<Tag extends RunEvent["_tag"]> = Extract<RunEvent, { readonly _tag: Tag }>

/** A run event with its position in the run (1-based, gapless): SSE ids and replay cursors. */
export interface Sequenced {
  readonly seq: number
  readonly event: RunEvent
}

/** Fields a constructor derives from the others (an approval's `tool`/`arguments` from its call; `answered_by` from `by`). */
export type Derived = "answered_by" | "tool" | "arguments"

/**
 * Constructors, one per variant: `make.TextDelta({ text })`. Each builds its
 * variant as a literal: one shared constructor spreading its argument would
 * see every variant's shape and run megamorphic, and the coordinator
 * publishes six events per tool call.
 */
export const make: { readonly [Tag in RunEvent["_tag"]]: (fields: Omit<Of<Tag>, "_tag" | Derived>) => Of<Tag> } = {
  ConversationKnown: ({ conversation_id, created, detached_policy, title }) => ({
    _tag: "ConversationKnown",
    conversation_id,
    created,
    // Absent keys stay absent: the event is compared and serialized as it was built.
    ...(detached_policy === undefined ? {} : { detached_policy }),
    ...(title === undefined ? {} : { title })
  }),
  ModelChosen: ({ model }) => ({ _tag: "ModelChosen", model }),
  Waiting: ({ waiting }) => ({ _tag: "Waiting", waiting }),
  TextDelta: ({ text }) => ({ _tag: "TextDelta", text }),
  ReasoningDelta: ({ text }) => ({ _tag: "ReasoningDelta", text }),
  ReplyFinished: ({ stop_reason }) => ({ _tag: "ReplyFinished", stop_reason }),
  ToolCallsAnnounced: ({ calls }) => ({ _tag: "ToolCallsAnnounced", calls }),
  ToolStarted: ({ call, resumed }) => ({ _tag: "ToolStarted", call, resumed }),
  ToolFinished: ({ call, ran, response }) => ({ _tag: "ToolFinished", call, ran, response }),
  QuestionOpened: (fields) => {
    const { inquiry_id, kind, call, question, source, audience, since, label } = fields
    const opened: Of<"QuestionOpened"> =
      label === undefined
        ? { _tag: "QuestionOpened", inquiry_id, kind, call, question, source, audience, since }
        : { _tag: "QuestionOpened", inquiry_id, kind, call, question, source, audience, since, label }
    // An approval says which call it would let run (contract §8 names them `tool` and `arguments`).
    return kind === "approval" ? { ...opened, tool: call.name, arguments: call.arguments } : opened
  },
  QuestionClosed: ({ inquiry_id, kind, call, question, by, via, outcome }) =>
    via === undefined
      ? { _tag: "QuestionClosed", inquiry_id, kind, call, question, by, answered_by: by, outcome }
      : { _tag: "QuestionClosed", inquiry_id, kind, call, question, by, answered_by: by, via, outcome },
  Warning: ({ text }) => ({ _tag: "Warning", text }),
  MessageDelivered: ({ id, message, via, when }) => ({ _tag: "MessageDelivered", id, message, via, when }),
  Stopped: ({ ending, incomplete }) => ({ _tag: "Stopped", ending, incomplete })
}

/** A tool call request as the run shows it (no timestamp, no provider metadata). */
export const toolCall = (call: {
  readonly id: string
  readonly name: string
  readonly arguments: Schema.JsonObject
}): ToolCall => ({
  id: call.id,
  name: call.name,
  arguments: call.arguments
})

/** Whether `event` ends its run. */
export const isEnd = (event: RunEvent): event is Of<"Stopped"> => event._tag === "Stopped"

/** The JSON form of an event (for a socket, an SSE `data:` line). */
export const encode = Schema.encodeSync(RunEvent)
/** An event back from its JSON form. */
export const decode = Schema.decodeUnknownSync(RunEvent)
