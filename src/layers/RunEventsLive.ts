/**
 * The run-event hub (docs/serve.md#live-view): numbered events, the run's last events
 * kept for followers that reconnect (RFD 027: "a late client sees the turn
 * whole", within `LiveView.REPLAY`), and one queue per follower.
 *
 * A follower is registered and given the kept events after its cursor in
 * one synchronous step, and publishing is one synchronous step (number,
 * keep, hand to each follower): nothing is missed and nothing is seen
 * twice, whenever a follower arrives. A follower from outside the process
 * (`since`: an attached terminal, the server) may fall `LiveView.BEHIND`
 * behind; past that its queue is dropped and its stream fails with
 * `LiveViewLagged` (the last event it was given), so a client that stopped
 * reading holds neither the run nor the other clients, nor more memory
 * than that bound. The run's own watchers (`events`, `sequenced`: its
 * terminal, its JSON report) are in the process and keep up; they are not
 * bounded.
 *
 * The same hub, fed with numbers from elsewhere (`publishAt`), is what
 * `parley serve` keeps of a run it relays.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Stream from "effect/Stream"
 * import * as RunEventsLive from "parley/layers/RunEventsLive"
 * import * as RunEvent from "parley/domain/run/RunEvent"
 * import { RunEvents } from "parley/services/RunEvents"
 *
 * const program = Effect.gen(function*() {
 *   const hub = yield* RunEvents
 *   yield* hub.publish(RunEvent.make.TextDelta({ text: "hi" }))
 *   yield* hub.publish(RunEvent.make.Stopped({ ending: "completed", incomplete: null }))
 *   return yield* Stream.runCollect(hub.events) // [TextDelta, Stopped]
 * }).pipe(Effect.provide(RunEventsLive.layer))
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as LiveView from "../domain/run/LiveView.ts"
import * as RunEvent from "../domain/run/RunEvent.ts"
import { RunEvents } from "../services/RunEvents.ts"

/** A kept event: its number, and its size for the byte bounds. */
interface Entry extends RunEvent.Sequenced {
  readonly size: number
}

/** One follower: its queue, how much of it arrived live, what it was last given, and why it stopped. */
interface Follower {
  items: Array<Entry>
  /** The first of `items` not taken yet. */
  head: number
  /** How many of `items` (the first) were replayed rather than handed live. */
  replayed: number
  live: number
  liveBytes: number
  last: number
  readonly bound: LiveView.Bound | undefined
  /** The run's `Stopped` is in its queue: nothing more is handed to it. */
  ended: boolean
  lost: LiveView.Lost | undefined
  wake: (() => void) | undefined
  readonly onLost: (() => void) | undefined
}

/** How a follower is opened. */
export interface FollowOptions {
  /** How far it may fall behind (none: the run's own watchers, which keep up). */
  readonly bound?: LiveView.Bound | undefined
  /** Called when it is dropped for falling behind, at once (a consumer blocked on a write is not waiting to pull). */
  readonly onLost?: (() => void) | undefined
}

/** A hub: publish, follow, and what it keeps. */
export interface Hub {
  /** Numbers and hands out one event; the first after a `Stopped` starts a new run. */
  readonly publish: (event: RunEvent.RunEvent) => void
  /** Hands out an event numbered elsewhere (a relay); one already seen is ignored. */
  readonly publishAt: (e: RunEvent.Sequenced) => void
  /** The events after `after` (0: from the first kept), then live, ending after the run's `Stopped`. */
  readonly follow: (after: number, options?: FollowOptions) => Stream.Stream<RunEvent.Sequenced, LiveView.Lost>
  /**
   * The current run's kept events from the first kept, then live (never fails: not bounded, nothing to miss);
   * nothing once the hub is closed.
   */
  readonly whole: Stream.Stream<RunEvent.Sequenced>
  /** The last number handed out (0 before any). */
  readonly latest: () => number
  /** The number of the current run's `Stopped`, once published. */
  readonly ended: () => number | null
  /** A kept event of the current run, found by `test` (the newest first). */
  readonly find: (test: (e: RunEvent.RunEvent) => boolean) => RunEvent.RunEvent | undefined
  /** Ends every follower: with `lost` when given (after what it was handed), else as after a `Stopped`. */
  readonly close: (lost?: (f: { readonly last: number }) => LiveView.Lost) => void
}

