/**
 * Secrets stay secret even when a tool echoes them (contract §2, issue 11):
 * before a tool's result is recorded or sent to the model, every secret
 * answer given to that call is replaced by {@link MARKER} — in plain text,
 * JSON-escaped, and inside base64 (standard and URL-safe, at each of the
 * three byte alignments a secret can take inside a longer encoded text).
 *
 * Very short secrets are left alone where replacing them would mangle
 * ordinary output: the plain form is scrubbed from 3 characters on, a base64
 * form only when at least 4 of its characters depend on the secret alone.
 *
 * @example
 * ```ts
 * import { Redact } from "parley"
 *
 * Redact.scrub("token=hunter22", ["hunter22"]) // "token=[redacted]"
 * Redact.scrub(Buffer.from("token=hunter22").toString("base64"), ["hunter22"]).includes("[redacted]") // true
 * ```
 */

/** What a secret is replaced with. */
export const MARKER = "[redacted]"

const MIN_PLAIN = 3
const MIN_ENCODED = 4

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** Standard base64 of bytes, without padding. */
const base64 = (bytes: Uint8Array): string => {
  let out = ""
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0)
    const chars = Math.ceil(((Math.min(3, bytes.length - i)) * 8) / 6)
    for (let c = 0; c < chars; c++) out += B64[(n >> (18 - 6 * c)) & 63]
  }
  return out
}

/**
 * The base64 characters that depend only on the secret's bytes when it
 * starts `offset` bytes into a 3-byte group: the full groups it covers.
 */
const encodedCore = (bytes: Uint8Array, offset: number): string => {
  const skip = (3 - offset) % 3 // bytes until the next group boundary
  const whole = Math.floor((bytes.length - skip) / 3) * 3
  if (whole <= 0) return ""
  return base64(bytes.subarray(skip, skip + whole))
}

/** Every form of `secret` to remove from a tool's output. */
export const formsOf = (secret: string): ReadonlyArray<string> => {
  const forms = new Set<string>()
  if (secret.length >= MIN_PLAIN) {
    forms.add(secret)
    const escaped = JSON.stringify(secret).slice(1, -1)
    if (escaped !== secret) forms.add(escaped)
  }
  const bytes = new TextEncoder().encode(secret)
  for (let offset = 0; offset < 3; offset++) {
    const core = encodedCore(bytes, offset)
    if (core.length < MIN_ENCODED) continue
    forms.add(core)
    forms.add(core.replaceAll("+", "-").replaceAll("/", "_"))
  }
  return [...forms].sort((a, b) => b.length - a.length) // longest first, so a form never hides inside another's marker
}

/** The text of a secret answer (answers are JSON; a secret is normally a string). */
export const secretText = (answer: unknown): string => (typeof answer === "string" ? answer : JSON.stringify(answer) ?? "")

/** Replaces every form of every secret in `text` by {@link MARKER}. */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string => {
  let out = text
  for (const secret of secrets) {
    for (const form of formsOf(secret)) out = out.split(form).join(MARKER)
  }
  return out
}
