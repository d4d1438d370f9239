// Every command parley prints for a person to run works when pasted (docs/cli.md#printed-commands): it
// repeats what this invocation was given that changes where and how it runs — `--storage` (a path with a
// space, not the default), `--config` (the tools live only there), the scripted model's `--script` and the
// `--detached-policy`. Each command is taken from parley's output as printed and run through `sh -c` from
// another directory; none fails, and nothing is created where it was pasted.
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Hint from "../../src/cli/Hint.ts"
import { binary } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../support/Pg.ts"
import { addDeferrable, DEFERRABLE, exited, waitFor } from "../support/Project.ts"

const dirs: Array<string> = []
const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})
const temp = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}

const env = () => {
  const e: Record<string, string | undefined> = { ...process.env, PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined }
  for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k]
  return e as NodeJS.ProcessEnv
}

/** A printed command as a shell runs it here: `parley` is the built binary under this Node. */
const runnable = (printed: string): string => {
  expect(printed).toMatch(/^parley /)
  return `${Hint.quote(process.execPath)} ${Hint.quote(binary)} ${printed.slice("parley ".length)}`
}

/** Runs `printed` through `sh -c` in `cwd`. */
const paste = (printed: string, cwd: string) =>
  spawnSync("sh", ["-c", runnable(printed)], { cwd, env: env(), encoding: "utf8", timeout: 60_000 })

/**
 * A project whose storage is not the default (`my store`, or the database `storage`) and whose tools are
 * only in a `--config` file elsewhere.
 */
const project = (database?: string) => {
  const root = temp()
  const storage = database ?? path.join(root, "my store")
  const config = path.join(root, "conf dir", "parley.toml")
  fs.mkdirSync(path.dirname(config))
  fs.writeFileSync(config, DEFERRABLE)
  addDeferrable(root)
  const script = path.join(root, "steps dir", "s.json")
  fs.mkdirSync(path.dirname(script))
  fs.writeFileSync(
    script,
    JSON.stringify({
      steps: [
        {
          message: "Working.",
          tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }]
        },
        { message: "Done." }
      ]
    })
  )
  return { root, storage, config, script, flags: ["--storage", storage, "--config", config] }
}

/**
 * The scripted model reads its steps from the first in every process (contract §4): the resumed turn's
 * process gets the step that ends it, from the same file (which the pasted command must name).
 */
const scriptTheEnd = (script: string) => fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "Done." }] }))

const lineAfter = (text: string, pattern: RegExp): string => {
  const m = pattern.exec(text)
  expect(m, text).not.toBeNull()
  return m![1]!.trim()
}

