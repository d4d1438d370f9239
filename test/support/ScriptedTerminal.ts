/**
 * A `Terminal` that replays keystrokes (then EOF) and records every frame it
 * is asked to draw, so prompt tests can "type" and read the screen.
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as Queue from "effect/Queue"
import * as Terminal from "effect/Terminal"

const key = (name: string, input?: string, ctrl = false): Terminal.UserInput => ({
  input: input === undefined ? Option.none() : Option.some(input),
  key: { name, ctrl, meta: false, shift: false }
})

export const Keys = {
  type: (text: string): ReadonlyArray<Terminal.UserInput> => [...text].map((c) => key(c, c)),
  enter: key("return"),
  down: key("down"),
  ctrlC: key("c", undefined, true)
} as const

export const scriptedTerminal = (keys: ReadonlyArray<Terminal.UserInput>) =>
  Effect.gen(function* () {
    const input = yield* Queue.unbounded<Terminal.UserInput, Cause.Done>()
    yield* Queue.offerAll(input, keys)
    yield* Queue.end(input)
    const frames: Array<string> = []
    const terminal = Terminal.make({
      columns: Effect.succeed(80),
      rows: Effect.succeed(24),
      size: Effect.die("size: unused"),
      readInput: Effect.succeed(input),
      readLine: Effect.die("readLine: unused"),
      display: (text) => Effect.sync(() => void frames.push(text))
    })
    const layer = Layer.mergeAll(FileSystem.layerNoop({}), Path.layer, Layer.succeed(Terminal.Terminal, terminal))
    return { layer, frames }
  })

// eslint-disable-next-line no-control-regex
export const plain = (frames: ReadonlyArray<string>) => frames.join("").replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
