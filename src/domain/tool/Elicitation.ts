/**
 * MCP elicitation as tool questions (docs/mcp.md; MCP 2025-11-25
 * "Elicitation"; RFD 082 "Recording lifecycle").
 *
 * A server asks mid-call with `elicitation/create`: a flat form (form mode)
 * or a page to open (URL mode). parley turns that into ordinary tool
 * questions, so they are recorded and answered like a local tool's:
 *
 * - a form first asks whether to fill it in at all ({@link formQuestion},
 *   id {@link formQuestionId}: `no` is the person's explicit `decline`), then
 *   asks each field in schema order, question id = field name
 *   ({@link fieldQuestion}): `boolean` → boolean; a string with `enum` /
 *   `oneOf` → select (titles listed in the text); other strings, numbers,
 *   integers and multi-select arrays → text, checked against the field's
 *   schema by {@link check} (a rejected answer is asked again, with the
 *   reason in the text); `default` → the question's default;
 * - a URL request is one boolean question ({@link urlQuestion}, id `url`):
 *   yes → `accept`, no → `decline`.
 *
 * With nobody at the run's terminal, the URL request and the review of a
 * filled-in form may be a person's approval instead ({@link urlApproval},
 * {@link reviewApproval}: yes/no, asked each time), their arguments the
 * page ({@link urlApproves}) or the form's values ({@link content}).
 *
 * Nothing is ever a secret question: form mode must not ask for secrets
 * (the spec sends those through URL mode), so answers are recorded as given.
 *
 * @example
 * ```ts
 * import * as Result from "effect/Result"
 * import * as Elicitation from "parley/domain/tool/Elicitation"
 * const parsed = Elicitation.parse({
 *   message: "Who are you?",
 *   requestedSchema: { type: "object", properties: { age: { type: "integer", minimum: 0 } }, required: ["age"] }
 * })
 * if (Result.isSuccess(parsed) && parsed.success._tag === "Form") {
 *   const age = parsed.success.fields[0]!
 *   Elicitation.fieldQuestion(age).text // "age (a whole number at least 0)"
 *   Elicitation.check(age, "42") // Result.succeed(Elicitation.Value.Set({ value: 42 }))
 * }
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { Question, QuestionId, questionIdProblem } from "./Question.ts"
import * as JsonText from "../storage/JsonText.ts"

/** One option of a select: its value and, when the server gave one, its title. */
export interface Choice {
  readonly value: string
  readonly title?: string
}

/** How a field is asked and checked. */
export type FieldKind = Data.TaggedEnum<{
  Boolean: {}
  /** One of `choices` (`enum`, `oneOf`, legacy `enumNames`). */
  Select: { readonly choices: ReadonlyArray<Choice> }
  /** Free text, read as a string or a number. */
  Text: { readonly type: "string" | "number" | "integer" }
  /** Several of `choices` (`type: "array"`), typed as a comma-separated list. */
  Multi: { readonly choices: ReadonlyArray<Choice> }
}>
/** Constructors and matching for {@link FieldKind}. */
export const FieldKind = Data.taggedEnum<FieldKind>()

/** The string formats of the spec's `StringSchema`. */
export type Format = "email" | "uri" | "date" | "date-time"

/** One field of a form, in schema order. */
export interface Field {
  readonly name: QuestionId
  readonly required: boolean
  readonly title?: string
  readonly description?: string
  readonly default?: Schema.Json
  readonly kind: FieldKind
  readonly format?: Format
  readonly minLength?: number
  readonly maxLength?: number
  readonly minimum?: number
  readonly maximum?: number
  readonly minItems?: number
  readonly maxItems?: number
}

/** What a server asked for. */
export type Request = Data.TaggedEnum<{
  Form: { readonly message: string; readonly fields: ReadonlyArray<Field> }
  Url: { readonly message: string; readonly url: string; readonly elicitationId: string }
}>
/** Constructors and matching for {@link Request}. */
export const Request = Data.taggedEnum<Request>()
/** A form-mode request. */
export type Form = Data.TaggedEnum.Value<Request, "Form">
/** A URL-mode request. */
export type UrlRequest = Data.TaggedEnum.Value<Request, "Url">

