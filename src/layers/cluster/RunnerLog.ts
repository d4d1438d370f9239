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

/** The first line of what `cause` says, when it says anything. */
const causeLine = (cause: Cause.Cause<unknown> | undefined): string | undefined => {
  if (cause === undefined || cause.reasons.length === 0) return undefined
  return Cause.pretty(cause).split("\n")[0]?.trim()
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

/** A logger that writes {@link line} to stderr; `stopping` says whether the runner has begun to stop. */
export const make = (stopping: () => boolean): Logger.Logger<unknown, void> =>
  Logger.make((options) => {
    const shown = line(options.message, options.logLevel, options.cause, stopping())
    if (shown !== undefined) process.stderr.write(`${shown}\n`)
  })
