/**
 * Byte arrays the server sends: several made apart, written as one.
 *
 * @since 0.1.0
 * @internal
 */

/** `parts` one after the other in one array of exactly their length. */
export const concat = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
