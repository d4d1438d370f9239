/**
 * `$PARLEY_CLUSTER_DEBUG` (docs/cluster.md#where-an-answers-time-goes): one stderr line per step of a
 * message's way through the cluster, with the wall clock in milliseconds,
 * so the latency of an answer can be split between the runners.
 *
 * @example
 * ```ts
 * import * as Trace from "parley/layers/cluster/Trace"
 * const traced = Trace.line("Answer", "17738399468")
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"

/** Whether tracing is on. */
export const enabled = process.env["PARLEY_CLUSTER_DEBUG"] !== undefined

/** Writes `what id` with the time and this process' pid, when tracing is on. */
export const line = (what: string, id: string): Effect.Effect<void> =>
  enabled
    ? Effect.sync(() => void process.stderr.write(`parley[${process.pid}]: ${Date.now()} ${what} ${id}\n`))
    : Effect.void

if (enabled && process.env["PARLEY_CLUSTER_LAG"] !== undefined) {
  const { monitorEventLoopDelay } = await import("node:perf_hooks")
  const h = monitorEventLoopDelay({ resolution: 10 })
  h.enable()
  let cpu = process.cpuUsage()
  setInterval(() => {
    const c = process.cpuUsage(cpu)
    cpu = process.cpuUsage()
    process.stderr.write(
      `parley[${process.pid}]: ${Date.now()} lag max ${(h.max / 1e6).toFixed(0)} p99 ${(h.percentile(99) / 1e6).toFixed(0)} cpu ${((c.user + c.system) / 1e4).toFixed(0)}% lag\n`
    )
    h.reset()
  }, 1000).unref()
}
