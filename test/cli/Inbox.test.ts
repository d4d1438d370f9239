// One inbox (docs/cli.md#parley-inbox): `parley inbox` lists every open question of every running turn and
// every turn waiting on disk, oldest first, with the conversation's title, the tool and the age, on file and
// PostgreSQL storage; without a terminal it prints them with the commands that answer them; at a terminal
// (tmux) it asks them one by one, Escape skips one, and each answer reaches its turn (the running one, or the
// waiting turn on disk).
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../support/Pg.ts"
import {
  addDeferrable,
  DEFERRABLE,
  effectsOf,
  killGroup,
  makeProject,
  type Project,
  waitFor
} from "../support/Project.ts"
import * as Tmux from "../support/Tmux.ts"

let server: PgServer | undefined
const home = tempDir("parley-inbox-home-")
process.env["XDG_RUNTIME_DIR"] = path.join(home, "run")
fs.mkdirSync(path.join(home, "run"), { mode: 0o700 })
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
const groups: Array<number> = []
afterEach(() => {
  Tmux.killAll()
  for (const g of groups.splice(0)) killGroup(g)
})
afterAll(() => {
  server?.stop()
  fs.rmSync(home, { recursive: true, force: true })
})

/** Where a scenario runs: a storage, the tools' root, and the config file (a database has no directory of its own). */
interface Place extends Project {
  readonly config: string
}

const filePlace = (): Place => {
  const p = makeProject()
  addDeferrable(p.root)
  fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE)
  return { ...p, config: path.join(p.storage, "config.toml") }
}

const pgPlace = (): Place => {
  const root = tempDir("parley-inbox-pg-")
  addDeferrable(root)
  fs.writeFileSync(path.join(root, "team.toml"), DEFERRABLE)
  return { root, storage: freshDatabase(server!), config: path.join(root, "team.toml") }
}

const run = (p: Place, args: ReadonlyArray<string>) =>
  runParley(["--storage", p.storage, "--config", p.config, ...args], {
    cwd: p.root,
    env: { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined, PARLEY_CONFIG: undefined }
  })

interface Row {
  readonly conversation_id: string
  readonly title: string
  readonly inquiry_id: string
  readonly id: string
  readonly kind: string
  readonly tool: string
  readonly question: string
  readonly since: string
  readonly age_seconds: number
  readonly running: boolean
  readonly pid: number | null
}

const inbox = (p: Place): Array<Row> => {
  const r = run(p, ["inbox", "--format", "json"])
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Array<Row>
}

/** A turn whose deferrable call `name` asks: deferred on disk (exit 3), or running in the background (waiting). */
const turn = async (p: Place, name: string, running: boolean, count: number) => {
  const script = path.join(p.root, `${name}.json`)
  const call = { id: `c_${name}`, name: "deferrable", arguments: { name, mode: "ask" } }
  fs.writeFileSync(
    script,
    JSON.stringify({ steps: [{ message: "Working.", tool_calls: [call] }, { message: "Done." }] })
  )
  if (!running) {
    const r = run(p, ["query", "--new", `Deploy ${name}`, "--script", script, "--detached-policy", "defer"])
    expect(r.code, r.stderr).toBe(3)
  } else {
    const r = run(p, ["query", "--detach", "--new", `Deploy ${name}`, "--script", script])
    expect(r.code, r.stderr).toBe(0)
    groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
  }
  // One at a time: each question is recorded before the next turn starts, so "oldest first" has one answer.
  await waitFor(`${name}'s question`, () => inbox(p).length === count, 30_000)
}

/** 3 turns waiting on disk and 2 running, interleaved in time; returns the inbox. */
const scenario = async (p: Place) => {
  await turn(p, "alpha", false, 1)
  await turn(p, "bravo", true, 2)
  await turn(p, "charlie", false, 3)
  await turn(p, "delta", true, 4)
  await turn(p, "echo", false, 5)
  return inbox(p)
}

