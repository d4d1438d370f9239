/**
 * The plumbing the SDK-backed providers share: open a streaming HTTP request
 * with retries (honouring `Retry-After`), turn the SDK's async iterable into
 * provider deltas, abort the request when the stream is interrupted, and map
 * SDK errors to one-line `ProviderError`s (docs/models.md: provider, HTTP status,
 * attempts, a hint for 401/403/404, HTML error pages summarised).
 *
 * @example
 * ```ts
 * import { type Converter, sdkStream } from "parley/layers/provider/Transport"
 * import { defaultRetryPolicy } from "parley/layers/provider/Retry"
 * type Chunk = { readonly text: string }
 * declare const open: (signal: AbortSignal) => Promise<AsyncIterable<Chunk>> // e.g. the SDK's create(params, { signal })
 * declare const converter: () => Converter<Chunk>
 * const deltas = sdkStream({ provider: "openai", keyVariable: "OPENAI_API_KEY", policy: defaultRetryPolicy, open, converter })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import type * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { fieldsOf, type ProviderDelta, ProviderError, type StopReason } from "../../services/Provider.ts"
import { isRetryableStatus, type RetryPolicy, withRetries } from "./Retry.ts"
import * as MissingPackage from "../../domain/package/MissingPackage.ts"
import * as LoadPackage from "../LoadPackage.ts"
import * as JsonText from "../../domain/storage/JsonText.ts"

/** Turns one SDK stream event into deltas; one instance per request (it keeps block state). */
export interface Converter<Event> {
  push(event: Event): ReadonlyArray<ProviderDelta> | ProviderError
  /**
   * Deltas owed at the end of the stream (buffered structured output, usage,
   * and always a `Finish`), or the error for a stream that closed without
   * the provider's end marker.
   */
  end(): ReadonlyArray<ProviderDelta> | ProviderError
}

/** A `ProviderError` for a response that broke off or broke the protocol (never retried). */
export const replyError = (provider: string, detail: string): ProviderError =>
  new ProviderError({ provider, failure: "reply", detail, retryable: false, attempts: 1 })

/** Collapses whitespace and cuts long text, so an error stays one readable line. */
const oneLine = (text: string, max = 300): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/**
 * An error body as one line: an HTML page (a proxy's or gateway's error
 * page) is summarised by its `<title>`, or its size — never printed raw.
 *
 * @example
 * ```ts
 * import { summarizeBody } from "parley/layers/provider/Transport"
 * summarizeBody("<html><head><title>502 Bad Gateway</title></head>…") // "HTML error page \"502 Bad Gateway\""
 * ```
 */
export const summarizeBody = (body: string): string => {
  const text = body.trim()
  if (text === "") return "empty response body"
  if (/^<(!doctype|html|head|body|\?xml)/i.test(text) || /<html[\s>]/i.test(text)) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1]
    const clean = title === undefined ? "" : oneLine(title.replace(/<[^>]*>/g, ""), 120)
    return clean !== "" ? `HTML error page "${clean}"` : `HTML error page (${Buffer.byteLength(body)} bytes)`
  }
  return oneLine(text)
}

type HeaderSource = { readonly get: (name: string) => string | null | undefined } | undefined

/**
 * The wait a provider asked for, in milliseconds: `retry-after-ms` (what the
 * SDKs read first), else `Retry-After` as seconds or an HTTP-date.
 *
 * @example
 * ```ts
 * import { retryAfterMs } from "parley/layers/provider/Transport"
 * retryAfterMs(new Headers({ "retry-after": "1" }), Date.now()) // 1000
 * ```
 */
export const retryAfterMs = (headers: HeaderSource, nowMs: number): number | undefined => {
  const ms = headers?.get("retry-after-ms")
  if (typeof ms === "string" && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms))
  const value = headers?.get("retry-after")?.trim()
  if (value === undefined || value === null || value === "") return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/** What to do about an HTTP status, naming the key variable for 401/403. */
