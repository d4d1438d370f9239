/**
 * The `labels` of `metadata.json` (JP RFD 101, `jp_conversation/src/labels.rs`):
 * a map from a key to a value or, as today's JP writes it, a list of values
 * (`{"branch": ["main"], "crate": ["jp_config", "jp_llm"]}`). Both shapes are
 * read; a value that is neither a string nor an array of strings is an error,
 * as it is for JP ("expected a string or an array of strings").
 *
 * What was read is kept as it was ({@link RawLabels}), so a conversation
 * parley does not relabel is written back byte for byte. What a person sees
 * is JP's reading of it ({@link normalize}): a scalar is a one-value set,
 * repeated values collapse (the first wins), an empty list drops its key, the
 * empty "presence" value is dropped beside a real one, and a line break in a
 * value reads as a space.
 *
 * @example
 * ```ts
 * import * as Labels from "parley/domain/storage/Labels"
 * const raw = Labels.decode({ branch: "main", crate: ["jp_config", "jp_llm", "jp_config"] })
 * Labels.normalize(raw) // [{ key: "branch", values: ["main"] }, { key: "crate", values: ["jp_config", "jp_llm"] }]
 * Labels.text(Labels.normalize(raw)) // "branch=main crate=jp_config crate=jp_llm"
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import { describeValue } from "../event/Describe.ts"

/** `labels` as read: each key's value as it was on disk (a string, or an array of strings). */
export type RawLabels = { readonly [key: string]: string | ReadonlyArray<string> }

/** One key and its values, as JP reads them (never empty). */
export interface Label {
  readonly key: string
  readonly values: ReadonlyArray<string>
}

/**
 * `labels` that cannot be read: the reason names the key (the caller names
 * the field and file). A `Data` error, not a Schema one: `conversation ls`
 * loads this module and no effect/Schema (docs/decisions.md#fast-start).
 */
export class LabelsError extends Data.TaggedError("LabelsError")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

const invalid = (reason: string): Result.Result<never, LabelsError> => Result.fail(new LabelsError({ reason }))

/** Why `value` is not one of JP's shapes of a label's value (a string, or an array of strings); `undefined` when it is. */
const problemOf = (key: string, value: unknown): string | undefined => {
  if (typeof value === "string") return undefined
  if (!Array.isArray(value))
    return `key "${key}": expected a string or an array of strings, got ${describeValue(value)}`
  const bad = value.findIndex((v: unknown) => typeof v !== "string")
  return bad < 0 ? undefined : `key "${key}": expected an array of strings, found ${describeValue(value[bad])}`
}

/** Why `raw` (an object) is not labels: its first key whose value is neither shape. */
const firstProblem = (raw: object): string | undefined => {
  for (const [key, value] of Object.entries(raw)) {
    const problem = problemOf(key, value)
    if (problem !== undefined) return problem
  }
  return undefined
}

const isRawLabels = (raw: object): raw is RawLabels => firstProblem(raw) === undefined

/**
 * Checks a parsed `labels` value: an object whose values are strings or
 * arrays of strings. The value unchanged (key order and all), or the
 * {@link LabelsError} naming the first key that is neither.
 */
export const read = (raw: unknown): Result.Result<RawLabels, LabelsError> => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return invalid(`must be an object, got ${describeValue(raw)}`)
  return isRawLabels(raw) ? Result.succeed(raw) : invalid(firstProblem(raw) ?? "")
}

/** {@link read} of labels known to be well formed (a fixture): the labels, or the {@link LabelsError} thrown. */
export const decode = (raw: unknown): RawLabels => Result.getOrThrow(read(raw))

/** One line of text, as JP stores a value: `\r\n`, `\n` and `\r` each become one space. */
const singleLine = (value: string): string => value.replaceAll("\r\n", "\n").replace(/[\n\r]/g, " ")

/** JP's reading of `raw`: keys sorted, each with its distinct values in order, none empty. */
export const normalize = (raw: RawLabels | undefined): ReadonlyArray<Label> => {
  if (raw === undefined) return []
  const out: Array<Label> = []
  for (const key of Object.keys(raw).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const value = raw[key]!
    const values = [...new Set((typeof value === "string" ? [value] : value).map(singleLine))]
    const real = values.length > 1 ? values.filter((v) => v !== "") : values
    if (real.length > 0) out.push({ key, values: real })
  }
  return out
}

/** Labels as a JSON object: `{ key: [values…] }`, keys sorted (the shape today's JP writes). */
export const toJson = (labels: ReadonlyArray<Label>): { [key: string]: Array<string> } => {
  const out: { [key: string]: Array<string> } = {}
  for (const l of labels) Object.defineProperty(out, l.key, { value: [...l.values], enumerable: true, writable: true })
  return out
}

/** One pair per value, `key=value` (a bare `key` for the presence value), space-separated: what a person reads. */
export const text = (labels: ReadonlyArray<Label>): string =>
  labels.flatMap((l) => l.values.map((v) => (v === "" ? l.key : `${l.key}=${v}`))).join(" ")
