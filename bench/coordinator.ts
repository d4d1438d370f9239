/**
 * Coordinator benchmark (issue: ToolCoordinator): 1,000 parallel tool calls,
 * each asking 2 questions answered by the mock inquiry backend, every event
 * persisted to the in-memory store, vs a floor of `Effect.forEach` calling
 * the same tool functions directly through the same executor (answers
 * looked up in a map, nothing recorded): the difference is what the
 * coordinator adds — ids, routing, five durable events per call. Both sides
 * run the library as built (`dist/lib`), not the sources through tsx.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as os from "node:os"
import { pathToFileURL } from "node:url"
import * as path from "node:path"
import type { ConversationStore as Store } from "../src/services/ConversationStore.ts"
import type { Answers } from "../src/services/Executor.ts"
import { type Goal, measure, median } from "./Harness.ts"

/**
 * The modules as shipped: `dist/lib`, TypeScript's own emit (`npm run bench`
 * builds it first). Through tsx every named closure is wrapped in esbuild's
 * `__name` (a defineProperty per closure made), about a tenth of the
 * coordinator's time and almost none of the floor's: a cost no user pays.
 */
const lib = <M>(module: string): Promise<M> =>
  import(pathToFileURL(path.resolve(import.meta.dirname, "../dist/lib", `${module}.js`)).href) as Promise<M>

const load = async () => ({
  ChatRequest: (await lib<typeof import("../src/domain/event/ChatRequest.ts")>("domain/event/ChatRequest")).ChatRequest,
  Conversation: await lib<typeof import("../src/domain/storage/Conversation.ts")>("domain/storage/Conversation"),
  ConversationId: await lib<typeof import("../src/domain/storage/ConversationId.ts")>("domain/storage/ConversationId"),
  Timestamp: await lib<typeof import("../src/domain/event/Timestamp.ts")>("domain/event/Timestamp"),
  ToolCallRequest: (await lib<typeof import("../src/domain/event/ToolCallRequest.ts")>("domain/event/ToolCallRequest"))
    .ToolCallRequest,
  TurnState: await lib<typeof import("../src/domain/stream/TurnState.ts")>("domain/stream/TurnState"),
  TurnStart: (await lib<typeof import("../src/domain/event/TurnStart.ts")>("domain/event/TurnStart")).TurnStart,
  ExecutorScripted: await lib<typeof import("../src/layers/executor/ExecutorScripted.ts")>(
    "layers/executor/ExecutorScripted"
  ),
  MockInquiryBackend: await lib<typeof import("../src/layers/MockInquiryBackend.ts")>("layers/MockInquiryBackend"),
  MockPromptBackend: await lib<typeof import("../src/layers/prompt/MockPromptBackend.ts")>(
    "layers/prompt/MockPromptBackend"
  ),
  RunLive: await lib<typeof import("../src/layers/RunLive.ts")>("layers/RunLive"),
  MemoryConversationStore: await lib<typeof import("../src/layers/store/MemoryConversationStore.ts")>(
    "layers/store/MemoryConversationStore"
  ),
  FileConversationStore: await lib<typeof import("../src/layers/store/FileConversationStore.ts")>(
    "layers/store/FileConversationStore"
  ),
  ConversationMetadata: await lib<typeof import("../src/domain/storage/ConversationMetadata.ts")>(
    "domain/storage/ConversationMetadata"
  ),
  ToolCoordinator: await lib<typeof import("../src/programs/ToolCoordinator.ts")>("programs/ToolCoordinator"),
  ConversationStore: (await lib<typeof import("../src/services/ConversationStore.ts")>("services/ConversationStore"))
    .ConversationStore,
  Config: (await lib<typeof import("../src/services/Config.ts")>("services/Config")).Config
})

const CALLS = 1000

