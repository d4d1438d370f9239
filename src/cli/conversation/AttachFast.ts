/**
 * `parley conversation attach`'s fast path, its half that runs it
 * (docs/decisions.md#fast-start, start-up): the command line as
 * `AttachArgv.parse` understood it, run by the same code as the effect/cli
 * command (`AttachRun`) and ended the same way (`RunMain`), without loading
 * effect/cli's command tree.
 *
 * @example
 * ```ts
 * import { parse } from "./AttachArgv.ts"
 * import { run } from "./AttachFast.ts"
 * const line = parse(process.argv.slice(2))
 * if (line !== undefined) run(line)
 * ```
 */
import * as PlatformLayer from "../PlatformLayer.ts"
import * as Effect from "effect/Effect"
import { storageOf } from "../AskFast.ts"
import { main } from "../RunMain.ts"
import type { AttachLine } from "./AttachArgv.ts"
import * as AttachRun from "./AttachRun.ts"

/** Runs `line` to this process's exit code. */
export const run = (line: AttachLine): void => {
  const at = storageOf(line)
  const program = !("dir" in at)
    ? Effect.fail(at)
    : AttachRun.attach({
        id: line.id,
        storage: at.dir,
        storageGiven: at.given,
        configGiven: at.configGiven,
        ...(line.tail !== undefined ? { tail: line.tail } : {})
      })
  // No effect/cli usage errors here: a command line it would have refused never gets this far.
  main(program.pipe(Effect.provide(PlatformLayer.layer)), () => false)
}