/** What a form field's value can be (the spec's `ElicitResult.content` values). */
export type FieldValue = string | number | boolean | Array<string>

/** A checked answer: the value to send, or an optional field left empty (omitted from the content). */
export type Value = Data.TaggedEnum<{
  Set: { readonly value: FieldValue }
  Blank: {}
}>
/** Constructors and matching for {@link Value}. */
export const Value = Data.taggedEnum<Value>()

/** The id of the question a URL request becomes. */
export const URL_QUESTION_ID = "url" as QuestionId

type Table = Readonly<Record<string, unknown>>
const isTable = (u: unknown): u is Table => typeof u === "object" && u !== null && !Array.isArray(u)
const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)
const num = (u: unknown): number | undefined => (typeof u === "number" && Number.isFinite(u) ? u : undefined)
const isStrings = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u) && u.every((x) => typeof x === "string")

/** `[{const, title}]` (`oneOf` / `anyOf`) → choices, or `undefined` when it is not that shape. */
const titled = (u: unknown): ReadonlyArray<Choice> | undefined =>
  Array.isArray(u) && u.every((o) => isTable(o) && typeof o["const"] === "string")
    ? u.map((o: Table) =>
        typeof o["title"] === "string"
          ? { value: o["const"] as string, title: o["title"] }
          : { value: o["const"] as string }
      )
    : undefined

const enumChoices = (values: ReadonlyArray<string>, names: unknown): ReadonlyArray<Choice> =>
  values.map((value, i) => (isStrings(names) && names[i] !== undefined ? { value, title: names[i] } : { value }))

const kindOf = (schema: Table): FieldKind | string => {
  const type = schema["type"]
  if (type === "boolean") return FieldKind.Boolean()
  if (type === "number" || type === "integer") return FieldKind.Text({ type })
  if (type === "string") {
    if (isStrings(schema["enum"]))
      return FieldKind.Select({ choices: enumChoices(schema["enum"], schema["enumNames"]) })
    const oneOf = titled(schema["oneOf"])
    if (oneOf !== undefined) return FieldKind.Select({ choices: oneOf })
    return FieldKind.Text({ type: "string" })
  }
  if (type === "array" && isTable(schema["items"])) {
    const items = schema["items"]
    if (isStrings(items["enum"])) return FieldKind.Multi({ choices: enumChoices(items["enum"], undefined) })
    const anyOf = titled(items["anyOf"])
    if (anyOf !== undefined) return FieldKind.Multi({ choices: anyOf })
  }
  return `parley cannot ask for a value of ${JSON.stringify(schema["type"] ?? null)} (${JSON.stringify(schema)})`
}

const FORMATS: ReadonlyArray<Format> = ["email", "uri", "date", "date-time"]

const parseField = (name: string, schema: unknown, required: boolean): Field | string => {
  const idProblem = questionIdProblem(name)
  if (idProblem !== undefined) return `field ${JSON.stringify(name)}: ${idProblem}`
  if (!isTable(schema)) return `field ${JSON.stringify(name)}: its schema is not an object`
  const kind = kindOf(schema)
  if (typeof kind === "string") return `field ${JSON.stringify(name)}: ${kind}`
  const format = FORMATS.find((f) => f === schema["format"])
  const numbers = ["minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"] as const
  const field: { -readonly [K in keyof Field]: Field[K] } = { name: QuestionId.make(name), required, kind }
  const title = str(schema["title"])
  const description = str(schema["description"])
  const fallback = schema["default"]
  if (title !== undefined) field.title = title
  if (description !== undefined) field.description = description
  // The server's default, as the JSON it sent (a value that is not JSON cannot have come over the wire).
  if (fallback !== undefined && JsonText.isJson(fallback)) field.default = fallback
  if (format !== undefined && kind._tag === "Text" && kind.type === "string") field.format = format
  for (const key of numbers) {
    const n = num(schema[key])
    if (n !== undefined) field[key] = n
  }
  return field
}

