/**
 * A running turn as `conversation ls` shows it (docs/questions-and-approvals.md#runs-beyond-the-terminal):
 * what its host said (`layers/host/Running.ts` asks it), and the row's JSON field and text suffix. Plain
 * code: the listing's fast path (`cli/conversation/LsFast.ts`) renders rows with it without loading Effect.
 *
 * @internal
 * @example
 * ```ts
 * import * as Running from "parley/domain/run/Running"
 * Running.textOf({ pid: 4242, waiting: [], tools: [] }) // "  [running pid 4242]"
 * ```
 */

/**
 * A running turn: the host's pid, its open questions and the tools that asked them; or, for a host of
 * another protocol version (a run of another parley version, which this parley may not ask more),
 * `other` with what it said of itself (`pid` is then `null`: it was not asked).
 */
export interface Running {
  readonly pid: number | null
  readonly waiting: ReadonlyArray<string>
  readonly tools: ReadonlyArray<string>
  readonly other?: { readonly protocol: number; readonly parley?: string | undefined } | undefined
}

/** The JSON `running` field of an `ls` row (a run of another parley version adds `host_protocol` and `parley`). */
export const jsonOf = (running: Running | undefined) =>
  running === undefined
    ? null
    : {
        pid: running.pid,
        waiting: running.waiting,
        ...(running.other !== undefined
          ? { host_protocol: running.other.protocol, parley: running.other.parley ?? null }
          : {})
      }

/** What a run of another parley version is called: its version, when it said, and its protocol's. */
const otherText = (other: NonNullable<Running["other"]>): string =>
  `other parley version (${other.parley !== undefined ? `parley ${other.parley}, ` : ""}host protocol ${other.protocol})`

/** The text suffix of an `ls` row. */
export const textOf = (running: Running | undefined): string =>
  running === undefined
    ? ""
    : running.other !== undefined
      ? `  [running: ${otherText(running.other)}]`
      : running.waiting.length > 0
        ? `  [running, waiting for input: ${running.tools.join(", ")}]`
        : `  [running pid ${running.pid}]`
