/**
 * The fast paths of the `parley` executable (`bin.ts`): the commands a person
 * or a script waits on, run without effect/cli's command tree
 * (docs/decisions.md#fast-start, docs/startup.md#start-up-of-a-query).
 *
 * @internal
 */
/**
 * Runs `argv` without effect/cli when a fast path fully understands it; `false` when none does.
 * Each reads its command line with plain code (no Effect) and declines anything else, which the
 * full command line (`cli/Run.ts`) then answers with effect/cli's own help and usage errors:
 * a plain `parley query` (`cli/QueryArgv.ts`, the main command: asked first; see `cli/QueryFast.ts`),
 * `conversation ls` and `print` (`cli/ReadingArgv.ts`; `cli/conversation/LsFast.ts` for a common
 * listing, `cli/ReadingRun.ts` for the rest), `parley ask`
 * (`cli/AskArgv.ts`: a script waits for its question to be listed) and `conversation attach`
 * (`cli/conversation/AttachArgv.ts`: a person waits for the run).
 *
 * Built, each runs from a CommonJS script of its own (dist/parley-<name>.cjs) through V8's code
 * cache taken after a run (`layers/file/CodeCache.ts`; scripts/build.mjs, FAST); this module is
 * dist/parley-fast.mjs, apart from the entry, which Node compiles before its compile cache is on.
 */
export async function fastPath(argv: ReadonlyArray<string>): Promise<boolean> {
  // Only a command line with the word is read as a query.
  const querying = argv.includes("query") ? (await import("./QueryArgv.ts")).parse(argv) : undefined
  if (querying !== undefined) {
    const { run } = await import("./QueryFast.ts")
    run(querying)
    return true
  }
  const reading = (await import("./ReadingArgv.ts")).parse(argv)
  if (reading !== undefined) {
    // The common listing needs no Effect: a small script of its own, which declines the rest.
    if (reading._tag === "Ls" && (await (await import("./conversation/LsFast.ts")).run(reading))) return true
    const { run } = await import("./ReadingRun.ts")
    run(reading)
    return true
  }
  const asking = (await import("./AskArgv.ts")).parse(argv)
  if (asking !== undefined) {
    const { run } = await import("./AskFast.ts")
    run(asking)
    return true
  }
  const attaching = (await import("./conversation/AttachArgv.ts")).parse(argv)
  if (attaching !== undefined) {
    const { run } = await import("./conversation/AttachFast.ts")
    run(attaching)
    return true
  }
  return false
}