/**
 * Reads the params of an `elicitation/create` request. A problem (a field
 * parley cannot ask, a field name that cannot be a question id) is a string
 * for the JSON-RPC error the server gets back.
 */
export const parse = (params: unknown): Result.Result<Request, string> => {
  if (!isTable(params)) return Result.fail("the params are not an object")
  const message = str(params["message"]) ?? ""
  if (params["mode"] === "url") {
    const url = str(params["url"])
    if (url === undefined) return Result.fail("a URL-mode request needs a url")
    return Result.succeed(Request.Url({ message, url, elicitationId: str(params["elicitationId"]) ?? "" }))
  }
  const schema = params["requestedSchema"]
  if (!isTable(schema) || !isTable(schema["properties"])) return Result.fail("requestedSchema has no properties")
  const required = isStrings(schema["required"]) ? schema["required"] : []
  const fields: Array<Field> = []
  for (const [name, property] of Object.entries(schema["properties"])) {
    const field = parseField(name, property, required.includes(name))
    if (typeof field === "string") return Result.fail(field)
    fields.push(field)
  }
  return Result.succeed(Request.Form({ message, fields }))
}

/**
 * The id of the "fill in this form?" question: `elicitation`, or with `_`
 * appended until no field has that name.
 */
export const formQuestionId = (form: Form): QuestionId => {
  let id = "elicitation"
  while (form.fields.some((f) => f.name === id)) id += "_"
  return id as QuestionId
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * The question before a form's fields: who asks, what for, and whether to
 * fill it in (`no` declines the whole form).
 */
export const formQuestion = (server: string, form: Form, exclusive = false): Question =>
  new Question({
    id: formQuestionId(form),
    text: `MCP server "${server}" asks${form.message.trim() === "" ? "." : `: ${form.message.trim()}`}\nFill in its form (${plural(
      form.fields.length,
      "field"
    )})? No declines it.`,
    answer_type: { type: "boolean" },
    default: true,
    ...(exclusive ? { exclusive } : {})
  })

const describeChoices = (choices: ReadonlyArray<Choice>): string =>
  choices.map((c) => (c.title !== undefined && c.title !== c.value ? `${c.value} = ${c.title}` : c.value)).join(", ")

const range = (low: number | undefined, high: number | undefined, unit = ""): string | undefined =>
  low !== undefined && high !== undefined
    ? `from ${low} to ${high}${unit}`
    : low !== undefined
      ? `at least ${low}${unit}`
      : high !== undefined
        ? `at most ${high}${unit}`
        : undefined

const FORMAT_HINTS: Record<Format, string> = {
  email: "an email address",
  uri: "a URI",
  date: "a date, YYYY-MM-DD",
  "date-time": "a date and time, RFC 3339"
}

/** What the answer must look like, for the question text (people and the model read it). */
const hint = (field: Field): string | undefined => {
  const kind = field.kind
  const parts: Array<string | undefined> = []
  if (kind._tag === "Select" && kind.choices.some((c) => c.title !== undefined && c.title !== c.value))
    parts.push(describeChoices(kind.choices))
  if (kind._tag === "Multi") {
    parts.push(
      `one or more of: ${describeChoices(kind.choices)}; separate them with commas`,
      range(field.minItems, field.maxItems, " items")
    )
  }
  if (kind._tag === "Text") {
    if (kind.type === "string") {
      parts.push(
        field.format !== undefined ? FORMAT_HINTS[field.format] : undefined,
        range(field.minLength, field.maxLength, " characters")
      )
    } else {
      const r = range(field.minimum, field.maximum)
      parts.push(`${kind.type === "integer" ? "a whole number" : "a number"}${r === undefined ? "" : ` ${r}`}`)
    }
  }
  if (!field.required && (kind._tag === "Text" || kind._tag === "Multi")) parts.push("optional: leave empty to skip")
  const text = parts.filter((p): p is string => p !== undefined).join("; ")
  return text === "" ? undefined : text
}

/** How a default is typed at a text prompt. */
const defaultText = (field: Field): Schema.Json | undefined => {
  const d = field.default
  if (d === undefined) return undefined
  if (field.kind._tag === "Text") return typeof d === "string" ? d : typeof d === "number" ? String(d) : undefined
  if (field.kind._tag === "Multi") return isStrings(d) ? d.join(", ") : undefined
  return d
}

/**
 * The question for one field: `Title: description (hint)`. After a rejected
 * answer, `problem` says why, on the line before.
 */
export const fieldQuestion = (field: Field, problem?: string, exclusive = false): Question => {
  const label = field.title ?? field.name
  const h = hint(field)
  const line = `${label}${field.description !== undefined && field.description !== "" ? `: ${field.description}` : ""}${h === undefined ? "" : ` (${h})`}`
  const kind = field.kind
  const answer_type =
    kind._tag === "Boolean"
      ? { type: "boolean" as const }
      : kind._tag === "Select"
        ? { type: "select" as const, options: kind.choices.map((c) => c.value) }
        : { type: "text" as const }
  const d =
    kind._tag === "Boolean"
      ? typeof field.default === "boolean"
        ? field.default
        : undefined
      : kind._tag === "Select"
        ? kind.choices.some((c) => c.value === field.default)
          ? field.default
          : undefined
        : defaultText(field)
  return new Question({
    id: field.name,
    text: problem === undefined ? line : `The previous answer was rejected: ${problem}.\n${line}`,
    answer_type,
    ...(d !== undefined ? { default: d } : {}),
    ...(exclusive ? { exclusive } : {})
  })
}

/** What the person may do with a filled-in form before it is sent (MCP: review and change before sending). */
export const REVIEW_CHOICES = ["accept", "edit", "decline", "cancel"] as const
export type ReviewChoice = (typeof REVIEW_CHOICES)[number]

const unusedId = (form: Form, base: string): QuestionId => {
  let id = base
  while (form.fields.some((f) => f.name === id)) id += "_"
  return id as QuestionId
}

/** The id of the review question: `review`, with `_` appended until no field has that name. */
export const reviewQuestionId = (form: Form): QuestionId => unusedId(form, "review")

/** The id of the "which field?" question after `edit`: `review_field`, made unique the same way. */
export const editQuestionId = (form: Form): QuestionId => unusedId(form, "review_field")

/** A value as the review shows it. */
const shown = (value: Value | undefined): string =>
  value === undefined || value._tag === "Blank"
    ? "(left empty)"
    : typeof value.value === "string"
      ? value.value
      : JSON.stringify(value.value)

/**
 * The whole form as answered, before anything is sent (MCP 2025-11-25
 * elicitation: the client must let the person review and change it):
 * `accept` sends it, `edit` asks which field to answer again, `decline` and
 * `cancel` send those.
 */
export const reviewQuestion = (
  server: string,
  form: Form,
  values: Readonly<Record<string, Value>>,
  exclusive = false
): Question =>
  new Question({
    id: reviewQuestionId(form),
    text: `The form for MCP server "${server}":\n${form.fields.map((f) => `  ${f.title ?? f.name}: ${shown(values[f.name])}`).join("\n")}\nSend it?`,
    answer_type: { type: "select", options: [...REVIEW_CHOICES] },
    default: "accept",
    ...(exclusive ? { exclusive } : {})
  })

/** After `edit` at the review: which field to answer again. */
export const editQuestion = (form: Form, exclusive = false): Question =>
  new Question({
    id: editQuestionId(form),
    text: "Which field do you want to change?",
    answer_type: { type: "select", options: form.fields.map((f) => f.name) },
    ...(exclusive ? { exclusive } : {})
  })

/** The question a URL request becomes: open the page, then say whether it is done (`no` declines). */
export const urlQuestion = (server: string, request: UrlRequest): Question => {
  let host = request.url
  try {
    host = new URL(request.url).host
  } catch {
    // Shown whole below anyway.
  }
  return new Question({
    id: URL_QUESTION_ID,
    text: `MCP server "${server}" asks you to open a page on ${host}${request.message.trim() === "" ? "" : `: ${request.message.trim()}`}\n  ${request.url}\nDone there? No declines.`,
    answer_type: { type: "boolean" },
    // Only a person can open a page.
    exclusive: true
  })
}

/**
 * The URL request as a person's approval, asked with nobody at the run's
 * terminal (docs/mcp.md#approvals-with-nobody-at-the-terminal): the same
 * yes/no question, asked each time (`persistence = "none"`: an `always`
 * cannot say a page not yet seen was opened). Its arguments are
 * {@link urlApproves}.
 */
export const urlApproval = (server: string, request: UrlRequest): Question =>
  new Question({ ...urlQuestion(server, request), persistence: "none" })

/** What a URL approval approves: the page and the server's words. */
export const urlApproves = (request: UrlRequest): Record<string, Schema.Json> => ({
  url: request.url,
  message: request.message
})

/**
 * The review as a person's approval, asked with nobody at the run's
 * terminal (docs/mcp.md#approvals-with-nobody-at-the-terminal): yes sends
 * the form (`accept`), no declines it; changing a value needs a terminal.
 * Same id as {@link reviewQuestion}; asked each time (no `always`: the next
 * form's values are not seen yet). Its arguments are the form's values
 * ({@link content}).
 */
export const reviewApproval = (server: string, form: Form, values: Readonly<Record<string, Value>>): Question =>
  new Question({
    id: reviewQuestionId(form),
    text: `Send the form for MCP server "${server}"? Yes sends it, no declines it.\n${form.fields.map((f) => `  ${f.title ?? f.name}: ${shown(values[f.name])}`).join("\n")}`,
    answer_type: { type: "boolean" },
    exclusive: true,
    persistence: "none"
  })

/**
 * The choice a review's answer makes: one of {@link REVIEW_CHOICES} (the
 * terminal's select), or an approval's yes (`accept`) or no (`decline`);
 * `undefined` when it is neither.
 */
export const reviewChoice = (answer: Schema.Json): ReviewChoice | undefined => {
  if (typeof answer === "boolean") return answer ? "accept" : "decline"
  return REVIEW_CHOICES.find((c) => c === answer)
}

/** A yes/no answer: a boolean, or `yes`/`no`/`true`/`false` as text (static config answers may be either). */
export const checkYesNo = (answer: Schema.Json): Result.Result<boolean, string> => {
  if (typeof answer === "boolean") return Result.succeed(answer)
  if (typeof answer === "string") {
    const t = answer.trim().toLowerCase()
    if (t === "yes" || t === "y" || t === "true") return Result.succeed(true)
    if (t === "no" || t === "n" || t === "false") return Result.succeed(false)
  }
  return Result.fail(`${JSON.stringify(answer)} is not yes or no`)
}

const isDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (m === null) return false
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3])
}

