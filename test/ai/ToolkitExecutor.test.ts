/**
 * `executorFromToolkit` and `Inquiry.ask` (docs/library.md#bridges-to-effectai-parleyai): an effect/ai
 * tool whose handler asks two questions — one answered by config, one at the
 * (mock) prompt — killed after the first answer and resumed in a new
 * session, on the RFD's model (NeedsInput, the answer recorded, the handler
 * run again with every answer so far).
 */
import * as RunLive from "../../src/layers/RunLive.ts"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Tool, Toolkit } from "effect/ai"
import { executorFromToolkit, Inquiry, providerLayer } from "../../src/ai/index.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as TurnLoop from "../../src/programs/TurnLoop.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { type Answers, Executor } from "../../src/services/Executor.ts"
import type { QuestionId } from "../../src/domain/tool/Question.ts"
import { PromptBackend } from "../../src/services/PromptBackend.ts"
import { finish, type SeenRequest, scriptedModel, type Step } from "../../src/ai/Testing.ts"

const id = ConversationId.parse("17000000901")!

const Deploy = Tool.make("deploy", {
  description: "Deploy the service.",
  parameters: Schema.Struct({ service: Schema.String }),
  success: Schema.String
})
const toolkit = Toolkit.make(Deploy)

/** The handler: asks where (config answers) and whether (the person answers), then deploys. */
const deployHandler = (runs: Array<Answers>) => ({
  deploy: ({ service }: { readonly service: string }) =>
    Effect.gen(function* () {
      runs.push(yield* Inquiry.answers)
      const env = yield* Inquiry.ask(Inquiry.select("env", "Which environment?", ["staging", "production"]))
      const go = yield* Inquiry.ask(Inquiry.boolean("confirm", `Deploy ${service} to ${env}?`))
      return go ? `deployed ${service} to ${env}` : `did not deploy ${service}`
    })
})

const config = Config.layerLiteral({
  conversation: { tools: { deploy: { questions: { env: { answer: "staging" } } } } }
})

/** Everything but the store (shared by both runs) and the person at the prompt. */
const services = (runs: Array<Answers>, steps: Array<Step>, seen: Array<SeenRequest>) =>
  Layer.mergeAll(
    RunLive.layer,
    executorFromToolkit(toolkit, deployHandler(runs)),
    providerLayer().pipe(Layer.provide(scriptedModel(steps, seen))),
    MockInquiryBackend.layer({})
  ).pipe(Layer.provideMerge(config))

const shape = (entries: ReadonlyArray<StreamEntry>) =>
  entries.map((e) => {
    const { timestamp: _t, metadata: _m, ...rest } = JSON.parse(JSON.stringify(e)) as Record<string, unknown>
    return rest
  })

/** Runs a new turn on `layer` with a person who never answers, and interrupts it once the prompt is shown. */
const killedAtThePrompt = (layer: ReturnType<typeof services>) =>
  Effect.gen(function* () {
    const first = yield* MockPromptBackend.make([{ _tag: "Hang" }])
    const fiber = yield* Effect.forkChild(
      Effect.scoped(
        Effect.flatMap(
          ConversationStore.use((s) => s.open(id)),
          (session) =>
            TurnLoop.runTurn({
              session,
              model: "effect/ai",
              root: "/tmp",
              start: TurnLoop.TurnStartMode.NewTurn({ message: "Deploy the api" })
            })
        )
      ).pipe(Effect.provide(layer), Effect.provideService(PromptBackend, first.service))
    )
    while (first.prompts.shown.length === 0) yield* Effect.yieldNow
    yield* Fiber.interrupt(fiber)
  })

