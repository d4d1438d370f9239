/**
 * A cluster runner's turns (docs/cluster.md#failover; found with the failover
 * bench): a start that finds the conversation's lock held by another runner
 * (which still runs the turn and is about to hand it off) must not take that
 * runner's `parley_cluster_turns` row. It did: the row named the runner that
 * could not start the turn while the turn ran on the other one; when the
 * shard went back to that one, it kept the turn and nobody resumed the row,
 * and with the named runner killed the turn never moved.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import type { ConversationId } from "../../../src/domain/storage/ConversationId.ts"
import * as PgLock from "../../../src/layers/store/pg/PgLock.ts"
import { Provider, ProviderDelta } from "../../../src/services/Provider.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../../support/Pg.ts"
import { withRunner } from "../../support/RunnerTurns.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

const ID = "17700000000" as ConversationId

describe.skipIf(pgSkip !== undefined)(`cluster Turns${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("a start that finds the lock held leaves the holder's row; once the lock is free, the turn's row is its own", async () => {
    // Never asked for a model: the turn ends (locked, or nothing to resume) before.
    const owners = await withRunner(freshDatabase(server!), ({ sql, turns, create }) =>
      Effect.gen(function* () {
        yield* create(ID)
        const owner = () =>
          Effect.map(
            sql<{ runner: string }>`SELECT runner FROM parley_cluster_turns WHERE conversation_id = ${ID}`,
            (rows) => rows[0]?.runner ?? "no row"
          )
        // Runner a runs the turn: it holds the conversation's lock, and the row names it.
        const held = yield* PgLock.own(sql).tryLock(ID)
        if (held._tag !== "Taken") return yield* Effect.die("the lock was not free")
        yield* sql`INSERT INTO parley_cluster_turns (conversation_id, runner, pid, since) VALUES (${ID}, 'a:1', 1, now())`
        // Runner b's sweep: the shard is b's now, the turn still a's.
        const locked = yield* turns.start(ID, { continueTurn: true })
        const whileHeld = yield* owner()
        // a hands it off (lets go of the lock); b's next sweep takes it: nothing to resume, so it ends and its row goes.
        yield* held.release
        const free = yield* turns.start(ID, { continueTurn: true })
        return {
          locked: locked._tag === "Failed" ? (locked.error as { _tag?: unknown })._tag : locked._tag,
          whileHeld,
          free: free._tag,
          after: yield* owner()
        }
      })
    )
    // Without the fix: whileHeld "b:2" (taken over by the start that failed), after "no row" all the same.
    expect(owners).toStrictEqual({ locked: "ConversationLocked", whileHeld: "a:1", free: "Ended", after: "no row" })
  }, 60_000)

  it("a turn's event hub ends with the turn: what it kept is let go, not held by the runner until it stops", async () => {
    // The model waits for the test's word, so the turn is caught while it runs.
    const go = Effect.runSync(Deferred.make<void>())
    const provider = Provider.of({
      stream: () =>
        Stream.concat(
          Stream.fromEffect(Deferred.await(go)).pipe(Stream.drain),
          Stream.fromIterable([ProviderDelta.TextDelta({ text: "hi" }), ProviderDelta.Finish({ reason: "end_turn" })])
        )
    })
    const seen = await withRunner(
      freshDatabase(server!),
      ({ turns, create }) =>
        Effect.gen(function* () {
          yield* create(ID)
          const started = yield* turns.start(ID, { message: "hello" })
          const turn = turns.get(ID)
          if (turn === undefined) return yield* Effect.die(`no turn running (${started._tag})`)
          yield* Deferred.succeed(go, undefined)
          const ended = yield* Deferred.await(turn.ended)
          // Read after the end: a hub still open (in the runner's scope) replays the turn's events.
          const kept = yield* Stream.runCollect(turn.events.events)
          return { started: started._tag, ended: ended._tag, kept: kept.length }
        }),
      provider
    )
    // Without the fix: kept 7 (the turn's run events, held as long as the runner ran).
    expect(seen).toStrictEqual({ started: "Running", ended: "Success", kept: 0 })
  }, 60_000)

  it("a turn handed off the moment it is listed ends: it is no longer listed and its start is told", async () => {
    // The model never answers: whatever ends the turn is the hand-off.
    const provider = Provider.of({ stream: () => Stream.never })
    const seen = await withRunner(
      freshDatabase(server!),
      ({ turns, create }) =>
        Effect.gen(function* () {
          yield* create(ID)
          const start = yield* Effect.forkChild(turns.start(ID, { message: "hello" }))
          // Looks each step: the hand-off comes in the first step after the turn is listed (before it, its fiber
          // was forked to start later; interrupted before it ran, it never ran its end).
          let turn = turns.get(ID)
          while (turn === undefined) {
            yield* Effect.yieldNow
            turn = turns.get(ID)
          }
          yield* turn.handOff
          const bound = Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.succeed("hung") })
          const started = yield* Fiber.join(start).pipe(bound)
          const ended = yield* Deferred.await(turn.ended).pipe(bound)
          return {
            started: typeof started === "string" ? started : started._tag,
            ended: typeof ended === "string" ? ended : ended._tag,
            listed: turns.get(ID) !== undefined
          }
        }),
      provider
    )
    expect(seen.started).not.toBe("hung")
    expect(seen).toMatchObject({ ended: "Failure", listed: false })
  }, 60_000)
})
