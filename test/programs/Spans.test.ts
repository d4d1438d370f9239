/**
 * Tracing (docs/library.md#programs): a consumer's tracer sees a turn. One turn whose tool asks a
 * question (answered by the model's side call, through the LLM inquiry
 * backend), traced with an in-memory tracer (effect's own `Tracer` API):
 * the turn, each model request, the tool call, the inquiry and its side
 * call, with the conversation id and the inquiry id as attributes, nested
 * as they run. The same turn again through OpenTelemetry, as a consumer
 * wires it (`@effect/opentelemetry` over the SDK's tracer provider, an
 * in-memory span exporter): the exporter receives the same spans.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import { SpanStatusCode } from "@opentelemetry/api"
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor
} from "@opentelemetry/sdk-trace-base"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallResponse } from "../../src/domain/event/ToolCallResponse.ts"
import * as ExecutorScripted from "../../src/layers/executor/ExecutorScripted.ts"
import * as LlmInquiryBackend from "../../src/layers/LlmInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as RunLive from "../../src/layers/RunLive.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as TurnLoop from "../../src/programs/TurnLoop.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import {
  Provider,
  type ProviderDelta,
  ProviderDelta as Delta,
  type ProviderRequest
} from "../../src/services/Provider.ts"

const id = ConversationId.parse("17000000961")!

/** Replies in order: the tool call, the side call's structured answer, the final text. */
const provider = (seen: Array<ProviderRequest>) => {
  const replies: Array<ReadonlyArray<ProviderDelta>> = [
    [Delta.ToolCall({ id: "call_1", name: "deploy", arguments: {}, metadata: {} })],
    [Delta.Structured({ data: { answer: true } })],
    [Delta.TextDelta({ text: "Deployed." })]
  ]
  return Layer.succeed(
    Provider,
    Provider.of({
      stream: (request) => {
        seen.push(request)
        return Stream.fromIterable(replies.shift() ?? [])
      }
    })
  )
}

const deploy = ExecutorScripted.askThen(
  { id: "confirm", text: "Deploy?", answer_type: { type: "boolean" } },
  (answer) => ({ type: "success", content: answer === true ? "deployed" : "kept" })
)

/** The spans of {@link oneTurn}, in the order they start: name, parent's name, attributes. */
const expected: Array<[string, string | undefined, Record<string, unknown>]> = [
  [
    "TurnLoop.runTurn",
    undefined,
    { "parley.conversation_id": id, "parley.model": "scripted/m", "parley.start": "NewTurn" }
  ],
  [
    "TurnLoop.modelRequest",
    "TurnLoop.runTurn",
    { "parley.conversation_id": id, "parley.model": "scripted/m", "parley.cycle": 1 }
  ],
  [
    "ToolCoordinator.toolCall",
    "TurnLoop.runTurn",
    { "parley.conversation_id": id, "parley.tool_call_id": "call_1", "parley.tool": "deploy" }
  ],
  [
    "ToolCoordinator.inquiry",
    "ToolCoordinator.toolCall",
    {
      "parley.conversation_id": id,
      "parley.inquiry_id": "call_1.confirm.1",
      "parley.tool_call_id": "call_1",
      "parley.tool": "deploy",
      "parley.question_id": "confirm"
    }
  ],
  [
    "LlmInquiryBackend.modelRequest",
    "ToolCoordinator.inquiry",
    { "parley.model": "scripted/m", "parley.inquiry_id": "call_1.confirm.1", "parley.tool_call_id": "call_1" }
  ],
  [
    "TurnLoop.modelRequest",
    "TurnLoop.runTurn",
    { "parley.conversation_id": id, "parley.model": "scripted/m", "parley.cycle": 2 }
  ]
]

