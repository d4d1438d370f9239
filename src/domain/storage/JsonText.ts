/**
 * `JSON.stringify` for any depth `JSON.parse` accepts (docs/decisions.md#json-depth).
 * V8's `JSON.parse` is iterative, but `JSON.stringify` recurses and throws
 * `RangeError: Maximum call stack size exceeded` somewhere between 2,000
 * and 10,000 levels, depending on how deep the caller's stack already is.
 * So an entry that was read could not be printed or written back.
 *
 * {@link stringify} gives exactly `JSON.stringify(value, null, indent)`:
 * the native call while it can, and an iterative writer with the same output
 * when the native one runs out of stack.
 *
 * @example
 * ```ts
 * import * as JsonText from "parley/domain/storage/JsonText"
 * const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000))
 * JsonText.stringify(deep).length // 200000
 * JsonText.stringify({ a: [1, { b: null }] }, 2) // same text as JSON.stringify(…, null, 2)
 * JsonText.depth(deep) // 100000
 * JsonText.shown(deep) // "(nested 100000 levels deep: too deep to show)"
 * JsonText.parse('{"\\t": 1}') // { "\t": 1 }, whatever was parsed before
 * ```
 *
 * {@link parse} is `JSON.parse(text)` without V8's misread of escaped object
 * keys (see `JsonStrict`): every JSON text parley reads goes through it.
 *
 * @since 0.1.0
 */
import type { Json, JsonObject } from "effect/Schema"
import * as JsonStrict from "./JsonStrict.ts"

/** The end of the string that holds the backslash at `from`: the next `"` after an even run of backslashes, or -1. */
const stringEnd = (text: string, from: number): number => {
  for (let q = text.indexOf('"', from); q !== -1; q = text.indexOf('"', q + 1)) {
    let k = q - 1
    while (text.charCodeAt(k) === 92) k--
    if ((q - 1 - k) % 2 === 0) return q
  }
  return -1
}

/**
 * Whether V8's `JSON.parse` could misread `text`: it holds an object key
 * with an escape sequence (V8 bug issues.chromium.org/issues/521080746, Node 24 and 26;
 * docs/decisions.md#json-read-around-a-v8-bug). In JSON a
 * backslash is only ever in a string and the first one in a string starts
 * an escape, so only the strings that hold one are looked at: each is a key
 * when a `:` follows it. Native `indexOf` does the walking. On a text that
 * is not JSON the answer does not matter: both readers reject it.
 */
export const hasEscapedKey = (text: string): boolean => {
  for (let p = text.indexOf("\\"); p !== -1; ) {
    const end = stringEnd(text, p)
    if (end === -1) return false
    let i = end + 1
    for (let c = text.charCodeAt(i); c === 32 || c === 10 || c === 13 || c === 9; c = text.charCodeAt(++i));
    if (text.charCodeAt(i) === 58) return true
    p = text.indexOf("\\", end + 1)
  }
  return false
}

/**
 * `JSON.parse(text)`, read right: the native parser unless the text holds an
 * object key with an escape sequence, which V8 12.8–14.6 can misread (after
 * another text had the key `\\`, the key `\t` reads back as `\\`); such a
 * text is read by `JsonStrict.parse`, which gives what `JSON.parse`
 * should. Throws a `SyntaxError` naming the position, as `JSON.parse` does.
 */
export const parse = (text: string): Json => {
  if (!hasEscapedKey(text)) return JSON.parse(text)
  try {
    return JsonStrict.parse(text)
  } catch (error) {
    // Both reject the same texts: the native parser's words (and positions) are the ones people know.
    JSON.parse(text)
    throw error
  }
}

const isPlain = (v: object): boolean => {
  const proto: unknown = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** Whether `value` is JSON (null, a boolean, a finite number, a string, or arrays and plain objects of them), at any depth. */
export const isJson = (value: unknown): value is Json => {
  const todo: Array<unknown> = [value]
  while (todo.length > 0) {
    const v = todo.pop()
    if (v === null || typeof v === "string" || typeof v === "boolean") continue
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return false
      continue
    }
    if (Array.isArray(v)) for (const x of v) todo.push(x)
    else if (typeof v === "object" && isPlain(v)) for (const x of Object.values(v)) todo.push(x)
    else return false
  }
  return true
}

/** Whether a JSON value is an object (not an array, not null): a guard, as `Array.isArray` does not narrow a readonly array out. */
export const isObject = (value: Json): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A container being written: an array's items, or an object's own enumerable members in `Object.keys` order. */
interface Frame {
  readonly open: "[" | "{"
  readonly items: ReadonlyArray<unknown> | undefined
  readonly members: ReadonlyArray<readonly [string, unknown]> | undefined
  index: number
  wrote: boolean
}

