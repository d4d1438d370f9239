/**
 * JP's storage-level base64 for event fields (`jp_conversation/src/storage.rs`):
 * written as padded STANDARD base64; read leniently — a string is decoded only
 * when it is canonical padded standard base64 whose bytes are valid UTF-8,
 * otherwise it is kept as it is (legacy plain text, URL-safe content).
 *
 * @example
 * ```ts
 * import * as StorageBase64 from "parley/domain/storage/StorageBase64"
 * StorageBase64.decode("aGVsbG8=") // "hello"
 * StorageBase64.decode("not base64!") // undefined (keep the raw text)
 * StorageBase64.encode("hello") // "aGVsbG8="
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

// ignoreBOM: a leading U+FEFF is content (a Windows file's text), not a marker to drop.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * The decoded text, or `undefined` when `s` is not canonical base64 of UTF-8 (JP keeps it raw).
 *
 * Canonical padded standard base64 is exactly what `Buffer#toString("base64")`
 * writes, so `s` is canonical iff re-encoding its bytes gives `s` back. Both
 * directions are native code: ~4x faster than checking the alphabet and the
 * padding bits char by char in JS, which dominated decoding a large
 * `events.json` (most of its bytes are base64).
 */
export const decode = (s: string): string | undefined => {
  if (s.length % 4 !== 0) return undefined // cheap reject of most plain text
  const bytes = Buffer.from(s, "base64") // lenient: skips what is not base64
  if (bytes.toString("base64") !== s) return undefined
  try {
    return utf8.decode(bytes)
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
