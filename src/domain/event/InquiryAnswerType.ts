/**
 * The answer type of a persisted inquiry question, tagged by `type`:
 * `{"type":"boolean"}`, `{"type":"text"}`, `{"type":"secret"}` (RFD 082) or
 * `{"type":"select","options":[{"value":…,"description"?:…}]}`.
 *
 * @example
 * ```ts
 * import { InquiryAnswerType } from "parley/domain/event/InquiryAnswerType"
 * InquiryAnswerType.select(["a", "b"]).options.length // 2
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

export const SelectOption = Schema.Struct({
  value: Schema.Json,
  description: Schema.optionalKey(Schema.String)
})
export type SelectOption = typeof SelectOption.Type

/** A yes/no question. */
export const BooleanAnswer = Schema.Struct({ type: Schema.tag("boolean") })
/** A free-text question. */
export const TextAnswer = Schema.Struct({ type: Schema.tag("text") })
/** A secret (never recorded, never sent to a model). */
export const SecretAnswer = Schema.Struct({ type: Schema.tag("secret") })
/** A choice among options. */
export const SelectAnswer = Schema.Struct({ type: Schema.tag("select"), options: Schema.Array(SelectOption) })

const Union = Schema.Union([BooleanAnswer, TextAnswer, SecretAnswer, SelectAnswer])
/**
 * The answer type of a persisted inquiry question, tagged by `type`:
 * `{"type":"boolean"}`, `{"type":"text"}`, `{"type":"secret"}` (RFD 082) or
 * `{"type":"select","options":[{"value":…,"description"?:…}]}`.
 *
 * @example
 * ```ts
 * import { InquiryAnswerType } from "parley/domain/event/InquiryAnswerType"
 * InquiryAnswerType.select(["a", "b"]).options.length // 2
 * ```
 */
export type InquiryAnswerType = typeof Union.Type

export const InquiryAnswerType = Object.assign(Union, {
  boolean: { type: "boolean" } as const,
  text: { type: "text" } as const,
  secret: { type: "secret" } as const,
  select: (options: ReadonlyArray<string | SelectOption>) => ({
    type: "select" as const,
    options: options.map((o) => (typeof o === "string" ? { value: o } : o))
  })
})
