/**
 * The one home of request/response pairing (docs/decisions.md#one-home-for-each-stream-rule; RFD 082's
 * turn-scoped pairing, jp-reference §4.4). `Sanitize`, `IncompleteTurn` and
 * `TurnAppend` all pair through a {@link Pairer}, so what sanitize keeps, what
 * a resumed turn reports as pending and what validated append accepts cannot
 * drift apart.
 *
 * The rule: tool calls (`tool_call_request` / `tool_call_response`) and
 * inquiries (`inquiry_request` / `inquiry_response`) are paired separately,
 * per id, first in first out: a response closes the earliest still-open
 * request with its id. A response with no open request is an orphan, either
 * `Unrequested` (no request with its id so far) or `Exhausted` (every such
 * request already has its response). Pairing is scoped to a turn: the caller
 * calls {@link Pairer.reset} where its turn ends (the pairer does not act on
 * `turn_start`, because `TurnAppend` honours only a batch's leading one).
 *
 * For count questions this agrees with JP's count-based `TurnMut::build`
 * (a response is accepted while requests outnumber responses) on every turn
 * that holds no orphan; on a turn that does, an orphan never uses up a later
 * request, as in `sanitize`.
 *
 * @example
 * ```ts
 * import * as Pairing from "parley/domain/stream/Pairing"
 * const pairer = Pairing.make<number>()
 * import type { ChatRequest, ChatResponse, ConfigDelta, InquiryRequest, InquiryResponse, StreamEntry, ToolCallRequest, ToolCallResponse, TurnStart } from "parley"
 * declare const toolCall: ToolCallRequest, toolResult: ToolCallResponse
 * pairer.step(toolCall, 0)     // { _tag: "Opened", kind: "tool" }
 * pairer.step(toolResult, 1)   // { _tag: "Closed", kind: "tool", request: 0 }
 * pairer.step(toolResult, 2)   // { _tag: "Exhausted", kind: "tool", id: "call_1" }
 * ```
 *
 * @since 0.1.0
 */
import type { StreamEntry } from "../event/ConversationEvent.ts"

/** The two independently paired kinds: tool calls and inquiries. */
export type PairKind = "tool" | "inquiry"

/** What one entry did to the pairing (the outcome of {@link Pairer.step}). */
export type Step<A> =
  /** Not a request or a response (chat events, `turn_start`, config deltas…). */
  | { readonly _tag: "Unpaired" }
  /** A request, now open. */
  | { readonly _tag: "Opened"; readonly kind: PairKind }
  /** A response that closes the request recorded with `request`. */
  | { readonly _tag: "Closed"; readonly kind: PairKind; readonly request: A }
  /** A response whose id has no request in the turn so far. */
  | { readonly _tag: "Unrequested"; readonly kind: PairKind; readonly id: string }
  /** A response whose id's requests in the turn all have their responses. */
  | { readonly _tag: "Exhausted"; readonly kind: PairKind; readonly id: string }

/** The two orphan outcomes: a response that closes nothing. */
export type Orphan = Extract<Step<never>, { readonly _tag: "Unrequested" | "Exhausted" }>

/** True for the two orphan outcomes. */
export const isOrphan = <A>(step: Step<A>): step is Extract<Step<A>, { readonly _tag: "Unrequested" | "Exhausted" }> =>
  step._tag === "Unrequested" || step._tag === "Exhausted"

const UNPAIRED = { _tag: "Unpaired" } as const
const OPENED_TOOL = { _tag: "Opened", kind: "tool" } as const
const OPENED_INQUIRY = { _tag: "Opened", kind: "inquiry" } as const

/** What {@link Queues.respond} gives when no request of the id is open. */
const NONE: unique symbol = Symbol("parley/pairing/none")

/** The open requests of an id that had two or more at once, oldest first (`items[head..]`). */
class Many<A> {
  constructor(
    readonly items: Array<A>,
    public head: number
  ) {}
}

/** An id requested before with none of its requests open now: shared, never changed (replaced on a request). */
const DRAINED = new Many<never>([], 0)

/**
 * One id's open requests: its one open request's value itself (almost every
 * id is requested once and answered once: nothing is made for it), or
 * several (none: `DRAINED`). A value may be `undefined` itself: an absent id
 * is told by `has`.
 */
type Slot<A> = A | Many<A>

/**
 * Per id queues of one kind, optionally read through a base it never modifies.
 * A slot per id and no object for the common one: a queue object and its
 * array for each request, kept for the whole turn, were work for every
 * young-generation collection in a turn of many questions
 * (docs/benchmarks.md#coordinator).
 */
class Queues<A> {
  private readonly slots = new Map<string, Slot<A>>()
  /** Per id, how many of the base's open requests this layer has closed. */
  private readonly taken = new Map<string, number>()

  constructor(private base: Queues<A> | undefined) {}

  open(id: string): number {
    return this.baseLeft(id) + this.own(id)
  }

  /** The `k`-th open request of `id` (0 = oldest); `k < open(id)`. */
  nth(id: string, k: number): A {
    const left = this.baseLeft(id)
    if (k < left) return this.base!.nth(id, (this.taken.get(id) ?? 0) + k)
    const slot = this.slots.get(id)
    // Not several: the slot is the one open request's value (`k < open(id)`).
    return slot instanceof Many ? slot.items[slot.head + k - left]! : slot!
  }

  requested(id: string): boolean {
    return this.slots.has(id) || (this.base?.requested(id) ?? false)
  }

  request(id: string, value: A): void {
    const slot = this.slots.get(id)
    if (slot === DRAINED || !this.holds(id, slot)) this.slots.set(id, value)
    else if (slot instanceof Many) slot.items.push(value)
    else this.slots.set(id, new Many([slot!, value], 0))
  }

