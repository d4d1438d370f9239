/**
 * Where the person is (contract §3 "Interactivity", docs/cli.md#resuming-a-turn-rfd-023):
 * parley is interactive when stdin is a TTY and a terminal can be reached
 * for prompts — stderr when it is a TTY, else `/dev/tty` — whatever stdout
 * is. `parley query … | tee log` still asks the person; the reply goes to
 * stdout, prompts and status to the terminal.
 *
 * `layer` is Effect's `Terminal` service with its output on that terminal:
 * key and line input come from Node's terminal (stdin), everything
 * displayed (prompt frames, the terminal's size) from the reached output.
 *
 * @internal
 * @example
 * ```ts
 * import * as PersonTerminal from "parley/layers/prompt/PersonTerminal"
 * const out = PersonTerminal.reach() // stderr, /dev/tty, or undefined (nobody to ask)
 * ```
 */
import * as fs from "node:fs"
import * as tty from "node:tty"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { badArgument } from "effect/PlatformError"
import * as Scope from "effect/Scope"
import * as Terminal from "effect/Terminal"
import type * as Prompt from "effect/cli/Prompt"
import { isTerminal } from "../file/IsTerminal.ts"
import * as TerminalPromptBackend from "./TerminalPromptBackend.ts"

let reached: tty.WriteStream | null | undefined

/** Opens `/dev/tty` for writing, if this process has a controlling terminal. */
const openTty = (): tty.WriteStream | null => {
  try {
    const fd = fs.openSync("/dev/tty", "w")
    if (!tty.isatty(fd)) {
      fs.closeSync(fd)
      return null
    }
    const stream = new tty.WriteStream(fd)
    // Never keep the process alive for this stream.
    stream.unref()
    return stream
  } catch {
    return null
  }
}

/**
 * The terminal prompts go to: stderr when it is a TTY, else `/dev/tty`;
 * `undefined` when stdin is not a TTY or no terminal can be reached.
 */
export const reach = (): tty.WriteStream | undefined => {
  // The descriptor, not process.stdin: making that stream (a pipe's is a socket) costs a run that asks nobody.
  // Asked of the file first (IsTerminal.ts): a run fed a pipe, a file or /dev/null never loads node:tty.
  if (!isTerminal(0)) return undefined
  if (reached === undefined) reached = process.stderr.isTTY === true ? (process.stderr as tty.WriteStream) : openTty()
  return reached ?? undefined
}

/** Whether a person can be asked (contract §3). */
export const isInteractive = (): boolean => reach() !== undefined

/** Writes to the reached terminal (status lines, the resume menu's summary); a no-op without one. */
export const write = (text: string): void => {
  reach()?.write(text)
}

/** Effect's `Terminal` with its output on `out`. */
export const make = (out: tty.WriteStream) =>
  Effect.map(NodeTerminal.make(), (input) =>
    Terminal.make({
      columns: Effect.sync(() => out.columns ?? 0),
      rows: Effect.sync(() => out.rows ?? 0),
      size: input.size,
      readInput: input.readInput,
      readLine: input.readLine,
      display: (text) =>
        Effect.uninterruptible(
          Effect.callback<void, ReturnType<typeof badArgument>>((resume) => {
            out.write(text, (err) =>
              err === null || err === undefined
                ? resume(Effect.void)
                : resume(
                    Effect.fail(
                      badArgument({
                        module: "Terminal",
                        method: "display",
                        description: "Failed to write to the terminal",
                        cause: err
                      })
                    )
                  )
            )
          })
        )
    })
  )

/** The `Terminal` service on the person's terminal (stdin must be a TTY and a terminal reachable). */
export const layer: Layer.Layer<Terminal.Terminal> = Layer.effect(
  Terminal.Terminal,
  Effect.suspend(() => {
    const out = reach()
    return out === undefined ? NodeTerminal.make() : make(out)
  })
)

/**
 * Node's `Terminal` (`NodeTerminal.make`), made when one of its operations is first used, in
 * this layer's scope. Making it builds `process.stdin` and `process.stdout` (Node's streams,
 * net, readline's listeners): a scripted or piped run that never prompts does not pay for
 * them (docs/startup.md#what-a-run-no-longer-makes). For `cli/PlatformLayer.ts`.
 */
export const nodeOnFirstUse: Layer.Layer<Terminal.Terminal> = Layer.effect(
  Terminal.Terminal,
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const made = yield* Effect.cached(Scope.provide(NodeTerminal.make(), scope))
    return Terminal.make({
      columns: Effect.flatMap(made, (t) => t.columns),
      rows: Effect.flatMap(made, (t) => t.rows),
      size: Effect.flatMap(made, (t) => t.size),
      readInput: Effect.flatMap(made, (t) => t.readInput),
      readLine: Effect.flatMap(made, (t) => t.readLine),
      display: (text) => Effect.flatMap(made, (t) => t.display(text))
    })
  })
)

/** The prompts' environment with the person's terminal in it, for the scope's life (its key reader and raw mode are scoped). */
export const context: Effect.Effect<
  Context.Context<Prompt.Environment>,
  never,
  Prompt.Environment | Scope.Scope
> = Effect.gen(function* () {
  return Context.merge(yield* Effect.context<Prompt.Environment>(), yield* Layer.build(layer))
})

/**
 * `TerminalPromptBackend.make` on the person's terminal ({@link context}), for the scope's life. Here, not in
 * TerminalPromptBackend: that module is the library's, and this one loads `@effect/platform-node` (an optional peer).
 */
export const promptBackend = (options: TerminalPromptBackend.Options = {}) =>
  Effect.flatMap(context, (terminal) => TerminalPromptBackend.make(options).pipe(Effect.provideContext(terminal)))
