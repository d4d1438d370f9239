/**
 * The rules on conversation id text (see `ConversationId.ts`, which
 * re-exports them with the schema): JP's `jp-c<id>` form and directory
 * names. Plain functions with no effect/Schema, so the reading commands can
 * use them without loading it (start-up: docs/decisions.md#fast-start).
 *
 * @example
 * ```ts
 * import * as ConversationIdText from "parley/domain/storage/ConversationIdText"
 * ConversationIdText.parse("jp-c17738399468") // "17738399468"
 * ConversationIdText.fromDirname("17457886043-simple-title") // "17457886043"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import type * as Brand from "effect/Brand"

/** A conversation id (what `ConversationId.ConversationId` decodes to; stated here so this module needs no schema). */
export type ConversationId = string & Brand.Brand<"ConversationId">

/**
 * The id of 1–19 digits its callers have just matched: the one place a text
 * becomes a `ConversationId` (the brand is a type only; this module loads no Schema).
 */
const ofDigits = (digits: string): ConversationId => digits as ConversationId

/** Accepts `17738399468` or `jp-c17738399468` (optionally `-<workspace>`); `undefined` otherwise. */
export const parse = (text: string): ConversationId | undefined => parseExact(text.trim())

/**
 * {@link parse} of text taken as it is, not trimmed: an id from a request
 * (`parley serve`), where ` 17738399468` is not the id a person typed with a
 * stray space but a request to refuse.
 */
export const parseExact = (text: string): ConversationId | undefined => {
  if (/^\d{1,19}$/.test(text)) return ofDigits(text)
  const m = /^jp-c(\d{1,19})(?:-[0-9a-z]+)?$/.exec(text)
  return m === null ? undefined : ofDigits(m[1]!)
}

/** The id of a directory name (`<id>` or `<id>-<slug>`), or `undefined`. */
export const fromDirname = (name: string): ConversationId | undefined => {
  if (name.startsWith(".")) return undefined
  const head = name.split("-", 1)[0]!
  return /^\d{1,19}$/.test(head) ? ofDigits(head) : undefined
}

/** JP's text form: `jp-c<id>` (of an id, or of the digits an error kept as text). */
export const display = (id: ConversationId | string): string => `jp-c${id}`

/** A new id for "now" (deciseconds since the epoch). */
export const fromEpochMillis = (ms: number): ConversationId => ofDigits(String(Math.floor(ms / 100)))

/**
 * Unicode's alphanumerics as JP's `char::is_alphanumeric` reads them. Built on first use, from a
 * string: compiling its property classes costs a scripted `query --new` about 2% of its
 * instructions (issue 50), and a title of ASCII text never needs it.
 */
let alphanumeric: RegExp | undefined

/** Whether `c` (one code point) is alphanumeric: ASCII letters and digits answered without the regex. */
const isAlphanumeric = (c: string): boolean => {
  const code = c.charCodeAt(0)
  if (code < 0x80) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
  // biome-ignore lint/complexity/useRegexLiterals: a literal is checked by V8 each time this function compiles (each run)
  alphanumeric ??= new RegExp("^[\\p{Alphabetic}\\p{Nd}\\p{Nl}\\p{No}]$", "u")
  return alphanumeric.test(c)
}

/**
 * JP's directory name (`ConversationId::to_dirname`): first 60 chars of the
 * trimmed title, non-alphanumerics → `-`, trailing `-` stripped, lowercased;
 * a raw title longer than 60 bytes is cut back at the last `-`.
 */
export const dirname = (id: ConversationId | string, title: string | undefined): string => {
  if (title === undefined) return id
  const len = Buffer.byteLength(title, "utf8")
  const chars = Array.from(title.trim()).slice(0, 60)
  const slug = chars
    .map((c) => (isAlphanumeric(c) ? c : "-"))
    .join("")
    .replace(/-+$/, "")
    .toLowerCase()
  if (slug.length === 0) return id
  const joined = `${id}-${slug}`
  if (len > 60) {
    const cut = joined.lastIndexOf("-")
    return joined.slice(0, cut)
  }
  return joined
}