/**
 * How many kept events may wait unmeasured. An event's size is needed for
 * the replay's byte bound and for a follower's; nobody following, a tool
 * call's events published in this process ({@link waits}) are measured in
 * a batch once this many wait (at most one fewer waits), or as a follower
 * opens or `find` looks (each sees what the bounds keep): a run that ends sooner
 * measures none (a look-up, or a `JSON.stringify`, of a call's arguments
 * for each of its four to six events, in the coordinator bench). What they
 * hold past the byte bound meanwhile is their own few fields: the
 * arguments, question, answer and result in them are the conversation's
 * own objects, recorded in its events. Every other event, and every event
 * a relay hands on (`publishAt`: decoded, its own copy), is measured as it
 * comes.
 */
const UNMEASURED = 8192

/** A tool call's events, whose sizes may wait ({@link UNMEASURED}). */
const waits = (event: RunEvent.RunEvent): boolean => {
  switch (event._tag) {
    case "ToolStarted":
    case "ToolFinished":
    case "QuestionOpened":
    case "QuestionClosed":
      return true
    default:
      return false
  }
}

/**
 * The kept events: a window over parallel arrays (events, numbers, sizes,
 * and the entry made for each once a follower needed one), trimmed by count
 * and bytes. No object is made per kept event until a follower needs it: a
 * run keeps every event it publishes (six per tool call in the coordinator
 * bench), and a wrapper for each was one more object every young-generation
 * collection copied until the run ended (docs/benchmarks.md#coordinator).
 * An {@link Entry}, once made (handed live, or replayed), is kept and handed
 * again: a server caches each event's SSE frame on it
 * (`layers/serve/LiveFrames.ts`), for every client that follows. A size may
 * wait to be measured ({@link UNMEASURED}).
 */
class Ring {
  private events: Array<RunEvent.RunEvent> = []
  private seqs: Array<number> = []
  /** -1: not measured yet. */
  private sizes: Array<number> = []
  private entries: Array<Entry | undefined> = []
  private start = 0
  /** The bytes of the measured events kept. */
  private bytes = 0
  private unmeasured = 0
  constructor(
    private readonly bound: LiveView.Bound,
    private readonly sizeOf: (event: RunEvent.RunEvent) => number
  ) {}

