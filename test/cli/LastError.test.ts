// A run that fails says so where a person looks (docs/cli.md#a-run-that-failed): the error is kept with the
// conversation (`metadata.json`'s `parley_last_error`) until its next run, so `ls` says `[failed: …]`, the
// rows of `ls --format json` and `GET /api/conversations` carry `last_error`, the page says it, and the run's
// own output (its terminal, a detached run's log, a served run's log) has the error line. File storage and
// PostgreSQL keep it alike.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { runParley } from "../support/Cli.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../support/Pg.ts"
import { makeProject, parley, type Project, waitFor, writeScript } from "../support/Project.ts"
import * as Serve from "../support/Serve.ts"

/** One step that runs the `counter` tool (so a detached or served run gets under way), then a model call that fails. */
const failing = (p: Project) =>
  writeScript(p, "failing.json", [
    { message: "Counting.", tool_calls: [{ id: "c1", name: "counter", arguments: { name: "x" } }] },
    { error: "the model is down" }
  ])

/** `parley` in project `p`, on its storage directory or on `storage` when given. */
const run = (p: Project, args: ReadonlyArray<string>, storage?: string) =>
  storage === undefined
    ? parley(p, args)
    : runParley(["--storage", storage, ...args], {
        cwd: p.root,
        env: { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined }
      })

const rowsOf = (p: Project, storage?: string) => {
  const r = run(p, ["conversation", "ls", "--format", "json"], storage)
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as Array<{ id: string; last_error: { message: string; at: string } | null }>
}

describe("a run that fails, on file storage", () => {
  it("ls says [failed: …] (cold and warm), the JSON row carries last_error, and the next run clears it", () => {
    const p = makeProject()
    const r = parley(p, ["query", "--new", "go", "--model", "scripted", "--script", failing(p)])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("the model is down")
    for (let i = 0; i < 2; i++) {
      const ls = parley(p, ["conversation", "ls"])
      expect(ls.stdout).toMatch(/ go {2}\[incomplete: pending-follow-up\] {2}\[failed: the model is down\]\n$/)
      const [row] = rowsOf(p)
      expect(row!.last_error!.message).toBe("the model is down")
      expect(Number.isNaN(Date.parse(row!.last_error!.at))).toBe(false)
    }
    const ok = writeScript(p, "ok.json", [{ message: "Fine now." }])
    const id = rowsOf(p)[0]!.id
    expect(parley(p, ["query", "--continue-turn", "--id", id, "--script", ok]).code).toBe(0)
    expect(rowsOf(p)[0]!.last_error).toBeNull()
    expect(parley(p, ["conversation", "ls"]).stdout).not.toContain("failed")
  }, 120_000)

  it("a detached run: its log has the error line, and ls says it", async () => {
    const p = makeProject()
    const r = parley(p, ["query", "--detach", "--new", "go", "--model", "scripted", "--script", failing(p)])
    expect(r.code, r.stderr).toBe(0)
    await waitFor("the row's last_error", () => rowsOf(p)[0]?.last_error !== null, 30_000)
    const run = path.join(p.storage, "run")
    const logs = fs.readdirSync(run).filter((n) => n.startsWith("detached-"))
    expect(logs.length).toBe(1)
    expect(fs.readFileSync(path.join(run, logs[0]!), "utf8")).toContain("parley: the model is down")
    expect(parley(p, ["conversation", "ls"]).stdout).toContain("[failed: the model is down]")
  }, 120_000)

  it("a run parley serve started: GET /api/conversations, the list page and the conversation's page say it", async () => {
    const p = makeProject()
    const server = await Serve.start(p, [], { PARLEY_SCRIPT: failing(p), OPENAI_API_KEY: "", OPENAI_BASE_URL: "" })
    try {
      const created = await server.post("/api/conversations", { message: "go", model: "scripted" })
      expect(created.status, JSON.stringify(created.body)).toBe(200)
      const id = created.body.conversation_id as string
      let row: any
      await waitFor(
        "last_error in the API",
        () => {
          // Read synchronously by the CLI: the API is asked below, once the row says it.
          row = rowsOf(p).find((r) => r.id === id)
          return row?.last_error !== null && row !== undefined
        },
        30_000
      )
      const api = (await server.json("/api/conversations")).body.find((r: any) => r.id === id)
      expect(api.last_error).toStrictEqual(row.last_error)
      expect(api.last_error.message).toBe("the model is down")
      const list = await fetch(`${server.base}/`, { headers: server.auth })
      expect(await list.text()).toContain("failed: the model is down")
      const page = await fetch(`${server.base}/conversations/${id}`, { headers: server.auth })
      expect(await page.text()).toContain("The last run failed: the model is down")
      // The served run's log (under the storage's run directory) has the error line.
      const run = path.join(p.storage, "run")
      const logs = fs.readdirSync(run).filter((n) => n.startsWith("served-"))
      expect(logs.some((l) => fs.readFileSync(path.join(run, l), "utf8").includes("parley: the model is down"))).toBe(
        true
      )
    } finally {
      await server.stop()
    }
  }, 120_000)
})

let pg: PgServer | undefined
beforeAll(async () => {
  if (pgSkip === undefined) pg = await startPg()
}, 60_000)
afterAll(() => pg?.stop())

describe.skipIf(pgSkip !== undefined)("a run that fails, on PostgreSQL", () => {
  it("ls says [failed: …], the JSON row carries last_error, and the next run clears it", () => {
    const p = makeProject()
    const storage = freshDatabase(pg!)
    const r = run(p, ["query", "--new", "go", "--model", "scripted", "--script", failing(p)], storage)
    expect(r.code).toBe(1)
    expect(run(p, ["conversation", "ls"], storage).stdout).toContain("[failed: the model is down]")
    const [row] = rowsOf(p, storage)
    expect(row!.last_error!.message).toBe("the model is down")
    const ok = writeScript(p, "ok.json", [{ message: "Fine now." }])
    expect(run(p, ["query", "--continue-turn", "--id", row!.id, "--script", ok], storage).code).toBe(0)
    expect(rowsOf(p, storage)[0]!.last_error).toBeNull()
  }, 120_000)
})
