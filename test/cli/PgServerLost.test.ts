/**
 * A PostgreSQL server that goes away mid-run (docs/postgres.md): the throwaway
 * server is stopped while a slow tool runs. The run stops like an interrupt
 * (exit 130) with one line naming the server and the command that resumes
 * the turn; every row committed before is still there once the server is
 * back, `check` is ok and `--continue-turn` completes. A database that does
 * not exist is one line too.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../support/Pg.ts"
import { addDeferrable, effectsOf, exited, waitFor, WAITING } from "../support/Project.ts"

let server: PgServer | undefined
const root = tempDir("parley-pg-lost-")
process.env["XDG_RUNTIME_DIR"] = path.join(root, "run")
fs.mkdirSync(path.join(root, "run"), { mode: 0o700 })
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => {
  server?.stop()
  fs.rmSync(root, { recursive: true, force: true })
})

const env = { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined, PARLEY_CONFIG: undefined }

describe.skipIf(pgSkip !== undefined)(
  `the database goes away mid-run${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    it("the run stops like an interrupt with the resume command; what was committed stays; after a restart check is ok and --continue-turn completes", async () => {
      const url = freshDatabase(server!)
      addDeferrable(root)
      const config = path.join(root, "team.toml")
      fs.writeFileSync(config, WAITING)
      const steps = path.join(root, "s.json")
      fs.writeFileSync(
        steps,
        JSON.stringify({
          steps: [
            {
              message: "Working.",
              tool_calls: [{ id: "c1", name: "deferrable", arguments: { name: "slow", mode: "slow", seconds: 4 } }]
            },
            { message: "Done." }
          ]
        })
      )
      // The tables first (ls migrates), so polling them below finds them.
      expect(runParley(["--storage", url, "conversation", "ls"], { cwd: root, env }).code).toBe(0)
      const child = spawn(
        process.execPath,
        [binary, "--storage", url, "--config", config, "query", "--new", "go", "--script", steps],
        {
          cwd: root,
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, ...env } as NodeJS.ProcessEnv
        }
      )
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      const rows = () =>
        psql(
          url,
          "SELECT conversation_id || ' ' || seq || ' ' || json FROM parley_events ORDER BY conversation_id, seq"
        )
      await waitFor("the tool call to be committed", () => rows().includes('"type": "tool_call_request"'))
      const committed = rows()
      server!.halt()
      try {
        const code = await exited(child)
        const id = /conversation (\d+) \(new\)/.exec(stderr)![1]!
        expect(code, stderr).toBe(130)
        expect(stdout).toBe("Working.\n")
        const [, line, saved, ...rest] = stderr.split("\n")
        expect(line).toMatch(
          new RegExp(
            `^parley: postgres://parley@127\\.0\\.0\\.1:${server!.port}/${url.split("/").at(-1)}#${id}: appending: .+\\. The PostgreSQL server at 127\\.0\\.0\\.1:${server!.port} \\(database ${url.split("/").at(-1)}\\) went away or cannot be reached: check that it runs and accepts connections there\\.$`
          )
        )
        expect(saved).toBe(
          `The turn is saved; resume it with: parley query --continue-turn --id ${id} --script ${steps} --storage ${url} --config ${config}`
        )
        expect(rest).toStrictEqual([""])
        // While it is gone: one line naming the server and what to check.
        const ls = runParley(["--storage", url, "conversation", "ls"], { cwd: root, env })
        expect(ls.code).toBe(1)
        expect(ls.stderr).toMatch(
          new RegExp(
            `^parley: .*cannot use PostgreSQL at 127\\.0\\.0\\.1:${server!.port}, database ${url.split("/").at(-1)}: .*Check that the server runs and accepts connections there, and the user, password and database in the url\\n$`
          )
        )
      } finally {
        server!.restart()
      }
      // Nothing committed was lost.
      expect(rows().startsWith(committed)).toBe(true)
      const id = /conversation (\d+) \(new\)/.exec(stderr)![1]!
      const check = runParley(["--storage", url, "conversation", "check"], { cwd: root, env })
      expect(check.code, check.stderr).toBe(0)
      const listed = JSON.parse(
        runParley(["--storage", url, "conversation", "ls", "--format", "json"], { cwd: root, env }).stdout
      ) as Array<{ id: string; incomplete: unknown }>
      expect(listed).toMatchObject([{ id, incomplete: { state: "pending-tool-execution" } }])
      // The tool had finished when its response could not be recorded: the resumed turn runs it again.
      expect(effectsOf({ root, storage: url }, "slow")).toBe(`"done"\n`)
      const resume = path.join(root, "r.json")
      fs.writeFileSync(resume, JSON.stringify({ steps: [{ message: "Done." }] }))
      const resumed = runParley(
        ["--storage", url, "--config", config, "query", "--continue-turn", "--id", id, "--script", resume],
        { cwd: root, env }
      )
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stdout).toBe("Done.\n")
      expect(effectsOf({ root, storage: url }, "slow")).toBe(`"done"\n"done"\n`)
      const done = JSON.parse(
        runParley(["--storage", url, "conversation", "ls", "--format", "json"], { cwd: root, env }).stdout
      ) as Array<{ incomplete: unknown }>
      expect(done).toMatchObject([{ incomplete: null }])
      expect(runParley(["--storage", url, "conversation", "check"], { cwd: root, env }).code).toBe(0)
    }, 120_000)

    it("a database that does not exist is one line naming it", () => {
      const missing = `postgres://parley@127.0.0.1:${server!.port}/no_such_db`
      const r = runParley(["--storage", missing, "conversation", "ls"], { cwd: root, env })
      expect(r.code).toBe(1)
      expect(r.stderr.split("\n")).toHaveLength(2)
      expect(r.stderr).toMatch(
        /^parley: postgres:\/\/parley@127\.0\.0\.1:\d+\/no_such_db: cannot use PostgreSQL at 127\.0\.0\.1:\d+, database no_such_db: .*no_such_db.* Check that the server runs/
      )
    })
  }
)