const formatProblem = (format: Format, s: string): string | undefined => {
  switch (format) {
    case "email":
      return /^[^\s@]+@[^\s@]+$/.test(s) ? undefined : "is not an email address"
    case "uri":
      return /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(s) && URL.canParse(s)
        ? undefined
        : "is not a URI (such as https://example.com)"
    case "date":
      return isDate(s) ? undefined : "is not a date (YYYY-MM-DD)"
    case "date-time":
      return /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) &&
        isDate(s.slice(0, 10)) &&
        !Number.isNaN(Date.parse(s))
        ? undefined
        : "is not a date and time (RFC 3339, such as 2026-01-31T09:00:00Z)"
  }
}

const outOf = (n: number, low: number | undefined, high: number | undefined, what: string): string | undefined =>
  (low !== undefined && n < low) || (high !== undefined && n > high) ? `${what} must be ${range(low, high)}` : undefined

/** Picks a choice by value, or by title (any case) when exactly one title matches. */
const choose = (choices: ReadonlyArray<Choice>, typed: string): string | undefined => {
  const t = typed.trim()
  if (choices.some((c) => c.value === t)) return t
  const byTitle = choices.filter((c) => c.title !== undefined && c.title.toLowerCase() === t.toLowerCase())
  return byTitle.length === 1 ? byTitle[0]!.value : undefined
}

