/**
 * The live providers' retries (docs/models.md#retries), on the TestClock so the
 * delays are checked without waiting: exponential backoff, a provider's
 * `Retry-After` honoured up to a bound, and every attempt counted.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { isRetryableStatus, type RetryPolicy, withRetries } from "../../../src/layers/provider/Retry.ts"
import { ProviderError } from "../../../src/services/Provider.ts"

describe("isRetryableStatus", () => {
  it("retries 408, 409, 429, 5xx and a connection failure; not other client errors", () => {
    assert.deepStrictEqual([undefined, 408, 409, 429, 500, 503, 400, 401, 403, 404, 422].map(isRetryableStatus), [
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false
    ])
  })
})

describe("withRetries (TestClock: delays checked without waiting)", () => {
  const policy: RetryPolicy = { times: 3, baseDelay: "100 millis", maxServerDelay: "30 seconds" }

  /** An attempt that fails `failures` times with `error`, recording the virtual time of each try. */
  const flaky = (failures: number, error: ProviderError) =>
    Effect.sync(() => {
      const at: Array<number> = []
      const attempt = Effect.gen(function* () {
        at.push(yield* Effect.clockWith((clock) => clock.currentTimeMillis))
        if (at.length <= failures) return yield* error
        return "ok"
      })
      return { at, attempt }
    })

  const transient = (extra: Partial<ConstructorParameters<typeof ProviderError>[0]> = {}) =>
    new ProviderError({
      provider: "openai",
      failure: "http",
      status: 503,
      detail: "busy",
      retryable: true,
      attempts: 1,
      ...extra
    })

  it.effect("exponential from the base delay when the provider names no wait", () =>
    Effect.gen(function* () {
      const { at, attempt } = yield* flaky(3, transient())
      const fiber = yield* Effect.forkChild(withRetries(attempt, policy))
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(at, [0, 100, 300, 700])
    })
  )

  it.effect("a Retry-After wait replaces the backoff", () =>
    Effect.gen(function* () {
      const { at, attempt } = yield* flaky(2, transient({ retryAfterMs: 5_000 }))
      const fiber = yield* Effect.forkChild(withRetries(attempt, policy))
      yield* TestClock.adjust("4999 millis")
      assert.deepStrictEqual(at, [0])
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(at, [0, 5_000, 10_000])
    })
  )

  it.effect("a wait longer than maxServerDelay ends the retries at once, and the error says so", () =>
    Effect.gen(function* () {
      const { at, attempt } = yield* flaky(9, transient({ retryAfterMs: 31_000 }))
      const error = yield* Effect.flip(withRetries(attempt, policy))
      assert.deepStrictEqual(at, [0])
      assert.strictEqual(
        error.message,
        "openai: HTTP 503 after 1 attempt: busy. The provider asks to wait 31 s before retrying (parley waits at most 30 s); try again later."
      )
    })
  )

  it.effect("the final error counts every attempt", () =>
    Effect.gen(function* () {
      const { attempt } = yield* flaky(9, transient())
      const fiber = yield* Effect.forkChild(Effect.flip(withRetries(attempt, policy)))
      yield* TestClock.adjust("10 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error.attempts, 4)
      assert.strictEqual(error.message, "openai: HTTP 503 after 4 attempts: busy")
    })
  )
})
