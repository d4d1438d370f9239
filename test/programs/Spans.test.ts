/**
 * Issue 29: a consumer's tracer sees a turn. One turn whose tool asks a
 * question (answered by the model's side call, through the LLM inquiry
 * backend), traced with an in-memory tracer (effect's own `Tracer` API):
 * the turn, each model request, the tool call, the inquiry and its side
 * call, with the conversation id and the inquiry id as attributes, nested
 * as they run.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
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
        yield* Effect.scoped(
          Effect.flatMap(
            ConversationStore.use((s) => s.open(id)),
            (session) =>
              TurnLoop.runTurn({
                session,
                model: "scripted/m",
                root: "/tmp",
                start: TurnLoop.TurnStartMode.NewTurn({ message: "Deploy" })
              })
          )
        ).pipe(
          Effect.provide(
            Layer.mergeAll(
              RunLive.layer,
              MemoryConversationStore.layer([Conversation.make({ id, now: Timestamp.now() })]),
              ExecutorScripted.layer({ deploy: { respond: deploy } }),
              MockPromptBackend.layer([], { interactive: false }), // nobody at a terminal: the model answers
              LlmInquiryBackend.layer({ model: "scripted/m" }).pipe(Layer.provide(provider(seen))),
              provider(seen),
              Config.layerEmpty
            )
          ),
          Effect.withTracer(tracer)
        )
        const ours = spans.filter((s) => /^(TurnLoop|ToolCoordinator|LlmInquiryBackend)\./.test(s.name))
        const parentName = (s: Tracer.NativeSpan) =>
          Option.getOrUndefined(Option.map(s.parent, (p) => (p._tag === "Span" ? p.name : "external")))
        expect(ours.map((s) => [s.name, parentName(s), Object.fromEntries(s.attributes)])).toStrictEqual([
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
        ])
        // Every span ended, successfully, and all in one trace.
        expect(ours.every((s) => s.status._tag === "Ended" && s.status.exit._tag === "Success")).toBe(true)
        expect(new Set(ours.map((s) => s.traceId)).size).toBe(1)
        expect(seen.length).toBe(3)
      })
  )
})
