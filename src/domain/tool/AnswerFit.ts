/**
 * Whether an answer fits its question (docs/decisions.md#answer-from-anywhere: "checked against the
 * question — type, options — before it counts"), and how an answer typed as
 * text on a command line or in a form becomes a JSON value. One home for the
 * rule every answerer shares: the terminal, `conversation answer`, another
 * terminal, the HTTP API.
 *
 * - boolean: `true`/`false`; as text also `yes`/`no`/`y`/`n` (any case);
 * - select: exactly one of the options;
 * - text and secret: a string.
 *
 * @example
 * ```ts
 * import * as AnswerFit from "parley/domain/tool/AnswerFit"
 * AnswerFit.parse({ type: "boolean" }, "yes") // Result.succeed(true)
 * AnswerFit.expected({ type: "select", options: ["a", "b"] }) // "one of: a, b"
 * ```
 *
 * @since 0.1.0
 */
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import type { AnswerType } from "./AnswerType.ts"
import * as JsonText from "../storage/JsonText.ts"

const YES = new Set(["true", "yes", "y"])
const NO = new Set(["false", "no", "n"])

/**
 * What an answer to a question of `type` looks like in a command to type,
 * as its `<placeholder>` (an approval, `kind: "approval"`: yes, no, always
 * or never, or only yes or no when it is asked each time: not `rememberable`);
 * none for a secret, which is never put on a command line.
 */
export const placeholder = (type: AnswerType, kind: string, rememberable = true): string | undefined =>
  type.type === "secret"
    ? undefined
    : kind === "approval"
      ? rememberable
        ? "yes|no|always|never"
        : "yes|no"
      : type.type === "boolean"
        ? "yes|no"
        : type.type === "select"
          ? type.options.join("|")
          : "text"

/** What would fit `type`, in words (for an error that says what to give instead). */
export const expected = (type: AnswerType): string => {
  switch (type.type) {
    case "boolean":
      return "yes or no"
    case "select":
      return `one of: ${type.options.join(", ")}`
    case "text":
      return "any text"
    case "secret":
      return "a secret text"
  }
}

const describe = (value: Schema.Json): string => JSON.stringify(value)

/** `value` when it fits `type`; else why not. */
export const fit = (type: AnswerType, value: Schema.Json): Result.Result<Schema.Json, string> => {
  switch (type.type) {
    case "boolean":
      return typeof value === "boolean"
        ? Result.succeed(value)
        : Result.fail(`${describe(value)} is not a yes/no answer`)
    case "select":
      return typeof value === "string" && type.options.includes(value)
        ? Result.succeed(value)
        : Result.fail(`${describe(value)} is not one of the options (${type.options.join(", ")})`)
    case "text":
      return typeof value === "string" ? Result.succeed(value) : Result.fail(`${describe(value)} is not text`)
    case "secret":
      // A refused secret is not repeated back, not even in the reason: whatever was sent may be the secret.
      return typeof value === "string" ? Result.succeed(value) : Result.fail("the answer is not text")
  }
}

/**
 * A configured (static) answer as it is given to the tool, or why it does
 * not fit `type` (RFD 083 `InvalidStaticAnswer`). As {@link fit}, except
 * that a boolean question also takes yes/no words (given as `true`/`false`),
 * and a text question a number or a list of strings: an MCP form's number
 * and multi-select fields are asked as text, take such values from config
 * (contract §5: "static answers may be any JSON value"), and are checked
 * further by their tool.
 */
export const fitStatic = (type: AnswerType, value: Schema.Json): Result.Result<Schema.Json, string> => {
  if (
    type.type === "text" &&
    (typeof value === "number" || (Array.isArray(value) && value.every((v) => typeof v === "string")))
  )
    return Result.succeed(value)
  if (type.type === "boolean" && typeof value === "string") return parse(type, value)
  return fit(type, value)
}

/**
 * An answer typed as text: a boolean from yes/no words, a select option as
 * written, text as given. With `json`, the text is a JSON value first.
 */
export const parse = (
  type: AnswerType,
  text: string,
  options: { readonly json?: boolean } = {}
): Result.Result<Schema.Json, string> => {
  if (options.json === true) {
    let value: Schema.Json
    try {
      value = JsonText.parse(text)
    } catch {
      return Result.fail(`${JSON.stringify(text)} is not JSON`)
    }
    return fit(type, value)
  }
  if (type.type === "boolean") {
    const word = text.trim().toLowerCase()
    return YES.has(word)
      ? Result.succeed(true)
      : NO.has(word)
        ? Result.succeed(false)
        : Result.fail(`${JSON.stringify(text)} is not yes or no`)
  }
  return fit(type, text)
}
