/**
 * The words of the status lines (docs/cli.md#status-lines), as pure functions of the
 * run's events:
 *
 * ```text
 * ⠋ write_file {"path":"a.txt"}                 while the call runs
 * ✓ write_file {"path":"a.txt"}                 it succeeded
 * ✗ deploy: sh: 1: definitely-not-a-command: not found
 * – ping: Tool skipped by configuration.        it never ran
 * ↳ Overwrite a.txt? → no (assistant)           who answered a question, and what
 * ↳ API token? → •••• (you)                     a secret, never its value
 * ↳ API token? → cancelled: no_prompt_backend   a cancellation, with its reason
 * ```
 *
 * @example
 * ```ts
 * import * as StatusText from "./StatusText.ts"
 * StatusText.errorLine('{"message":"Tool \'x\' execution failed.","stderr":"boom\\n","stdout":""}') // "boom"
 * ```
 */
import type * as Schema from "effect/Schema"
import type * as RunEvent from "../domain/run/RunEvent.ts"
import * as Style from "./Style.ts"
import * as JsonText from "../domain/storage/JsonText.ts"

/** The arguments on one line (compact JSON), cut to `columns`; empty for `{}`. */
export const argsPreview = (args: Schema.JsonObject, columns: number): string => {
  // JSON escapes C0 controls, not C1 or bidi overrides.
  const text = Style.printable(JSON.stringify(args))
  return text === "{}" ? "" : Style.truncate(text, Math.max(columns, 8))
}

const parsedError = (content: string): { readonly message?: string; readonly stderr?: string } | undefined => {
  try {
    const value: unknown = JsonText.parse(content)
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
    const { message, stderr } = value as Record<string, unknown>
    return {
      ...(typeof message === "string" ? { message } : {}),
      ...(typeof stderr === "string" ? { stderr } : {})
    }
  } catch {
    return undefined
  }
}

/**
 * One line that says why a tool failed: parley's reason when it stopped the
 * tool (too much output), else the last line of its stderr (where a shell
 * error or a traceback's exception is), else its message, else the first line
 * of the response; control characters made visible.
 */
export const errorLine = (content: string): string => Style.printable(errorText(content))

/** parley's message for a tool that merely exited non-zero: its stderr says why. */
const EXITED = /^Tool '.*' execution failed\.$/s

const errorText = (content: string): string => {
  const parsed = parsedError(content)
  const message = parsed?.message?.trim() ?? ""
  // A tool stopped for printing too much quotes only the start of its stderr: the reason is the message.
  if (message !== "" && parsed?.stderr !== undefined && !EXITED.test(message)) return Style.firstLine(message)
  const stderr = parsed?.stderr
    ?.split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
  if (stderr !== undefined && stderr.length > 0) return stderr.at(-1)!
  if (message !== "") return Style.firstLine(message)
  return Style.firstLine(content)
}

/** What a question's answer reads as: `yes`/`no`, the text or option, `••••` for a secret, or the cancellation; control characters made visible. */
export const answerText = (outcome: RunEvent.QuestionOutcome): string => Style.printable(answerWords(outcome))

const answerWords = (outcome: RunEvent.QuestionOutcome): string => {
  switch (outcome._tag) {
    case "Redacted":
      return "••••"
    case "Cancelled":
      return `cancelled: ${outcome.reason}`
    case "Answered": {
      const a = outcome.answer
      if (typeof a === "boolean") return a ? "yes" : "no"
      // An empty answer (a skipped optional field) still shows that something was given.
      if (a === "") return '""'
      if (typeof a === "string") return Style.firstLine(a) === a.trim() ? a : `${Style.firstLine(a)} …`
      return JSON.stringify(a)
    }
  }
}

/** A call's name as shown (a model or an MCP server chose it: it may hold anything). */
const nameOf = (call: { readonly name: string }): string => Style.printable(call.name)

/** The live row of a running call. */
export const runningRow = (n: RunEvent.Of<"ToolStarted">, columns: number): string => {
  const head = `${nameOf(n.call)}${n.resumed ? " (resumed)" : ""}`
  const args = argsPreview(n.call.arguments, columns - head.length - 4)
  return Style.truncate(args === "" ? head : `${head} ${args}`, columns - 2)
}

/** The line a finished call leaves. */
export const finishedLine = (n: RunEvent.Of<"ToolFinished">, columns: number, style: Style.Style): string => {
  const name = nameOf(n.call)
  if (n.response.is_error)
    return `${style.red("✗")} ${Style.truncate(`${name}: ${errorLine(n.response.content)}`, columns - 2)}`
  if (!n.ran)
    return style.dim(
      `– ${Style.truncate(`${name}: ${Style.printable(Style.firstLine(n.response.content))}`, columns - 2)}`
    )
  const args = argsPreview(n.call.arguments, columns - name.length - 4)
  return `${style.green("✓")} ${name}${args === "" ? "" : ` ${style.dim(args)}`}`
}

/** The line a closed question leaves: `↳ Overwrite a.txt? → no (assistant)`. */
export const questionLine = (n: RunEvent.Of<"QuestionClosed">, columns: number, style: Style.Style): string => {
  // "other": offered over the run's socket (another terminal, the web page).
  const by = n.by === "parley" ? "" : ` (${n.by === "other" ? "other client" : n.by})`
  const answer = answerText(n.outcome)
  const question = Style.truncate(
    Style.printable(Style.firstLine(n.question.text)),
    Math.max(columns - answer.length - by.length - 6, 12)
  )
  const line = Style.truncate(`↳ ${question} → ${answer}`, columns - by.length)
  return n.outcome._tag === "Cancelled" ? style.dim(line + by) : `${line}${style.dim(by)}`
}
