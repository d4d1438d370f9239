/**
 * The plumbing the SDK-backed providers share: open a streaming HTTP request
 * with retries, turn the SDK's async iterable into provider deltas, abort the
 * request when the stream is interrupted, and map SDK errors to `ProviderError`.
 *
 * @example
 * ```ts
 * sdkStream({ provider: "openai", policy, open: (signal) => sdk.chat.completions.create(params, { signal }),
 *   converter: () => new ChunkConverter() })
 * ```
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import {
  isRetryableStatus,
  type ProviderDelta,
  ProviderError,
  type RetryPolicy,
  withRetries
} from "../../services/Provider.ts"

/** Turns one SDK stream event into deltas; one instance per request (it keeps block state). */
export interface Converter<Event> {
  push(event: Event): ReadonlyArray<ProviderDelta> | ProviderError
  /** Deltas owed at the end of the stream (buffered structured output, usage, stop reason). */
  end(): ReadonlyArray<ProviderDelta> | ProviderError
}

/**
 * The provider's own error text: `{"error":{"message":…}}` (Anthropic) or
 * `{"message":…}` (OpenAI), falling back to the SDK message.
 */
const providerMessage = (cause: unknown): string => {
  const c = cause as { error?: { message?: unknown; error?: { message?: unknown } }; message?: unknown; cause?: unknown }
  const inner = c?.error?.error?.message ?? c?.error?.message
  if (typeof inner === "string" && inner.length > 0) return inner
  const base = cause instanceof Error ? cause.message : String(cause)
  // Connection errors wrap the socket error: "Connection error." ← "fetch failed" ← "other side closed".
  const chain: Array<string> = []
  let next: unknown = c?.cause
  while (next instanceof Error && chain.length < 4) {
    if (next.message !== base && !chain.includes(next.message)) chain.push(next.message)
    next = (next as { cause?: unknown }).cause
  }
  return chain.length > 0 ? `${base} (${chain.join(": ")})` : base
}

/** Maps anything an SDK throws to a `ProviderError` (attempts is stamped later). */
export const toProviderError = (provider: string) => (cause: unknown): ProviderError => {
  if (cause instanceof ProviderError) return cause
  const status = (cause as { status?: unknown })?.status
  const code = typeof status === "number" ? status : undefined
  return new ProviderError({
    provider,
    ...(code === undefined ? {} : { status: code }),
    message: providerMessage(cause),
    retryable: isRetryableStatus(code),
    attempts: 1
  })
}

/**
 * A reply stream over an SDK streaming call. The request is (re)opened under
 * the retry policy until the response headers arrive; a failure after the
 * first event is not retried (text may already be on screen). Closing or
 * interrupting the stream aborts the HTTP request.
 */
export const sdkStream = <Event>(options: {
  readonly provider: string
  readonly policy: RetryPolicy
  readonly open: (signal: AbortSignal) => PromiseLike<AsyncIterable<Event>>
  readonly converter: () => Converter<Event>
}): Stream.Stream<ProviderDelta, ProviderError> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const toError = toProviderError(options.provider)
      // One controller for the life of the stream: the scope's finalizer aborts it on
      // interruption, failure or early exit (Stream.take), which closes the socket.
      const controller = yield* Effect.acquireRelease(
        Effect.sync(() => new AbortController()),
        (c) => Effect.sync(() => c.abort())
      )
      let attempts = 0
      const events = yield* withRetries(
        Effect.tryPromise({
          try: () => {
            attempts++
            return Promise.resolve(options.open(controller.signal))
          },
          catch: toError
        }),
        options.policy
      )
      const stamp = (e: ProviderError) => new ProviderError({ ...fieldsOf(e), attempts })
      const converter = options.converter()
      const lift = (out: ReadonlyArray<ProviderDelta> | ProviderError) =>
        out instanceof ProviderError ? Effect.fail(stamp(out)) : Effect.succeed(out)
      return Stream.fromAsyncIterable(events, (cause) => stamp(toError(cause))).pipe(
        Stream.mapEffect((event) => lift(converter.push(event))),
        Stream.concat(Stream.fromEffect(Effect.suspend(() => lift(converter.end())))),
        Stream.flattenIterable
      )
    })
  )

const fieldsOf = (e: ProviderError) => ({
  provider: e.provider,
  message: e.message,
  retryable: e.retryable,
  ...(e.status === undefined ? {} : { status: e.status })
})

/** Parses tool-call arguments: empty means `{}`; anything but a JSON object is an error. */
export const parseArguments = (
  provider: string,
  name: string,
  raw: string
): Record<string, unknown> | ProviderError => {
  if (raw.trim() === "") return {}
  try {
    const value: unknown = JSON.parse(raw)
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // fall through
  }
  return new ProviderError({
    provider,
    message: `The model sent invalid arguments for tool \`${name}\` (expected a JSON object): ${raw.slice(0, 200)}`,
    retryable: false,
    attempts: 1
  })
}
