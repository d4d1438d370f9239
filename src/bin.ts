/**
 * The `parley` executable: parses argv, runs the command with Node services,
 * prints user errors as one line on stderr, and maps them to exit codes
 * (1 failure, 2 usage; interrupted by SIGINT 130, SIGTERM 143, SIGHUP 129).
 *
 * Cold start (docs/decisions.md#fast-start): this entry imports nothing heavy itself. `parley
 * --version` alone is answered right here; everything else loads Effect and
 * the command tree with one dynamic import (esbuild puts them in chunks), so
 * the version costs what `node -e 0` costs. A plain `conversation ls` or
 * `conversation print` runs without effect/cli, from a bundle of its own
 * (`cli/ReadingRun.ts`; docs/benchmarks.md#start-up-of-the-reading-commands).
 */
import { enable as enableCompileCache } from "./layers/file/CompileCache.ts"
import { VERSION } from "./cli/Version.ts"

/**
 * What effect/cli's default formatter prints for `--version` (bold name, dim
 * `v`, bold version on a color terminal; plain otherwise). A test compares it
 * with the full path's output, in a pipe and on a terminal.
 */
const versionLine = (): string =>
  process.stdout.isTTY === true && !process.env["NO_COLOR"]
    ? `\x1b[1mparley\x1b[0m \x1b[2mv\x1b[0m\x1b[1m${VERSION}\x1b[0m\n`
    : `parley v${VERSION}\n`

const argv = process.argv.slice(2)
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
  // `parley --version | head -c 1` closes the pipe early: that is not an error.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error
  })
  process.stdout.write(versionLine())
} else {
  // Node 22.1+: compiled chunks cached in a private per-user directory (layers/file/CompileCache.ts).
  enableCompileCache(process.env)
  // `conversation ls` and `conversation print` without effect/cli when the command line is plain:
  // ReadingArgv decides (plain code, no Effect), and the commands run from a bundle of their own
  // (dist/parley-reading.mjs, see ReadingRun.ts); anything else goes to the full command line.
  const { parse } = await import("./cli/ReadingArgv.ts")
  const reading = parse(argv)
  if (reading !== undefined) {
    const { run } = await import("./cli/ReadingRun.ts")
    run(reading)
  } else {
    // `parley ask` likewise (cli/AskArgv.ts): a script waits for its question to be listed.
    const { parse: parseAsk } = await import("./cli/AskArgv.ts")
    const asking = parseAsk(argv)
    if (asking !== undefined) {
      const { run: runAsk } = await import("./cli/AskFast.ts")
      runAsk(asking)
    } else {
      // `conversation attach` likewise (cli/conversation/AttachArgv.ts): a person waits for the run on screen.
      const { parse: parseAttach } = await import("./cli/conversation/AttachArgv.ts")
      const attaching = parseAttach(argv)
      if (attaching !== undefined) {
        const { run: runAttach } = await import("./cli/conversation/AttachFast.ts")
        runAttach(attaching)
      } else {
        const { main } = await import("./cli/Run.ts")
        main()
      }
    }
  }
}
