/**
 * The watchdog a stdio MCP server runs under (docs/mcp.md#when-servers-run: "no MCP server
 * process is left running after `query` exits, including after SIGINT and
 * `kill -9` of parley").
 *
 * Why: a stdio server is meant to exit when its stdin closes, but many do
 * not while work is pending — server-everything, asked for an elicitation,
 * keeps a 10-minute timer and outlives a `kill -9`ed parley by that long. So
 * parley starts `node -e <SOURCE> -- command args…` instead of the command:
 * the watchdog starts the server in its own process group and forwards
 * stdin to it (stdout and stderr are the server's own, shared). When its
 * stdin ends — parley closed it, or parley died and the kernel closed it —
 * the server gets EOF too, then `GRACE_MS` to exit before SIGTERM, then
 * SIGKILL, to its whole group. SIGTERM from parley does the same at once.
 * SIGINT and SIGHUP are ignored: a Ctrl-C on the terminal reaches parley's
 * process group, and parley answers open elicitations with `cancel` before it
 * closes the server; the server itself, in its own group, never sees them.
 *
 * Cost: one more Node process per stdio server (measured in the README).
 *
 * @example
 * ```ts
 * import * as Supervisor from "parley/layers/mcp/Supervisor"
 * Supervisor.wrap("node", ["server.js", "stdio"])
 * // { command: process.execPath, args: ["-e", Supervisor.SOURCE, "--", "node", "server.js", "stdio"] }
 * ```
 *
 * @since 0.1.0
 * @internal
 */

/** How long a server gets after EOF (and again after SIGTERM) before the next step. */
export const GRACE_MS = 1000

/** The watchdog program (CommonJS, run with `node -e`) with a given grace; its argv is the server's command line. */
export const source = (graceMs: number): string => `
const { spawn } = require("node:child_process")
const [command, ...args] = process.argv.slice(1)
const GRACE = ${graceMs}
let child
let pending
let due = Infinity
const group = (signal) => { try { process.kill(-child.pid, signal) } catch {} }
// Stop after "first" ms, or sooner if asked again with less (SIGTERM right after EOF).
const stop = (first) => {
  if (Date.now() + first >= due) return
  due = Date.now() + first
  clearTimeout(pending)
  pending = setTimeout(() => { group("SIGTERM"); setTimeout(() => group("SIGKILL"), GRACE).unref() }, first)
}
// The handlers come before the server starts (docs/mcp.md#when-servers-run): until they are in
// place SIGTERM, SIGINT and SIGHUP kill the watchdog outright, and a server
// started just before would be left running without it. Handlers run only
// after this script, so "child" is set by then.
process.on("SIGTERM", () => stop(0))
process.on("SIGINT", () => {})
process.on("SIGHUP", () => {})
child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"], detached: true })
child.on("error", (e) => { process.stderr.write("cannot start " + JSON.stringify(command) + ": " + e.message + "\\n"); process.exit(127) })
child.on("exit", (code, signal) => { group("SIGKILL"); process.exit(code ?? (signal === null ? 1 : 128 + (require("node:os").constants.signals[signal] ?? 0))) })
child.stdin.on("error", () => {})
process.stdin.on("error", () => {})
process.stdin.pipe(child.stdin)
process.stdin.on("end", () => stop(GRACE))
`

/** The watchdog program parley runs. */
export const SOURCE = source(GRACE_MS)

/** The command line that runs `command args` under the watchdog. */
export const wrap = (
  command: string,
  args: ReadonlyArray<string>,
  graceMs: number = GRACE_MS
): { readonly command: string; readonly args: Array<string> } => ({
  command: process.execPath,
  args: ["-e", graceMs === GRACE_MS ? SOURCE : source(graceMs), "--", command, ...args]
})
