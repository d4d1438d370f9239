/**
 * Reading this process's stdin: a message piped to `parley query`, a secret
 * piped to `conversation answer --stdin`, one answer a line for `answer
 * --all`, and Claude Code's hook input (bounded: a larger one is not a
 * hook's).
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Stdin from "parley/layers/file/Stdin"
 * const message = Effect.runPromise(Stdin.message) // undefined at a terminal, or when nothing was piped
 * ```
 */
import * as readline from "node:readline"
import * as Effect from "effect/Effect"

/** Stdin whole, as text. */
const whole = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
})

/** A message piped in, trimmed; `undefined` when stdin is a terminal or holds only blanks. */
export const message: Effect.Effect<string | undefined> = Effect.suspend(() =>
  process.stdin.isTTY === true
    ? Effect.succeed(undefined)
    : Effect.map(whole, (text) => (text.trim() === "" ? undefined : text.trim()))
)

/** A secret piped in: stdin whole, one trailing newline dropped. */
export const secret: Effect.Effect<string> = Effect.map(whole, (text) => text.replace(/\r?\n$/, ""))

/** Stdin's lines, read as they are needed, for the scope's life. */
export const lines = Effect.acquireRelease(
  Effect.sync(() => {
    const read = readline.createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]()
    return { next: Effect.promise(() => read.next()), close: () => read.return?.() }
  }),
  (reader) => Effect.promise(async () => void (await reader.close()))
)

/** Stdin whole, or `""` once it is larger than `max` bytes (it is then closed). */
export const bounded = (max: number): Effect.Effect<string> =>
  Effect.callback<string>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const done = () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    process.stdin.on("data", (d: Buffer) => {
      size += d.length
      if (size > max) {
        process.stdin.destroy()
        return resume(Effect.succeed(""))
      }
      chunks.push(d)
    })
    process.stdin.once("end", done)
    process.stdin.once("error", done)
  })