  /** Closes the oldest open request of `id`: its value, or `NONE` when none is open. */
  respond(id: string): A | typeof NONE {
    const left = this.baseLeft(id)
    if (left > 0) {
      const taken = this.taken.get(id) ?? 0
      this.taken.set(id, taken + 1)
      return this.base!.nth(id, taken)
    }
    const slot = this.slots.get(id)
    if (slot instanceof Many) {
      if (slot.head === slot.items.length) return NONE
      const value = slot.items[slot.head++]!
      // Drained: only the id is kept, so a long turn keeps only its open requests.
      if (slot.head === slot.items.length) this.slots.set(id, DRAINED)
      return value
    }
    if (!this.holds(id, slot)) return NONE
    this.slots.set(id, DRAINED)
    return slot!
  }

  /** Every open request, per id in first-request order, oldest first within an id. */
  openValues(): Array<A> {
    const out: Array<A> = []
    for (const id of this.ids()) for (let k = 0, n = this.open(id); k < n; k++) out.push(this.nth(id, k))
    return out
  }

  reset(): void {
    this.slots.clear()
    this.taken.clear()
    this.base = undefined
  }

  private ids(): Set<string> {
    const ids = this.base === undefined ? new Set<string>() : this.base.ids()
    for (const id of this.slots.keys()) ids.add(id)
    return ids
  }

  /** How many of `id`'s requests this layer holds open. */
  private own(id: string): number {
    const slot = this.slots.get(id)
    if (slot instanceof Many) return slot.items.length - slot.head
    return this.holds(id, slot) ? 1 : 0
  }

  /** Whether `slot`, read for `id`, is there: a value may be `undefined` itself. */
  private holds(id: string, slot: Slot<A> | undefined): boolean {
    return slot !== undefined || this.slots.has(id)
  }

  private baseLeft(id: string): number {
    return this.base === undefined ? 0 : this.base.open(id) - (this.taken.get(id) ?? 0)
  }
}

/**
 * Incremental FIFO pairing of one turn. Each request is recorded with a
 * value of the caller's choosing (an index, or nothing), which
 * the response that closes it returns.
 */
export class Pairer<A> {
  private constructor(
    private readonly tools: Queues<A>,
    private readonly inquiries: Queues<A>
  ) {}

  /** @internal use {@link make}. */
  static make<A>(base?: Pairer<A>): Pairer<A> {
    return new Pairer(new Queues(base?.tools), new Queues(base?.inquiries))
  }

  /**
   * Pairs one entry: records a request with `value`, or closes the oldest
   * open request of a response's id. Other entries (`turn_start` included)
   * change nothing.
   */
  step(e: StreamEntry, value: A): Step<A> {
    switch (e.type) {
      case "tool_call_request":
        this.tools.request(e.id, value)
        return OPENED_TOOL
      case "inquiry_request":
        this.inquiries.request(e.id, value)
        return OPENED_INQUIRY
      case "tool_call_response":
        return Pairer.close("tool", this.tools, e.id)
      case "inquiry_response":
        return Pairer.close("inquiry", this.inquiries, e.id)
      default:
        return UNPAIRED
    }
  }

  /**
   * The orphan outcome {@link step} would give `e`, without recording
   * anything (`undefined` when `e` would pair or is not a response): a
   * one-entry append is checked this way, without a tentative pairer.
   */
  orphan(e: StreamEntry): Orphan | undefined {
    switch (e.type) {
      case "tool_call_response":
        return Pairer.orphanIn("tool", this.tools, e.id)
      case "inquiry_response":
        return Pairer.orphanIn("inquiry", this.inquiries, e.id)
      default:
        return undefined
    }
  }

  /** How many requests of `kind` with `id` are open. */
  openCount(kind: PairKind, id: string): number {
    return this.queuesOf(kind).open(id)
  }

  /** The values of the open requests of `kind` (per id in first-request order, oldest first). */
  open(kind: PairKind): Array<A> {
    return this.queuesOf(kind).openValues()
  }

  /** Starts a new turn: forgets every request (and, for a tentative pairer, its base). */
  reset(): void {
    this.tools.reset()
    this.inquiries.reset()
  }

  /**
   * A pairer that starts from this one's state and records its own steps
   * apart, leaving this one untouched: checking a batch costs O(batch)
   * however long the turn is, and a rejected batch is simply dropped.
   * This pairer must not change while the tentative one is in use.
   */
  tentative(): Pairer<A> {
    return Pairer.make(this)
  }

  private queuesOf(kind: PairKind): Queues<A> {
    return kind === "tool" ? this.tools : this.inquiries
  }

  private static close<A>(kind: PairKind, queues: Queues<A>, id: string): Step<A> {
    const closed = queues.respond(id)
    if (closed !== NONE) return { _tag: "Closed", kind, request: closed }
    return Pairer.unpairedResponse(kind, queues, id)
  }

  private static orphanIn<A>(kind: PairKind, queues: Queues<A>, id: string): Orphan | undefined {
    return queues.open(id) > 0 ? undefined : Pairer.unpairedResponse(kind, queues, id)
  }

  /** Why a response with no open request is an orphan. */
  private static unpairedResponse<A>(kind: PairKind, queues: Queues<A>, id: string): Orphan {
    return queues.requested(id) ? { _tag: "Exhausted", kind, id } : { _tag: "Unrequested", kind, id }
  }
}

/** A pairer with no open request (the start of a turn). */
export const make = <A>(): Pairer<A> => Pairer.make<A>()
