/**
 * PgLock (docs/postgres.md#guarantees; found running the cluster): `create` tries
 * fresh ids with `absent`, and an id another process has just created must
 * not have its lock taken, even for a moment (an `open` racing it would read
 * "locked"). Without `absent` the lock is tried as before.
 *
 * Shared lock connections (a cluster runner's, docs/cluster.md): many locks on
 * few connections, a second taker in the process refused (advisory locks are
 * re-entrant on a connection), a transaction alone on its connection, a
 * connection whose server process is killed replaced for new locks.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Scheduler from "effect/Scheduler"
import type * as Scope from "effect/Scope"
import { SqlClient } from "effect/sql/SqlClient"
import { ChatRequest } from "../../../../src/domain/event/ChatRequest.ts"
import * as Timestamp from "../../../../src/domain/event/Timestamp.ts"
import { TurnStart } from "../../../../src/domain/event/TurnStart.ts"
import * as ConversationId from "../../../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../../../src/domain/storage/ConversationMetadata.ts"
import * as PgConversationStore from "../../../../src/layers/store/pg/PgConversationStore.ts"
import * as PgLock from "../../../../src/layers/store/pg/PgLock.ts"
import { ConversationStore } from "../../../../src/services/ConversationStore.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../../../support/Pg.ts"

let server: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => server?.stop())

const advisoryLocks = (url: string): string =>
  psql(url, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").trim()

describe.skipIf(pgSkip !== undefined)(`PgLock${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`, () => {
  it("absent: an existing conversation's lock is never taken; a missing one's is; plain tryLock takes either", async () => {
    const url = freshDatabase(server!)
    const metadata = ConversationMetadata.make({ last_activated_at: Timestamp.make("2026-11-26T00:00:00.000000Z") })
    await Effect.runPromise(
      ConversationStore.use((s) => Effect.scoped(s.create({ id: "17700000000" as never, metadata }))).pipe(
        Effect.provide(Layer.orDie(PgConversationStore.layer({ url })))
      )
    )
    const tags = await Effect.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        const tag = (id: string, absent: boolean) =>
          Effect.scoped(
            Effect.map(PgLock.own(sql).tryLock(id, { absent }), (a) => {
              return `${a._tag}:${advisoryLocks(url)}`
            })
          )
        return [yield* tag("17700000000", true), yield* tag("17700000001", true), yield* tag("17700000000", false)]
      }).pipe(Effect.provide(Layer.orDie(PgConversationStore.clientLayer({ url }))))
    )
    // Exists with no advisory lock held; Taken (one lock) for the missing id and for plain tryLock.
    expect(tags).toStrictEqual(["Exists:0", "Taken:1", "Taken:1"])
    expect(advisoryLocks(url)).toBe("0")
  }, 60_000)

  const metadata = ConversationMetadata.make({ last_activated_at: Timestamp.make("2026-11-26T00:00:00.000000Z") })
  const ids = Array.from({ length: 12 }, (_, i) => ConversationId.parse(String(17700000100 + i))!)
  const turn = (n: number) => [
    new TurnStart({ timestamp: Timestamp.make(`2026-11-26T00:00:0${n % 10}.000000Z`) }),
    new ChatRequest({ timestamp: Timestamp.make(`2026-11-26T00:00:0${n % 10}.500000Z`), content: `q${n}` })
  ]
  const sharedStore = (url: string, lockConnections: number) =>
    Layer.orDie(PgConversationStore.layer({ url, maxConnections: 6, lockConnections }))
  const advisoryBackends = (url: string): string =>
    psql(url, "SELECT count(DISTINCT pid) FROM pg_locks WHERE locktype = 'advisory'").trim()
  /** Runs `body` with `k` shared lock connections on a migrated `url`. */
  const withShared = <A>(
    url: string,
    k: number,
    body: (sql: SqlClient, locks: PgLock.Locks) => Effect.Effect<A, unknown, Scope.Scope>
  ): Promise<A> =>
    Effect.runPromise(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* PgConversationStore.migrate
        return yield* body(sql, yield* PgLock.shared(sql, k))
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(PgConversationStore.clientLayer({ url }))))
    )

  it("shared: 12 sessions' locks on 2 connections, their appends interleaved; a second open in the process is refused naming it; closing lets go", async () => {
    const url = freshDatabase(server!)
    const seen = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* ConversationStore
        yield* Effect.forEach(ids, (id) => Effect.scoped(store.create({ id, metadata })), { discard: true })
        const during = yield* Effect.scoped(
          Effect.gen(function* () {
            const sessions = yield* Effect.forEach(ids, (id) => store.open(id), { concurrency: "unbounded" })
            // Every session appends three turns at once: 36 writes over two connections.
            yield* Effect.forEach(
              sessions,
              (s, i) => Effect.forEach([0, 1, 2], (n) => s.append(turn(i + n)), { discard: true }),
              { concurrency: "unbounded", discard: true }
            )
            const again = yield* Effect.flip(Effect.scoped(store.open(ids[0]!)))
            return {
              locks: advisoryLocks(url),
              backends: advisoryBackends(url),
              // Another server session cannot take a held lock.
              other: psql(url, `SELECT pg_try_advisory_lock(${ids[3]}::bigint)`).trim(),
              again: again._tag === "ConversationLocked" ? again.holder : again._tag
            }
          })
        )
        const lengths = yield* Effect.forEach(ids, (id) =>
          Effect.scoped(Effect.flatMap(store.open(id), (s) => Effect.map(s.conversation, (c) => c.entries.length)))
        )
        return { during, lengths, after: advisoryLocks(url) }
      }).pipe(Effect.provide(sharedStore(url, 2)))
    )
    expect(seen.during).toStrictEqual({ locks: "12", backends: "2", other: "f", again: process.pid })
    expect(seen.lengths).toStrictEqual(ids.map(() => 6))
    expect(seen.after).toBe("0")
    expect(psql(url, "SELECT count(*) FROM parley_locks").trim()).toBe("0")
  }, 60_000)

  it("shared: a transaction holds its connection; another lock's statement waits for it and is not rolled back with it", async () => {
    const url = freshDatabase(server!)
    psql(url, "CREATE TABLE marks (what text)")
    const rows = await withShared(url, 1, (sql, locks) =>
      Effect.gen(function* () {
        const first = yield* locks.tryLock(ids[0]!)
        const second = yield* locks.tryLock(ids[1]!)
        if (first._tag !== "Taken" || second._tag !== "Taken") return yield* Effect.die("not taken")
        const inside = yield* Deferred.make<void>()
        let ended = 0
        const failing = PgLock.transaction(
          sql,
          first.slot,
          Effect.gen(function* () {
            yield* sql`INSERT INTO marks VALUES ('rolled back')`
            yield* Deferred.succeed(inside, undefined)
            yield* Effect.sleep("200 millis")
            ended = performance.now()
            return yield* Effect.fail("no")
          })
        )
        const fiber = yield* Effect.forkChild(Effect.exit(failing))
        // Sent once the transaction is open on the one shared connection: it must wait for the transaction's end.
        yield* Deferred.await(inside)
        yield* PgLock.onSlot(sql, second.slot, sql`INSERT INTO marks VALUES ('kept')`)
        const keptAt = performance.now()
        const exit = yield* Fiber.join(fiber)
        return {
          failed: Exit.isFailure(exit),
          waited: ended > 0 && keptAt >= ended,
          rows: yield* sql<{ what: string }>`SELECT what FROM marks`
        }
      })
    )
    expect(rows).toStrictEqual({ failed: true, waited: true, rows: [{ what: "kept" }] })
  }, 60_000)

  it("shared: a connection whose server process is killed fails its sessions' writes; new locks go to a fresh one, and a closed session's id opens again", async () => {
    const url = freshDatabase(server!)
    const seen = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* ConversationStore
        yield* Effect.forEach(ids.slice(0, 2), (id) => Effect.scoped(store.create({ id, metadata })), { discard: true })
        const killed = yield* Effect.scoped(
          Effect.gen(function* () {
            const s = yield* store.open(ids[0]!)
            psql(url, "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'")
            const write = yield* Effect.flip(s.append(turn(1)))
            // The first look after the kill finds the connection gone and takes a fresh one.
            const other = yield* Effect.exit(
              Effect.scoped(Effect.flatMap(store.open(ids[1]!), (o) => o.append(turn(2))))
            )
            return { write: write._tag, other: other._tag }
          })
        )
        const reopened = yield* Effect.scoped(
          Effect.flatMap(store.open(ids[0]!), (s) => Effect.andThen(s.append(turn(3)), s.conversation))
        )
        return { ...killed, reopened: reopened.entries.length, locks: advisoryLocks(url) }
      }).pipe(Effect.provide(sharedStore(url, 1)))
    )
    expect(seen).toStrictEqual({ write: "StoreIoError", other: "Success", reopened: 2, locks: "0" })
  }, 60_000)

  it("shared: 30 opens of one conversation at once, five rounds: one wins each round, one lock held, none left after", async () => {
    const url = freshDatabase(server!)
    const rounds = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* ConversationStore
        yield* Effect.scoped(store.create({ id: ids[0]!, metadata }))
        return yield* Effect.forEach([1, 2, 3, 4, 5], () =>
          Effect.scoped(
            Effect.gen(function* () {
              const tries = yield* Effect.forEach(
                Array.from({ length: 30 }, () => store.open(ids[0]!)),
                (open) => Effect.exit(open),
                { concurrency: "unbounded" }
              )
              const won = tries.filter(Exit.isSuccess).length
              const refused = tries.filter(
                (t) =>
                  Exit.isFailure(t) &&
                  Exit.hasFails(t) &&
                  t.cause.reasons.some((r) => r._tag === "Fail" && r.error._tag === "ConversationLocked")
              ).length
              return `${won} won, ${refused} refused, ${advisoryLocks(url)} held`
            })
          ).pipe(Effect.map((s) => `${s}, ${advisoryLocks(url)} after`))
        )
      }).pipe(Effect.provide(sharedStore(url, 2)))
    )
    expect(rounds).toStrictEqual(Array.from({ length: 5 }, () => "1 won, 29 refused, 1 held, 0 after"))
  }, 60_000)

  it("a closed session's write fails, shared or not: its connection outlives the lock when shared", async () => {
    const results: Array<string> = []
    for (const lockConnections of [0, 2]) {
      const url = freshDatabase(server!)
      const seen = await Effect.runPromise(
        Effect.gen(function* () {
          const store = yield* ConversationStore
          const session = yield* Effect.scoped(
            Effect.flatMap(store.create({ id: ids[0]!, metadata }), (s) => Effect.as(s.append(turn(1)), s))
          )
          const late = yield* Effect.exit(session.append(turn(2)))
          return `${lockConnections}: late write ${late._tag}, ${psql(url, `SELECT count(*) FROM parley_events WHERE conversation_id = '${ids[0]}'`).trim()} stored`
        }).pipe(Effect.provide(sharedStore(url, lockConnections)))
      )
      results.push(seen)
    }
    expect(results).toStrictEqual(["0: late write Failure, 2 stored", "2: late write Failure, 2 stored"])
  }, 60_000)

  it("shared: a tryLock interrupted at any step never keeps the connection's permit (the next one takes the lock)", async () => {
    const url = freshDatabase(server!)
    const wedged = await withShared(url, 1, (_sql, locks) =>
      Effect.gen(function* () {
        yield* Effect.scoped(locks.tryLock(ids[0]!))
        // A small budget of operations before each yield puts the interrupt at every step of the attempt in turn.
        for (const ops of [2, 3, 4, 5]) {
          for (let k = 0; k < 24; k++) {
            const fiber = yield* Effect.forkChild(
              Effect.scoped(locks.tryLock(ids[1]!)).pipe(Effect.provideService(Scheduler.MaxOpsBeforeYield, ops)),
              { startImmediately: true }
            )
            for (let i = 0; i < k; i++) yield* Effect.yieldNow
            yield* Fiber.interrupt(fiber)
            const next = yield* Effect.scoped(locks.tryLock(ids[1]!)).pipe(Effect.timeoutOption("2 seconds"))
            if (next._tag === "None" || next.value._tag !== "Taken")
              return `ops ${ops}, interrupted after ${k} yields: ${next._tag === "None" ? "the next attempt hung" : next.value._tag}`
          }
        }
        return "never"
      })
    )
    expect(wedged).toBe("never")
    expect(advisoryLocks(url)).toBe("0")
  }, 120_000)

  it("shared: an unlock that fails on a live connection retires it: no lock left on it, the next lock on another", async () => {
    const url = freshDatabase(server!)
    const seen = await withShared(url, 1, (sql, locks) =>
      Effect.gen(function* () {
        const backend = (slot: PgLock.Slot) =>
          Effect.map(PgLock.onSlot(sql, slot, sql<{ p: number }>`SELECT pg_backend_pid() AS p`), (rows) => rows[0]!.p)
        const first = yield* Effect.scoped(
          Effect.gen(function* () {
            const a = yield* locks.tryLock(ids[0]!)
            if (a._tag !== "Taken") return yield* Effect.die("not taken")
            yield* PgLock.onSlot(sql, a.slot, sql`SET lock_timeout = '200ms'`)
            // The holder row locked by another transaction: the release's statement fails after its lock_timeout.
            const locked = yield* Deferred.make<void>()
            const done = yield* Deferred.make<void>()
            const blocker = yield* Effect.forkChild(
              sql.withTransaction(
                Effect.gen(function* () {
                  yield* sql`SELECT * FROM parley_locks WHERE conversation_id = ${ids[0]!} FOR UPDATE`
                  yield* Deferred.succeed(locked, undefined)
                  yield* Deferred.await(done)
                })
              )
            )
            yield* Deferred.await(locked)
            const pid = yield* backend(a.slot)
            yield* a.release
            const after = advisoryLocks(url)
            yield* Deferred.succeed(done, undefined)
            yield* Fiber.join(blocker)
            return { pid, after }
          })
        )
        const again = yield* Effect.scoped(
          Effect.flatMap(locks.tryLock(ids[0]!), (b) =>
            b._tag === "Taken"
              ? Effect.map(backend(b.slot), (p) => (p === first.pid ? "same" : "another"))
              : Effect.succeed(b._tag)
          )
        )
        return { after: first.after, again, end: advisoryLocks(url) }
      })
    )
    expect(seen).toStrictEqual({ after: "0", again: "another", end: "0" })
  }, 60_000)
})
