/**
 * A JSON reader in plain TypeScript that gives what `JSON.parse` gives (the
 * same values, keys in the same order, an own `__proto__` key, the last of
 * duplicate keys), at any depth (iterative), and throws a `SyntaxError`
 * naming the position of the first bad character.
 *
 * Why it exists (docs/decisions.md#json-read-around-a-v8-bug): V8 from 12.8 through at least 14.6 (Node 24 and
 * 26) can misread an object key that holds an escape sequence. Its parser
 * takes a key from an existing hidden-class transition when the key's raw
 * text starts with that transition's characters, so after some other text
 * had the key `\\`, the key `\t` reads back as `\\` (V8 bug issues.chromium.org/issues/521080746,
 * nodejs/node#63785). {@link JsonText.parse} sends only texts with such a key
 * here; every other text takes the native parser.
 *
 * @example
 * ```ts
 * import * as JsonStrict from "parley/domain/storage/JsonStrict"
 * JsonStrict.parse('{"\\t": [1, "a\\u0062"]}') // { "\t": [1, "ab"] }
 * ```
 *
 * @since 0.1.0
 * @internal
 */

import type { Json } from "effect/Schema"

/** A container being filled: an array, or an object and the key its next value goes under. */
interface Frame {
  readonly value: Array<Json> | Record<string, Json>
  key: string | undefined
}

/** Where the reader is in the text. */
interface Cursor {
  readonly text: string
  at: number
}

const fail = (c: Cursor, at: number): never => {
  if (at >= c.text.length) throw new SyntaxError("Unexpected end of JSON input")
  throw new SyntaxError(`Unexpected token '${c.text[at]}' in JSON at position ${at}`)
}

const skipSpace = (c: Cursor): void => {
  const t = c.text
  let i = c.at
  for (;;) {
    const ch = t.charCodeAt(i)
    if (ch === 32 || ch === 10 || ch === 13 || ch === 9) i++
    else break
  }
  c.at = i
}

const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }
const HEX4 = /^[0-9a-fA-F]{4}$/

/** The string whose opening quote is at the cursor; leaves the cursor after its closing quote. */
const readString = (c: Cursor): string => {
  const t = c.text
  let i = c.at + 1
  let start = i
  let out = ""
  for (;;) {
    if (i >= t.length) fail(c, i)
    const ch = t.charCodeAt(i)
    if (ch === 34) break
    if (ch < 0x20) fail(c, i)
    if (ch !== 92) {
      i++
      continue
    }
    out += t.slice(start, i)
    const e = t[i + 1]
    if (e === "u") {
      const hex = t.slice(i + 2, i + 6)
      if (!HEX4.test(hex)) fail(c, i + 2)
      out += String.fromCharCode(Number.parseInt(hex, 16))
      i += 6
    } else {
      const s = e === undefined ? undefined : ESCAPES[e]
      if (s === undefined) fail(c, i + 1)
      out += s
      i += 2
    }
    start = i
  }
  c.at = i + 1
  return out + t.slice(start, i)
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y

const WORDS = [
  ["true", true],
  ["false", false],
  ["null", null]
] as const

/** A value that is not a container: a string, a number, `true`, `false` or `null`. */
const readScalar = (c: Cursor): Json => {
  const t = c.text
  const ch = t.charCodeAt(c.at)
  if (ch === 34) return readString(c)
  for (const [word, value] of WORDS) {
    if (t.startsWith(word, c.at)) {
      c.at += word.length
      return value
    }
  }
  NUMBER.lastIndex = c.at
  const m = NUMBER.exec(t)
  if (m === null) return fail(c, c.at)
  c.at += m[0].length
  return Number(m[0])
}

/**
 * Defines an own property, as `JSON.parse` does: even one named `__proto__`,
 * and past a setter or a read-only property `Object.prototype` may have.
 */
const define = (obj: Record<string, Json>, key: string, value: Json): void => {
  if (key in Object.prototype)
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
  else obj[key] = value
}

/** Reads `"key":` (and the space around it) into the frame. */
const readKey = (c: Cursor, frame: Frame): void => {
  if (c.text.charCodeAt(c.at) !== 34) fail(c, c.at)
  frame.key = readString(c)
  skipSpace(c)
  if (c.text.charCodeAt(c.at) !== 58) fail(c, c.at)
  c.at++
  skipSpace(c)
}

/**
 * Opens the container at the cursor, or returns the value there when it is
 * a scalar or an empty container (nothing to push).
 */
const open = (c: Cursor, stack: Array<Frame>): { readonly value: Json } | undefined => {
  const ch = c.text.charCodeAt(c.at)
  if (ch !== 123 && ch !== 91) return { value: readScalar(c) }
  c.at++
  skipSpace(c)
  const close = ch === 123 ? 125 : 93
  const value = ch === 123 ? {} : []
  if (c.text.charCodeAt(c.at) === close) {
    c.at++
    return { value }
  }
  const frame: Frame = { value, key: undefined }
  if (ch === 123) readKey(c, frame)
  stack.push(frame)
  return undefined
}

/**
 * Puts `value` into the open containers, closing each one that ends; returns
 * the whole value once the last one closed, or `undefined` when a next
 * element follows (the cursor at it).
 */
const settle = (c: Cursor, stack: Array<Frame>, value: Json): { readonly value: Json } | undefined => {
  for (;;) {
    const frame = stack[stack.length - 1]
    if (frame === undefined) return { value }
    if (Array.isArray(frame.value)) frame.value.push(value)
    else define(frame.value, frame.key!, value)
    skipSpace(c)
    const ch = c.text.charCodeAt(c.at)
    if (ch === 44) {
      c.at++
      skipSpace(c)
      if (!Array.isArray(frame.value)) readKey(c, frame)
      return undefined
    }
    if (ch !== (Array.isArray(frame.value) ? 93 : 125)) fail(c, c.at)
    c.at++
    stack.pop()
    value = frame.value
  }
}

/** Reads JSON text as `JSON.parse(text)` would; throws a `SyntaxError` at the first bad character. */
export const parse = (text: string): Json => {
  const c: Cursor = { text, at: 0 }
  const stack: Array<Frame> = []
  skipSpace(c)
  for (;;) {
    const scalar = open(c, stack)
    if (scalar === undefined) continue
    const done = settle(c, stack, scalar.value)
    if (done === undefined) continue
    skipSpace(c)
    if (c.at !== text.length) fail(c, c.at)
    return done.value
  }
}