const checkText = (
  field: Field,
  type: "string" | "number" | "integer",
  answer: Schema.Json
): Result.Result<Value, string> => {
  const quoted = JSON.stringify(answer)
  if (type === "string") {
    if (typeof answer !== "string") return Result.fail(`${quoted} is not text`)
    if (answer === "") return field.required ? Result.fail("an answer is required") : Result.succeed(Value.Blank())
    const formatted = field.format === undefined ? undefined : formatProblem(field.format, answer)
    if (formatted !== undefined) return Result.fail(`${quoted} ${formatted}`)
    const length = outOf(answer.length, field.minLength, field.maxLength, "its length")
    return length === undefined
      ? Result.succeed(Value.Set({ value: answer }))
      : Result.fail(`${quoted} is rejected: ${length}`)
  }
  if (typeof answer === "string" && answer.trim() === "")
    return field.required ? Result.fail("an answer is required") : Result.succeed(Value.Blank())
  const n =
    typeof answer === "number"
      ? answer
      : typeof answer === "string" && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(answer)
        ? Number(answer)
        : undefined
  if (n === undefined || !Number.isFinite(n)) return Result.fail(`${quoted} is not a number`)
  if (type === "integer" && !Number.isInteger(n)) return Result.fail(`${quoted} is not a whole number`)
  const problem = outOf(n, field.minimum, field.maximum, "the number")
  return problem === undefined
    ? Result.succeed(Value.Set({ value: n }))
    : Result.fail(`${quoted} is rejected: ${problem}`)
}

