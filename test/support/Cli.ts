/**
 * Runs the built `parley` binary as a child process (no TTY), capturing
 * stdout, stderr and the exit code.
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { repoRoot } from "./Fixtures.ts"

/** The bundle itself (what `npm start` and `node dist/parley.mjs` run). */
export const bundle = path.join(repoRoot, "dist", "parley.mjs")

/**
 * What the tests run: a link named `parley` to the bundle, as npm installs
 * it (the test globalSetup makes it), so the commands parley prints name it
 * `parley`, as they do for an installed parley. Beside the bundle, not in
 * node_modules: a worktree whose node_modules links to another checkout's
 * would otherwise run that checkout's bundle.
 */
export const binary = path.join(repoRoot, "dist", ".bin", "parley")

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runParley = (
  args: ReadonlyArray<string>,
  options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number } = {}
): RunResult => {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env }
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k]
  const result = spawnSync(process.execPath, [binary, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: env as NodeJS.ProcessEnv,
    input: options.input ?? "",
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    timeout: options.timeoutMs ?? 60_000
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/**
 * stderr without the line every query run starts with (`conversation <id>`,
 * `(new)` for a new one; docs/cli.md#status-lines), for tests about the rest of what it says.
 */
export const withoutRunHeader = (stderr: string): string => stderr.replace(/^conversation \d+( \(new\))?\n/gm, "")