/** One turn: "Deploy", the tool asks, nobody is at a terminal so the model's side call answers, then the final text. */
const oneTurn = (seen: Array<ProviderRequest>) => {
  // One model for the turn and its side call, so the replies go out in the order listed.
  const model = provider(seen)
  return Effect.scoped(
    Effect.flatMap(
      ConversationStore.use((s) => s.open(id)),
      (session) =>
        TurnLoop.runTurn({
          session,
          model: "scripted/m",
          root: "/tmp",
          start: TurnLoop.TurnStartMode.NewTurn({ message: "Deploy" })
        }).pipe(
          // What the tool answered: "deployed" only if the side call's `true` reached it.
          Effect.andThen(session.snapshot),
          Effect.map((s) => s.entries.flatMap((e) => (e instanceof ToolCallResponse ? [e.content] : [])))
        )
    )
  ).pipe(
    Effect.provide(
      Layer.mergeAll(
        RunLive.layer,
        MemoryConversationStore.layer([Conversation.make({ id, now: Timestamp.now() })]),
        ExecutorScripted.layer({ deploy: { respond: deploy } }),
        MockPromptBackend.layer([], { interactive: false }), // nobody at a terminal: the model answers
        LlmInquiryBackend.layer({ model: "scripted/m" }).pipe(Layer.provide(model)),
        model,
        Config.layerEmpty
      )
    )
  )
}

describe("spans for a consumer's tracer", () => {
  it.effect(
    "one turn with a tool that asks: turn, model requests, tool call, inquiry and its side call, with ids as attributes",
    () =>
      Effect.gen(function* () {
        const spans: Array<Tracer.NativeSpan> = []
        const tracer = Tracer.make({
          span(options) {
            const span = new Tracer.NativeSpan(options)
            spans.push(span)
            return span
          }
        })
        const seen: Array<ProviderRequest> = []
        expect(yield* oneTurn(seen).pipe(Effect.withTracer(tracer))).toStrictEqual(["deployed"])
        const ours = spans.filter((s) => /^(TurnLoop|ToolCoordinator|LlmInquiryBackend)\./.test(s.name))
        const parentName = (s: Tracer.NativeSpan) =>
          Option.getOrUndefined(Option.map(s.parent, (p) => (p._tag === "Span" ? p.name : "external")))
        expect(ours.map((s) => [s.name, parentName(s), Object.fromEntries(s.attributes)])).toStrictEqual(expected)
        // Every span ended, successfully, and all in one trace.
        expect(ours.every((s) => s.status._tag === "Ended" && s.status.exit._tag === "Success")).toBe(true)
        expect(new Set(ours.map((s) => s.traceId)).size).toBe(1)
        expect(seen.length).toBe(3)
      })
  )

  // What a consumer's OpenTelemetry setup receives: @effect/opentelemetry's tracer over an SDK provider whose
  // in-memory exporter collects each span as it ends.
  it.effect("through OpenTelemetry: an in-memory span exporter receives the same spans, ids and nesting", () =>
    Effect.gen(function* () {
      const exporter = new InMemorySpanExporter()
      const sdk = yield* Effect.acquireRelease(
        Effect.sync(() => new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })),
        (provider) => Effect.promise(() => provider.shutdown())
      )
      const otel = OtelTracer.layer.pipe(Layer.provide(Layer.succeed(OtelTracer.OtelTracerProvider, sdk)))
      const seen: Array<ProviderRequest> = []
      expect(yield* oneTurn(seen).pipe(Effect.provide(otel))).toStrictEqual(["deployed"])
      expect(seen.length).toBe(3)
      yield* Effect.promise(() => sdk.forceFlush())
      const finished = exporter.getFinishedSpans()
      const ours = finished.filter((s) => /^(TurnLoop|ToolCoordinator|LlmInquiryBackend)\./.test(s.name))
      const nameOf = new Map(finished.map((s) => [s.spanContext().spanId, s.name]))
      const parentName = (s: ReadableSpan) =>
        s.parentSpanContext === undefined ? undefined : (nameOf.get(s.parentSpanContext.spanId) ?? "external")
      // Effect adds its own attributes (code location) beside parley's: compare parley's.
      const parleys = (s: ReadableSpan) =>
        Object.fromEntries(Object.entries(s.attributes).filter(([k]) => k.startsWith("parley.")))
      // The exporter has them in the order they ended: both sides sorted by name and cycle; the nesting is in each row's parent.
      const byName = (rows: ReadonlyArray<(typeof expected)[number]>) =>
        [...rows].sort(([a, , x], [b, , y]) => `${a} ${x["parley.cycle"]}`.localeCompare(`${b} ${y["parley.cycle"]}`))
      expect(byName(ours.map((s) => [s.name, parentName(s), parleys(s)]))).toStrictEqual(byName(expected))
      expect(ours.map((s) => s.status.code)).toStrictEqual(ours.map(() => SpanStatusCode.OK))
      expect(new Set(ours.map((s) => s.spanContext().traceId)).size).toBe(1)
    })
  )
})
