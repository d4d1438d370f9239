/**
 * `parley ask`'s fast path, its half that runs it (docs/decisions.md#fast-start,
 * start-up): the command line as `AskArgv.parse` understood it, run by the
 * same code as the effect/cli command (`AskRun`, or `AskHook` for
 * `--claude-code-hook`) and ended the same way (`RunMain`), without loading
 * effect/cli's command tree: the question is listed in about the time
 * `conversation ls` takes plus the host's own start.
 *
 * @example
 * ```ts
 * import { parse } from "./AskArgv.ts"
 * import { run } from "./AskFast.ts"
 * const line = parse(process.argv.slice(2))
 * if (line !== undefined) run(line)
 * ```
 */
import * as path from "node:path"
import * as PlatformLayer from "./PlatformLayer.ts"
import * as Effect from "effect/Effect"
import * as Storage from "../domain/storage/Storage.ts"
import { databaseUrlProblem, resolveStorageDir } from "../programs/StorageDir.ts"
import type { AskLine } from "./AskArgv.ts"
import type { CliFailure } from "./CliFailure.ts"
import type { StorageAt } from "./AskRun.ts"
import { main } from "./RunMain.ts"
import { configFileOf } from "../layers/store/StorageStore.ts"
import * as Usage from "./Usage.ts"

/** The storage as `Root.storage` reads it: the flag, else `$PARLEY_STORAGE`, else looked up from here (attach's fast path too). */
export const storageOf = (line: {
  readonly storage: string | undefined
  readonly config: string | undefined
}): StorageAt | CliFailure => {
  const flag = line.storage ?? process.env["PARLEY_STORAGE"]
  const given = flag === undefined || flag === "" ? undefined : flag
  const problem = given === undefined ? undefined : databaseUrlProblem(given)
  if (problem !== undefined) return Usage.failure(["parley"], `--storage ${problem}`)
  const dir = resolveStorageDir({ flag: given, env: {}, cwd: process.cwd() })
  const configGiven = line.config === undefined || line.config === "" ? undefined : path.resolve(line.config)
  return {
    dir,
    where: Storage.of(dir),
    given: given === undefined ? undefined : dir,
    config: configFileOf(dir, configGiven),
    configGiven
  }
}

/** Runs `line` to this process's exit code. */
export const run = (line: AskLine): void => {
  const at = storageOf(line)
  const program = !("dir" in at)
    ? Effect.fail(at)
    : line.flags.claudeCodeHook
      ? Effect.flatMap(
          Effect.promise(() => import("./AskHook.ts")),
          (AskHook) => AskHook.run(line.flags, at)
        )
      : Effect.flatMap(
          Effect.promise(() => import("./AskRun.ts")),
          (AskRun) => AskRun.run(line.flags, at)
        )
  // No effect/cli usage errors here: a command line it would have refused never gets this far.
  main(program.pipe(Effect.provide(PlatformLayer.layer)), () => false)
}
