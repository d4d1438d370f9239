/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as hex, in plain code.
 *
 * For names parley derives from short texts: a notification's delivery id
 * (`Notification`), a host socket's name when the storage's path is too long
 * (`HostPath`), a database storage's directories (its spool, its config).
 * Why not `node:crypto`: loading it loads node:stream with it, about 5 ms of
 * a scripted `query` that notifies (issue 50), on runs that touch no other
 * crypto; these texts are ~100 bytes, which this hashes in well under a
 * millisecond even before V8 compiles it. Not for secrets: signatures (HMAC),
 * tokens and keys stay on node:crypto. The result is SHA-256's, byte for
 * byte, so every name stays what it was (test/domain/storage/Sha256.test.ts
 * checks it against node:crypto).
 *
 * @example
 * ```ts
 * import { sha256 } from "parley/domain/storage/Sha256"
 * sha256("abc") // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 *
 * @since 0.1.0
 * @internal
 */

/** The first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
])

/** The first 32 bits of the fractional parts of the square roots of the first 8 primes. */
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]

const rotr = (x: number, n: number): number => (x >>> n) | (x << (32 - n))

/** The message padded to whole 64-byte blocks: a 1 bit, zeros, and the length in bits (big-endian, 64 bits). */
const padded = (bytes: Uint8Array): DataView => {
  const length = Math.ceil((bytes.length + 9) / 64) * 64
  const block = new Uint8Array(length)
  block.set(bytes)
  block[bytes.length] = 0x80
  const view = new DataView(block.buffer)
  const bits = bytes.length * 8
  view.setUint32(length - 8, Math.floor(bits / 2 ** 32))
  view.setUint32(length - 4, bits >>> 0)
  return view
}

/** One 64-byte block at `offset` folded into the state `h`. */
const compress = (h: Uint32Array, view: DataView, offset: number, w: Uint32Array): void => {
  for (let t = 0; t < 16; t++) w[t] = view.getUint32(offset + t * 4)
  for (let t = 16; t < 64; t++) {
    const a = w[t - 15]!
    const b = w[t - 2]!
    const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)
    const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10)
    w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) | 0
  }
  let [a, b, c, d, e, f, g, k] = [h[0]!, h[1]!, h[2]!, h[3]!, h[4]!, h[5]!, h[6]!, h[7]!]
  for (let t = 0; t < 64; t++) {
    const t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t]! + w[t]!) | 0
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0
    k = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  const next = [a, b, c, d, e, f, g, k]
  for (let i = 0; i < 8; i++) h[i] = (h[i]! + next[i]!) | 0
}

/** The SHA-256 of `text`'s UTF-8 bytes, as 64 lower-case hex digits. */
export const sha256 = (text: string): string => {
  const view = padded(new TextEncoder().encode(text))
  const h = Uint32Array.from(H0)
  const w = new Uint32Array(64)
  for (let offset = 0; offset < view.byteLength; offset += 64) compress(h, view, offset, w)
  return Array.from(h, (x) => x.toString(16).padStart(8, "0")).join("")
}