/** The tool: asks `first`, then `second`, then succeeds. */
const tool = (_call: unknown, answers: Answers): Schema.Json =>
  answers["first"] === undefined
    ? { type: "needs_input", question: { id: "first", text: "First?", answer_type: { type: "boolean" } } }
    : answers["second"] === undefined
      ? { type: "needs_input", question: { id: "second", text: "Second?", answer_type: { type: "text" } } }
      : { type: "success", content: `${answers["first"]} ${answers["second"]}` }

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const {
    ChatRequest,
    Config,
    Conversation,
    ConversationId,
    ConversationStore,
    ExecutorScripted,
    FileConversationStore,
    ConversationMetadata,
    MemoryConversationStore,
    MockInquiryBackend,
    MockPromptBackend,
    RunLive,
    Timestamp,
    ToolCallRequest,
    ToolCoordinator,
    TurnStart,
    TurnState
  } = await load()
  const id = ConversationId.parse("17000000200")!
  const now = Timestamp.now()
  const calls = Array.from(
    { length: CALLS },
    (_, i) => new ToolCallRequest({ timestamp: now, id: `call_${i}`, name: "asker", arguments: { i } })
  )
  const answers = new Map<string, Schema.Json>()
  for (let i = 0; i < CALLS; i++) {
    answers.set(`call_${i}.first.1`, true)
    answers.set(`call_${i}.second.1`, "yes")
  }

  /** What a run needs besides its store (fresh each run, as the store is). */
  const layerWith = (store: Layer.Layer<Store>) =>
    Layer.mergeAll(
      RunLive.layer,
      ExecutorScripted.layer({ asker: { respond: tool } }),
      MockPromptBackend.layer([], { interactive: false }),
      MockInquiryBackend.layer(answers),
      Config.layerEmpty,
      store
    )

  const coordinatorRun = () => {
    const entries = [new TurnStart({ timestamp: now }), new ChatRequest({ timestamp: now, content: "go" }), ...calls]
    const layer = layerWith(MemoryConversationStore.layer([{ ...Conversation.make({ id, now }), entries }]))
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const session = yield* ConversationStore.use((s) => s.open(id))
          const state = yield* Ref.make(TurnState.make())
          return yield* ToolCoordinator.runTools({ session, calls, state, root: "/tmp" })
        })
      ).pipe(Effect.provide(layer))
    ).then(({ responses }) => {
      if (responses.length !== CALLS) throw new Error(`got ${responses.length} responses`)
    })
  }

  // The same turn recorded by the file store, in a fresh storage each run: every write journaled and
  // fdatasync'd, the journal folded into events.json as the session closes.
  const fileRun = () => {
    const storageDir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-coordinator-"))
    const layer = layerWith(FileConversationStore.layer({ storageDir }))
    const entries = [new TurnStart({ timestamp: now }), new ChatRequest({ timestamp: now, content: "go" }), ...calls]
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const store = yield* ConversationStore
          const session = yield* store.create({
            metadata: ConversationMetadata.make({ last_activated_at: now }),
            entries
          })
          const state = yield* Ref.make(TurnState.make())
          return yield* ToolCoordinator.runTools({ session, calls, state, root: "/tmp" })
        })
      ).pipe(Effect.provide(layer))
    )
      .then(({ responses }) => {
        if (responses.length !== CALLS) throw new Error(`file store: got ${responses.length} responses`)
      })
      .finally(() => fs.rmSync(storageDir, { recursive: true, force: true }))
  }

  // A fresh executor each run, as the subject's layer makes one: the scripted executor logs every call it
  // runs, and one shared by every floor run kept them all (an old generation growing through the floor's runs).
  const floorRun = () => {
    const { executor } = ExecutorScripted.make({ asker: { respond: tool } })
    return Effect.runPromise(
      Effect.forEach(
        calls,
        (call) =>
          Effect.gen(function* () {
            let a: Answers = {}
            for (;;) {
              const out = yield* executor.execute(call, a, { conversationId: id, root: "/tmp" })
              if (out._tag === "Completed") return out
              a = { ...out.answers, [out.question.id]: answers.get(`${call.id}.${out.question.id}.1`)! }
            }
          }),
        { concurrency: "unbounded" }
      )
    )
  }

  // Twelve runs of each side before the first measured one: V8 tiers the hot functions up over the first
  // dozen, and with two the early rounds ran in baseline code by chance on either side (2.27-2.63x in five
  // quiet runs of the same build; 1.98-2.33x with twelve).
  const ROUNDS = 12
  const WARMUP = 12
  // Interleaved rounds, so load from other processes and the heap's state hit both sides alike.
  const subjectTimes: Array<number> = []
  const floorTimes: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    subjectTimes.push(
      (await measure("subject", coordinatorRun, { runs: 3, warmup: round === 0 ? WARMUP : 0 })).medianMs
    )
    floorTimes.push((await measure("floor", floorRun, { runs: 3, warmup: round === 0 ? WARMUP : 0 })).medianMs)
  }
  const fileTimes: Array<number> = []
  const memoryTimes: Array<number> = []
  for (let round = 0; round < 5; round++) {
    fileTimes.push((await measure("file", fileRun, { runs: 1, warmup: round === 0 ? 1 : 0 })).medianMs)
    memoryTimes.push((await measure("memory", coordinatorRun, { runs: 1, warmup: 0 })).medianMs)
  }
  const subject = { name: `coordinator: ${CALLS} calls x 2 inquiries, recorded`, medianMs: median(subjectTimes) }
  const floor = { name: "Effect.forEach over the same tool functions", medianMs: median(floorTimes) }
  const perInquiry = ((subject.medianMs - floor.medianMs) / (CALLS * 2)) * 1000
  return [
    {
      name: `${CALLS} parallel tool calls each asking 2 questions (mock backend, in-memory store)`,
      subject,
      floor,
      maxRatio: 2.5,
      note: `overhead per inquiry round-trip (request + answer recorded, tool re-run): ${perInquiry.toFixed(1)} µs`
    },
    {
      name: `the same ${CALLS} calls recorded by the file store (journaled, fdatasync'd, folded on close) vs the in-memory store`,
      subject: { name: "file store", medianMs: median(fileTimes) },
      floor: { name: "in-memory store", medianMs: median(memoryTimes) },
      // Two runs gave 2.5x and 4.0x (the in-memory floor moves from 51 to 81 ms from run to run); one write per
      // append gave 68x. The bound catches that, not the noise.
      maxRatio: 8,
      note: `${CALLS * 5} events; the appends that wait behind a write share the next one (group commit)`
    }
  ]
}
