/**
 * A tool call's arguments that do not fit the tool's schema, said so the
 * model can fix them (RFD 083's `ask_user` with a bad `answer_type` once got
 * only ajv's "must be equal to one of the allowed values"): which argument,
 * what fits (the allowed values, the type, the argument names), and what
 * came, one clause per argument, then what to do.
 *
 * @example
 * ```ts
 * import { Ajv } from "ajv"
 * import * as ArgumentErrors from "parley/layers/executor/ArgumentErrors"
 *
 * const schema = { type: "object", properties: { answer_type: { type: "string", enum: ["boolean", "text"] } } }
 * const validate = new Ajv({ allErrors: true }).compile(schema)
 * const args = { answer_type: "number" }
 * if (!validate(args)) ArgumentErrors.describe("ask_user", schema, validate.errors ?? [], args)
 * // Invalid arguments for ask_user: answer_type must be one of "boolean", "text" (got "number"). Fix the arguments and call ask_user again.
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Predicate from "effect/Predicate"
import type { ErrorObject } from "ajv"

/** A value as the message shows it: JSON, cut short. */
const shown = (value: unknown): string => {
  const text = value === undefined ? "nothing" : (JSON.stringify(value) ?? String(value))
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** The value at a JSON pointer (`/a/0/b`) in `root`. */
const at = (root: unknown, pointer: string): unknown => {
  if (pointer === "") return root
  let value: unknown = root
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~")
    value = Array.isArray(value) ? value[Number(key)] : Predicate.isObject(value) ? value[key] : undefined
  }
  return value
}

/** `/options/0` → `options.0`. */
const dotted = (pointer: string): string =>
  pointer
    .slice(1)
    .split("/")
    .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".")

/** ajv's `allowedValues` (an array for an `enum` error). */
const allowed = (values: unknown): ReadonlyArray<unknown> => (Array.isArray(values) ? values : [])

const article = (type: string): string => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`)

/** The argument names a top-level schema declares. */
const names = (schema: unknown): Array<string> => {
  const properties = Predicate.isObject(schema) ? schema["properties"] : undefined
  return properties !== null && typeof properties === "object" ? Object.keys(properties) : []
}

/** One clause for one ajv error. */
const clause = (e: ErrorObject, schema: unknown, args: unknown): string => {
  const where = dotted(e.instancePath)
  const got = shown(at(args, e.instancePath))
  switch (e.keyword) {
    case "required":
      return `the argument ${where === "" ? "" : `${where}.`}${String(e.params["missingProperty"])} is missing`
    case "additionalProperties": {
      const extra = String(e.params["additionalProperty"])
      if (where !== "") return `${where} has no field ${extra}`
      const known = names(schema)
      return `there is no argument ${extra}${known.length > 0 ? ` (the arguments are ${known.join(", ")})` : ""}`
    }
    case "type": {
      const type: unknown = e.params["type"]
      const types = (Array.isArray(type) ? type : [type]).map(String)
      return where === ""
        ? `the arguments must be ${article(types[0]!)} (got ${got})`
        : `${where} must be ${types.map(article).join(" or ")} (got ${got})`
    }
    case "enum":
      return `${where === "" ? "the arguments" : where} must be one of ${allowed(e.params["allowedValues"]).map(shown).join(", ")} (got ${got})`
    default:
      return `${where === "" ? "the arguments" : where} ${e.message ?? "is invalid"}`
  }
}

/**
 * The tool error for arguments `args` of `tool` that failed `schema` with
 * `errors`. A type error where an enum also failed is left to the enum's
 * clause (it says more); identical clauses are said once.
 */
export const describe = (tool: string, schema: unknown, errors: ReadonlyArray<ErrorObject>, args: unknown): string => {
  const enums = new Set(errors.filter((e) => e.keyword === "enum").map((e) => e.instancePath))
  const clauses = errors
    .filter((e) => !(e.keyword === "type" && enums.has(e.instancePath)))
    .map((e) => clause(e, schema, args))
  return `Invalid arguments for ${tool}: ${[...new Set(clauses)].join("; ")}. Fix the arguments and call ${tool} again.`
}
