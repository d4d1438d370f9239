/**
 * The pieces of issue 11 item 6 that need no server: the one-line error
 * format, `Retry-After` parsing, HTML error pages, the retry schedule (on the
 * TestClock, so its delays are checked without waiting), and how a finished
 * empty reply is collected.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import { retryAfterMs, summarizeBody } from "../../../src/layers/provider/Transport.ts"
import {
  collect,
  ProviderDelta as Delta,
  ProviderError,
  type RetryPolicy,
  withRetries
} from "../../../src/services/Provider.ts"
import { ts } from "./fixtures.ts"

const headers = (values: Record<string, string>) => new Headers(values)

describe("ProviderError messages: one line, one format per failure", () => {
  const base = { provider: "anthropic", retryable: false, attempts: 1 } as const

  it("http: provider, status and attempts; a hint is a second sentence", () => {
    assert.strictEqual(
      new ProviderError({ ...base, failure: "http", status: 500, detail: "Overloaded", attempts: 4 }).message,
      "anthropic: HTTP 500 after 4 attempts: Overloaded"
    )
    assert.strictEqual(
      new ProviderError({ ...base, failure: "http", status: 401, detail: "invalid x-api-key", hint: "Check ANTHROPIC_API_KEY." }).message,
      "anthropic: HTTP 401 after 1 attempt: invalid x-api-key. Check ANTHROPIC_API_KEY."
    )
    assert.strictEqual(
      new ProviderError({ ...base, failure: "http", status: 401, detail: "Bad key.", hint: "Check ANTHROPIC_API_KEY." }).message,
      "anthropic: HTTP 401 after 1 attempt: Bad key. Check ANTHROPIC_API_KEY.",
      "no doubled full stop"
    )
  })

  it("connection, reply and config", () => {
    assert.strictEqual(
      new ProviderError({ ...base, failure: "connection", detail: "Connection error.", attempts: 4 }).message,
      "anthropic: no response after 4 attempts: Connection error."
    )
    assert.strictEqual(
      new ProviderError({ ...base, failure: "reply", detail: "the reply was cut off: the stream ended before message_stop." }).message,
      "anthropic: the reply was cut off: the stream ended before message_stop."
    )
    assert.strictEqual(
      new ProviderError({ ...base, failure: "config", detail: "ANTHROPIC_API_KEY is not set." }).message,
      "ANTHROPIC_API_KEY is not set.",
      "a local failure already says what to fix"
    )
  })
})

describe("retryAfterMs", () => {
  const now = Date.parse("2026-03-05T19:31:10Z")

  it("reads seconds, fractions, retry-after-ms (first), and HTTP-dates", () => {
    assert.strictEqual(retryAfterMs(headers({ "retry-after": "1" }), now), 1000)
    assert.strictEqual(retryAfterMs(headers({ "retry-after": " 2.5 " }), now), 2500)
    assert.strictEqual(retryAfterMs(headers({ "retry-after-ms": "250", "retry-after": "9" }), now), 250)
    assert.strictEqual(retryAfterMs(headers({ "retry-after": "Thu, 05 Mar 2026 19:31:13 GMT" }), now), 3000)
    assert.strictEqual(retryAfterMs(headers({ "retry-after": "Thu, 05 Mar 2026 19:30:00 GMT" }), now), 0, "a past date: now")
  })

  it("ignores what it cannot read", () => {
    assert.isUndefined(retryAfterMs(headers({}), now))
    assert.isUndefined(retryAfterMs(headers({ "retry-after": "soon" }), now))
    assert.isUndefined(retryAfterMs(headers({ "retry-after-ms": "-5" }), now))
    assert.isUndefined(retryAfterMs(undefined, now))
  })
})

describe("summarizeBody", () => {
  it("an HTML page becomes its title, or its size when it has none", () => {
    assert.strictEqual(
      summarizeBody("<html><head><title>\n  502 Bad   Gateway\n</title></head><body>…</body></html>"),
      "HTML error page \"502 Bad Gateway\""
    )
    const page = "<!DOCTYPE html><html><body><h1>Gateway Timeout</h1></body></html>"
    assert.strictEqual(summarizeBody(page), `HTML error page (${page.length} bytes)`)
    assert.strictEqual(summarizeBody("<html><title></title></html>"), "HTML error page (28 bytes)")
  })

  it("other text stays, on one line, cut at 300 characters; nothing is said as such", () => {
    assert.strictEqual(summarizeBody("upstream\nconnect error"), "upstream connect error")
    const long = summarizeBody("x".repeat(1000))
    assert.strictEqual(long.length, 300)
    assert.isTrue(long.endsWith("…"))
    assert.strictEqual(summarizeBody("  \n"), "empty response body")
  })
})

describe("withRetries (TestClock: delays checked without waiting)", () => {
  const policy: RetryPolicy = { times: 3, baseDelay: "100 millis", maxServerDelay: "30 seconds" }

  /** An attempt that fails `failures` times with `error`, recording the virtual time of each try. */
  const flaky = (failures: number, error: ProviderError) =>
    Effect.sync(() => {
      const at: Array<number> = []
      const attempt = Effect.gen(function*() {
        at.push((yield* Effect.clockWith((clock) => clock.currentTimeMillis)))
        if (at.length <= failures) return yield* error
        return "ok"
      })
      return { at, attempt }
    })

  const transient = (extra: Partial<ConstructorParameters<typeof ProviderError>[0]> = {}) =>
    new ProviderError({ provider: "openai", failure: "http", status: 503, detail: "busy", retryable: true, attempts: 1, ...extra })

  it.effect("exponential from the base delay when the provider names no wait", () =>
    Effect.gen(function*() {
      const { at, attempt } = yield* flaky(3, transient())
      const fiber = yield* Effect.forkChild(withRetries(attempt, policy))
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(at, [0, 100, 300, 700])
    }))

  it.effect("a Retry-After wait replaces the backoff", () =>
    Effect.gen(function*() {
      const { at, attempt } = yield* flaky(2, transient({ retryAfterMs: 5_000 }))
      const fiber = yield* Effect.forkChild(withRetries(attempt, policy))
      yield* TestClock.adjust("4999 millis")
      assert.deepStrictEqual(at, [0])
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Fiber.join(fiber), "ok")
      assert.deepStrictEqual(at, [0, 5_000, 10_000])
    }))

  it.effect("a wait longer than maxServerDelay ends the retries at once, and the error says so", () =>
    Effect.gen(function*() {
      const { at, attempt } = yield* flaky(9, transient({ retryAfterMs: 31_000 }))
      const error = yield* Effect.flip(withRetries(attempt, policy))
      assert.deepStrictEqual(at, [0])
      assert.strictEqual(
        error.message,
        "openai: HTTP 503 after 1 attempt: busy. The provider asks to wait 31 s before retrying (parley waits at most 30 s); try again later."
      )
    }))

  it.effect("the final error counts every attempt", () =>
    Effect.gen(function*() {
      const { attempt } = yield* flaky(9, transient())
      const fiber = yield* Effect.forkChild(Effect.flip(withRetries(attempt, policy)))
      yield* TestClock.adjust("10 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error.attempts, 4)
      assert.strictEqual(error.message, "openai: HTTP 503 after 4 attempts: busy")
    }))
})

describe("collect: a finished reply is never empty", () => {
  const when = ts()
  const now = () => when

  it.effect("Finish with nothing before it: one empty message, so recording it completes the turn", () =>
    Effect.gen(function*() {
      const reply = yield* collect(Stream.make(Delta.Finish({ reason: "end_turn" })), { now })
      assert.deepStrictEqual(reply.events, [ChatResponse.message(when, "")])
    }))

  it.effect("no Finish (an interrupted stream): nothing is made up", () =>
    Effect.gen(function*() {
      const reply = yield* collect(Stream.empty, { now })
      assert.deepStrictEqual(reply.events, [])
      assert.isUndefined(reply.stopReason)
    }))

  it.effect("a reply with only reasoning is not padded", () =>
    Effect.gen(function*() {
      const reply = yield* collect(
        Stream.make(Delta.ReasoningDelta({ text: "hm" }), Delta.Finish({ reason: "end_turn" })),
        { now }
      )
      assert.deepStrictEqual(reply.events, [ChatResponse.reasoning(when, "hm")])
    }))
})
