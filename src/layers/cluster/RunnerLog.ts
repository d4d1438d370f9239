/**
 * What a cluster runner prints of the cluster library's own log
 * (docs/cluster.md#stopping-a-runner): Effect's pretty logger writes a
 * warning as a block (a time, the fiber, the message, then its annotations
 * `{ module, fiber, runner }` on lines of their own). A runner prints each
 * warning or error as one line in parley's words instead, its cause's first
 * line after it; and while it stops, the warnings that stopping itself
 * causes (no healthy runner left once this one has let go of its shards, an
 * outgoing message abandoned) are not printed at all: they say nothing the
 * person does not know.
 *
 * The library warns of its shard locks once per shard (a runner holds
 * 20–60): when PostgreSQL does not answer in time, a stopping runner said
 * "Could not release shards, retrying" up to 32 times. While it stops, the
 * shard-lock warnings are one line, said once, with what failed and what
 * follows: its locks are session locks, so the other runners take its
 * shards over once its database session ends (at its exit at the latest).
 * Otherwise each is said at most once per {@link QUIET_MS}.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Logger from "effect/Logger"
 * import * as RunnerLog from "parley/layers/cluster/RunnerLog"
 * const program = Effect.gen(function* () {
 *   RunnerLog.line(["Could not read messages from storage"], "Warn", undefined, false)
 *   // "parley serve --cluster: warning: Could not read messages from storage"
 *   RunnerLog.line(["No healthy runners available"], "Warn", undefined, true) // undefined
 *   yield* Effect.logWarning("Shard lock storage is unhealthy")
 * }).pipe(Effect.provideService(Logger.CurrentLoggers, new Set([RunnerLog.make(() => false)])))
 * ```
 */
import * as Cause from "effect/Cause"
import * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"

/** The library's warnings that a runner's own stop causes (Effect's `cluster/Sharding.ts`). */
const WHILE_STOPPING: ReadonlyArray<string> = [
  "No healthy runners available",
  "Persisting outgoing message abandoned during shutdown"
]

/**
 * The library's warnings about its shard locks in PostgreSQL (Effect's
 * `cluster/Sharding.ts`): while a runner stops, they all say that its locks
 * were not released cleanly.
 */
const SHARD_LOCKS: ReadonlyArray<string> = [
  "Could not release shards",
  "Could not acquire/release shards",
  "Shard lock storage is unhealthy",
  "Shard lock storage is still unhealthy",
  "Forced shard release is still pending"
]

/** A shard-lock warning is said once in this long (the library says a release's per shard, the others per try). */
export const QUIET_MS = 30_000

/** One part of a log message as text (an object as JSON, on one line). */
const text = (part: unknown): string => {
  if (typeof part === "string") return part
  if (part instanceof Error) return part.message
  try {
    return JSON.stringify(part) ?? String(part)
  } catch {
    return String(part)
  }
}

/** A field of a value, when it is an object (no cast: `Reflect.get` reads any object's). */
const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? Reflect.get(value, key) : undefined

/** An error's name and message, or undefined when it has no message of its own. */
const named = (error: unknown): string | undefined => {
  const message = field(error, "message")
  if (typeof message !== "string" || message === "") return undefined
  const tag = [field(error, "_tag"), field(error, "name")].find((t): t is string => typeof t === "string") ?? "Error"
  return `${tag}: ${message}`
}

/**
 * The first line of what `cause` says, when it says anything. A wrapper
 * without a message of its own (the library's `PersistenceError`, whose
 * pretty form is its type id and a brace) says its own cause's.
 */
const causeLine = (cause: Cause.Cause<unknown> | undefined): string | undefined => {
  if (cause === undefined || cause.reasons.length === 0) return undefined
  let error: unknown = Cause.squash(cause)
  for (let depth = 0; depth < 5 && named(error) === undefined; depth++) {
    const inner = field(error, "cause")
    if (typeof inner !== "object" || inner === null) break
    error = inner
  }
  return named(error)?.split("\n")[0] ?? Cause.pretty(cause).split("\n")[0]?.trim()
}

/**
 * The line for one log entry (`message` as Effect passes it: the arguments
 * of `Effect.log*`), or `undefined` when it is not shown: below a warning,
 * or a warning its runner's own stop explains.
 */
export const line = (
  message: unknown,
  level: LogLevel.LogLevel,
  cause: Cause.Cause<unknown> | undefined,
  stopping: boolean
): string | undefined => {
  if (level !== "Warn" && level !== "Error" && level !== "Fatal") return undefined
  const parts = (Array.isArray(message) ? message : [message]).map(text).filter((p) => p !== "")
  const said = parts.join(" ")
  if (stopping && level === "Warn" && WHILE_STOPPING.some((expected) => said.startsWith(expected))) return undefined
  const why = causeLine(cause)
  const what = [said, why].filter((p) => p !== undefined && p !== "").join(": ")
  return `parley serve --cluster: ${level === "Warn" ? "warning" : "error"}: ${what.replaceAll("\n", " ")}`
}

/** What a runner has said of its shard locks: when it last said each warning, whether its stop's line is out. */
export interface Said {
  readonly at: Map<string, number>
  stop: boolean
}

/**
 * {@link line}, with the library's shard-lock warnings collapsed (`said`
 * keeps what was said, `now` is the clock): while stopping, the first is
 * one line saying what failed and that the other runners take the shards
 * over, and the rest are not said; otherwise each of them is said at most
 * once per {@link QUIET_MS}.
 */
export const collapsed = (
  said: Said,
  now: number,
  message: unknown,
  level: LogLevel.LogLevel,
  cause: Cause.Cause<unknown> | undefined,
  stopping: boolean
): string | undefined => {
  const shown = line(message, level, cause, stopping)
  if (shown === undefined) return undefined
  const what = (Array.isArray(message) ? message : [message]).map(text).join(" ")
  const lock = SHARD_LOCKS.find((l) => what.startsWith(l))
  if (lock === undefined) return shown
  if (stopping) {
    if (said.stop) return undefined
    said.stop = true
    const why = causeLine(cause)
    const failed = `releasing its shards failed${why === undefined ? "" : ` (${why.replaceAll("\n", " ")})`}`
    const next = "the other runners take over any it holds once its PostgreSQL session ends, at its exit at the latest"
    return `parley serve --cluster: warning: stopping: ${failed}: ${next}`
  }
  const last = said.at.get(lock)
  if (last !== undefined && now - last < QUIET_MS) return undefined
  said.at.set(lock, now)
  return shown
}

/** A logger that writes {@link collapsed} lines to stderr; `stopping` says whether the runner has begun to stop. */
export const make = (stopping: () => boolean): Logger.Logger<unknown, void> => {
  const said: Said = { at: new Map(), stop: false }
  return Logger.make((options) => {
    const shown = collapsed(said, Date.now(), options.message, options.logLevel, options.cause, stopping())
    if (shown !== undefined) process.stderr.write(`${shown}\n`)
  })
}
