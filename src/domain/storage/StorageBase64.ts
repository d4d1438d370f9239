/**
 * JP's storage-level base64 for event fields (`jp_conversation/src/storage.rs`):
 * written as padded STANDARD base64; read leniently — a string is decoded only
 * when it is canonical padded standard base64 whose bytes are valid UTF-8,
 * otherwise it is kept as it is (legacy plain text, URL-safe content).
 *
 * @example
 * ```ts
 * import * as StorageBase64 from "./StorageBase64.ts"
 * StorageBase64.decode("aGVsbG8=") // "hello"
 * StorageBase64.decode("not base64!") // undefined (keep the raw text)
 * StorageBase64.encode("hello") // "aGVsbG8="
 * ```
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

// ignoreBOM: a leading U+FEFF is content (a Windows file's text), not a marker to drop.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

// Value of each base64 alphabet char, -1 for anything else.
const VALUE = new Int8Array(128).fill(-1)
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("").forEach((c, i) => {
  VALUE[c.charCodeAt(0)] = i
})

const isCanonical = (s: string): boolean => {
  const n = s.length
  if (n % 4 !== 0) return false
  let pad = 0
  if (n > 0 && s.charCodeAt(n - 1) === 61) pad = s.charCodeAt(n - 2) === 61 ? 2 : 1
  const body = n - pad
  for (let i = 0; i < body; i++) {
    const c = s.charCodeAt(i)
    if (c >= 128 || VALUE[c]! < 0) return false
  }
  // Canonical: the unused low bits of the last data char are zero.
  if (pad === 1) return (VALUE[s.charCodeAt(n - 2)]! & 0b11) === 0
  if (pad === 2) return (VALUE[s.charCodeAt(n - 3)]! & 0b1111) === 0
  return true
}

/** The decoded text, or `undefined` when `s` is not canonical base64 of UTF-8 (JP keeps it raw). */
export const decode = (s: string): string | undefined => {
  if (!isCanonical(s)) return undefined
  try {
    return utf8.decode(Buffer.from(s, "base64"))
  } catch {
    return undefined
  }
}

/** Padded STANDARD base64 of the UTF-8 bytes. */
export const encode = (s: string): string => Buffer.from(s, "utf8").toString("base64")

/** Lenient decode: undecodable strings pass through unchanged. */
export const decodeLenient = (s: string): string => decode(s) ?? s

/**
 * A string that is base64 on disk and plain text in memory, decoded the way
 * JP decodes (lenient). Undecodable values are kept; the entry codec records
 * where, so they are written back unchanged.
 */
export const StorageText = Schema.String.pipe(
  Schema.decodeTo(Schema.String, {
    decode: SchemaGetter.transform(decodeLenient),
    encode: SchemaGetter.transform(encode)
  })
)