describe("printed commands work when pasted", () => {
  it("a deferred turn: the answer command it prints, the resume command that one prints, run from elsewhere", () => {
    const p = project()
    const r = spawnSync(
      process.execPath,
      [binary, ...p.flags, "query", "--new", "go", "--script", p.script, "--detached-policy", "defer"],
      { cwd: p.root, env: env(), encoding: "utf8", timeout: 60_000 }
    )
    expect(r.status, r.stderr).toBe(3)
    const answer = lineAfter(r.stderr, /^\s+(parley conversation answer .+)$/m)
    for (const flag of ["--script", "--detached-policy defer", "--storage", "--config"]) expect(answer).toContain(flag)
    const elsewhere = temp()
    const answered = paste(answer.replace("<yes|no>", "yes"), elsewhere)
    expect(answered.status, answered.stderr).toBe(0)
    const resume = lineAfter(answered.stderr, /resume the turn: (parley query .+)$/m)
    scriptTheEnd(p.script)
    const resumed = paste(resume, elsewhere)
    expect(resumed.status, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain("Done.")
    expect(fs.readFileSync(path.join(p.root, "prod.effects"), "utf8")).not.toBe("")
    expect(fs.readdirSync(elsewhere)).toStrictEqual([])
  }, 120_000)

  it("query --detach's banner, and the commands the pasted `answer` prints", async () => {
    const p = project()
    const r = spawnSync(
      process.execPath,
      [binary, ...p.flags, "query", "--detach", "--new", "go", "--script", p.script, "--detached-policy", "defer"],
      { cwd: p.root, env: env(), encoding: "utf8", timeout: 60_000 }
    )
    expect(r.status, r.stderr).toBe(0)
    const id = r.stdout.trim()
    const list = lineAfter(r.stderr, /^\s+(parley conversation answer \S+ .*?)\s{4}\S/m)
    // The background run defers its question and ends.
    await waitFor("the background run to end", () => !fs.existsSync(path.join(p.storage, "run", `${id}.sock`)), 60_000)
    await waitFor(
      "its lock to go",
      () =>
        !fs.existsSync(path.join(p.storage, "locks")) ||
        fs.readdirSync(path.join(p.storage, "locks")).every((n) => !n.includes(id)),
      60_000
    )
    const elsewhere = temp()
    const listed = paste(list, elsewhere)
    expect(listed.status, listed.stderr).toBe(0)
    const answer = lineAfter(listed.stdout, /^\s+(parley conversation answer .+)$/m)
    const answered = paste(answer.replace("<yes|no>", "yes"), elsewhere)
    expect(answered.status, answered.stderr).toBe(0)
    scriptTheEnd(p.script)
    const resumed = paste(lineAfter(answered.stderr, /resume the turn: (parley query .+)$/m), elsewhere)
    expect(resumed.status, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain("Done.")
    expect(fs.readdirSync(elsewhere)).toStrictEqual([])
  }, 120_000)

  it("conversation kill's resume command carries the run's --script and --detached-policy", async () => {
    const p = project()
    const run = spawn(
      process.execPath,
      [binary, ...p.flags, "query", "--new", "go", "--script", p.script, "--detached-policy", "wait"],
      { cwd: p.root, env: env(), stdio: ["ignore", "pipe", "pipe"] }
    )
    children.push(run)
    const sockets = () => {
      const dir = path.join(p.storage, "run")
      return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(".sock")) : []
    }
    await waitFor("the run's host", () => sockets().length === 1, 60_000)
    const id = sockets()[0]!.replace(".sock", "")
    const elsewhere = temp()
    const killed = spawnSync(process.execPath, [binary, ...p.flags, "conversation", "kill", id], {
      cwd: elsewhere,
      env: env(),
      encoding: "utf8",
      timeout: 60_000
    })
    expect(killed.status, killed.stderr).toBe(0)
    await exited(run)
    const resume = lineAfter(killed.stderr, /resume with: (parley query .+)$/m)
    expect(resume).toBe(
      `parley query --continue-turn --id ${id} --script '${p.script}' --detached-policy wait --storage '${p.storage}' --config '${p.config}'`
    )
    // Pasted, it runs the turn again (its question waits again): under way is enough, then it is stopped.
    const again = spawn("sh", ["-c", runnable(resume)], {
      cwd: elsewhere,
      env: env(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(again)
    let said = ""
    again.stderr!.on("data", (d: Buffer) => (said += d.toString()))
    await waitFor("the resumed run's host", () => sockets().length === 1 || again.exitCode !== null, 60_000)
    expect(again.exitCode, said).toBeNull()
    const stopped = spawnSync(process.execPath, [binary, ...p.flags, "conversation", "kill", id], {
      cwd: elsewhere,
      env: env(),
      encoding: "utf8",
      timeout: 60_000
    })
    expect(stopped.status, stopped.stderr).toBe(0)
    await exited(again)
    expect(fs.readdirSync(elsewhere)).toStrictEqual([])
  }, 120_000)
})

let pg: PgServer | undefined
describe.skipIf(pgSkip !== undefined)("printed commands work when pasted, on PostgreSQL", () => {
  beforeAll(async () => {
    pg = await startPg()
  }, 60_000)
  afterAll(() => pg?.stop())

  it("the empty listing's hint, a deferred turn's answer command and the resume command it prints, run from elsewhere", () => {
    const p = project(freshDatabase(pg!))
    const elsewhere = temp()
    const empty = spawnSync(process.execPath, [binary, ...p.flags, "conversation", "ls"], {
      cwd: p.root,
      env: env(),
      encoding: "utf8",
      timeout: 60_000
    })
    const hint = lineAfter(empty.stdout, /Start one with `(.+)`\./)
    expect(hint).toContain(`--storage ${p.storage}`)
    const r = spawnSync(
      process.execPath,
      [binary, ...p.flags, "query", "--new", "go", "--script", p.script, "--detached-policy", "defer"],
      { cwd: p.root, env: env(), encoding: "utf8", timeout: 60_000 }
    )
    expect(r.status, r.stderr).toBe(3)
    const answer = lineAfter(r.stderr, /^\s+(parley conversation answer .+)$/m)
    for (const flag of ["--script", "--detached-policy defer", "--storage", "--config"]) expect(answer).toContain(flag)
    const answered = paste(answer.replace("<yes|no>", "yes"), elsewhere)
    expect(answered.status, answered.stderr).toBe(0)
    const resume = lineAfter(answered.stderr, /resume the turn: (parley query .+)$/m)
    scriptTheEnd(p.script)
    const resumed = paste(resume, elsewhere)
    expect(resumed.status, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain("Done.")
    // The empty listing's hint, pasted with a message: a turn in the same database (its latest conversation).
    fs.writeFileSync(p.script, JSON.stringify({ steps: [{ message: "Hello." }] }))
    const started = paste(hint.replace('"…"', `--script ${Hint.quote(p.script)} hi`), elsewhere)
    expect(started.status, started.stderr).toBe(0)
    expect(started.stdout).toContain("Hello.")
    const rows = spawnSync(
      process.execPath,
      [binary, "--storage", p.storage, "conversation", "ls", "--format", "json"],
      {
        cwd: p.root,
        env: env(),
        encoding: "utf8",
        timeout: 60_000
      }
    )
    expect(JSON.parse(rows.stdout)).toMatchObject([{ incomplete: null }])
    expect(fs.readdirSync(elsewhere)).toStrictEqual([])
  }, 180_000)
})
