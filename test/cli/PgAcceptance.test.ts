/**
 * The acceptance of PostgreSQL storage (docs/postgres.md#guarantees) on a throwaway PostgreSQL server, with real
 * processes: `kill -9` of a `query` in the middle of a tool call (struck the
 * moment its `tool_call_request` row is in the database) frees the lock at
 * once, `conversation check` is ok and `--continue-turn` completes the
 * turn; two `query --id SAME` started together: exactly one runs, the other
 * fails at once naming the holder's pid and host; and `check` on a damaged
 * row reports what the file store reports for the same damage.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as PgConversationStore from "../../src/layers/store/pg/PgConversationStore.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { binary, runParley } from "../support/Cli.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../support/Pg.ts"
import { exited, makeProject, type Project, writeScript } from "../support/Project.ts"

let server: PgServer | undefined
const projects: Array<Project> = []
const children: Array<ChildProcess> = []
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => {
  for (const c of children) c.kill("SIGKILL")
  for (const p of projects) {
    // Lets a blocked tool the reaper has not ended yet finish.
    for (const n of fs.readdirSync(p.root).filter((n) => n.endsWith(".block")))
      fs.rmSync(path.join(p.root, n), { force: true })
  }
  server?.stop()
  for (const p of projects) fs.rmSync(p.root, { recursive: true, force: true })
})

/** A project whose tools run in its root; the conversations live in `url` (config from ./.parley of the root). */
const project = () => {
  const p = makeProject()
  projects.push(p)
  return p
}

const pg = (p: Project, url: string, args: ReadonlyArray<string>) =>
  runParley(["--storage", url, ...args], { cwd: p.root, env: { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined } })

