/**
 * The forms a secret can take in a tool's output, as one table of encodings
 * (docs/questions-and-approvals.md#secrets). Each encoding turns a secret into {@link Form}s:
 * sequences of atoms, an atom being the spellings one character of the
 * secret (for base64: one output character) may take, and a spelling a
 * sequence of units, each the set of characters that may stand there. A
 * line break may sit between any two units (see `FormMatch`), so a wrapped
 * line, `base64 -w`, `xxd -p` or a `part2 ` continuation is still one match.
 *
 * Base64 forms include the edge characters that hold only some bits of the
 * secret (the set of every character those bits allow), so nothing that
 * decodes to part of the secret is left beside the marker.
 *
 * @example
 * ```ts
 * import * as SecretForms from "parley/domain/tool/SecretForms"
 * SecretForms.ENCODINGS.map((e) => e.name) // ["plain", "json", "url", "hex", "base64", "base64url"]
 * const [hex] = SecretForms.ENCODINGS[3]!.forms("hi!")
 * hex!.atoms // [[["6", "8"]], [["6", "9"]], [["2", "1"]]]: one byte per atom, hex digits either case ("aA")
 * ```
 *
 * @since 0.1.0
 * @internal
 */

/** One way a unit of the secret may be written: per character, the characters allowed there. */
export type Spelling = ReadonlyArray<string>
/** The spellings one unit of the secret may take, preferred first. */
export type Atom = ReadonlyArray<Spelling>
/** A whole encoded secret. */
export interface Form {
  readonly atoms: ReadonlyArray<Atom>
  /** Characters one of which may sit between two atoms (a space between hex bytes), or "". */
  readonly separator: string
  /** Whether base64 padding (`=`, `==`) right after the last atom belongs to the form. */
  readonly padded: boolean
}

/** A row of the table: its name and the forms of a secret in it (none when the secret is too short to scrub safely). */
export interface Encoding {
  readonly name: string
  readonly forms: (secret: string) => ReadonlyArray<Form>
}

/** Shorter secrets are left alone in text forms: replacing them would mangle ordinary output. */
export const MIN_PLAIN = 3
/** A base64 form is scrubbed when at least this many of its characters depend on the secret alone. */
export const MIN_ENCODED = 4

/** A hex digit in either case. */
const hexDigit = (d: string): string => (/[a-f]/i.test(d) ? `${d.toLowerCase()}${d.toUpperCase()}` : d)
const hexOf = (byte: number): Spelling => byte.toString(16).padStart(2, "0").split("").map(hexDigit)

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s)
const textForms = (secret: string, atom: (char: string) => Atom): ReadonlyArray<Form> =>
  secret.length < MIN_PLAIN ? [] : [{ atoms: Array.from(secret).map(atom), separator: "", padded: false }]

/** The character itself (a character beyond the BMP is two units). */
const literal = (char: string): Spelling => char.split("")

const SHORT_JSON: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "/": "\\/",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t"
}

/** JSON's escapes of one character: `\uXXXX` (either case; a pair beyond the BMP) and the short one. */
const jsonEscapes = (char: string): Array<Spelling> => {
  const unicode = char
    .split("")
    .flatMap((u) => ["\\", "u", ...u.charCodeAt(0).toString(16).padStart(4, "0").split("").map(hexDigit)])
  const short = SHORT_JSON[char]
  return short === undefined ? [unicode] : [unicode, short.split("")]
}

/** Percent-encoding of one character's UTF-8 bytes (either case), and `+` for a space. */
const urlEscapes = (char: string): Array<Spelling> => {
  const percent = [...utf8(char)].flatMap((b) => ["%", ...hexOf(b)])
  return char === " " ? [percent, ["+"]] : [percent]
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/**
 * The base64 characters that carry bits of `bytes` when they start `offset`
 * bytes into a 3-byte group: per character, every character whose value
 * agrees with the known bits. `undefined` when fewer than
 * {@link MIN_ENCODED} characters are the secret's alone.
 */
const base64Form = (bytes: Uint8Array, offset: number, alphabet: string): Form | undefined => {
  const first = offset * 8
  const end = first + bytes.length * 8
  const bit = (p: number) => (bytes[(p - first) >> 3]! >> (7 - ((p - first) & 7))) & 1
  const atoms: Array<Atom> = []
  let whole = 0
  for (let char = Math.floor(first / 6); char * 6 < end; char++) {
    let mask = 0
    let value = 0
    for (let b = 0; b < 6; b++) {
      const p = char * 6 + b
      if (p >= first && p < end) {
        mask |= 32 >> b
        value |= bit(p) << (5 - b)
      }
    }
    if (mask === 63) whole++
    atoms.push([[[...alphabet].filter((_, v) => (v & mask) === value).join("")]])
  }
  return whole < MIN_ENCODED ? undefined : { atoms, separator: "", padded: true }
}

const base64Encoding = (name: string, alphabet: string): Encoding => ({
  name,
  forms: (secret) => [0, 1, 2].flatMap((offset) => base64Form(utf8(secret), offset, alphabet) ?? [])
})

/** The table: every encoding of a secret that is scrubbed from a tool's output. */
export const ENCODINGS: ReadonlyArray<Encoding> = [
  { name: "plain", forms: (secret) => textForms(secret, (c) => [literal(c)]) },
  // Escapes before the literal: the matcher keeps the longest match, and a
  // preferred escape keeps `\\` from leaving half of itself behind.
  { name: "json", forms: (secret) => textForms(secret, (c) => [...jsonEscapes(c), literal(c)]) },
  { name: "url", forms: (secret) => textForms(secret, (c) => [...urlEscapes(c), literal(c)]) },
  {
    name: "hex",
    forms: (secret) =>
      secret.length < MIN_PLAIN
        ? []
        : [{ atoms: [...utf8(secret)].map((b) => [hexOf(b)]), separator: " :", padded: false }]
  },
  base64Encoding("base64", B64),
  base64Encoding("base64url", B64URL)
]
