/**
 * The `parley` executable: parses argv, runs the command with Node services,
 * prints user errors as one line on stderr, and maps them to exit codes
 * (1 failure, 2 usage; interrupted by SIGINT 130, SIGTERM 143, SIGHUP 129).
 *
 * Cold start (docs/decisions.md#fast-start): this entry imports nothing heavy itself. `parley
 * --version` alone is answered right here, so the version costs what `node
 * -e 0` costs. A plain `query`, `conversation ls`, `conversation print`,
 * `ask` or `conversation attach` runs without effect/cli (`cli/FastPath.ts`,
 * one dynamic import, then the command's own script;
 * docs/startup.md#start-up-of-a-query,
 * docs/startup.md#start-up-of-the-reading-commands); anything else loads
 * Effect and the command tree with one more (esbuild puts them in chunks).
 */
import { enable as enableCompileCache } from "./layers/file/CompileCache.ts"
import { enable as resolveSiblingChunks } from "./layers/file/SiblingChunks.ts"
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
  // The built chunks' imports of one another, resolved without the file system (layers/file/SiblingChunks.ts).
  resolveSiblingChunks(import.meta.url)
  try {
    const { fastPath } = await import("./cli/FastPath.ts")
    if (!(await fastPath(argv))) {
      const { main } = await import("./cli/Run.ts")
      main()
    }
  } catch (error) {
    // A chunk of the build missing: said in one line (cli/MissingChunk.ts, loaded only then: it needs node:url, which
    // no command starts with); anything else, or that module missing too, as before.
    const missing = await import("./cli/MissingChunk.ts").then(
      ({ line }) => line(error, import.meta.url),
      () => undefined
    )
    if (missing === undefined) throw error
    process.stderr.write(missing)
    process.exitCode = 1
  }
}
