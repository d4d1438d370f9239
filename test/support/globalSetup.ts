// Builds dist/parley.mjs once per test run so end-to-end tests exercise the
// shipped bundle, not the sources.
//
// And gives the run a temp root of its own: TMPDIR points into it
// for every worker and every process the tests start, and the teardown
// removes it, so a run leaves nothing in /tmp (it used to leave some 2,600
// directories, and thousands of tmux sockets). A run that was killed before its teardown is cleaned up by
// the next one: its root names its owner, the vitest process.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { binary, bundle } from "./Cli.ts"
import { repoRoot } from "./Fixtures.ts"
import { ownerGone, sweepStale } from "./Pg.ts"

const RUN_PREFIX = "parley-run-"

/** Removes a run's root: its PostgreSQL servers stopped first (their watchdogs give up once the directory is gone). */
const removeRoot = (root: string): void => {
  sweepStale(root)
  fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 })
}

/** Removes the roots of earlier runs whose vitest is gone. */
const removeStaleRoots = (tmp: string): void => {
  for (const name of fs.readdirSync(tmp).filter((n) => n.startsWith(RUN_PREFIX))) {
    const root = path.join(tmp, name)
    if (ownerGone(root)) removeRoot(root)
  }
}

export default function setup(): () => void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: repoRoot, stdio: "inherit" })
  // The bin link npm would make for an installed parley (see Cli.binary).
  fs.mkdirSync(path.dirname(binary), { recursive: true })
  fs.rmSync(binary, { force: true })
  fs.symlinkSync(path.relative(path.dirname(binary), bundle), binary)

  const tmp = os.tmpdir()
  removeStaleRoots(tmp)
  const root = fs.mkdtempSync(path.join(tmp, RUN_PREFIX))
  // Others may pass through (not list): as root, PostgreSQL runs as the `postgres` user inside it.
  fs.chmodSync(root, 0o711)
  fs.writeFileSync(path.join(root, "owner"), String(process.pid))
  process.env["TMPDIR"] = root
  // tmux keeps its sockets in TMUX_TMPDIR (not TMPDIR): the real-TTY tests left thousands in /tmp/tmux-<uid>.
  const tmuxTmp = process.env["TMUX_TMPDIR"]
  process.env["TMUX_TMPDIR"] = root
  return () => {
    process.env["TMPDIR"] = tmp
    if (tmuxTmp === undefined) delete process.env["TMUX_TMPDIR"]
    else process.env["TMUX_TMPDIR"] = tmuxTmp
    removeRoot(root)
  }
}
