/**
 * An `InquiryBackend` with answers fixed in advance, keyed by inquiry id
 * (JP's `MockInquiryBackend`). An unknown id fails with `InquiryOtherError`.
 * JP's mock ignores its cancellation token; parley has no token (cancellation
 * is interruption of the caller's fiber), and the mock answers synchronously,
 * so there is no window in which a cancellation could change its answer.
 * Every request is recorded (in order) for assertions.
 *
 * @example
 * ```ts
 * import * as MockInquiryBackend from "parley/layers/MockInquiryBackend"
 * import type { InquiryBackendRequest } from "parley/services/InquiryBackend"
 * const log: Array<InquiryBackendRequest> = []
 * const layer = MockInquiryBackend.layer({ "call_1.overwrite.1": true }, { log })
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import { InquiryBackend, type InquiryBackendRequest, InquiryOtherError } from "../services/InquiryBackend.ts"

/** The backend itself, for tests that call it without a layer. */
export const make = (
  answers: Readonly<Record<string, Schema.Json>> | ReadonlyMap<string, Schema.Json>,
  options: { readonly log?: Array<InquiryBackendRequest> } = {}
): InquiryBackend["Service"] => {
  const lookup = (id: string): Schema.Json | undefined =>
    answers instanceof Map
      ? answers.get(id)
      : Object.hasOwn(answers, id)
        ? (answers as Record<string, Schema.Json>)[id]
        : undefined
  return InquiryBackend.of({
    inquire: (request) =>
      Effect.suspend(() => {
        options.log?.push(request)
        const answer = lookup(request.inquiryId)
        return answer === undefined
          ? Effect.fail(new InquiryOtherError({ detail: `No mock answer for inquiry ${request.inquiryId}` }))
          : Effect.succeed(answer)
      })
  })
}

/** The mock as a layer: `answers` keyed by inquiry id (`call_1.overwrite.1`); `log` collects every request. */
export const layer = (
  answers: Readonly<Record<string, Schema.Json>> | ReadonlyMap<string, Schema.Json>,
  options: { readonly log?: Array<InquiryBackendRequest> } = {}
): Layer.Layer<InquiryBackend> => Layer.succeed(InquiryBackend, make(answers, options))
