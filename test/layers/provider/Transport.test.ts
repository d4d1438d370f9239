/**
 * The pieces of the providers' reply handling (docs/models.md#replies-and-errors) that need no server: the one-line error
 * format, `Retry-After` parsing and HTML error pages. The retry schedule is
 * tested in Retry.test.ts, the reply fold in test/domain/model/Reply.test.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { retryAfterMs, summarizeBody } from "../../../src/layers/provider/Transport.ts"
import { ProviderError } from "../../../src/services/Provider.ts"

const headers = (values: Record<string, string>) => new Headers(values)

describe("ProviderError messages: one line, one format per failure", () => {
  const base = { provider: "anthropic", retryable: false, attempts: 1 } as const

  it("http: provider, status and attempts; a hint is a second sentence", () => {
    assert.strictEqual(
      new ProviderError({ ...base, failure: "http", status: 500, detail: "Overloaded", attempts: 4 }).message,
      "anthropic: HTTP 500 after 4 attempts: Overloaded"
    )
    assert.strictEqual(
      new ProviderError({
        ...base,
        failure: "http",
        status: 401,
        detail: "invalid x-api-key",
        hint: "Check ANTHROPIC_API_KEY."
      }).message,
      "anthropic: HTTP 401 after 1 attempt: invalid x-api-key. Check ANTHROPIC_API_KEY."
    )
    assert.strictEqual(
      new ProviderError({ ...base, failure: "http", status: 401, detail: "Bad key.", hint: "Check ANTHROPIC_API_KEY." })
        .message,
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
      new ProviderError({
        ...base,
        failure: "reply",
        detail: "the reply was cut off: the stream ended before message_stop."
      }).message,
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
    assert.strictEqual(
      retryAfterMs(headers({ "retry-after": "Thu, 05 Mar 2026 19:30:00 GMT" }), now),
      0,
      "a past date: now"
    )
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
      'HTML error page "502 Bad Gateway"'
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
