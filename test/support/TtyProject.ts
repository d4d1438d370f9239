/**
 * Shared setup for the real-TTY (tmux) tests: throwaway projects, scripted
 * model scripts, and reading back what a run recorded.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { expect } from "@effect/vitest"
import { binary } from "./Cli.ts"
import { tempDir } from "./Fixtures.ts"
import { withoutEventIds } from "./EventIds.ts"
import * as Tmux from "./Tmux.ts"

export type Entry = Record<string, unknown>

export const b64 = (s: string) => Buffer.from(s).toString("base64")

export interface Project {
  readonly root: string
  readonly storage: string
}

const dirs: Array<string> = []

/** A temp directory removed by {@link removeProjects}. */
export const trackedTempDir = (prefix: string): string => {
  const dir = tempDir(prefix)
  dirs.push(dir)
  return dir
}

export const makeProject = (prefix: string, files: Readonly<Record<string, string>> = {}): Project => {
  const root = trackedTempDir(prefix)
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage)
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(root, name), content)
  return { root, storage }
}

/** Removes every project made so far (call from `afterEach`). */
export const removeProjects = () => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
}

export const writeScript = (p: Project, steps: ReadonlyArray<Entry>): string => {
  const file = path.join(p.root, "script.json")
  fs.writeFileSync(file, JSON.stringify({ steps }, null, 2))
  return file
}

/** The only conversation's directory under `storage`. */
export const conversationDir = (storage: string): string => {
  const base = path.join(storage, "conversations")
  const found = fs.readdirSync(base).filter((n) => /^\d+-/.test(n))
  expect(found.length).toBe(1)
  return path.join(base, found[0]!)
}

/** events.json of the only conversation, as written (timestamps kept, event ids checked and removed); the journal must be folded. */
export const onDisk = (storage: string): Array<Entry> => {
  const dir = conversationDir(storage)
  expect(fs.existsSync(path.join(dir, "events.json.journal"))).toBe(false) // folded back at the end of the run
  return withoutEventIds(JSON.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8")) as Array<Entry>)
}

/** events.json of the only conversation, with every entry's timestamp checked and removed. */
export const recorded = (storage: string): Array<Entry> =>
  onDisk(storage).map(({ timestamp, ...rest }) => {
    expect(typeof timestamp).toBe("string")
    return rest
  })

/** Runs parley in a tmux session; sessions are killed by `Tmux.killAll()` after each test. */
export const startParley = (p: Project, args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) =>
  Tmux.start({ command: [process.execPath, binary, "--storage", p.storage, ...args], cwd: p.root, env })

/** The pid of the parley process running on `p`'s storage (Linux: read from /proc). */
export const parleyPid = (p: Project): number => {
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0")
      if (argv[0] === process.execPath && argv[1] === binary && argv[3] === p.storage) return Number(entry)
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no parley process on ${p.storage}`)
}
