/**
 * Every command on a PostgreSQL storage (docs/postgres.md), end to end through the
 * built CLI against a throwaway server: `--config FILE` / `$PARLEY_CONFIG`
 * (a database has no directory for config.toml); `query --detach`, then
 * `ls` (running column), `answer` to the running host, `attach` and `kill`
 * find the run through the per-user runtime directory keyed by the
 * database; `answer` into a stored deferred question and `--continue-turn`;
 * `fork`; `compact`; `serve` with its token in the per-user config directory.
 * XDG_RUNTIME_DIR and XDG_CONFIG_HOME point into the test's temp dir.
 */
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../support/Pg.ts"
import { addDeferrable, effectsOf, exited, killGroup, type Project, waitFor, WAITING } from "../support/Project.ts"
import * as Serve from "../support/Serve.ts"

let server: PgServer | undefined
const home = tempDir("parley-pg-home-")
process.env["XDG_RUNTIME_DIR"] = path.join(home, "run")
process.env["XDG_CONFIG_HOME"] = path.join(home, "config")
fs.mkdirSync(path.join(home, "run"), { mode: 0o700 })
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
const groups: Array<number> = []
afterEach(() => {
  for (const g of groups.splice(0)) killGroup(g)
})
afterAll(() => {
  server?.stop()
  fs.rmSync(home, { recursive: true, force: true })
})

/** A project directory (the tools' root) on a fresh database; its config at `team.toml`, not in `.parley/`. */
const project = (): Project & { config: string } => {
  const root = tempDir("parley-pg-project-")
  addDeferrable(root)
  fs.writeFileSync(path.join(root, "team.toml"), WAITING)
  return { root, storage: freshDatabase(server!), config: path.join(root, "team.toml") }
}

const run = (p: Project, args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}, input?: string) =>
  runParley(["--storage", p.storage, ...args], {
    cwd: p.root,
    env: { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined, PARLEY_CONFIG: undefined, ...env },
    ...(input !== undefined ? { input } : {})
  })

const script = (p: Project, name: string, steps: ReadonlyArray<unknown>): string => {
  const file = path.join(p.root, name)
  fs.writeFileSync(file, JSON.stringify({ steps }))
  return file
}

const ask = (id: string, name: string, mode = "ask") => ({ id, name: "deferrable", arguments: { name, mode } })

