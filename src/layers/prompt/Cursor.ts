/**
 * How far the terminal's view of a run has got (docs/decisions.md#one-run-event-stream): the view
 * consumes the run-event stream in its own fiber, and a prompt must not
 * appear before the lines of what happened before it (a question's answer
 * line, a finished tool). A prompt waits until the view has shown every
 * event published so far; with no view watching, nothing waits.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Cursor from "parley/layers/prompt/Cursor"
 * const cursor = Cursor.make()
 * cursor.watching()
 * cursor.advance(3)
 * Effect.runPromise(cursor.reach(3)) // resolves at once
 * ```
 */
import * as Effect from "effect/Effect"

export interface Cursor {
  /** A view started consuming: from now on {@link reach} waits for it. */
  readonly watching: () => void
  /** The view has shown every event up to `seq`. */
  readonly advance: (seq: number) => void
  /** The view stopped (the run is over): nothing waits any more. */
  readonly stopped: () => void
  /** Waits until the view has shown the event `seq` (at once when no view is watching). */
  readonly reach: (seq: number) => Effect.Effect<void>
}

export const make = (): Cursor => {
  let active = false
  let shown = 0
  let waiters: Array<{ readonly seq: number; readonly resume: () => void }> = []
  const release = () => {
    const ready = waiters.filter((w) => !active || w.seq <= shown)
    waiters = waiters.filter((w) => active && w.seq > shown)
    for (const w of ready) w.resume()
  }
  return {
    watching: () => {
      active = true
    },
    advance: (seq) => {
      shown = Math.max(shown, seq)
      release()
    },
    stopped: () => {
      active = false
      release()
    },
    reach: (seq) =>
      Effect.callback<void>((resume) => {
        if (!active || seq <= shown) return resume(Effect.void)
        const waiter = { seq, resume: () => resume(Effect.void) }
        waiters.push(waiter)
        return Effect.sync(() => {
          waiters = waiters.filter((w) => w !== waiter)
        })
      })
  }
}