/** What `JSON.stringify` writes for a value that is not a container, or `undefined` when it skips it. */
const scalar = (value: unknown): string | undefined => {
  if (value === null) return "null"
  switch (typeof value) {
    case "string":
    case "boolean":
    case "number":
    case "bigint":
      return JSON.stringify(value)
    default:
      return undefined
  }
}

const toJsonOf = (value: unknown, key: string): unknown => {
  if (typeof value !== "object" || value === null || !("toJSON" in value)) return value
  const toJSON = value.toJSON
  return typeof toJSON === "function" ? toJSON.call(value, key) : value
}

/** The iterative writer: the same text as `JSON.stringify(value, null, indent)`, at any depth. */
export const stringifyIterative = (root: unknown, indent = 0): string | undefined => {
  const pad = " ".repeat(Math.min(10, Math.max(0, indent)))
  const out: Array<string> = []
  const stack: Array<Frame> = []
  const newline = (depth: number) => (pad === "" ? "" : "\n" + pad.repeat(depth))
  // Writes `value`: a scalar at once, a container by pushing a frame. False when JSON skips it.
  const write = (raw: unknown, key: string, inArray: boolean): boolean => {
    const value = toJsonOf(raw, key)
    if (typeof value === "object" && value !== null) {
      const isArray = Array.isArray(value)
      stack.push({
        open: isArray ? "[" : "{",
        items: isArray ? value : undefined,
        // Entries read when the object is opened, as JSON.stringify reads them (own enumerable, in key order).
        members: isArray ? undefined : Object.entries(value),
        index: 0,
        wrote: false
      })
      out.push(isArray ? "[" : "{")
      return true
    }
    const text = scalar(value)
    if (text === undefined && !inArray) return false
    out.push(text ?? "null")
    return true
  }
  if (!write(root, "", false)) return undefined
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    const depth = stack.length
    const count = frame.items?.length ?? frame.members?.length ?? 0
    if (frame.index >= count) {
      stack.pop()
      out.push((frame.wrote ? newline(depth - 1) : "") + (frame.open === "[" ? "]" : "}"))
      continue
    }
    const i = frame.index++
    const mark = out.length
    out.push((frame.wrote ? "," : "") + newline(depth))
    if (frame.items !== undefined) {
      write(frame.items[i], String(i), true)
      frame.wrote = true
    } else if (frame.members !== undefined) {
      const [key, member] = frame.members[i]!
      out.push(JSON.stringify(key) + (pad === "" ? ":" : ": "))
      if (write(member, key, false)) frame.wrote = true
      else out.length = mark // a skipped member (undefined, a function) leaves no trace
    }
  }
  return out.join("")
}

/**
 * `JSON.stringify(value, null, indent)` at any depth: the native writer, or
 * the iterative one when the native one overflows the stack.
 */
export const stringify = (value: unknown, indent?: number): string => {
  try {
    return JSON.stringify(value, null, indent)
  } catch (error) {
    if (!(error instanceof RangeError) || !/call stack/i.test(error.message)) throw error
    // Only a container overflows the stack, and a container is always written.
    return stringifyIterative(value, indent) ?? ""
  }
}

/** How deeply containers nest in `value` (a scalar 0, `[]` 1, `[[1]]` 2), at any depth. */
export const depth = (value: unknown): number => {
  let max = 0
  const todo: Array<[unknown, number]> = [[value, 0]]
  while (todo.length > 0) {
    const [v, d] = todo.pop()!
    if (typeof v !== "object" || v === null) continue
    max = Math.max(max, d + 1)
    for (const x of Array.isArray(v) ? v : Object.values(v))
      if (typeof x === "object" && x !== null) todo.push([x, d + 1])
  }
  return max
}

/** The deepest JSON shown to a person (a page, the Markdown print); deeper values are named, not printed. */
export const SHOWN_DEPTH = 256

/**
 * JSON for a person to read: `JSON.stringify(value, null, indent)` up to
 * {@link SHOWN_DEPTH} levels; deeper, a note saying how deep it is (its
 * indented text would grow with the square of the depth).
 */
export const shown = (value: unknown, indent?: number): string | undefined => {
  const d = depth(value)
  return d > SHOWN_DEPTH ? `(nested ${d} levels deep: too deep to show)` : stringify(value, indent)
}