  get first(): number | undefined {
    return this.start < this.seqs.length ? this.seqs[this.start] : undefined
  }
  get size(): number {
    return this.seqs.length - this.start
  }
  /** Keeps an event (measured or not yet: `undefined`, with the entry made for it when a follower takes it live). */
  push(seq: number, event: RunEvent.RunEvent, size: number | undefined, entry: Entry | undefined): void {
    this.events.push(event)
    this.seqs.push(seq)
    this.sizes.push(size ?? -1)
    this.entries.push(entry)
    if (size === undefined) {
      if (++this.unmeasured >= UNMEASURED) this.measure()
    } else this.bytes += size
    this.trim()
  }
  /** Measures what waits to be, and trims to the bounds: what is kept then is what measuring each event as it came would keep. */
  settle(): void {
    if (this.unmeasured === 0) return
    this.measure()
    this.trim()
  }
  private trim(): void {
    // The newest is kept whatever its size: a follower that reconnects at once still gets it.
    while (this.size > 1 && (this.size > this.bound.events || this.bytes > this.bound.bytes)) {
      const dropped = this.sizes[this.start]!
      if (dropped === -1) this.unmeasured--
      else this.bytes -= dropped
      // Freed now, not when the arrays are compacted.
      this.events[this.start] = undefined as never
      this.entries[this.start++] = undefined
    }
    if (this.start > 1024 && this.start * 2 > this.seqs.length) {
      this.events = this.events.slice(this.start)
      this.seqs = this.seqs.slice(this.start)
      this.sizes = this.sizes.slice(this.start)
      this.entries = this.entries.slice(this.start)
      this.start = 0
    }
  }
  /** Measures the kept events that wait for it. */
  private measure(): void {
    for (let i = this.start; i < this.seqs.length && this.unmeasured > 0; i++) {
      if (this.sizes[i] !== -1) continue
      const size = this.sizeOf(this.events[i]!)
      this.sizes[i] = size
      this.bytes += size
      this.unmeasured--
    }
  }
  clear(): void {
    this.events = []
    this.seqs = []
    this.sizes = []
    this.entries = []
    this.start = 0
    this.bytes = 0
    this.unmeasured = 0
  }
  /** The kept events numbered from `from`, as the entries handed before (made now for those never handed). */
  from(from: number): Array<Entry> {
    const first = this.first
    if (first === undefined) return []
    const out: Array<Entry> = []
    for (let i = this.start + Math.max(0, from - first); i < this.seqs.length; i++) {
      let entry = this.entries[i]
      if (entry === undefined) {
        entry = { seq: this.seqs[i]!, event: this.events[i]!, size: this.sizes[i]! }
        this.entries[i] = entry
      }
      out.push(entry)
    }
    return out
  }
  findLast(test: (e: RunEvent.RunEvent) => boolean): RunEvent.RunEvent | undefined {
    for (let i = this.events.length - 1; i >= this.start; i--) if (test(this.events[i]!)) return this.events[i]
    return undefined
  }
}

/** Waits for the follower's next event (or its end). */
const nextEvent = (f: Follower) =>
  Effect.callback<void>((resume) => {
    f.wake = () => resume(Effect.void)
    return Effect.sync(() => {
      f.wake = undefined
    })
  })

/**
 * The most one pull takes: a follower behind gets larger chunks, not more
 * pulls, but not one larger than this (a chunk is one line on the host's
 * socket, whose reader refuses lines over 16 MiB: a replay of the whole
 * ring in one chunk broke the server's connection).
 */
const CHUNK: LiveView.Bound = { events: 4096, bytes: 512 * 1024 }

/** Takes the next chunk of the follower's queue (the queue is emptied once taken whole). */
const take = (f: Follower): Array<Entry> => {
  let end = f.head
  let bytes = 0
  while (
    end < f.items.length &&
    end - f.head < CHUNK.events &&
    (end === f.head || bytes + f.items[end]!.size <= CHUNK.bytes)
  ) {
    const size = f.items[end]!.size
    bytes += size
    // What it is behind by counts only what arrived live: a replay does not count against it.
    if (end >= f.replayed) {
      f.live--
      f.liveBytes -= size
    }
    end++
  }
  const chunk = f.items.slice(f.head, end)
  if (end === f.items.length) {
    f.items = []
    f.head = 0
    f.replayed = 0
  } else f.head = end
  return chunk
}

/** A follower's stream: its queue, a bounded chunk at each pull. */
const pull = (f: Follower, isClosed: () => boolean, leave: () => void) => {
  const next: Effect.Effect<ReadonlyArray<RunEvent.Sequenced>, LiveView.Lost | Cause.Done> = Effect.suspend(() => {
    if (f.items.length > f.head) {
      const chunk = take(f)
      f.last = chunk[chunk.length - 1]!.seq
      return Effect.succeed(chunk)
    }
    if (f.lost !== undefined) return Effect.fail(f.lost)
    if (f.ended || isClosed()) {
      leave()
      return Cause.done()
    }
    return Effect.flatMap(nextEvent(f), () => next)
  })
  return next as Effect.Effect<readonly [RunEvent.Sequenced, ...Array<RunEvent.Sequenced>], LiveView.Lost | Cause.Done>
}

