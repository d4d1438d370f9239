/**
 * The reading commands' entry (issue 28, start-up): `conversation ls` and
 * `conversation print` on a plain command line run from here, without
 * effect/cli or anything of the query path; any other command line is
 * declined and goes to the full CLI (`Run.ts`).
 *
 * The CLI build (`scripts/build.mjs`) bundles this module and what it loads
 * on its own (`dist/parley-reading.mjs`): chunks shared with the rest of the
 * CLI would carry every part of Effect the other commands use, and Node
 * would evaluate all of it before listing anything. Deciding costs no
 * Effect: `ReadingArgv` is plain code.
 *
 * @example
 * ```ts
 * import { start } from "./Reading.ts"
 * const handled = await start(["conversation", "ls", "--format", "json"])
 * if (!handled) {
 *   // the full command line takes it
 * }
 * ```
 */
import { parse } from "./ReadingArgv.ts"

/** Runs `argv` when it is a plain reading command (the process then ends with its exit code); `false` otherwise. */
export const start = async (argv: ReadonlyArray<string>): Promise<boolean> => {
  const reading = parse(argv)
  if (reading === undefined) return false
  const { run } = await import("./ReadingRun.ts")
  run(reading)
  return true
}
