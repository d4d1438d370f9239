/**
 * What a question's kind allows, in one place (RFD 082 secrets, RFD 083
 * `exclusive` and `persistence`): every site that treats a secret or a
 * person-only question differently asks {@link of} instead of reading the
 * question's fields.
 *
 * - `redact`: the answer is a secret — recorded `redacted`, scrubbed from the
 *   tool's result, shown as `Redacted`, never written to disk in clear (so it
 *   reaches a tool only through a running turn);
 * - `rememberable`: `Y`/`N` may remember the answer for the turn (not a
 *   secret, and `persistence` is not `none`);
 * - `personOnly`: only a person may answer (a secret, or an `exclusive`
 *   question): never the assistant, not even with nobody to ask.
 *
 * @example
 * ```ts
 * import * as QuestionPolicy from "parley/domain/tool/QuestionPolicy"
 *
 * QuestionPolicy.of({ answer_type: { type: "secret" } })
 * // { redact: true, rememberable: false, personOnly: true }
 * QuestionPolicy.of({ answer_type: { type: "boolean" }, persistence: "none" })
 * // { redact: false, rememberable: false, personOnly: false }
 * ```
 *
 * @since 0.1.0
 */

/** What a question's kind allows (see the module comment). */
export interface QuestionPolicy {
  /** A secret: recorded redacted, scrubbed from results, never on disk in clear. */
  readonly redact: boolean
  /** `Y`/`N` may remember the answer for the turn. */
  readonly rememberable: boolean
  /** Only a person may answer. */
  readonly personOnly: boolean
}

/** What {@link of} reads: a tool's question (`Question`) or a recorded one (`InquiryQuestion`) alike. */
export interface PolicyFields {
  readonly answer_type: { readonly type: string }
  readonly exclusive?: boolean | undefined
  readonly persistence?: "none" | "turn" | undefined
}

const policy = (redact: boolean, rememberable: boolean, personOnly: boolean): QuestionPolicy =>
  Object.freeze({ redact, rememberable, personOnly })

// The few combinations that occur, made once: every question the coordinator asks reads its policy.
const SECRET = policy(true, false, true)
const EXCLUSIVE = policy(false, true, true)
const EXCLUSIVE_ONCE = policy(false, false, true)
const PLAIN = policy(false, true, false)
const ONCE = policy(false, false, false)

/** The policy of `question`. */
export const of = (question: PolicyFields): QuestionPolicy => {
  if (question.answer_type.type === "secret") return SECRET
  const once = question.persistence === "none"
  if (question.exclusive === true) return once ? EXCLUSIVE_ONCE : EXCLUSIVE
  return once ? ONCE : PLAIN
}
