/**
 * Using parley as a library: run the tool coordinator inside your own Effect
 * program, with your own layers (here: in-memory store, scripted tools, a
 * mock inquiry backend, no terminal). Run it with:
 *
 *   node --import tsx examples/library/coordinator.ts
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Layer from "effect/Layer"
import {
  ChatRequest,
  Config,
  Conversation,
  ConversationId,
  ConversationStore,
  ExecutorScripted,
  MemoryConversationStore,
  MockInquiryBackend,
  MockPromptBackend,
  RunLive,
  Timestamp,
  ToolCallRequest,
  ToolCoordinator,
  TurnStart,
  TurnState
} from "../../src/index.ts"

const id = ConversationId.parse("17000000001")!
const now = Timestamp.now()
const call = new ToolCallRequest({ timestamp: now, id: "call_1", name: "deploy", arguments: { env: "staging" } })
const entries = [new TurnStart({ timestamp: now }), new ChatRequest({ timestamp: now, content: "Deploy to staging" }), call]

// A tool that asks before it acts, then reports what it was told.
const deploy = ExecutorScripted.askThen(
  { id: "confirm", text: "Deploy to staging?", answer_type: { type: "boolean" } },
  (answer) => ({ type: "success", content: answer === true ? "deployed" : "not deployed" })
)

export const program = Effect.gen(function*() {
  const store = yield* ConversationStore
  // The session holds the conversation for the scope: every event is durable, then visible.
  const { responses } = yield* Effect.scoped(Effect.gen(function*() {
    const session = yield* store.open(id)
    const state = yield* Ref.make(TurnState.make())
    return yield* ToolCoordinator.runTools({ session, calls: [call], state, root: process.cwd() })
  }))
  const stored = yield* store.load(id)
  return { responses: responses.map((r) => r.content), recorded: stored.entries.map((e) => e.type) }
}).pipe(
  Effect.provide(Layer.mergeAll(
    RunLive.layer,
    MemoryConversationStore.layer([{ ...Conversation.make({ id, now }), entries }]),
    ExecutorScripted.layer({ deploy: { respond: deploy } }),
    MockPromptBackend.layer([], { interactive: false }),
    MockInquiryBackend.layer({ "call_1.confirm.1": true }),
    Config.layerEmpty
  ))
)

if (import.meta.url === `file://${process.argv[1]}`) {
  Effect.runPromise(program).then((r) => console.log(JSON.stringify(r, null, 2)))
}