const lsJson = (p: Project) =>
  JSON.parse(run(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{
    id: string
    running: { readonly waiting?: ReadonlyArray<string> } | null
    incomplete: unknown
    events: number
  }>

/** The host socket of `id` on this database: the per-user runtime directory, keyed by the url without its password. */
const socketOf = (p: Project, id: string) => {
  const key = new URL(p.storage)
  key.password = ""
  if (key.port === "") key.port = "5432"
  return path.join(
    home,
    "run",
    "parley",
    `${crypto.createHash("sha256").update(key.toString()).digest("hex").slice(0, 16)}-${id}.sock`
  )
}

/** `query --detach` with `--config`: the conversation id and the background run's pid. */
const detached = (p: Project & { config: string }, steps: ReadonlyArray<unknown>) => {
  const r = run(p, [
    "--config",
    p.config,
    "query",
    "--detach",
    "--new",
    "deploy",
    "--script",
    script(p, "s.json", steps)
  ])
  expect(r.code, r.stderr).toBe(0)
  const id = r.stdout.trim()
  const pid = Number(/\(pid (\d+)\)/.exec(r.stderr)![1])
  groups.push(pid)
  return { id, pid, stderr: r.stderr }
}

describe.skipIf(pgSkip !== undefined)(
  `every command on PostgreSQL${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    it("config.toml is --config FILE, else $PARLEY_CONFIG, else ./.parley/config.toml; a broken one names its file", () => {
      const p = project()
      const steps = [
        {
          message: "Working.",
          tool_calls: [{ id: "c1", name: "deferrable", arguments: { name: "n", mode: "slow", seconds: 0 } }]
        },
        { message: "Done." }
      ]
      const s = script(p, "slow.json", steps)
      // No config anywhere: the model asks for a tool nobody configured, and nothing runs it.
      run(p, ["query", "--new", "go", "--script", s])
      expect(effectsOf(p, "n")).toBe("")
      for (const [args, env] of [
        [["--config", "team.toml"], {}],
        [[], { PARLEY_CONFIG: "team.toml" }]
      ] as const) {
        const r = run(p, [...args, "query", "--new", "go", "--script", s], env)
        expect(r.code, r.stderr).toBe(0)
        expect(r.stdout).toBe("Working.\nDone.\n")
      }
      fs.mkdirSync(path.join(p.root, ".parley"))
      fs.copyFileSync(p.config, path.join(p.root, ".parley", "config.toml"))
      expect(run(p, ["query", "--new", "go", "--script", s]).code).toBe(0)
      expect(effectsOf(p, "n")).toBe(`"done"\n"done"\n"done"\n`)
      // --config wins over $PARLEY_CONFIG; a broken file is one line naming it.
      fs.writeFileSync(path.join(p.root, "broken.toml"), "[assistant\n")
      const broken = run(p, ["query", "--new", "go", "--script", s, "--config", "broken.toml"], {
        PARLEY_CONFIG: "team.toml"
      })
      expect(broken.code).toBe(1)
      expect(broken.stderr).toMatch(
        new RegExp(`^parley: ${path.join(p.root, "broken.toml").replaceAll("/", "\\/")}:1:\\d+: invalid TOML`)
      )
    }, 120_000)

    it("query --detach: ls shows it running, answer reaches the host, attach follows it to the end", async () => {
      const p = project()
      const { id, pid, stderr } = detached(p, [
        { message: "Working.", tool_calls: [ask("a1", "prod")] },
        { message: "Done." }
      ])
      // The banner's answer command repeats the run's --script (for the resume it prints) and --config.
      expect(stderr).toMatch(
        new RegExp(
          `conversation answer ${id} --script \\S+ --storage ${p.storage.replaceAll("?", "\\?")} --config ${p.config}`
        )
      )
      await waitFor(
        "the question to open",
        () => (lsJson(p).find((r) => r.id === id)?.running as { waiting?: Array<string> } | null)?.waiting?.length === 1
      )
      expect(fs.statSync(socketOf(p, id)).isSocket()).toBe(true)
      expect(lsJson(p).find((r) => r.id === id)!.running).toStrictEqual({ pid, waiting: ["a1.confirm.1"] })
      expect(run(p, ["conversation", "ls"]).stdout).toContain("[running, waiting for input: deferrable]")
      const listed = run(p, ["conversation", "answer", id])
      expect(listed.stdout).toContain(`(the turn is running: pid ${pid})`)
      // attach without a terminal: the run's events, to its end.
      const attach = spawn(process.execPath, [binary, "--storage", p.storage, "conversation", "attach", id], {
        cwd: p.root,
        stdio: ["ignore", "pipe", "pipe"]
      })
      let attached = ""
      attach.stdout.on("data", (d: Buffer) => (attached += d.toString()))
      attach.stderr.on("data", (d: Buffer) => (attached += d.toString()))
      await waitFor("attach to show the question", () => attached.includes("a1.confirm.1 is waiting for input"))
      const yes = run(p, ["conversation", "answer", id, "a1.confirm.1", "yes"])
      expect(yes.stderr).toBe(`Answered a1.confirm.1; the running turn (pid ${pid}) goes on with it.\n`)
      expect(await exited(attach)).toBe(0)
      expect(attached).toContain("Done.")
      await waitFor("the run to end", () => !fs.existsSync(socketOf(p, id)))
      expect(effectsOf(p, "prod")).toBe("true\n")
      expect(lsJson(p).find((r) => r.id === id)).toMatchObject({ running: null, incomplete: null })
      expect(run(p, ["conversation", "check", id]).code).toBe(0)
    }, 120_000)

    it("kill stops a detached run like SIGTERM; the turn is resumable with the printed command, which repeats --config", async () => {
      const p = project()
      const { id, pid } = detached(p, [{ message: "Working.", tool_calls: [ask("a1", "prod")] }, { message: "Done." }])
      await waitFor("the host", () => fs.existsSync(socketOf(p, id)))
      await waitFor("the question", () =>
        (lsJson(p).find((r) => r.id === id)?.running?.waiting ?? []).includes("a1.confirm.1")
      )
      const killed = run(p, ["conversation", "kill", id])
      expect(killed.code, killed.stderr).toBe(0)
      expect(killed.stderr).toContain(`Stopped the run of jp-c${id} (pid ${pid}).`)
      expect(lsJson(p).find((r) => r.id === id)).toMatchObject({
        running: null,
        incomplete: { state: "pending-tool-execution" }
      })
      expect(run(p, ["conversation", "kill", id]).stderr).toBe(`parley: jp-c${id} has no running turn.\n`)
      // Answered from the stored turn, then resumed.
      const resume = script(p, "r.json", [{ message: "Done." }])
      const resumed = run(p, [
        "--config",
        p.config,
        "query",
        "--continue-turn",
        "--id",
        id,
        "--script",
        resume,
        "--detached-policy",
        "defer"
      ])
      expect(resumed.code).toBe(3)
      // The question cancelled by the kill is asked again, under the next inquiry id.
      expect(resumed.stderr).toContain(
        `conversation answer ${id} a1.confirm.2 <yes|no> --script ${resume} --detached-policy defer --storage ${p.storage} --config ${p.config}`
      )
      expect(resumed.stderr).toContain(
        `Then resume the turn: parley query --continue-turn --id ${id} --script ${resume} --detached-policy defer --storage ${p.storage} --config ${p.config}`
      )
      const stored = run(p, ["conversation", "answer", id, "a1.confirm.2", "no"])
      expect(stored.code, stored.stderr).toBe(0)
      expect(stored.stderr).toBe(
        `Recorded the answer to a1.confirm.2. No question left open; resume the turn: parley query --continue-turn --id ${id} --storage ${p.storage}\n`
      )
      const done = run(p, ["--config", p.config, "query", "--continue-turn", "--id", id, "--script", resume])
      expect(done.code, done.stderr).toBe(0)
      expect(effectsOf(p, "prod")).toBe("false\n")
      expect(lsJson(p).find((r) => r.id === id)).toMatchObject({ incomplete: null })
    }, 120_000)

    it("fork and compact work on the database", () => {
      const p = project()
      const steps = [{ message: "one" }]
      let id = ""
      for (const m of ["first", "second", "third"]) {
        const r = run(p, [
          "query",
          ...(id === "" ? ["--new"] : ["--id", id]),
          m,
          "--script",
          script(p, `${m}.json`, steps)
        ])
        expect(r.code, r.stderr).toBe(0)
        id ||= /conversation (\d+)/.exec(r.stderr)![1]!
      }
      const forked = run(p, ["conversation", "fork", id, "--format", "json"])
      expect(forked.code, forked.stderr).toBe(0)
      const fork = (JSON.parse(forked.stdout) as { id: string }).id
      expect(
        lsJson(p)
          .map((r) => [r.id, r.events])
          .sort()
      ).toStrictEqual(
        [
          [fork, 9],
          [id, 9]
        ].sort()
      )
      const compacted = run(p, [
        "conversation",
        "compact",
        fork,
        "--keep-first",
        "0",
        "--keep-last",
        "1",
        "--format",
        "json"
      ])
      expect(compacted.code, compacted.stderr).toBe(0)
      expect(JSON.parse(compacted.stdout)).toMatchObject({ id: fork, outcome: "compacted", from_turn: 0, to_turn: 1 })
      expect(
        psql(
          p.storage,
          `SELECT count(*) FROM parley_events WHERE conversation_id = '${fork}' AND type = 'compaction'`
        ).trim()
      ).toBe("1")
      expect(run(p, ["conversation", "check"]).code).toBe(0)
    }, 120_000)

    it("serve: token in the per-user config directory (0600); a run started, listed and answered through the API", async () => {
      const p = project()
      const steps = script(p, "s.json", [{ message: "Working.", tool_calls: [ask("a1", "web")] }, { message: "Done." }])
      const served = await Serve.start(p, [], { PARLEY_CONFIG: p.config, PARLEY_SCRIPT: steps })
      try {
        const key = new URL(p.storage)
        key.password = ""
        const tokenFile = path.join(
          home,
          "config",
          "parley",
          "postgres",
          crypto.createHash("sha256").update(key.toString()).digest("hex").slice(0, 16),
          "serve-token"
        )
        expect(fs.readFileSync(tokenFile, "utf8")).toBe(`${served.token}\n`)
        expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600)
        expect(fs.statSync(path.dirname(tokenFile)).mode & 0o777).toBe(0o700)
        const created = await served.post("/api/conversations", { message: "deploy", model: "scripted" })
        expect(created.status, JSON.stringify(created.body)).toBe(200)
        const id = created.body.conversation_id as string
        groups.push(created.body.pid as number)
        // The question open, not only the run listed (under load the run was running before it asked).
        await waitFor(
          "the question",
          () =>
            fs.existsSync(socketOf(p, id)) &&
            lsJson(p).some((r) => r.id === id && (r.running?.waiting ?? []).includes("a1.confirm.1"))
        )
        const questions = await served.json("/api/questions")
        expect(questions.body).toMatchObject([{ conversation_id: id, id: "a1.confirm.1" }])
        const listed = await served.json("/api/conversations")
        expect(listed.body).toMatchObject([{ id, running: { waiting: ["a1.confirm.1"] } }])
        const answered = await served.post(`/api/conversations/${id}/questions/a1.confirm.1`, { answer: true })
        expect(answered.body).toStrictEqual({ id: "a1.confirm.1", outcome: "delivered" })
        await waitFor("the run to end", () => effectsOf(p, "web") === "true\n" && !fs.existsSync(socketOf(p, id)))
        const printed = await served.json(`/api/conversations/${id}`)
        expect(printed.body.at(-1)).toMatchObject({ type: "chat_response", message: "Done." })
      } finally {
        expect(await served.stop()).toBe(143)
      }
    }, 120_000)

    it("a password in $PARLEY_STORAGE is not printed: the hint repeats the url without it", () => {
      const p = project()
      const secret = "pw-0f3a9c1e"
      const withPassword = new URL(p.storage)
      withPassword.password = secret
      // Trust authentication: the server ignores the password, so the command reaches the database.
      const r = runParley(["conversation", "print", "17953588145"], {
        cwd: p.root,
        env: { PARLEY_STORAGE: withPassword.toString(), PARLEY_SCRIPT: undefined, PARLEY_CONFIG: undefined }
      })
      expect(r.code).toBe(1)
      expect(r.stderr).toContain(`conversation ls --archived --storage ${p.storage}`)
      expect(r.stderr).not.toContain(secret)
    }, 60_000)
  }
)
