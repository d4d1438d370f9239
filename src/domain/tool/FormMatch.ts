/**
 * Finds a secret's {@link SecretForms.Form} in text, also when a line break
 * sits between two of its units (docs/questions-and-approvals.md#secrets). A hand-written matcher rather
 * than a regular expression: the expression for a long secret (a private
 * key) overflows the regex engine's stack, and compiling one for a 40-
 * character secret took tens of milliseconds. This one runs the form as a
 * set of states over the text, keeps the longest match at the leftmost
 * start, and costs time in proportion to the text and to how much of the
 * form a stretch of text matches.
 *
 * A line break ({@link breakEnds}) is: blanks up to the end of the line,
 * `\n`, `\r\n` or their JSON escapes `\n`, `\r\n` (two characters each),
 * the next line's indentation, and an optional short label at its start:
 * up to 12 of `[A-Za-z0-9_.-]`, then `:` or `=` or blanks (`part2 `,
 * `00000010: `).
 *
 * @example
 * ```ts
 * import * as FormMatch from "parley/domain/tool/FormMatch"
 * import * as SecretForms from "parley/domain/tool/SecretForms"
 * const [hex] = SecretForms.ENCODINGS[3]!.forms("hunter22")
 * FormMatch.spans("sum: 68756E74\n  part2 65723232.", [hex!]) // [[5, 30]]: wrapped, labelled, upper case
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import type { Form } from "./SecretForms.ts"

/** A span of text: [start, end). */
export type Span = readonly [number, number]

const LABEL_MAX = 12
const isBlank = (c: string | undefined) => c === " " || c === "\t"
const isLabel = (c: string | undefined) => c !== undefined && /[A-Za-z0-9_.-]/.test(c)

/** Where a line feed (or its JSON escape) starting at `at` ends, or -1. */
const newlineEnd = (text: string, at: number): number => {
  if (text[at] === "\n") return at + 1
  if (text[at] === "\r" && text[at + 1] === "\n") return at + 2
  if (text[at] !== "\\") return -1
  if (text[at + 1] === "n") return at + 2
  return text[at + 1] === "r" && text[at + 2] === "\\" && text[at + 3] === "n" ? at + 4 : -1
}

const NONE: ReadonlyArray<number> = []

/** Every position a line break starting at `at` may end at (none when there is no break there). */
export const breakEnds = (text: string, at: number): ReadonlyArray<number> => {
  let p = at
  while (isBlank(text[p])) p++
  const line = newlineEnd(text, p)
  if (line === -1) return NONE
  const ends: Array<number> = []
  let q = line
  for (;;) {
    ends.push(q)
    if (!isBlank(text[q])) break
    q++
  }
  // A label starts after the whole indentation and ends in `:`/`=` or blanks.
  for (let l = q; l < q + LABEL_MAX && isLabel(text[l]); l++) {
    let r = l + 1
    if (text[r] === ":" || text[r] === "=") ends.push(++r)
    else if (!isBlank(text[r])) continue
    while (isBlank(text[r])) ends.push(++r)
  }
  return ends
}

interface Node {
  /** The characters this unit may be. */
  readonly chars: string
  /** The units that may follow (empty after the last). */
  next: ReadonlyArray<number>
  /** Whether this unit ends an atom (a separator may follow). */
  readonly atomEnd: boolean
  /** Whether this unit ends the form. */
  readonly last: boolean
}

/** The form as states: one per unit of every spelling, and the units it may start with. */
const compile = (form: Form): { nodes: Array<Node>; starts: ReadonlyArray<number> } => {
  const nodes: Array<Node> = []
  const startsOf: Array<Array<number>> = []
  const ends: Array<Array<number>> = []
  form.atoms.forEach((atom, a) => {
    startsOf.push([])
    ends.push([])
    for (const spelling of atom) {
      spelling.forEach((chars, u) => {
        const id = nodes.length
        if (u === 0) startsOf[a]!.push(id)
        else nodes[id - 1]!.next = [id]
        const atomEnd = u === spelling.length - 1
        nodes.push({ chars, next: [], atomEnd, last: atomEnd && a === form.atoms.length - 1 })
        if (atomEnd) ends[a]!.push(id)
      })
    }
  })
  ends.forEach((ids, a) => {
    for (const id of ids) if (a + 1 < form.atoms.length) nodes[id]!.next = startsOf[a + 1]!
  })
  return { nodes, starts: startsOf[0] ?? [] }
}

/** Characters a line break may start with. */
const BREAK_START = " \t\r\n\\"

