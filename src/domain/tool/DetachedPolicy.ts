/**
 * What a question meant for a person does when nobody can be asked: a module of its own, so
 * a conversation's metadata (which remembers a run's policy) is read without loading the whole
 * `config.toml` schema (`Config.ts`, which re-exports it: 1.1 ms of `conversation print`'s
 * start-up, issue 50).
 *
 * @example
 * ```ts
 * import { DetachedPolicy } from "parley/domain/tool/Config"
 * const policy: DetachedPolicy = "defer"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Schema from "effect/Schema"

/**
 * What a question meant for a person does when nobody can be asked (no
 * terminal, no client attached): `assistant` (the inquiry backend — JP's
 * rule and the default), `wait` (stays open for any answerer, up to
 * `wait_timeout`, then as `defer`), `defer` (recorded unanswered; the run
 * ends with the turn waiting for input, exit 3), `deny` (cancelled,
 * `no_prompt_backend`). Contract §7 and RFD 027's detached policies; see docs/decisions.md#detached-policy.
 */
export const DetachedPolicy = Schema.Literals(["assistant", "wait", "defer", "deny"])
export type DetachedPolicy = typeof DetachedPolicy.Type
