/**
 * Waits, polling every 5 ms for at most 15 s, until `ready` holds: a test
 * interrupts a run at a state, never after a guessed delay (which loses the
 * race on a loaded machine). Dies naming `what` if it never does.
 */
import * as Effect from "effect/Effect"

export const until = <R>(what: string, ready: Effect.Effect<boolean, never, R>): Effect.Effect<void, never, R> =>
  Effect.gen(function* () {
    for (let i = 0; !(yield* ready); i++) {
      if (i === 3000) return yield* Effect.die(`${what} never happened (15 s)`)
      yield* Effect.sleep("5 millis")
    }
  })
