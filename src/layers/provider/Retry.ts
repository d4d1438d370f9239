/**
 * How the live providers retry (docs/models.md; docs/decisions.md#services-are-contracts: a policy of the
 * layers, not part of the `Provider` contract): transient failures — 429,
 * 408, 409, 5xx, no response — are retried with exponential backoff, a wait
 * the provider asks for (`Retry-After`) replaces the computed delay, and a
 * wait longer than parley will honour ends the retries with an error that
 * says how long the provider asked for.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ProviderError } from "parley/services/Provider"
 * import { withRetries } from "parley/layers/provider/Retry"
 * const error = new ProviderError({ provider: "openai", failure: "http", status: 503, detail: "busy", retryable: true, attempts: 1 })
 * withRetries(Effect.fail(error), { times: 3, baseDelay: "1 millis" }) // fails with attempts: 4
 * ```
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { fieldsOf, ProviderError } from "../../services/Provider.ts"

/** HTTP statuses worth retrying; `undefined` is a connection-level failure. */
export const isRetryableStatus = (status: number | undefined): boolean =>
  status === undefined || status === 408 || status === 409 || status === 429 || status >= 500

/** Bounded exponential backoff for transient failures. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly times: number
  /** First delay; each retry doubles it. */
  readonly baseDelay: Duration.Input
  /**
   * The longest wait a provider may ask for (`Retry-After`) that is honoured
   * (default 30 s); when it asks for longer, retrying now is pointless, so the
   * retries stop and the error says how long it asked for.
   */
  readonly maxServerDelay?: Duration.Input
}

/** The live providers' retries: 3 retries from 200 ms, honouring a `Retry-After` of up to 30 s. */
export const defaultRetryPolicy: RetryPolicy = { times: 3, baseDelay: "200 millis", maxServerDelay: "30 seconds" }

const DEFAULT_MAX_SERVER_DELAY_MS = 30_000

/**
 * The retry schedule: exponential from `baseDelay`, except that a wait the
 * provider asked for (`retryAfterMs` on the failed attempt's error) replaces
 * the computed delay — as the SDKs do when their own retries are on.
 */
export const retrySchedule = (policy: RetryPolicy): Schedule.Schedule<Duration.Duration, ProviderError> =>
  Schedule.exponential(policy.baseDelay).pipe(
    Schedule.modifyDelay((meta: Schedule.Metadata<Duration.Duration, ProviderError>) =>
      Effect.succeed(meta.input.retryAfterMs ?? meta.duration)
    )
  )

const seconds = (ms: number) => `${Math.ceil(ms / 1000)} s`

/**
 * Runs `attempt` and retries it while it fails with a retryable
 * `ProviderError` (under `retrySchedule`), stamping the final error with the
 * number of attempts made.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { ProviderError } from "parley/services/Provider"
 * import { withRetries } from "parley/layers/provider/Retry"
 * const error = new ProviderError({ provider: "openai", failure: "http", status: 503, detail: "busy", retryable: true, attempts: 1 })
 * withRetries(Effect.fail(error), { times: 3, baseDelay: "1 millis" }) // fails with attempts: 4
 * ```
 */
export const withRetries = <A, R>(
  attempt: Effect.Effect<A, ProviderError, R>,
  policy: RetryPolicy
): Effect.Effect<A, ProviderError, R> =>
  Effect.suspend(() => {
    const maxServerDelay =
      policy.maxServerDelay === undefined ? DEFAULT_MAX_SERVER_DELAY_MS : Duration.toMillis(policy.maxServerDelay)
    const tooLong = (e: ProviderError) => e.retryAfterMs !== undefined && e.retryAfterMs > maxServerDelay
    let attempts = 0
    const counted = Effect.suspend(() => {
      attempts++
      return attempt
    }).pipe(Effect.mapError((e) => new ProviderError({ ...fieldsOf(e), attempts })))
    return counted.pipe(
      Effect.retry({
        schedule: retrySchedule(policy),
        times: policy.times,
        while: (e: ProviderError) => e.retryable && !tooLong(e)
      }),
      Effect.mapError((e) =>
        e.retryable && tooLong(e) && e.hint === undefined
          ? new ProviderError({
              ...fieldsOf(e),
              hint: `The provider asks to wait ${seconds(e.retryAfterMs!)} before retrying (parley waits at most ${seconds(
                maxServerDelay
              )}); try again later.`
            })
          : e
      )
    )
  })