/** How long a bounded follower's wake-up waits for more events to hand it at once (less than a frame). */
const COALESCE_MS = 10

/** What a stream made by {@link opening} opens when it runs; emptied when its hub closes. */
interface Opens<A> {
  open: (() => Stream.Stream<A>) | undefined
}

/**
 * A stream that runs what `opens` opens, or nothing once it was emptied. Made here, outside the hub, so it holds
 * `opens` and nothing else of the hub: every Effect stream keeps its step in an object made by `Object.create` and
 * given a function, and V8's young-generation collections keep such a function, and all it holds, alive after its
 * last use until a full collection. A hub's stream made with every run (`whole`, read or not) held the hub and every
 * event it kept past the run (docs/benchmarks.md#coordinator).
 */
const opening = <A>(opens: Opens<A>): Stream.Stream<A> => Stream.suspend(() => opens.open?.() ?? Stream.empty)

/** A hub keeping `replay` for followers that reconnect. */
export const makeHub = (replay: LiveView.Bound = LiveView.REPLAY): Hub => {
  // Per-hub sizes of what a run's events share (a call's arguments, a question): each measured once.
  const sizes = new LiveView.Sizes()
  const ring = new Ring(replay, (event) => LiveView.sizeOf(event, sizes))
  const followers = new Set<Follower>()
  let latest = 0
  let runFirst = 1
  let ended: number | null = null
  let closed = false

  const wake = (f: Follower) => {
    const w = f.wake
    f.wake = undefined
    w?.()
  }
  // Followers from outside the process are woken once per `COALESCE_MS`, not once per event: a
  // run streams its reply a few characters an event, and a hundred watchers each woken, pulled
  // and written to for every one of them is a hundred times the garbage (V8's young generation
  // grew by tens of MB under it); a watcher sees the same events, in larger chunks, a frame later.
  const asleep = new Set<Follower>()
  let scheduled = false
  const flush = () => {
    // Taken out first: a follower woken here that waits again at once is held for the next flush.
    const woken = [...asleep]
    asleep.clear()
    scheduled = false
    for (const f of woken) wake(f)
  }
  const wakeSoon = (f: Follower) => {
    if (f.wake === undefined) return
    asleep.add(f)
    if (scheduled) return
    scheduled = true
    setTimeout(flush, COALESCE_MS)
  }
  const drop = (f: Follower, lost: LiveView.Lost) => {
    followers.delete(f)
    f.items = []
    f.head = 0
    f.replayed = 0
    f.lost = lost
    wake(f)
    f.onLost?.()
  }
  const hand = (f: Follower, e: Entry) => {
    const bound = f.bound
    const over = bound !== undefined && (f.live >= bound.events || f.liveBytes + e.size > bound.bytes)
    // Only a follower that is not waiting for its next events is behind: one that waits while its
    // wake-up is held back (`wakeSoon`) has taken all it was given, and is woken now instead.
    if (over && f.wake === undefined) return drop(f, new LiveView.LiveViewLagged({ last: f.last }))
    f.items.push(e)
    f.live++
    f.liveBytes += e.size
    if (RunEvent.isEnd(e.event)) {
      f.ended = true
      followers.delete(f)
      return wake(f)
    }
    if (bound === undefined || over) wake(f)
    else wakeSoon(f)
  }
  // Numbered here (`local`) or elsewhere: nothing is made for an event nobody follows, and a tool call's event
  // published here is not measured yet (the coordinator publishes six per call); an entry for those who do, one
  // for all of them.
  const keep = (seq: number, event: RunEvent.RunEvent, local: boolean) => {
    if (seq <= latest) return
    // The first event after a Stopped starts a new run: what is kept is only that run's.
    if (ended !== null) {
      ring.clear()
      sizes.clear()
      runFirst = seq
      ended = null
    }
    latest = seq
    if (RunEvent.isEnd(event)) ended = seq
    if (followers.size === 0)
      return ring.push(seq, event, local && waits(event) ? undefined : LiveView.sizeOf(event, sizes), undefined)
    const entry: Entry = { seq, event, size: LiveView.sizeOf(event, sizes) }
    ring.push(seq, event, entry.size, entry)
    for (const f of followers) hand(f, entry)
  }
  const publishAt = (e: RunEvent.Sequenced) => keep(e.seq, e.event, false)

  /** Registers a follower from `from` (a number of the current run), or says why it cannot. */
  const register = (from: number, options: FollowOptions): Follower | LiveView.LiveViewGone => {
    const after = from - 1
    const first = ring.first ?? latest + 1
    // Nothing follows in this run, what follows is no longer kept, or the cursor is past anything published.
    if ((ended !== null && from > ended) || from < first || from > latest + 1)
      return new LiveView.LiveViewGone({ after, latest, ended })
    const items = ring.from(from)
    const f: Follower = {
      items,
      head: 0,
      replayed: items.length,
      live: 0,
      liveBytes: 0,
      last: after,
      bound: options.bound,
      ended: ended !== null,
      lost: undefined,
      wake: undefined,
      onLost: options.onLost
    }
    if (!f.ended && !closed) followers.add(f)
    return f
  }

  const firstKept = () => Math.max(runFirst, ring.first ?? latest + 1)
  const open = (from: () => number, options: FollowOptions) =>
    Stream.suspend(() => {
      // What a follower is given is what the bounds keep: settled before its cursor is read and checked.
      ring.settle()
      const f = register(from(), options)
      if (f instanceof LiveView.LiveViewGone) return Stream.fail(f)
      const leave = () => void followers.delete(f)
      return Stream.fromPull(Effect.succeed(pull(f, () => closed, leave))).pipe(Stream.ensuring(Effect.sync(leave)))
    })
  // What `whole` opens, until the hub is closed (see `opening`).
  const wholeOpens: Opens<RunEvent.Sequenced> = { open: () => Stream.orDie(open(firstKept, {})) }

  return {
    publish: (event) => keep(latest + 1, event, true),
    publishAt,
    // No cursor (0): from the first event kept; a cursor from an earlier run: from the start of this one.
    follow: (after, options = {}) => open(() => (after === 0 ? firstKept() : Math.max(after + 1, runFirst)), options),
    whole: opening(wholeOpens),
    latest: () => latest,
    ended: () => ended,
    find: (test) => {
      // Among what the bounds keep.
      ring.settle()
      return ring.findLast(test)
    },
    close: (lost) => {
      closed = true
      wholeOpens.open = undefined
      for (const f of [...followers]) {
        followers.delete(f)
        // What it was handed is still given to it; then its stream ends, or fails with `lost`.
        if (lost !== undefined)
          f.lost = lost({ last: f.items.length > f.head ? f.items[f.items.length - 1]!.seq : f.last })
        wake(f)
      }
    }
  }
}

/** A hub; its followers end with the scope. */
export const make: Effect.Effect<RunEvents["Service"], never, Scope.Scope> = Effect.gen(function* () {
  const hub = yield* Effect.acquireRelease(
    Effect.sync(() => makeHub()),
    (hub) => Effect.sync(() => hub.close())
  )
  return RunEvents.of({
    publish: (event) => Effect.sync(() => hub.publish(event)),
    publishUnsafe: hub.publish,
    sequenced: hub.whole,
    events: Stream.map(hub.whole, (e) => e.event),
    since: (after) => hub.follow(after, { bound: LiveView.BEHIND }),
    latest: Effect.sync(hub.latest),
    ended: Effect.sync(hub.ended)
  })
})

/** A fresh hub for each build of the layer. */
export const layer: Layer.Layer<RunEvents> = Layer.effect(RunEvents, make)