/** A typed list: a JSON array, or values separated by commas. */
const listOf = (answer: Schema.Json): ReadonlyArray<string> | undefined => {
  if (isStrings(answer)) return answer
  if (typeof answer !== "string") return undefined
  const t = answer.trim()
  if (t.startsWith("[")) {
    try {
      const parsed: unknown = JsonText.parse(t)
      return isStrings(parsed) ? parsed : undefined
    } catch {
      return undefined
    }
  }
  return t === ""
    ? []
    : t
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")
}

const checkMulti = (
  field: Field,
  choices: ReadonlyArray<Choice>,
  answer: Schema.Json
): Result.Result<Value, string> => {
  const items = listOf(answer)
  if (items === undefined) return Result.fail(`${JSON.stringify(answer)} is not a list of choices`)
  if (items.length === 0 && !field.required && (field.minItems ?? 0) <= 1) return Result.succeed(Value.Blank())
  const values: Array<string> = []
  for (const item of items) {
    const value = choose(choices, item)
    if (value === undefined)
      return Result.fail(`${JSON.stringify(item)} is not one of: ${choices.map((c) => c.value).join(", ")}`)
    if (!values.includes(value)) values.push(value)
  }
  const problem = outOf(values.length, field.minItems, field.maxItems, "the number of choices")
  return problem === undefined
    ? Result.succeed(Value.Set({ value: values }))
    : Result.fail(`${JSON.stringify(answer)} is rejected: ${problem}`)
}

/**
 * Checks an answer (typed at the prompt, from config, or from the model)
 * against its field and turns it into the value the server gets: numbers
 * typed as text become numbers, a list typed `a, b` an array, a select
 * answered by its title the option's value.
 */
export const check = (field: Field, answer: Schema.Json): Result.Result<Value, string> =>
  FieldKind.$match(field.kind, {
    Boolean: () => Result.map(checkYesNo(answer), (value) => Value.Set({ value })),
    Select: ({ choices }) => {
      const value = typeof answer === "string" ? choose(choices, answer) : undefined
      return value === undefined
        ? Result.fail(`${JSON.stringify(answer)} is not one of: ${choices.map((c) => c.value).join(", ")}`)
        : Result.succeed(Value.Set({ value }))
    },
    Text: ({ type }) => checkText(field, type, answer),
    Multi: ({ choices }) => checkMulti(field, choices, answer)
  })

/** The `content` of an `accept`: every field that has a value, in schema order. */
export const content = (form: Form, values: Readonly<Record<string, Value>>): Record<string, FieldValue> => {
  const out: Record<string, FieldValue> = {}
  for (const field of form.fields) {
    const v = values[field.name]
    if (v !== undefined && v._tag === "Set") out[field.name] = v.value
  }
  return out
}