const hintFor = (status: number, keyVariable: string): string | undefined => {
  switch (status) {
    case 401:
      return `Check ${keyVariable}.`
    case 403:
      return `Check that ${keyVariable} may use this model.`
    case 404:
      return "Check the model name (--model or assistant.model) and the provider's base URL."
    default:
      return undefined
  }
}

/** A member of whatever an SDK threw (its errors are objects: `status`, `error`, `headers`, `cause`), or undefined. */
const member = (value: unknown, key: string): unknown => (Predicate.isObject(value) ? value[key] : undefined)

/** The provider's own words in an SDK error: its JSON `message`, else the body it sent (summarised). */
const httpDetail = (cause: unknown, status: number): string => {
  const body = member(cause, "error")
  const inner = member(member(body, "error"), "message") ?? member(body, "message")
  if (typeof inner === "string" && inner.trim().length > 0) return oneLine(inner)
  const sdkMessage = cause instanceof Error ? cause.message : String(cause)
  if (sdkMessage === `${status} status code (no body)`) return "empty response body"
  // The SDKs put a non-JSON body in the message after the status: "502 <html>…".
  const text = sdkMessage.startsWith(`${status} `) ? sdkMessage.slice(`${status} `.length) : sdkMessage
  return summarizeBody(text)
}

/** An error and the chain of causes under it: "Connection error. (fetch failed: other side closed)". */
const withCauses = (cause: unknown): string => {
  const base = cause instanceof Error ? cause.message : String(cause)
  const chain: Array<string> = []
  let next: unknown = member(cause, "cause")
  while (next instanceof Error && chain.length < 4) {
    if (next.message !== base && !chain.includes(next.message)) chain.push(next.message)
    next = next.cause
  }
  return oneLine(chain.length > 0 ? `${base} (${chain.join(": ")})` : base)
}

/** An error event inside the stream (`event: error`): the SDK's `APIError` without a status. */
const isStreamErrorEvent = (cause: unknown): boolean => {
  const body = member(cause, "error")
  return (
    cause instanceof Error &&
    cause.name !== "APIConnectionError" &&
    cause.name !== "APIConnectionTimeoutError" &&
    typeof body === "object" &&
    body !== null
  )
}

/**
 * Maps anything an SDK throws to a `ProviderError` (attempts is stamped
 * later). `phase` says where it was thrown: opening the request (before the
 * response headers), or reading the reply stream after them.
 */
export const toProviderError =
  (options: { readonly provider: string; readonly keyVariable: string; readonly phase: "open" | "stream" }) =>
  (cause: unknown): ProviderError => {
    if (cause instanceof ProviderError) return cause
    const { keyVariable, phase, provider } = options
    const status = member(cause, "status")
    if (typeof status === "number") {
      const hint = hintFor(status, keyVariable)
      const headers = member(cause, "headers")
      // Both SDKs' APIError carries the response's Headers.
      const wait = retryAfterMs(headers instanceof Headers ? headers : undefined, Date.now())
      return new ProviderError({
        provider,
        failure: "http",
        status,
        detail: httpDetail(cause, status),
        retryable: isRetryableStatus(status),
        attempts: 1,
        ...(hint === undefined ? {} : { hint }),
        ...(wait === undefined ? {} : { retryAfterMs: wait })
      })
    }
    if (cause instanceof SyntaxError) {
      return replyError(provider, "the reply stream is malformed: an event is not valid JSON.")
    }
    if (isStreamErrorEvent(cause)) {
      return replyError(provider, `the provider reported an error mid-reply: ${httpDetail(cause, 0)}`)
    }
    if (phase === "stream") return replyError(provider, `the connection broke mid-reply: ${withCauses(cause)}`)
    return new ProviderError({
      provider,
      failure: "connection",
      detail: withCauses(cause),
      retryable: true,
      attempts: 1
    })
  }

