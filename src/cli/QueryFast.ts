/**
 * `parley query`'s fast path, its half that runs it (docs/decisions.md#fast-start;
 * docs/startup.md#start-up-of-a-query): the command line as
 * `QueryArgv.parse` understood it, run by the same code as the effect/cli
 * command (`QueryRun.runQuery` on `Live.layer`) and ended the same way
 * (`RunMain`), without loading effect/cli's command tree. It runs from a
 * script of its own (`dist/parley-query.cjs`, as `ReadingRun.ts` does,
 * through V8's code cache: `layers/file/CodeCache.ts`): in the shared build
 * a turn loaded its code from 98 chunks cut along every other command's
 * lines.
 *
 * @example
 * ```ts
 * import { parse } from "./QueryArgv.ts"
 * import { run } from "./QueryFast.ts"
 * const line = parse(process.argv.slice(2))
 * if (line !== undefined) run(line)
 * ```
 */
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Urandom from "../layers/file/Urandom.ts"
import * as Stdin from "../layers/file/Stdin.ts"
import * as Query from "../programs/Query.ts"
import { storageOf } from "./AskFast.ts"
import * as Live from "./Live.ts"
import type { QueryLine } from "./QueryArgv.ts"
import { runQuery } from "./QueryRun.ts"
import * as PlatformLayer from "./PlatformLayer.ts"
import { main, persistOnBrokenStdout } from "./RunMain.ts"

/** `--script`, else $PARLEY_SCRIPT (the flag's fallback), absolute so a printed command works from anywhere (as `ScriptFlag.scriptPath`). */
const scriptOf = (line: QueryLine): string | undefined => {
  const file = line.script ?? process.env["PARLEY_SCRIPT"]
  return file === undefined || file === "" ? undefined : path.resolve(file)
}

/** `Query.Target` of the line's plain target. */
const targetOf = (line: QueryLine): Query.Target =>
  line.target._tag === "Id"
    ? Query.Target.Id({ id: line.target.id })
    : line.target._tag === "New"
      ? Query.Target.New()
      : Query.Target.MostRecent()

/** Runs `line` to this process's exit code. */
export const run = (line: QueryLine): void => {
  // Event ids from /dev/urandom: Web Crypto's first use loads Node's whole crypto stack (EventId.useRandomSource).
  Urandom.useForEventIds()
  const at = storageOf(line)
  const program = !("dir" in at)
    ? Effect.fail(at)
    : Effect.gen(function* () {
        // As the command: a message left out is read from stdin, unless the turn is resumed or dropped.
        const fromStdin =
          line.message === undefined && !line.continueTurn && !line.discardTurn ? yield* Stdin.message : undefined
        if (line.persistOnSigpipe) persistOnBrokenStdout()
        const live = Live.layer({
          storage: at.dir,
          storageGiven: at.given,
          config: at.configGiven,
          model: line.model,
          script: scriptOf(line),
          detachedPolicy: line.detachedPolicy
        })
        yield* runQuery({
          message: line.message ?? fromStdin,
          target: targetOf(line),
          continueTurn: line.continueTurn,
          discardTurn: line.discardTurn,
          format: line.format
        }).pipe(Effect.provide(live))
      })
  // No effect/cli usage errors here: a command line it would have refused never gets this far.
  main(program.pipe(Effect.provide(PlatformLayer.layer)), () => false)
}
