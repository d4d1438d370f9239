/**
 * The answer type a tool declares for its question (`jp_tool::AnswerType`).
 *
 * Current shape (RFD 082), tagged by `type`: `{"type":"boolean"}`,
 * `{"type":"text"}`, `{"type":"secret"}`, `{"type":"select","options":["a","b"]}`.
 * JP's older Rust-style shapes are accepted on read and written back in the
 * current shape: `"Boolean"`, `"Text"`, `{"Select":{"options":[…]}}`.
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { AnswerType } from "parley/domain/tool/AnswerType"
 * Schema.decodeUnknownSync(AnswerType)("Boolean") // { type: "boolean" }
 * Schema.decodeUnknownSync(AnswerType)({ Select: { options: ["a"] } }) // { type: "select", options: ["a"] }
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

/** A yes/no question. */
export const BooleanType = Schema.Struct({ type: Schema.tag("boolean") })
/** A free-text question. */
export const TextType = Schema.Struct({ type: Schema.tag("text") })
/** Free text that is never echoed and never persisted (RFD 082 "Secret questions"). */
export const SecretType = Schema.Struct({ type: Schema.tag("secret") })
/** A choice among options. */
export const SelectType = Schema.Struct({ type: Schema.tag("select"), options: Schema.Array(Schema.String) })

const Current = Schema.Union([BooleanType, TextType, SecretType, SelectType])
type Current = typeof Current.Type

// Legacy members decode into the current shape; encoding picks the first
// matching union member, so legacy input is written back in the current shape.
const LegacyBoolean = Schema.Literal("Boolean").pipe(
  Schema.decodeTo(Schema.toType(BooleanType), {
    decode: SchemaGetter.transform(() => ({ type: "boolean" as const })),
    encode: SchemaGetter.transform(() => "Boolean" as const)
  })
)
const LegacyText = Schema.Literal("Text").pipe(
  Schema.decodeTo(Schema.toType(TextType), {
    decode: SchemaGetter.transform(() => ({ type: "text" as const })),
    encode: SchemaGetter.transform(() => "Text" as const)
  })
)
const LegacySelect = Schema.Struct({ Select: Schema.Struct({ options: Schema.Array(Schema.String) }) }).pipe(
  Schema.decodeTo(Schema.toType(SelectType), {
    decode: SchemaGetter.transform((legacy) => ({ type: "select" as const, options: legacy.Select.options })),
    encode: SchemaGetter.transform((current) => ({ Select: { options: current.options } }))
  })
)

const Union = Schema.Union([BooleanType, TextType, SecretType, SelectType, LegacyBoolean, LegacyText, LegacySelect])

/**
 * The answer type a tool declares for its question (`jp_tool::AnswerType`).
 *
 * @example
 * ```ts
 * import * as Schema from "effect/Schema"
 * import { AnswerType } from "parley/domain/tool/AnswerType"
 * Schema.decodeUnknownSync(AnswerType)("Boolean") // { type: "boolean" }
 * Schema.decodeUnknownSync(AnswerType)({ Select: { options: ["a"] } }) // { type: "select", options: ["a"] }
 * ```
 */
export type AnswerType = Current

const booleanType: AnswerType = { type: "boolean" }
const textType: AnswerType = { type: "text" }
const secretType: AnswerType = { type: "secret" }

export const AnswerType = Object.assign(Union, {
  boolean: booleanType,
  text: textType,
  secret: secretType,
  select: (options: ReadonlyArray<string>): AnswerType => ({ type: "select", options })
})

/** True for answer types whose answer must never be persisted or echoed. */
export const isSecret = (t: AnswerType): boolean => t.type === "secret"
