/**
 * A consumer's agent for the approval tests (docs/library.md#effectai-tools-as-parleys-executor-asking-questions-mid-run), run as a
 * child process: one turn on a scripted effect/ai model that calls `deploy`
 * (an effect/ai tool with `needsApproval: true`) and `status` (none). The
 * person is the terminal when stdin is one, else nobody. Prints the recorded
 * tool responses and which handlers ran, as one JSON line (also written to
 * `<result.json>` when given: a terminal wraps long lines).
 *
 *   node --import tsx test/ai/_approvalAgent.ts <config.toml> [<result.json>]
 */
import * as fs from "node:fs"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Tool, Toolkit } from "effect/ai"
import { executorFromToolkit, providerLayer } from "../../src/ai/index.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as ConfigFile from "../../src/layers/ConfigFile.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as TerminalPromptBackend from "../../src/layers/prompt/TerminalPromptBackend.ts"
import * as RunLive from "../../src/layers/RunLive.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as TurnLoop from "../../src/programs/TurnLoop.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { finish, scriptedModel } from "../../src/ai/Testing.ts"

const id = ConversationId.parse("17000000952")!
const Params = Schema.Struct({ env: Schema.String })
const toolkit = Toolkit.make(
  Tool.make("deploy", { description: "Deploy.", parameters: Params, success: Schema.String, needsApproval: true }),
  Tool.make("status", { description: "Status.", parameters: Params, success: Schema.String })
)
const ran: Array<string> = []
const executor = executorFromToolkit(toolkit, {
  deploy: ({ env }) => Effect.sync(() => (ran.push("deploy"), `deployed to ${env}`)),
  status: ({ env }) => Effect.sync(() => (ran.push("status"), `${env} is up`))
})
const model = scriptedModel(
  [
    [
      { type: "tool-call", id: "call_1", name: "deploy", params: { env: "production" } },
      { type: "tool-call", id: "call_2", name: "status", params: { env: "production" } },
      finish("tool-calls")
    ],
    [{ type: "text-delta", id: "t", delta: "Done." }, finish("stop")]
  ],
  []
)
const person =
  process.stdin.isTTY === true
    ? TerminalPromptBackend.layer.pipe(Layer.provide(NodeServices.layer))
    : MockPromptBackend.layer([], { interactive: false })

const program = Effect.gen(function* () {
  yield* Effect.scoped(
    Effect.flatMap(
      ConversationStore.use((s) => s.open(id)),
      (session) =>
        TurnLoop.runTurn({
          session,
          model: "effect/ai",
          root: process.cwd(),
          start: TurnLoop.TurnStartMode.NewTurn({ message: "Deploy" })
        })
    )
  )
  const entries = (yield* ConversationStore.use((s) => s.load(id))).entries
  return {
    ran,
    responses: entries.flatMap((e) => (e.type === "tool_call_response" ? [[e.id, e.content]] : []))
  }
}).pipe(
  Effect.provide(
    Layer.mergeAll(
      RunLive.layer,
      executor,
      providerLayer().pipe(Layer.provide(model)),
      MockInquiryBackend.layer({}),
      person,
      MemoryConversationStore.layer([Conversation.make({ id, now: Timestamp.now() })])
    ).pipe(Layer.provideMerge(ConfigFile.layerFromFile(process.argv[2]!)))
  )
)

Effect.runPromise(program).then(
  (r) => {
    console.log(`RESULT ${JSON.stringify(r)}`)
    if (process.argv[3] !== undefined) fs.writeFileSync(process.argv[3], JSON.stringify(r))
  },
  (e) => {
    console.error(e)
    process.exitCode = 1
  }
)