/** A compiled form: its states, where a match may start, and what a match's second character may be. */
interface Machine {
  readonly form: Form
  readonly nodes: ReadonlyArray<Node>
  readonly starts: ReadonlyArray<number>
  readonly first: string
  /** Characters that may follow the first (the next unit's, a separator, a break's first), or undefined when one unit may be the whole match. */
  readonly second: Set<string> | undefined
  /** States waiting at an offset from the start, reached by jumping over a break or a separator. */
  readonly jumps: Map<number, Array<number>>
}

const machine = (form: Form): Machine => {
  const { nodes, starts } = compile(form)
  const first = starts.map((id) => nodes[id]!.chars).join("")
  let second: Set<string> | undefined = new Set(BREAK_START)
  for (const id of starts) {
    const node = nodes[id]!
    if (node.last) second = undefined
    for (const next of node.next) for (const c of nodes[next]!.chars) second?.add(c)
    if (node.atomEnd) for (const c of form.separator) second?.add(c)
  }
  return { form, nodes, starts, first, second, jumps: new Map() }
}

/**
 * Where a gap between two units starting at `at` may end: after one or more
 * line breaks or separators in a row (a blank line, `68 \n 69`). Empty when
 * nothing that can start a gap is there.
 */
const gapEnds = (text: string, at: number, separator: string): ReadonlyArray<number> => {
  const opens = (p: number) => p < text.length && (BREAK_START.includes(text[p]!) || separator.includes(text[p]!))
  if (!opens(at)) return NONE
  const seen = new Set<number>()
  const todo = [at]
  while (todo.length > 0) {
    const p = todo.pop()!
    const ends = [...breakEnds(text, p)]
    if (p < text.length && separator.includes(text[p]!)) ends.push(p + 1)
    for (const end of ends) {
      if (seen.has(end)) continue
      seen.add(end)
      if (opens(end)) todo.push(end)
    }
  }
  return [...seen]
}

/**
 * The end of the longest match starting at `start`, or -1. The states
 * advance one character at a time; a break or a separator makes them wait
 * further ahead (rare, so kept in a map).
 */
const longestAt = (text: string, start: number, m: Machine): number => {
  const { form, nodes, jumps } = m
  jumps.clear()
  let current: ReadonlyArray<number> = m.starts
  let furthestJump = -1
  let best = -1
  for (let offset = 0; ; offset++) {
    const jumped = jumps.get(offset)
    if (jumped !== undefined) current = current.length === 0 ? jumped : [...current, ...jumped]
    if (current.length === 0 && offset > furthestJump) break
    const p = start + offset
    const c = text[p]
    if (c === undefined) break
    const next: Array<number> = []
    for (const id of current) {
      const node = nodes[id]!
      if (!node.chars.includes(c)) continue
      if (node.last) best = Math.max(best, p + 1)
      if (node.next.length === 0) continue
      for (const n of node.next) next.push(n)
      for (const end of gapEnds(text, p + 1, node.atomEnd ? form.separator : "")) {
        const at = end - start
        const bucket = jumps.get(at)
        if (bucket === undefined) jumps.set(at, [...node.next])
        else bucket.push(...node.next)
        furthestJump = Math.max(furthestJump, at)
      }
    }
    current = next
  }
  if (best !== -1 && form.padded) for (let pad = 0; pad < 2 && text[best] === "="; pad++) best++
  return best
}

/**
 * Every match of each form in `text`, leftmost first, each the longest at
 * its start, none overlapping another of the same form. One pass over the
 * text for all forms: a table of first characters, then a check of the
 * second, before a match is tried.
 */
export const spans = (text: string, forms: ReadonlyArray<Form>): Array<Span> => {
  const out: Array<Span> = []
  // Up to 32 forms share one table of first characters (a bit per form).
  for (let from = 0; from < forms.length; from += 32) {
    const machines = forms.slice(from, from + 32).map(machine)
    const table = new Uint32Array(65536)
    machines.forEach((m, i) => {
      for (let k = 0; k < m.first.length; k++) table[m.first.charCodeAt(k)]! |= 1 << i
    })
    const free = machines.map(() => 0)
    for (let s = 0; s < text.length; s++) {
      const mask = table[text.charCodeAt(s)]!
      if (mask === 0) continue
      machines.forEach((m, i) => {
        if ((mask & (1 << i)) === 0 || s < free[i]! || (m.second !== undefined && !m.second.has(text[s + 1] ?? "")))
          return
        const end = longestAt(text, s, m)
        if (end > s) {
          out.push([s, end])
          free[i] = end
        }
      })
    }
  }
  return out
}
