/**
 * The version of the run host's socket protocol (`services/RunHost.ts`;
 * docs/questions-and-approvals.md#runs-beyond-the-terminal). A host says it
 * in its first answer (`Hello`); a client of another version refuses with one
 * line ({@link HostProtocolMismatch}) rather than failing to decode what the
 * host sends. A host that predates `Hello` speaks version 1.
 *
 * @example
 * ```ts
 * import * as HostProtocol from "parley/domain/run/HostProtocol"
 * HostProtocol.mismatch({ protocol: 2, parley: "0.2.0", conversation_id: "17738399468" }, 1)?.message
 * // "The run of conversation 17738399468 speaks host protocol 2 (parley 0.2.0); this parley speaks host protocol 1: …"
 * HostProtocol.mismatch(undefined, 1) // undefined: a host without Hello speaks 1
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The protocol this parley speaks. Raised only for a change an older client
 * cannot read (a new call or a new optional field is not one): clients of
 * the old version then refuse a new host, and new clients an old one.
 */
export const PROTOCOL = 1

/** What a host said of itself, or `undefined` when it predates `Hello`: read as version 1. */
export interface Hello {
  readonly protocol: number
  readonly parley?: string | undefined
  readonly conversation_id?: string | undefined
}

/** The host on the socket speaks another protocol version than this parley: attach, answer and kill refuse it. */
export class HostProtocolMismatch extends Schema.TaggedError<HostProtocolMismatch>()("HostProtocolMismatch", {
  /** The conversation the host runs, when it said (every host with `Hello` does). */
  conversation_id: Schema.optionalKey(Schema.String),
  /** The host's protocol version. */
  host: Schema.Number,
  /** The parley version running the host, when it said. */
  host_parley: Schema.optionalKey(Schema.String),
  /** This parley's protocol version. */
  ours: Schema.Number
}) {
  override get message(): string {
    const run = this.conversation_id === undefined ? "The run" : `The run of conversation ${this.conversation_id}`
    const parley = this.host_parley === undefined ? "" : ` (parley ${this.host_parley})`
    return `${run} speaks host protocol ${this.host}${parley}; this parley speaks host protocol ${this.ours}: attach to it, answer it or stop it with the parley version that runs it.`
  }
}

/** The refusal when `hello` (undefined: a host that predates it, version 1) is not protocol `ours`. */
export const mismatch = (hello: Hello | undefined, ours: number = PROTOCOL): HostProtocolMismatch | undefined => {
  const host = hello?.protocol ?? 1
  if (host === ours) return undefined
  return new HostProtocolMismatch({
    host,
    ours,
    ...(hello?.conversation_id !== undefined ? { conversation_id: hello.conversation_id } : {}),
    ...(hello?.parley !== undefined ? { host_parley: hello.parley } : {})
  })
}
