/**
 * Why an inquiry closed without an answer (RFD 082). On disk a bare string;
 * a tag this build does not know is kept verbatim (`Unknown`) and written back
 * unchanged. parley never writes an unknown reason itself.
 *
 * @example
 * ```ts
 * import * as CancellationReason from "parley/domain/event/CancellationReason"
 * CancellationReason.isKnown("user") // true
 * CancellationReason.isKnown("some_future_variant") // false
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** The reasons parley writes (RFD 082, and RFD 083's `invalid_static_answer`); others are kept as read. */
export const KNOWN = [
  "user",
  "backend_error",
  "no_prompt_backend",
  "assistant_routing_denied",
  "invalid_static_answer"
] as const
export type KnownCancellationReason = (typeof KNOWN)[number]

/** Known reasons are literals; any other string is an `Unknown(tag)` kept verbatim. */
export const CancellationReason = Schema.String
export type CancellationReason = KnownCancellationReason | (string & {})

export const User: CancellationReason = "user"
export const BackendError: CancellationReason = "backend_error"
export const NoPromptBackend: CancellationReason = "no_prompt_backend"
export const AssistantRoutingDenied: CancellationReason = "assistant_routing_denied"
/** RFD 083: a configured answer (`questions.<id>.answer`) that does not fit its question. */
export const InvalidStaticAnswer: CancellationReason = "invalid_static_answer"

/** {@link KNOWN} as texts, to look any text up in. */
const KNOWN_TEXT: ReadonlyArray<string> = KNOWN

/** Whether a reason is one parley writes. */
export const isKnown = (reason: string): reason is KnownCancellationReason => KNOWN_TEXT.includes(reason)
