/**
 * Child process for the durability test: appends one event at a time to a
 * conversation and prints `appended <n>` after each `append` has returned.
 * The parent kills it with SIGKILL at an arbitrary moment.
 */
import * as Effect from "effect/Effect"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import * as FileConversationStore from "../../src/layers/store/FileConversationStore.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"

const storageDir = process.argv[2]!
const id = ConversationId.parse(process.argv[3]!)!

const program = Effect.scoped(
  Effect.gen(function* () {
    const store = yield* ConversationStore
    const session = yield* store.open(id)
    yield* session.append([
      new TurnStart({ timestamp: Timestamp.now() }),
      new ChatRequest({ timestamp: Timestamp.now(), content: "go" })
    ])
    process.stdout.write("appended 0\n")
    for (let n = 1; ; n++) {
      const callId = `call_${n}`
      yield* session.append([
        new ToolCallRequest({ timestamp: Timestamp.now(), id: callId, name: "t", arguments: { n } })
      ])
      yield* session.append([
        new ToolCallResponse({ timestamp: Timestamp.now(), id: callId, content: "x".repeat(n % 97), is_error: false })
      ])
      process.stdout.write(`appended ${n}\n`)
    }
  })
)

Effect.runPromise(program.pipe(Effect.provide(FileConversationStore.layer({ storageDir }))))