describe("executorFromToolkit: effect/ai tools that ask questions", () => {
  it.effect(
    "two questions (config, prompt); killed after the first answer; resumed in a new session; the handler gets both answers",
    () =>
      Effect.gen(function* () {
        const runs: Array<Answers> = []
        const seen: Array<SeenRequest> = []
        const steps: Array<Step> = [
          [{ type: "tool-call", id: "call_1", name: "deploy", params: { service: "api" } }, finish("tool-calls")],
          [{ type: "text-delta", id: "t", delta: "Deployed." }, finish("stop")]
        ]
        const layer = services(runs, steps, seen)

        // First run: the person's prompt never answers; the turn is killed while it is open.
        yield* killedAtThePrompt(layer)
        const killed = (yield* ConversationStore.use((s) => s.load(id))).entries
        expect(shape(killed)).toStrictEqual([
          { type: "turn_start" },
          { type: "chat_request", content: "Deploy the api" },
          { type: "tool_call_request", id: "call_1", name: "deploy", arguments: { service: "api" } },
          {
            type: "inquiry_request",
            id: "call_1.env.1",
            source: { source: "tool", name: "deploy" },
            question: {
              text: "Which environment?",
              answer_type: { type: "select", options: [{ value: "staging" }, { value: "production" }] }
            }
          },
          { type: "inquiry_response", id: "call_1.env.1", outcome: "answered", answer: "staging" },
          {
            type: "inquiry_request",
            id: "call_1.confirm.1",
            source: { source: "tool", name: "deploy" },
            question: { text: "Deploy api to staging?", answer_type: { type: "boolean" } }
          },
          { type: "inquiry_response", id: "call_1.confirm.1", outcome: "cancelled", reason: "user" }
        ])
        expect(runs).toStrictEqual([{}, { env: "staging" }])

        // Resume: a new session; the incomplete turn's analysis says where to re-enter.
        const second = yield* MockPromptBackend.make([{ _tag: "Answer", answer: true }])
        yield* Effect.scoped(
          Effect.gen(function* () {
            const session = yield* ConversationStore.use((s) => s.open(id))
            const analysis = yield* session.resumeIncompleteTurn
            expect(analysis?.phase).toBe("Executing")
            yield* TurnLoop.runTurn({
              session,
              model: "effect/ai",
              root: "/tmp",
              start: TurnLoop.TurnStartMode.Resume({ analysis: analysis! })
            })
          })
        ).pipe(Effect.provide(layer), Effect.provideService(PromptBackend, second.service))
        const stored = (yield* ConversationStore.use((s) => s.load(id))).entries
        expect(shape(stored.slice(killed.length))).toStrictEqual([
          {
            type: "inquiry_request",
            id: "call_1.confirm.2",
            source: { source: "tool", name: "deploy" },
            question: { text: "Deploy api to staging?", answer_type: { type: "boolean" } }
          },
          { type: "inquiry_response", id: "call_1.confirm.2", outcome: "answered", answer: true },
          { type: "tool_call_response", id: "call_1", content: "deployed api to staging", is_error: false },
          { type: "chat_response", message: "Deployed." }
        ])
        // The handler ran again from the start each time, with every answer so far: config's after the kill, then both.
        expect(runs).toStrictEqual([{}, { env: "staging" }, { env: "staging" }, { env: "staging", confirm: true }])
        expect(
          second.prompts.shown.map((s) =>
            s._tag === "Question" ? [s.request.toolName, s.request.question.text] : s._tag
          )
        ).toStrictEqual([["deploy", "Deploy api to staging?"]])
        // The model saw the tool as effect/ai described it, and no inquiry in either request.
        expect(seen.map((s) => s.tools)).toStrictEqual([["deploy"], ["deploy"]])
        expect(JSON.stringify(seen.map((s) => s.prompt))).not.toMatch(/inquiry|Which environment|confirm/)
      }).pipe(Effect.provide(MemoryConversationStore.layer([Conversation.make({ id, now: Timestamp.now() })])))
  )

  it.effect(
    "after a crash (the open question left without a response) the resumed turn asks it under its recorded id",
    () =>
      Effect.gen(function* () {
        // What kill -9 while the person's prompt was open leaves: the second request, no response.
        const runs: Array<Answers> = []
        const steps: Array<Step> = [
          [{ type: "tool-call", id: "call_1", name: "deploy", params: { service: "api" } }, finish("tool-calls")],
          [{ type: "text-delta", id: "t", delta: "Deployed." }, finish("stop")]
        ]
        const layer = services(runs, steps, [])
        yield* killedAtThePrompt(layer)
        const crashed = (yield* ConversationStore.use((s) => s.load(id))).entries.slice(0, -1) // no Cancelled{user}
        expect(shape(crashed.slice(-1))).toStrictEqual([
          {
            type: "inquiry_request",
            id: "call_1.confirm.1",
            source: { source: "tool", name: "deploy" },
            question: { text: "Deploy api to staging?", answer_type: { type: "boolean" } }
          }
        ])

        const second = yield* MockPromptBackend.make([{ _tag: "Answer", answer: true }])
        const stored = yield* Effect.gen(function* () {
          yield* Effect.scoped(
            Effect.gen(function* () {
              const session = yield* ConversationStore.use((s) => s.open(id))
              const analysis = yield* session.resumeIncompleteTurn
              yield* TurnLoop.runTurn({
                session,
                model: "effect/ai",
                root: "/tmp",
                start: TurnLoop.TurnStartMode.Resume({ analysis: analysis! })
              })
            })
          )
          return (yield* ConversationStore.use((s) => s.load(id))).entries
        }).pipe(
          Effect.provide(
            Layer.merge(
              layer,
              MemoryConversationStore.layer([{ ...Conversation.make({ id, now: Timestamp.now() }), entries: crashed }])
            )
          ),
          Effect.provideService(PromptBackend, second.service)
        )
        expect(shape(stored.slice(crashed.length))).toStrictEqual([
          { type: "inquiry_response", id: "call_1.confirm.1", outcome: "answered", answer: true },
          { type: "tool_call_response", id: "call_1", content: "deployed api to staging", is_error: false },
          { type: "chat_response", message: "Deployed." }
        ])
        // Resumed: the handler ran once, with the config's answer (rebuilt from the events) and the person's.
        expect(runs).toStrictEqual([{}, { env: "staging" }, { env: "staging", confirm: true }])
      }).pipe(Effect.provide(MemoryConversationStore.layer([Conversation.make({ id, now: Timestamp.now() })])))
  )

  it.effect("definitions, run mode and kind; unknown tools, handler failures and answers that do not fit", () =>
    Effect.gen(function* () {
      const Fail = Tool.make("fail", { failure: Schema.String, success: Schema.String })
      const Returns = Tool.make("returns", { failure: Schema.String, success: Schema.String, failureMode: "return" })
      const Struct = Tool.make("struct", { success: Schema.Struct({ n: Schema.Number }) })
      const kit = Toolkit.make(Fail, Returns, Struct, Deploy)
      const executor = yield* Effect.service(Executor).pipe(
        Effect.provide(
          executorFromToolkit(
            kit,
            {
              fail: () => Effect.fail("no disk"),
              returns: () => Effect.fail("gone"),
              struct: () => Effect.succeed({ n: 1 }),
              deploy: deployHandler([]).deploy
            },
            { run: "ask" }
          ).pipe(Layer.provide(Config.layerLiteral({ conversation: { tools: { struct: { run: "skip" } } } })))
        )
      )
      expect(executor.definitions.map((d) => d.name)).toStrictEqual(["deploy", "fail", "returns", "struct"])
      expect(executor.definitions[0]).toStrictEqual({
        name: "deploy",
        description: "Deploy the service.",
        parameters: {
          type: "object",
          properties: { service: { type: "string" } },
          required: ["service"],
          additionalProperties: true
        } // effect's JSON Schema of a Struct
      })
      expect([
        executor.permission("deploy"),
        executor.permission("struct"),
        executor.kind("deploy"),
        executor.kind("nope")
      ]).toStrictEqual(["ask", "skip", "builtin", undefined])
      const ctx = { conversationId: "17000000901", root: "/tmp" }
      const run = (name: string, args: Record<string, Schema.Json>, answers: Answers = {}) =>
        Effect.map(executor.execute({ id: "c", name, arguments: args }, answers, ctx), (r) =>
          r._tag === "Completed" ? r.response : { asked: r.question.id, source: r.source, answers: r.answers }
        )
      expect(yield* run("fail", {})).toStrictEqual({ content: "no disk", is_error: true })
      expect(yield* run("returns", {})).toStrictEqual({ content: "gone", is_error: true })
      expect(yield* run("struct", {})).toStrictEqual({ content: '{"n":1}', is_error: false })
      expect(yield* run("nope", {})).toMatchObject({
        content: expect.stringMatching(/^Tool 'nope' is not available\./),
        is_error: true
      })
      // effect/ai decodes the parameters
      expect(yield* run("deploy", { service: 1 })).toMatchObject({
        content: expect.stringMatching(/deploy/),
        is_error: true
      })
      expect(yield* run("deploy", { service: "api" }, { env: "staging" })).toStrictEqual({
        asked: "confirm",
        source: { source: "tool", name: "deploy" },
        answers: { env: "staging" }
      })
      expect(yield* run("deploy", { service: "api" }, { env: "qa" })).toStrictEqual({
        content:
          'Tool \'deploy\' failed unexpectedly: The answer to "Which environment?" (env) is "qa", which does not fit a select question; if it is configured (conversation.tools.deploy.questions.env.answer), fix it there.',
        is_error: true
      })
    })
  )

  it.effect(
    "a typed failure reaches the model as the tool's failure schema encodes it, in either failure mode (not an empty message)",
    () =>
      Effect.gen(function* () {
        // A tagged error with no message of its own: its `message` is "", which used to be all the model got.
        class DiskFull extends Schema.TaggedError<DiskFull>()("DiskFull", { path: Schema.String }) {}
        const Thrown = Tool.make("thrown", { success: Schema.String, failure: DiskFull })
        const Returned = Tool.make("returned", { success: Schema.String, failure: DiskFull, failureMode: "return" })
        const Untyped = Tool.make("untyped", { success: Schema.String })
        const executor = yield* Effect.service(Executor).pipe(
          Effect.provide(
            executorFromToolkit(Toolkit.make(Thrown, Returned, Untyped), {
              thrown: () => Effect.fail(new DiskFull({ path: "/var" })),
              returned: () => Effect.fail(new DiskFull({ path: "/var" })),
              // A failure the tool does not declare (a cast): its message, or its JSON when it has none.
              untyped: () => Effect.fail({ code: 7 }) as unknown as Effect.Effect<string>
            })
          )
        )
        const ctx = { conversationId: "17000000901", root: "/tmp" }
        const run = (name: string) =>
          Effect.map(executor.execute({ id: "c", name, arguments: {} }, {}, ctx), (r) =>
            r._tag === "Completed" ? r.response : r._tag
          )
        const encoded = { content: '{"_tag":"DiskFull","path":"/var"}', is_error: true }
        expect(yield* run("returned")).toStrictEqual(encoded) // effect/ai's own encoding of a returned failure
        expect(yield* run("thrown")).toStrictEqual(encoded)
        expect(yield* run("untyped")).toStrictEqual({ content: "Tool 'untyped' failed: {\"code\":7}", is_error: true })
      }).pipe(Effect.provide(Config.layerEmpty))
  )

  it.effect(
    "one id for two different questions in a run is a defect naming both, not the first answer given to the second",
    () =>
      Effect.gen(function* () {
        // A loop that asks the same id for each file: file b would silently get a's answer.
        const Clean = Tool.make("clean", {
          parameters: Schema.Struct({ files: Schema.Array(Schema.String) }),
          success: Schema.String
        })
        const Again = Tool.make("again", { success: Schema.String })
        const executor = yield* Effect.service(Executor).pipe(
          Effect.provide(
            executorFromToolkit(Toolkit.make(Clean, Again), {
              clean: ({ files }) =>
                Effect.gen(function* () {
                  const removed: Array<string> = []
                  for (const file of files) {
                    if (yield* Inquiry.ask(Inquiry.boolean("remove", `Remove ${file}?`))) removed.push(file)
                  }
                  return `removed ${removed.join(", ")}`
                }),
              // The same question asked twice (a helper called twice) is fine: it has one answer.
              again: () =>
                Effect.gen(function* () {
                  const first = yield* Inquiry.ask(Inquiry.boolean("sure", "Sure?"))
                  const second = yield* Inquiry.ask(Inquiry.boolean("sure", "Sure?"))
                  return `${first} ${second}`
                })
            })
          )
        )
        const ctx = { conversationId: "17000000901", root: "/tmp" }
        const run = (name: string, args: Record<string, Schema.Json>, answers: Answers) =>
          Effect.map(executor.execute({ id: "c", name, arguments: args }, answers, ctx), (r) =>
            r._tag === "Completed" ? r.response : r.question.id
          )
        expect(yield* run("clean", { files: ["a.txt", "b.txt"] }, {})).toBe("remove")
        expect(yield* run("clean", { files: ["a.txt", "b.txt"] }, { remove: true })).toStrictEqual({
          content:
            'Tool \'clean\' failed unexpectedly: The tool asked two different questions under the id "remove" in one run ("Remove a.txt?", then "Remove b.txt?"); answers are kept per question id, so the second would get the first one\'s answer. Give each question its own id (e.g. one with the item\'s index in it).',
          is_error: true
        })
        expect(yield* run("again", {}, { sure: true })).toStrictEqual({ content: "true true", is_error: false })
      }).pipe(Effect.provide(Config.layerEmpty))
  )

  it.effect(
    "an unanswered ask passes the handler's catch, orElse and retry; the same handlers serve Toolkit.toLayer; ask outside a parley run dies saying how to run it",
    () =>
      Effect.gen(function* () {
        const Guarded = Tool.make("guarded", { success: Schema.String })
        const kit = Toolkit.make(Guarded)
        let fallbacks = 0
        const handlers = kit.of({
          // A handler that recovers from every typed failure: a pending question must not be one of them.
          guarded: () =>
            Inquiry.ask(Inquiry.boolean("go", "Go?")).pipe(
              Effect.map((go) => (go ? "went" : "stayed")),
              Effect.retry({ times: 2 }),
              Effect.orElseSucceed(() => {
                fallbacks++
                return "fallback"
              })
            )
        })
        // The handlers type-check as effect/ai's own (no Inquiry requirement, no Pending failure).
        const aiLayer: Layer.Layer<Tool.Handler<"guarded">> = kit.toLayer(handlers)
        expect(Layer.isLayer(aiLayer)).toBe(true)
        const executor = yield* Effect.service(Executor).pipe(Effect.provide(executorFromToolkit(kit, handlers)))
        const ctx = { conversationId: "17000000901", root: "/tmp" }
        const run = (answers: Answers) =>
          Effect.map(executor.execute({ id: "c", name: "guarded", arguments: {} }, answers, ctx), (r) =>
            r._tag === "Completed" ? r.response.content : `asked ${r.question.id}`
          )
        expect(yield* run({})).toBe("asked go")
        expect(yield* run({ go: true })).toBe("went")
        expect(fallbacks).toBe(0)
        // Outside executorFromToolkit there is no run to ask in: a defect that says so, not a silent default.
        const outside = yield* Effect.exit(Inquiry.ask(Inquiry.boolean("go", "Go?")))
        expect(outside._tag).toBe("Failure")
        expect(String(outside._tag === "Failure" ? Cause.squash(outside.cause) : "")).toMatch(
          /Inquiry\.ask ran outside a parley tool run: run the tool's handler through executorFromToolkit/
        )
      }).pipe(Effect.provide(Config.layerEmpty))
  )

  it.effect(
    "config's enable = false hides a toolkit tool (not offered, 'not available') and its description replaces the tool's, as for built-ins",
    () =>
      Effect.gen(function* () {
        const Fail = Tool.make("fail", { description: "Fails.", success: Schema.String })
        const executor = yield* Effect.service(Executor).pipe(
          Effect.provide(
            executorFromToolkit(Toolkit.make(Fail, Deploy), {
              fail: () => Effect.succeed("no"),
              deploy: deployHandler([]).deploy
            }).pipe(
              Layer.provide(
                Config.layerLiteral({
                  conversation: { tools: { deploy: { enable: false }, fail: { description: "Fails, always." } } }
                })
              )
            )
          )
        )
        expect(executor.definitions.map((d) => [d.name, d.description])).toStrictEqual([["fail", "Fails, always."]])
        expect([executor.kind("deploy"), executor.kind("fail")]).toStrictEqual([undefined, "builtin"])
        const result = yield* executor.execute(
          { id: "c", name: "deploy", arguments: { service: "api" } },
          {},
          { conversationId: "17000000901", root: "/tmp" }
        )
        expect(result._tag === "Completed" ? result.response : result._tag).toMatchObject({
          content: expect.stringMatching(/^Tool 'deploy' is not available\./),
          is_error: true
        })
      })
  )

  it.effect(
    "Inquiry.ask takes a Question written as a plain object (as its type allows), not only a decoded instance",
    () =>
      Effect.gen(function* () {
        const Go = Tool.make("go", { success: Schema.String })
        const executor = yield* Effect.service(Executor).pipe(
          Effect.provide(
            executorFromToolkit(Toolkit.make(Go), {
              go: () =>
                Effect.map(
                  Inquiry.ask({ id: "sure" as QuestionId, text: "Sure?", answer_type: { type: "boolean" } }),
                  (a) => `answer ${JSON.stringify(a)}`
                )
            })
          )
        )
        const ctx = { conversationId: "17000000901", root: "/tmp" }
        const run = (answers: Answers) =>
          Effect.map(executor.execute({ id: "c", name: "go", arguments: {} }, answers, ctx), (r) =>
            r._tag === "Completed"
              ? r.response
              : { asked: r.question.id, text: r.question.text, type: r.question.answer_type }
          )
        expect(yield* run({})).toStrictEqual({ asked: "sure", text: "Sure?", type: { type: "boolean" } })
        expect(yield* run({ sure: true })).toStrictEqual({ content: "answer true", is_error: false })
      }).pipe(Effect.provide(Config.layerEmpty))
  )
})
