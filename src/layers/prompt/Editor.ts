/**
 * `e` at the incomplete-turn menu (RFD 023 "edit"): the pending query opens
 * in `$VISUAL` / `$EDITOR` (else `vi`); a call's arguments open the same way
 * (`run = "edit"`, `e` at the permission prompt), in `ARGUMENTS.json`. The edit counts only when the editor
 * exits 0 and leaves a non-empty file (docs/cli.md#resuming-a-turn-rfd-023, as `git commit`
 * does); otherwise the pending query is kept exactly as it was and nothing
 * is sent.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Editor from "parley/layers/prompt/Editor"
 * const program = Effect.gen(function* () {
 *   return yield* Editor.edit("the pending query")
 * })
 * // { _tag: "Edited", text } | { _tag: "Kept", why: "the editor exited with status 1" }
 * ```
 */
import { type SpawnSyncReturns, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ToolEnv from "../../domain/tool/ToolEnv.ts"

export type Edit = { readonly _tag: "Edited"; readonly text: string } | { readonly _tag: "Kept"; readonly why: string }

/** The editor command: `$VISUAL`, else `$EDITOR`, else `vi`. */
export const editorOf = (env: Readonly<Record<string, string | undefined>>): string =>
  [env["VISUAL"], env["EDITOR"]].find((e) => e !== undefined && e.trim() !== "") ?? "vi"

/**
 * Resolves once the event loop has polled again: two check phases, so a
 * whole poll phase lies between. A signal that arrived while `spawnSync`
 * blocked sits in libuv's signal pipe until a poll reads it; only then do
 * the `SIGINT` listeners run.
 */
const afterPoll = Effect.callback<void>((resume) => {
  setImmediate(() => setImmediate(() => resume(Effect.void)))
})

/**
 * Runs `f` with parley deaf to SIGINT, as git is while its editor runs: a
 * Ctrl-C typed at an editor that does not take the terminal (`code --wait`)
 * is the editor's to act on, and its exit says what came of the edit. The
 * signal reaches parley too (one process group) but is dispatched only
 * after `spawnSync` returns, so the listeners come back only once the loop
 * has polled, and, when `heard(result)` says a Ctrl-C ended the editor,
 * once the ignoring listener has had it (at most 1 s), not after a guessed
 * delay: a timer that fires before the poll (a 30 ms one can, under load)
 * hands the editor's Ctrl-C to parley's own listener. The ignoring listener is added
 * before the others leave, so SIGINT is never unhandled.
 */
const deafToSigint = <A>(f: () => A, heard: (result: A) => boolean): Effect.Effect<A> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const sigint = Deferred.makeUnsafe<void>()
      const ignore = () => void Deferred.doneUnsafe(sigint, Effect.void)
      process.on("SIGINT", ignore)
      const saved = process.listeners("SIGINT").filter((l) => l !== ignore)
      for (const l of saved) process.removeListener("SIGINT", l)
      return { ignore, saved, sigint }
    }),
    () => Effect.sync(f),
    ({ ignore, saved, sigint }, exit) =>
      afterPoll.pipe(
        Effect.andThen(
          exit._tag === "Success" && heard(exit.value)
            ? Effect.timeoutOption(Deferred.await(sigint), "1 second")
            : Effect.void
        ),
        Effect.andThen(
          Effect.sync(() => {
            for (const l of saved) process.on("SIGINT", l as NodeJS.SignalsListener)
            process.removeListener("SIGINT", ignore)
          })
        )
      )
  )

/**
 * Runs `f` with the terminal in its normal (cooked) mode, then puts the mode
 * back: the key prompt that chose `e` leaves raw mode on for a few
 * milliseconds after it ends (effect's terminal releases it when idle), and
 * `spawnSync` blocks the event loop before that — an editor that does not
 * set the mode itself would get no echo, no line editing and no Ctrl-C.
 */
const cooked = <A>(f: () => A): A => {
  const stdin = process.stdin
  const raw = stdin.isTTY === true && stdin.isRaw
  if (raw) stdin.setRawMode(false)
  try {
    return f()
  } finally {
    if (raw) stdin.setRawMode(true)
  }
}

/** Opens `text` in the editor and says what came of it. */
export const edit = (
  text: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  file: string = "QUERY_MESSAGE.md"
): Effect.Effect<Edit> =>
  deafToSigint(
    () => runEditor(text, env, file),
    (r) => r.signal === "SIGINT"
  ).pipe(Effect.map((r) => r.edit))

/** {@link edit} of `text` in a file named `file`: the saved text, or `undefined` when the edit did not count. */
export const saved = (text: string, file: string): Effect.Effect<string | undefined> =>
  Effect.map(edit(text, process.env, file), (result) => (result._tag === "Edited" ? result.text : undefined))

/** The editor's run: what came of the edit, and the signal that ended the editor, if one did. */
const runEditor = (
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  name: string
): { readonly edit: Edit; readonly signal: NodeJS.Signals | null } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-edit-"))
  try {
    // The file's name only: the directory is this edit's own.
    const file = path.join(dir, path.basename(name))
    fs.writeFileSync(file, text, { mode: 0o600 })
    const editor = editorOf(env)
    // Through the shell, so `EDITOR="code --wait"` works; the file is "$1", never interpolated.
    const run = cooked(() =>
      spawnSync("sh", ["-c", `${editor} "$1"`, "sh", file], {
        stdio: "inherit",
        // The editor (and its plugins) is a program like a tool: parley's own variables stay with parley.
        env: ToolEnv.withoutParleys(process.env)
      })
    )
    return { edit: outcomeOf(run, editor, file), signal: run.signal }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** What came of the edit: it counts only when the editor exited 0 and left a non-empty file. */
const outcomeOf = (run: SpawnSyncReturns<Buffer>, editor: string, file: string): Edit => {
  if (run.error !== undefined)
    return { _tag: "Kept", why: `the editor (${editor}) could not be started: ${run.error.message}` }
  if (run.status !== 0) {
    return {
      _tag: "Kept",
      why:
        run.status === null
          ? `the editor (${editor}) was stopped by ${run.signal}`
          : `the editor (${editor}) exited with status ${run.status}`
    }
  }
  const edited = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trimEnd() : ""
  return edited.trim() === "" ? { _tag: "Kept", why: "the edited query is empty" } : { _tag: "Edited", text: edited }
}
