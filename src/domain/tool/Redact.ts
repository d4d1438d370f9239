/**
 * Secrets stay secret even when a tool echoes them (contract §2, issues 11
 * and 30): before a tool's result is recorded or sent to the model, every
 * secret answer given to that call is replaced by {@link MARKER} in every
 * form of the table in `SecretForms` — plain, JSON-escaped, URL-encoded,
 * hex, base64 and base64url at each alignment with their edge characters —
 * also when the form is broken across lines.
 *
 * On top of the whole forms, any run of the plain secret longer than half
 * of it (and at least {@link MIN_RUN} characters) is removed, so a secret
 * cut in two by something no form foresees (`xxd`'s text column) leaves at
 * most its smaller half.
 *
 * Very short secrets are left alone where replacing them would mangle
 * ordinary output: text forms from 3 characters on, a base64 form only when
 * at least 4 of its characters depend on the secret alone.
 *
 * @example
 * ```ts
 * import { Redact } from "parley"
 *
 * Redact.scrub("token=hunter22", ["hunter22"]) // "token=[redacted]"
 * Redact.scrub("token=68756e746572\n3232", ["hunter22"]) // "token=[redacted]"
 * Redact.scrub(Buffer.from("token=hunter22").toString("base64"), ["hunter22"]) // "dG9rZW49[redacted]"
 * ```
 */
import * as SecretForms from "./SecretForms.ts"

/** What a secret is replaced with. */
export const MARKER = "[redacted]"

/** The shortest run of a secret removed on its own (see the module comment). */
export const MIN_RUN = 8

/** A span of text to replace: [start, end). */
type Span = readonly [number, number]

/** The text of a secret answer (answers are JSON; a secret is normally a string). */
export const secretText = (answer: unknown): string => (typeof answer === "string" ? answer : JSON.stringify(answer) ?? "")

/** Where some form of `secret` occurs in `text`. */
const formSpans = (text: string, secret: string): Array<Span> =>
  SecretForms.ENCODINGS.flatMap((encoding) => encoding.forms(secret)).flatMap((form) => {
    const pattern = new RegExp(SecretForms.source(form), "g")
    return [...text.matchAll(pattern)].map((m): Span => [m.index, m.index + m[0].length])
  })

/** Where a run of more than half of `secret` (at least {@link MIN_RUN} characters) occurs in `text`. */
const runSpans = (text: string, secret: string): Array<Span> => {
  const run = Math.max(Math.floor(secret.length / 2) + 1, MIN_RUN)
  if (run >= secret.length) return []
  const spans: Array<Span> = []
  // Every overlapping occurrence of every piece: a longer run is the union of its pieces.
  for (let i = 0; i + run <= secret.length; i++) {
    const piece = secret.slice(i, i + run)
    for (let at = text.indexOf(piece); at !== -1; at = text.indexOf(piece, at + 1)) spans.push([at, at + run])
  }
  return spans
}

/** Overlapping or touching spans joined, in order. */
const merged = (spans: ReadonlyArray<Span>): Array<Span> => {
  const out: Array<[number, number]> = []
  for (const [start, end] of [...spans].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1]
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end)
    else out.push([start, end])
  }
  return out
}

/** Replaces every form of every secret in `text` by {@link MARKER}; text without a secret comes back unchanged. */
export const scrub = (text: string, secrets: ReadonlyArray<string>): string => {
  const spans = merged(secrets.flatMap((secret) => [...formSpans(text, secret), ...runSpans(text, secret)]))
  if (spans.length === 0) return text
  let out = ""
  let from = 0
  for (const [start, end] of spans) {
    out += text.slice(from, start) + MARKER
    from = end
  }
  return out + text.slice(from)
}