const expectListed = (rows: ReadonlyArray<Row>) => {
  expect(rows.map((r) => [r.title, r.tool, r.inquiry_id, r.running])).toStrictEqual([
    ["Deploy alpha", "deferrable", "c_alpha.confirm.1", false],
    ["Deploy bravo", "deferrable", "c_bravo.confirm.1", true],
    ["Deploy charlie", "deferrable", "c_charlie.confirm.1", false],
    ["Deploy delta", "deferrable", "c_delta.confirm.1", true],
    ["Deploy echo", "deferrable", "c_echo.confirm.1", false]
  ])
  for (const r of rows) {
    expect(r).toMatchObject({ id: r.inquiry_id, kind: "question", question: `Deploy ${r.title.split(" ")[1]}?` })
    expect(r.age_seconds).toBeGreaterThanOrEqual(0)
    expect(r.pid === null).toBe(!r.running)
  }
  // RFC 3339, as GET /api/questions and a cluster's rows say it.
  for (const r of rows) expect(r.since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
  const since = rows.map((r) => Date.parse(r.since))
  expect([...since].sort((a, b) => a - b)).toStrictEqual(since)
}

describe("parley inbox", () => {
  it("file storage: 3 waiting turns on disk and 2 running ones, oldest first; printed with their commands without a terminal", async () => {
    const p = filePlace()
    const rows = await scenario(p)
    expectListed(rows)
    const text = run(p, ["inbox"])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain("5 open questions, oldest first:")
    expect(text.stdout).toMatch(
      /Deploy alpha {2}deferrable: Deploy alpha\? \[yes or no\] {2}asked \d+ (s|min) ago \(waiting on disk\)/
    )
    expect(text.stdout).toMatch(
      /Deploy bravo {2}deferrable: Deploy bravo\? \[yes or no\] {2}asked \d+ (s|min) ago \(running, pid \d+\)/
    )
    expect(text.stdout).toContain(
      `parley conversation answer ${rows[0]!.conversation_id} c_alpha.confirm.1 <yes|no> --storage ${p.storage}`
    )
  }, 180_000)

  it.skipIf(pgSkip !== undefined)(
    "PostgreSQL storage: the same inbox",
    async () => {
      const p = pgPlace()
      expectListed(await scenario(p))
    },
    180_000
  )

  it.skipIf(!Tmux.available)(
    "at a terminal (tmux): asks them one by one, Escape skips, answers reach each turn",
    async () => {
      const p = filePlace()
      const rows = await scenario(p)
      const s = Tmux.start({
        command: [process.execPath, binary, "--storage", p.storage, "inbox"],
        cwd: p.root,
        env: { XDG_RUNTIME_DIR: process.env["XDG_RUNTIME_DIR"]! }
      })
      const keys = ["y", "Escape", "n", "y", "y"]
      for (const [i, name] of ["alpha", "bravo", "charlie", "delta", "echo"].entries()) {
        // The item's line, then its prompt (the question itself).
        await s.waitFor(new RegExp(`\\(${i + 1}/5\\) Deploy ${name}[^\\n]*\\n[\\s\\S]*Deploy ${name}\\?`))
        s.sendKeys(keys[i]!)
        await s.waitFor(new RegExp(`Deploy ${name}\\?[\\s\\S]*(recorded|delivered to the running turn|skipped)\\.`))
      }
      expect(await s.waitForExit()).toBe(0)
      const pane = s.pane()
      expect(pane).toContain("Answered 4 of 5.")
      expect(pane).toContain(
        `Resume ${"jp-c"}${rows[0]!.conversation_id} with: parley query --continue-turn --id ${rows[0]!.conversation_id}`
      )
      // The running turns took their answers and finished; bravo was skipped and still waits.
      await waitFor("delta's run to act", () => effectsOf(p, "delta") === "true\n")
      expect(effectsOf(p, "bravo")).toBe("")
      const left = inbox(p)
      expect(left.map((r) => r.inquiry_id)).toStrictEqual(["c_bravo.confirm.1"])
      // The answers on disk are the turns' own: resuming hands them to the tools.
      const done = path.join(p.root, "done.json")
      fs.writeFileSync(done, JSON.stringify({ steps: [{ message: "Done." }] }))
      const resumed = run(p, ["query", "--continue-turn", "--id", rows[0]!.conversation_id, "--script", done])
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(effectsOf(p, "alpha")).toBe("true\n")
      expect(effectsOf(p, "charlie")).toBe("")
    },
    240_000
  )
})
