/**
 * One `input_required` round of a 2026-07-28 MCP call (docs/mcp.md#rounds-2026-07-28; MCP
 * 2026-07-28 "multi round-trip requests"; RFD 023 "Incremental
 * Persistence").
 *
 * A stateless server asks for input by answering `tools/call` with
 * `inputRequests` (keyed) and an opaque `requestState`. parley works the
 * requests one by one as ordinary tool questions (`McpCall`), keeps each
 * answer under its key, and retries the call with `inputResponses` under the
 * same keys and the `requestState` verbatim once every key has its answer.
 *
 * Crash safety: the round is what a new process needs to retry the call
 * instead of starting it over, so the first question of each round carries
 * it ({@link toState}) and the coordinator records it with that question.
 * `--continue-turn` hands it back ({@link fromState}); the round's requests
 * are then answered from the answers already recorded, and the call is
 * retried with the same `requestState`.
 *
 * @example
 * ```ts
 * import * as McpRound from "parley/layers/mcp/McpRound"
 * const state = McpRound.toState("demo", 1, { inputRequests: { confirm: { method: "elicitation/create", params: { message: "Sure?", requestedSchema: { type: "object", properties: {} } } } }, requestState: "s1" })
 * McpRound.fromState(state, "demo")?.input.requestState // "s1"
 * McpRound.fromState(state, "other") // undefined: recorded for another server
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import type * as Schema from "effect/Schema"
import type { ElicitResult, InputRequired, Retry } from "./McpServer.ts"

/** A round recorded with a question: which server, which round of the call, and what it asked. */
export interface Recorded {
  readonly round: number
  readonly input: InputRequired
}

/** The recorded form (under `mcp`, so other executors' state cannot be mistaken for it). */
export const toState = (server: string, round: number, input: InputRequired): Schema.Json => ({
  mcp: {
    server,
    round,
    inputRequests: input.inputRequests as Schema.Json,
    ...(input.requestState !== undefined ? { requestState: input.requestState } : {})
  }
})

const isTable = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** The round recorded for `server`, or `undefined` when the state is missing, malformed or another server's. */
export const fromState = (state: Schema.Json | undefined, server: string): Recorded | undefined => {
  const mcp = isTable(state) ? state["mcp"] : undefined
  if (!isTable(mcp) || mcp["server"] !== server || !isTable(mcp["inputRequests"])) return undefined
  const round = mcp["round"]
  const requestState = mcp["requestState"]
  if (typeof round !== "number" || !Number.isInteger(round) || round < 1) return undefined
  if (requestState !== undefined && typeof requestState !== "string") return undefined
  return {
    round,
    input: { inputRequests: mcp["inputRequests"], ...(requestState !== undefined ? { requestState } : {}) }
  }
}

/** The round being answered. */
export interface Round {
  readonly number: number
  readonly input: InputRequired
  /** Answers so far, by the server's keys. */
  readonly responses: Record<string, ElicitResult>
  /** The round has not yet been handed to the coordinator with a question (see the module comment). */
  unrecorded: boolean
}

/** A new round. */
export const make = (number: number, input: InputRequired): Round => ({
  number,
  input,
  responses: {},
  unrecorded: true
})

/** The keys of the round's requests, in the server's order. */
export const keys = (round: Round): ReadonlyArray<string> => Object.keys(round.input.inputRequests)

/** Whether every request of the round has its answer. */
export const complete = (round: Round): boolean => keys(round).every((k) => round.responses[k] !== undefined)

/** The call again: the answers under the server's keys, its `requestState` verbatim. */
export const retry = (round: Round): Retry => ({
  inputResponses: { ...round.responses },
  ...(round.input.requestState !== undefined ? { requestState: round.input.requestState } : {})
})

/** An embedded request as an `elicitation/create`'s params, or the method parley does not answer. */
export const elicitation = (request: unknown): { readonly params: unknown } | { readonly unsupported: string } => {
  if (isTable(request) && request["method"] === "elicitation/create") return { params: request["params"] }
  return {
    unsupported: isTable(request) && typeof request["method"] === "string" ? request["method"] : JSON.stringify(request)
  }
}
