/**
 * The forms a secret can take in a tool's output, as one table of encodings
 * (issue 30 items 1–2). Each encoding turns a secret into {@link Form}s:
 * sequences of atoms, an atom being the alternatives one character (or, for
 * base64, one output character) of the secret may be written as. Between any
 * two units of a form a line break may sit ({@link BREAK}), so a wrapped
 * line, `base64 -w`, `xxd -p` or a `part2 ` continuation is still one match.
 *
 * Base64 forms include the edge characters that hold only some bits of the
 * secret (a character class of every value those bits allow), so nothing
 * that decodes to part of the secret is left beside the marker.
 *
 * @example
 * ```ts
 * import * as SecretForms from "parley/domain/tool/SecretForms"
 * SecretForms.ENCODINGS.map((e) => e.name) // ["plain", "json", "url", "hex", "base64", "base64url"]
 * const [hex] = SecretForms.ENCODINGS[3]!.forms("hunter22")
 * new RegExp(SecretForms.source(hex!)).test("68756E74\n  part2 65723232") // true: wrapped, labelled, upper case
 * ```
 */

/** One way a unit of the secret may be written: regex sources to match in order (a break may sit between them). */
export type Spelling = ReadonlyArray<string>
/** The spellings one unit of the secret may take. */
export type Atom = ReadonlyArray<Spelling>
/** A whole encoded secret: atoms in order, and what may sit between two atoms besides a break. */
export interface Form {
  readonly atoms: ReadonlyArray<Atom>
  /** Regex source allowed between two atoms (e.g. a space between hex bytes), or "" for none. */
  readonly separator: string
  /** Regex source allowed after the last atom (base64 padding), or "". */
  readonly trailer: string
}

/** A row of the table: its name and the forms of a secret in it (none when the secret is too short to scrub safely). */
export interface Encoding {
  readonly name: string
  readonly forms: (secret: string) => ReadonlyArray<Form>
}

/**
 * A line break inside an encoded secret: optional trailing blanks, `\n`,
 * `\r\n` or their JSON escapes, the next line's indentation, and an optional
 * short label (`part2 `, `00000010: `).
 */
export const BREAK = String.raw`[ \t]*(?:\r?\n|\\r\\n|\\n)[ \t]*(?:[\w.-]{1,12}(?:[:=][ \t]*|[ \t]+))?`

/** Shorter secrets are left alone in text forms: replacing them would mangle ordinary output. */
export const MIN_PLAIN = 3
/** A base64 form is scrubbed when at least this many of its characters depend on the secret alone. */
export const MIN_ENCODED = 4

const escape = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/-]/g, (c) => `\\${c}`)

/** A hex digit in either case. */
const hexDigit = (d: string): string => (/[a-f]/i.test(d) ? `[${d.toLowerCase()}${d.toUpperCase()}]` : d)
const hexOf = (byte: number): Spelling => byte.toString(16).padStart(2, "0").split("").map(hexDigit)

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s)
const codePoints = (s: string): ReadonlyArray<string> => Array.from(s)
const textForm = (secret: string, atom: (char: string) => Atom): ReadonlyArray<Form> =>
  secret.length < MIN_PLAIN ? [] : [{ atoms: codePoints(secret).map(atom), separator: "", trailer: "" }]

const literal = (char: string): Spelling => char.split("").map(escape)

/** JSON's escapes of one character: the short ones, and `\uXXXX` (either case) for any. */
const jsonEscapes = (char: string): Array<Spelling> => {
  const short: Record<string, string> = { "\"": "\\\"", "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" }
  const units = char.split("").map((u) => ["\\", "u", ...u.charCodeAt(0).toString(16).padStart(4, "0").split("")].map((c) => (c === "\\" ? "\\\\" : hexDigit(c))))
  const spellings: Array<Spelling> = [units.flat()]
  if (short[char] !== undefined) spellings.push(short[char].split("").map(escape))
  return spellings
}

/** Percent-encoding of one character (either case), and `+` for a space. */
const urlEscapes = (char: string): Array<Spelling> => {
  const spellings: Array<Spelling> = [[...utf8(char)].flatMap((b) => ["%", ...hexOf(b)])]
  if (char === " ") spellings.push(["\\+"])
  return spellings
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/**
 * The base64 characters that carry bits of `bytes` when they start `offset`
 * bytes into a 3-byte group: per character, the class of every character
 * whose value agrees with the known bits. `undefined` when fewer than
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
    const allowed = [...alphabet].filter((_, v) => (v & mask) === value)
    atoms.push([[allowed.length === 1 ? escape(allowed[0]!) : `[${allowed.map(escape).join("")}]`]])
  }
  return whole < MIN_ENCODED ? undefined : { atoms, separator: "", trailer: "={0,2}" }
}

const base64Encoding = (name: string, alphabet: string): Encoding => ({
  name,
  forms: (secret) => [0, 1, 2].flatMap((offset) => base64Form(utf8(secret), offset, alphabet) ?? [])
})

/** The table: every encoding of a secret that is scrubbed from a tool's output. */
export const ENCODINGS: ReadonlyArray<Encoding> = [
  { name: "plain", forms: (secret) => textForm(secret, (c) => [literal(c)]) },
  // Escapes before the literal: the first spelling that fits wins, and the
  // longer one must, or `\\` would leave half its escape behind.
  { name: "json", forms: (secret) => textForm(secret, (c) => [...jsonEscapes(c), literal(c)]) },
  { name: "url", forms: (secret) => textForm(secret, (c) => [...urlEscapes(c), literal(c)]) },
  {
    name: "hex",
    forms: (secret) => (secret.length < MIN_PLAIN ? [] : [{ atoms: [...utf8(secret)].map((b) => [hexOf(b)]), separator: "[ :]", trailer: "" }])
  },
  base64Encoding("base64", B64),
  base64Encoding("base64url", B64URL)
]

const BETWEEN = `(?:${BREAK})?`

/** The regex source of a form: its atoms, with an optional break between any two units and the form's separator between atoms. */
export const source = (form: Form): string => {
  const atom = (a: Atom) => `(?:${a.map((spelling) => spelling.join(BETWEEN)).join("|")})`
  const gap = form.separator === "" ? BETWEEN : `(?:${BREAK}|${form.separator})?`
  return form.atoms.map(atom).join(gap) + form.trailer
}