const spawnPg = (p: Project, url: string, args: ReadonlyArray<string>): ChildProcess & { output: () => string } => {
  const child = spawn(process.execPath, [binary, "--storage", url, ...args], {
    cwd: p.root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  return Object.assign(child, { output: () => out })
}

const until = async (f: () => boolean, ms: number): Promise<boolean> => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (f()) return true
  return f()
}

/** One `counter` call that blocks while `<root>/slow.block` exists, then a reply. */
const blockingScript = (p: Project, name: string) =>
  writeScript(p, name, [
    { message: "Working.", tool_calls: [{ id: "c1", name: "counter", arguments: { name: "slow" } }] },
    { message: "Done." }
  ])

const newConversation = (p: Project, url: string): string => {
  const r = pg(p, url, [
    "query",
    "--new",
    "--model",
    "scripted",
    "--script",
    writeScript(p, "first.json", [{ message: "hello" }]),
    "start"
  ])
  expect(r.code, r.stderr).toBe(0)
  return /conversation (\d+) \(new\)/.exec(r.stderr)![1]!
}

const rowsOf = (url: string, id: string, type: string) =>
  Number(psql(url, `SELECT count(*) FROM parley_events WHERE conversation_id = '${id}' AND type = '${type}'`).trim())

describe.skipIf(pgSkip !== undefined)(
  `acceptance on PostgreSQL (docs/postgres.md#guarantees)${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    it("kill -9 mid-tool: the lock is free at once, check is ok, --continue-turn completes the turn", async () => {
      const p = project()
      const url = freshDatabase(server!)
      const id = newConversation(p, url)
      fs.writeFileSync(path.join(p.root, "slow.block"), "")
      const run = spawnPg(p, url, [
        "query",
        "--id",
        id,
        "--model",
        "scripted",
        "--script",
        blockingScript(p, "s.json"),
        "count"
      ])
      // Struck once the tool call is durable (and the tool is running: its pid file).
      expect(
        await until(
          () => rowsOf(url, id, "tool_call_request") === 1 && fs.existsSync(path.join(p.root, "slow.pid")),
          60_000
        ),
        run.output()
      ).toBe(true)
      run.kill("SIGKILL")
      await exited(run)
      // A second writer gets the lock at once: the killed process's connection took its advisory lock along.
      const started = Date.now()
      const opened = await Effect.runPromise(
        Effect.exit(Effect.scoped(ConversationStore.use((s) => s.open(id as ConversationId.ConversationId)))).pipe(
          Effect.provide(Layer.orDie(PgConversationStore.layer({ url })))
        )
      )
      expect(Exit.isSuccess(opened), String(opened)).toBe(true)
      expect(Date.now() - started).toBeLessThan(5_000)
      const check = pg(p, url, ["conversation", "check"])
      expect([check.code, check.stdout], check.stderr).toStrictEqual([0, `ok        ${id}  ${url}#${id}\n`])
      expect(pg(p, url, ["conversation", "ls"]).stdout).toContain("pending-tool-execution")
      fs.rmSync(path.join(p.root, "slow.block"))
      const resumed = pg(p, url, [
        "query",
        "--continue-turn",
        "--id",
        id,
        "--model",
        "scripted",
        "--script",
        writeScript(p, "done.json", [{ message: "Done." }])
      ])
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stdout).toContain("Done.")
      expect([rowsOf(url, id, "tool_call_request"), rowsOf(url, id, "tool_call_response")]).toStrictEqual([1, 1])
      const ls = pg(p, url, ["conversation", "ls", "--format", "json"])
      expect(
        (JSON.parse(ls.stdout) as Array<{ id: string; incomplete: unknown }>).map((c) => [c.id, c.incomplete])
      ).toStrictEqual([[id, null]])
      expect(pg(p, url, ["conversation", "check"]).code).toBe(0)
    }, 180_000)

    it("two query --id SAME at once: exactly one runs, the other fails at once naming the holder's pid and host", async () => {
      const p = project()
      const url = freshDatabase(server!)
      const id = newConversation(p, url)
      fs.writeFileSync(path.join(p.root, "slow.block"), "")
      const script = blockingScript(p, "s.json")
      const runs = [0, 1].map((i) =>
        spawnPg(p, url, ["query", "--id", id, "--model", "scripted", "--script", script, `run ${i}`])
      )
      const codes = runs.map((r) => exited(r))
      // The loser fails while the winner is still held by its blocked tool.
      const first = await Promise.race(codes.map((c, i) => c.then((code) => ({ i, code }))))
      const [loser, winner] = [runs[first.i]!, runs[1 - first.i]!]
      expect(first.code, loser.output()).toBe(1)
      expect(winner.exitCode).toBe(null)
      expect(loser.output()).toContain(
        `Conversation ${id} is being written by another parley process (pid ${winner.pid} on ${os.hostname()})`
      )
      fs.rmSync(path.join(p.root, "slow.block"))
      expect(await codes[1 - first.i], winner.output()).toBe(0)
      expect(rowsOf(url, id, "chat_request")).toBe(2)
    }, 180_000)

    it("check on a damaged row: the same report as the file store's for the same damage (and the others still ok)", () => {
      const p = project()
      const url = freshDatabase(server!)
      const script = writeScript(p, "s.json", [{ message: "hello" }])
      const runs = [0, 1].map((i) => pg(p, url, ["query", "--new", "--model", "scripted", "--script", script, `q${i}`]))
      const [good, bad] = runs.map((r) => /conversation (\d+) \(new\)/.exec(r.stderr)![1]!)
      // The same conversation in files: the file store's view of the same damage.
      const f = project()
      const made = runParley(
        ["--storage", f.storage, "query", "--new", "--model", "scripted", "--script", script, "q1"],
        { cwd: f.root }
      )
      expect(made.code, made.stderr).toBe(0)
      const fileId = /conversation (\d+) \(new\)/.exec(made.stderr)![1]!
      const dir = path.join(
        f.storage,
        "conversations",
        fs.readdirSync(path.join(f.storage, "conversations")).find((n) => n.startsWith(fileId))!
      )
      const events = fs.readFileSync(path.join(dir, "events.json"), "utf8")
      // Entry 1 (the chat_request) loses its content's type: it no longer decodes.
      const damaged = `  {\n    "type": "chat_request",\n    "timestamp": 7\n  }`
      const pieces = events.split(",\n  {")
      pieces[1] = damaged.slice("  {".length) + (pieces.length === 2 ? "\n]\n" : "")
      fs.writeFileSync(path.join(dir, "events.json"), pieces.join(",\n  {"))
      psql(url, `UPDATE parley_events SET json = '${damaged}' WHERE conversation_id = '${bad}' AND seq = 1`)
      const fileCheck = runParley(["--storage", f.storage, "conversation", "check"], { cwd: f.root })
      const pgCheck = pg(p, url, ["conversation", "check"])
      const shape = (s: string, where: string, id: string) => s.replaceAll(where, "<where>").replaceAll(id, "<id>")
      expect(fileCheck.code).toBe(1)
      expect(pgCheck.code).toBe(1)
      const fileLine = shape(fileCheck.stdout, dir + path.sep + "events.json", fileId)
      expect(fileLine).toMatch(/^FAILED {4}<id> {2}.*<where>.*entry 1.*\n$/)
      expect(pgCheck.stdout).toBe(
        `ok        ${good}  ${url}#${good}\n${fileLine.replaceAll("<where>", `${url}#${bad} events`).replaceAll("<id>", bad)}`
      )
      expect(pgCheck.stderr).toBe(fileCheck.stderr.replace("(of 1)", "(of 2)"))
      // --format json: the same fields.
      const json = JSON.parse(pg(p, url, ["conversation", "check", "--format", "json"]).stdout) as Array<
        Record<string, unknown>
      >
      const fileJson = JSON.parse(
        runParley(["--storage", f.storage, "conversation", "check", "--format", "json"], { cwd: f.root }).stdout
      ) as Array<Record<string, unknown>>
      const keys = (r: Record<string, unknown> | undefined) => Object.keys(r ?? {}).sort()
      expect(keys(json.find((r) => r["id"] === bad))).toStrictEqual(keys(fileJson[0]))
      expect(keys(json.find((r) => r["id"] === good))).toStrictEqual(["id", "ok", "path", "roundtrip"])
    }, 120_000)
  }
)