/**
 * The SDK could not be loaded: not installed (an optional peer dependency,
 * docs/decisions.md#optional-peer-dependencies: the error names it), or a broken install. Nothing was sent.
 */
export const loadError =
  (provider: string, module: MissingPackage.OptionalPackage) =>
  (cause: unknown): ProviderError => {
    if (LoadPackage.isNotFound(cause, module)) {
      const missing = MissingPackage.of(module)
      return new ProviderError({
        provider,
        failure: "config",
        detail: missing.message,
        missing,
        retryable: false,
        attempts: 1
      })
    }
    return new ProviderError({
      provider,
      failure: "config",
      detail: `Cannot load ${module}: ${withCauses(cause)}. Reinstall parley (npm ci).`,
      retryable: false,
      attempts: 1
    })
  }

/**
 * SDK options that keep the SDK quiet: it must never write to the terminal
 * (it logs malformed server-sent events with `console.error`); what went
 * wrong reaches the user as a `ProviderError`.
 */
export const quietSdk = {
  logLevel: "off",
  logger: { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} }
} as const

/**
 * A reply stream over an SDK streaming call. The request is (re)opened under
 * the retry policy until the response headers arrive; a failure after the
 * first event is not retried (text may already be on screen). Closing or
 * interrupting the stream aborts the HTTP request.
 */
export const sdkStream = <Event>(options: {
  readonly provider: string
  /** The variable holding the key (`ANTHROPIC_API_KEY`), named in 401/403 errors. */
  readonly keyVariable: string
  readonly policy: RetryPolicy
  readonly open: (signal: AbortSignal) => PromiseLike<AsyncIterable<Event>>
  /** A converter for one opened response (`events` is what `open` returned). */
  readonly converter: (events: AsyncIterable<Event>) => Converter<Event>
}): Stream.Stream<ProviderDelta, ProviderError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const { keyVariable, provider } = options
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
          catch: toProviderError({ provider, keyVariable, phase: "open" })
        }),
        options.policy
      )
      const stamp = (e: ProviderError) => new ProviderError({ ...fieldsOf(e), attempts })
      const converter = options.converter(events)
      const lift = (out: ReadonlyArray<ProviderDelta> | ProviderError) =>
        out instanceof ProviderError ? Effect.fail(stamp(out)) : Effect.succeed(out)
      const streamError = toProviderError({ provider, keyVariable, phase: "stream" })
      return Stream.fromAsyncIterable(events, (cause) => stamp(streamError(cause))).pipe(
        Stream.mapEffect((event) => lift(converter.push(event))),
        Stream.concat(Stream.fromEffect(Effect.suspend(() => lift(converter.end())))),
        Stream.flattenIterable
      )
    })
  )

/** Parses tool-call arguments: empty means `{}`; anything but a JSON object is `undefined`. */
export const parseArguments = (raw: string): Schema.JsonObject | undefined => {
  if (raw.trim() === "") return {}
  try {
    const value = JsonText.parse(raw)
    if (JsonText.isObject(value)) return value
  } catch {
    // not JSON
  }
  return undefined
}

/**
 * The error for a tool call whose arguments are not a JSON object. When the
 * reply hit the output token limit, that is the cause: the arguments were cut.
 */
export const invalidArguments = (provider: string, name: string, raw: string, stop: StopReason | undefined) =>
  replyError(
    provider,
    stop === "max_tokens"
      ? `the reply hit the output token limit in the middle of the arguments for tool \`${name}\`; nothing was run.`
      : `the model sent invalid arguments for tool \`${name}\` (expected a JSON object): ${oneLine(raw, 200)}`
  )

/**
 * The error for a stream that closed without the provider's end marker: the
 * reply was cut off, and what arrived must not pass for a whole reply.
 */
export const cutOff = (provider: string, marker: string): ProviderError =>
  replyError(provider, `the reply was cut off: the stream ended before ${marker}.`)
