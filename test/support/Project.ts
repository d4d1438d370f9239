/**
 * A throwaway project for black-box `parley query` tests: a temp directory
 * with `.parley/` (config.toml registering local tools), scripts for the
 * scripted model, and helpers to run parley (sync or in the background),
 * wait for events to be persisted, and read them back.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { binary, runParley } from "./Cli.ts"
import { repoRoot, tempDir } from "./Fixtures.ts"
import { withoutEventIds } from "./EventIds.ts"

export interface Project {
  readonly root: string
  readonly storage: string
}

export const CONFIG = `
[conversation.tools.write_note]
source = "local"
command = "python3 write_note.py"
description = "Write a note to a file."
parameters = { type = "object", properties = { path = { type = "string" }, text = { type = "string" } }, required = ["path"] }
run = "unattended"

[conversation.tools.counter]
source = "local"
command = "sh counter_tool.sh"
description = "Counts its runs."
parameters = { type = "object", properties = { name = { type = "string" } }, required = ["name"] }
run = "unattended"
`

/** A local tool that asks one question (by `mode`) and acts once answered: `test/fixtures/tools/deferrable.py`. */
export const DEFERRABLE = `
[conversation.tools.deferrable]
source = "local"
command = "python3 deferrable.py"
description = "Asks, then acts."
parameters = { type = "object", properties = { name = { type = "string" }, mode = { type = "string" }, seconds = { type = "number" } }, required = ["name"] }
run = "unattended"
`

/** The deferrable tool, and questions for a person that wait for any answerer (no TTY: `detached = "wait"`). */
export const WAITING = `${DEFERRABLE}

[conversation.inquiry]
detached = "wait"
`

/** A project with the deferrable tool whose questions wait (a run stays up to be answered from elsewhere: docs/decisions.md#answer-from-anywhere). */
export const waitingProject = (): Project => {
  const p = makeProject()
  fs.appendFileSync(path.join(p.storage, "config.toml"), WAITING)
  addDeferrable(p.root)
  return p
}

/** The host socket files under the project's storage (`run/*.sock`). */
export const hostSockets = (p: Project): Array<string> => {
  const dir = path.join(p.storage, "run")
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(".sock")) : []
}

/** What the deferrable tool called `name` did (its `<name>.effects` file), "" when it did nothing. */
export const effectsOf = (p: Project, name: string): string => {
  const file = path.join(p.root, `${name}.effects`)
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
}

/** Copies the deferrable tool into a project root. */
export const addDeferrable = (root: string): void =>
  fs.copyFileSync(path.join(repoRoot, "test", "fixtures", "tools", "deferrable.py"), path.join(root, "deferrable.py"))

/**
 * The `leak` tool in `p`: it asks for a `token`, answered from config with
 * `secret`, and echoes it in its result (what the secret scrubber must catch).
 */
export const addLeakTool = (p: Project, secret: string): void => {
  fs.copyFileSync(path.join(repoRoot, "test", "fixtures", "tools", "leak.py"), path.join(p.root, "leak.py"))
  fs.appendFileSync(
    path.join(p.storage, "config.toml"),
    `
[conversation.tools.leak]
source = "local"
command = "python3 leak.py"
description = "Echoes its token."
parameters = { type = "object", properties = {} }
run = "unattended"

[conversation.tools.leak.questions.token]
answer = "${secret}"
`
  )
}

export const makeProject = (): Project => {
  const root = tempDir("parley-project-")
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage)
  fs.writeFileSync(path.join(storage, "config.toml"), CONFIG)
  fs.copyFileSync(path.join(repoRoot, "examples", "tools", "write_note.py"), path.join(root, "write_note.py"))
  fs.copyFileSync(
    path.join(repoRoot, "test", "fixtures", "project", "counter_tool.sh"),
    path.join(root, "counter_tool.sh")
  )
  return { root, storage }
}

/** Copies a project (to resume one copy and discard another). */
export const copyProject = (p: Project): Project => {
  const root = tempDir("parley-project-")
  // A host killed with -9 leaves its socket file behind; a socket cannot be copied (and would be stale anyway).
  fs.cpSync(p.root, root, { recursive: true, filter: (src) => !src.endsWith(".sock") })
  return { root, storage: path.join(root, ".parley") }
}

export const writeScript = (p: Project, name: string, steps: ReadonlyArray<unknown>): string => {
  const file = path.join(p.root, name)
  fs.writeFileSync(file, JSON.stringify({ steps }, null, 2))
  return file
}

export const parley = (p: Project, args: ReadonlyArray<string>, input?: string) =>
  runParley(["--storage", p.storage, ...args], {
    cwd: p.root,
    env: { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined },
    ...(input !== undefined ? { input } : {})
  })

/** Starts parley in the background (stdin closed: no TTY), with `env` added to the environment. */
export const spawnParley = (
  p: Project,
  args: ReadonlyArray<string>,
  env?: Readonly<Record<string, string>>
): ChildProcess & { output: () => string } => {
  const child = spawn(process.execPath, [binary, "--storage", p.storage, ...args], {
    cwd: p.root,
    stdio: ["ignore", "pipe", "pipe"],
    ...(env === undefined ? {} : { env: { ...process.env, ...env } })
  })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  return Object.assign(child, { output: () => out })
}

export const exited = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.on("exit", (code) => resolve(code)))

/** The conversation directory (there is one per test project unless said otherwise). */
export const conversationDir = (p: Project): string => {
  const dir = path.join(p.storage, "conversations")
  const names = fs.readdirSync(dir).filter((n) => /^\d/.test(n))
  if (names.length !== 1) throw new Error(`expected one conversation in ${dir}, found ${names.join(", ")}`)
  return path.join(dir, names[0]!)
}

export const conversationIdOf = (p: Project): string => path.basename(conversationDir(p)).split("-")[0]!

type Entry = Record<string, unknown> & { type: string }

/** events.json plus any journaled (not yet folded) entries, decoded minimally; event ids checked and removed. */
export const persisted = (p: Project): Array<Entry> => {
  const dir = conversationDir(p)
  const events = JSON.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8")) as Array<Entry>
  const journal = path.join(dir, "events.json.journal")
  if (fs.existsSync(journal)) {
    for (const line of fs.readFileSync(journal, "utf8").split("\n")) {
      if (line.trim() === "") continue
      try {
        const { at, entry } = JSON.parse(line) as { at: number; entry: Entry }
        if (at >= events.length) events.push(entry)
      } catch {
        // torn last line
      }
    }
  }
  return withoutEventIds(events)
}

/** Polls until `predicate` holds for the persisted entries (or fails after `ms`). */
export const waitFor = async (what: string, check: () => boolean, ms = 20_000): Promise<void> => {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      if (check()) return
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/**
 * Waits until `file` holds `lines` whole lines. A shell's `echo x >> file` creates the file before it writes:
 * a test that acts once the file exists can strike between the two and find it empty (or the line never written).
 */
export const waitForLines = (what: string, file: string, lines = 1, ms?: number): Promise<void> =>
  waitFor(what, () => (fs.readFileSync(file, "utf8").match(/\n/g)?.length ?? 0) >= lines, ms)

/** Kills a whole process group, ignoring one that is already gone. */
export const killGroup = (pid: number) => {
  // 0 (a pid file read while the shell was writing it) would signal the test runner's own group.
  if (!Number.isSafeInteger(pid) || pid <= 1) throw new Error(`killGroup: not a process group id: ${pid}`)
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // gone
  }
}
