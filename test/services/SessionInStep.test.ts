/**
 * An append begun in the caller's step (src/services/SessionInStep.ts): it
 * ends as it starts where the store writes at once, waits in line behind a
 * write that holds the lock, and is never taken for a session a caller
 * wrapped or changed (whose own `append` must run).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { ChatRequest } from "../../src/domain/event/ChatRequest.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import { ToolCallResponse } from "../../src/domain/event/ToolCallResponse.ts"
import { TurnStart } from "../../src/domain/event/TurnStart.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as ConversationSession from "../../src/services/ConversationSession.ts"
import * as SessionInStep from "../../src/services/SessionInStep.ts"
import * as GatedSession from "../support/GatedSession.ts"

const id = ConversationId.parse("17000000501")!
const at = Timestamp.make("2026-03-18 13:19:06.8")
const opening = [new TurnStart({ timestamp: at }), new ChatRequest({ timestamp: at, content: "go" })]
const callOf = (n: number) => new ToolCallRequest({ timestamp: at, id: `c${n}`, name: "t", arguments: { n } })
const responseTo = (id: string) => new ToolCallResponse({ timestamp: at, id, content: "x", is_error: false })
const ids = (entries: ReadonlyArray<StreamEntry>) =>
  entries.flatMap((e) => (e.type === "tool_call_request" ? [e.id] : []))

/** A session whose store writes at once (as the memory store does). */
const memorySession = ConversationSession.make(
  { ...Conversation.make({ id, now: at }), entries: opening },
  { appendDurable: () => Exit.void, rewrite: () => Effect.void }
)

/** `appendInStep` called in an uninterruptible step, as the coordinator calls it; what it gave, unrun. */
const inStep = (session: ConversationSession.ConversationSession, entries: ReadonlyArray<StreamEntry>) =>
  Effect.uninterruptibleMask(() => Effect.sync(() => SessionInStep.appendInStep(session, entries)))

describe("SessionInStep.appendInStep", () => {
  it.effect(
    "with the lock free and a store that writes at once, it ends as it starts: an Exit, the entry visible",
    () =>
      Effect.gen(function* () {
        const session = yield* memorySession
        const appended = yield* inStep(session, [callOf(1)])
        expect(Exit.isExit(appended) && Exit.isSuccess(appended)).toBe(true)
        expect(ids(SessionInStep.snapshotInStep(session)!.entries)).toStrictEqual(["c1"])
        // Refused by the turn: the failure comes back the same way, and nothing is visible.
        const refused = yield* inStep(session, [responseTo("nobody")])
        expect(Exit.isExit(refused) && Exit.isFailure(refused)).toBe(true)
        expect((yield* session.snapshot).length).toBe(opening.length + 1)
        // The lock is free again: a plain append goes through.
        yield* session.append([callOf(2)]).pipe(Effect.timeout("1 second"))
        expect(ids((yield* session.snapshot).entries)).toStrictEqual(["c1", "c2"])
      })
  )

  it.effect("a session a caller wrapped or changed is used through its own append, never bypassed", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      const counting =
        (session: ConversationSession.ConversationSession): ConversationSession.ConversationSession["append"] =>
        (batch) =>
          Effect.suspend(() => {
            seen.push(...ids(batch))
            return session.append(batch)
          })
      const a = yield* memorySession
      const spread: ConversationSession.ConversationSession = { ...a, append: counting(a) }
      const inherited: ConversationSession.ConversationSession = Object.assign(Object.create(a), {
        append: counting(a)
      })
      // The session itself, its append replaced in place (a spy, say).
      const b = yield* memorySession
      const changed = Object.assign(b, { append: counting(yield* memorySession) })
      for (const [wrapper, n] of [
        [spread, 1],
        [inherited, 2],
        [changed, 3]
      ] as const) {
        const appended = yield* inStep(wrapper, [callOf(n)])
        // Its own effect, not begun: nothing seen until it runs.
        expect(seen).not.toContain(`c${n}`)
        yield* appended
        // Nothing of the wrapped session is taken in step: the wrapper may count on its own effects.
        expect(SessionInStep.snapshotInStep(wrapper)).toBeUndefined()
      }
      expect(seen).toStrictEqual(["c1", "c2", "c3"])
      const own = yield* memorySession
      expect(SessionInStep.snapshotInStep({ ...own, snapshot: Effect.map(own.snapshot, (s) => s) })).toBeUndefined()
    })
  )

  it.live("with the lock held, it waits in line behind the write and lands after it", () =>
    Effect.gen(function* () {
      const { session, disk, started, release } = yield* GatedSession.gatedSession({
        ...Conversation.make({ id, now: at }),
        entries: opening
      })
      const first = yield* Effect.forkChild(session.append([callOf(1)]))
      yield* Deferred.await(started)
      const second = yield* Effect.forkChild(Effect.flatten(inStep(session, [callOf(2)])))
      // While the first write holds the lock, the second neither writes nor shows (it is in line, not ahead).
      // Released whatever happens: the first write is not interruptible, and a failed check must not wait on it.
      yield* Effect.sleep("30 millis").pipe(
        Effect.andThen(
          Effect.sync(() => {
            expect(ids(disk)).toStrictEqual([])
            expect(second.pollUnsafe()).toBeUndefined()
          })
        ),
        Effect.ensuring(Deferred.succeed(release, undefined))
      )
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      expect(ids(disk)).toStrictEqual(["c1", "c2"])
      expect(ids((yield* session.snapshot).entries)).toStrictEqual(["c1", "c2"])
    })
  )
})
