/**
 * The reading commands' fast path, its half that runs them (docs/decisions.md#fast-start,
 * start-up): `conversation ls` and `conversation print` as understood by
 * `ReadingArgv.parse` (a listing `conversation/LsFast.ts` declined: the common one runs without
 * Effect), run by the same code as their effect/cli commands
 * (`LsRun`, `PrintRun`) and ended the same way (`RunMain`), without loading
 * effect/cli or anything of the query path.
 *
 * The CLI build (`scripts/build.mjs`) bundles this module and what it loads
 * as a script of its own (`dist/parley-reading.cjs`, run through V8's code
 * cache: `layers/file/CodeCache.ts`): chunks shared with the rest of the
 * CLI would carry every part of Effect the other commands use, and Node
 * would evaluate all of it before listing anything.
 *
 * @example
 * ```ts
 * import { parse } from "./ReadingArgv.ts"
 * import { run } from "./ReadingRun.ts"
 * const reading = parse(process.argv.slice(2))
 * if (reading !== undefined) run(reading)
 * ```
 */
import * as Effect from "effect/Effect"
import { list } from "./conversation/LsRun.ts"
import type { Reading } from "./ReadingArgv.ts"
import { storageOf } from "./ReadingStorage.ts"
import { main } from "./RunMain.ts"

/** Runs `reading` to this process's exit code. */
export const run = (reading: Reading): void => {
  const storage = storageOf(reading.storage)
  if ("problem" in storage) {
    // As the full command line says it (the usage words load only on this path).
    const failure = Effect.flatMap(
      Effect.promise(() => import("./Usage.ts")),
      (Usage) => Effect.fail(Usage.failure(["parley"], `--storage ${storage.problem}`))
    )
    return main(failure, () => false)
  }
  // Listing is this module's own; printing loads its code when asked, so listing never loads the renderers.
  main(
    reading._tag === "Ls"
      ? list({ archived: reading.archived, format: reading.format }, storage)
      : Effect.flatMap(
          Effect.promise(() => import("./conversation/PrintRun.ts")),
          ({ printConversation }) =>
            printConversation({ id: reading.id, format: reading.format, output: reading.output }, storage)
        ),
    // There is no effect/cli here: a command line it would have refused never gets this far.
    () => false
  )
}
