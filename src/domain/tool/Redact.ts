/**
 * Secrets stay secret even when a tool echoes them (contract §2, docs/questions-and-approvals.md#secrets): before a tool's result is recorded or sent to the model, every
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
 *
 * @since 0.1.0
 */
import * as FormMatch from "./FormMatch.ts"
import type { Span } from "./FormMatch.ts"
import * as SecretForms from "./SecretForms.ts"

/** What a secret is replaced with. */
export const MARKER = "[redacted]"

/** The shortest run of a secret removed on its own (see the module comment). */
export const MIN_RUN = 8

/** The text of a secret answer (answers are JSON; a secret is normally a string). */
export const secretText = (answer: unknown): string =>
  typeof answer === "string" ? answer : (JSON.stringify(answer) ?? "")

/** Where some form of `secret` occurs in `text`. */
const formSpans = (text: string, secret: string): Array<Span> =>
  FormMatch.spans(
    text,
    SecretForms.ENCODINGS.flatMap((encoding) => encoding.forms(secret))
  )

/** Length of the pieces of a secret looked up to find its runs. */
const ANCHOR = 8

/**
 * Where a run of more than half of `secret` (at least {@link MIN_RUN}
 * characters) occurs in `text`. Such a run holds one of the secret's
 * {@link ANCHOR}-character pieces that start every `run - ANCHOR + 1`
 * characters, so only those are looked up, then grown to the whole run.
 */
const runSpans = (text: string, secret: string): Array<Span> => {
  const run = Math.max(Math.floor(secret.length / 2) + 1, MIN_RUN)
  if (run >= secret.length) return []
  const spans: Array<Span> = []
  for (let j = 0; j + ANCHOR <= secret.length; j += run - ANCHOR + 1) {
    const piece = secret.slice(j, j + ANCHOR)
    for (let at = text.indexOf(piece); at !== -1; at = text.indexOf(piece, at + 1)) {
      let back = 0
      while (j - back > 0 && text[at - back - 1] === secret[j - back - 1]) back++
      let ahead = ANCHOR
      while (j + ahead < secret.length && text[at + ahead] === secret[j + ahead]) ahead++
      if (back + ahead >= run) spans.push([at - back, at + ahead])
    }
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
