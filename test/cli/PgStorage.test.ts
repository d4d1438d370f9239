/**
 * `--storage postgres://…` and `$PARLEY_STORAGE` (docs/postgres.md) against a
 * throwaway PostgreSQL server: `query` writes a conversation there that
 * `conversation ls`, `print` and `check` read back; 12 parallel `query
 * --new` give 12 distinct conversations; a conversation another process has
 * open fails at once naming its pid and host; an unreachable server is one
 * clear line; and only a postgres storage loads the PostgreSQL code.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../src/domain/storage/ConversationMetadata.ts"
import * as PgConversationStore from "../../src/layers/store/pg/PgConversationStore.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { binary, runParley } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, startPg } from "../support/Pg.ts"

let server: PgServer | undefined
const dir = tempDir("parley-pg-cli-")
const script = path.join(dir, "script.json")
fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "hi there" }] }))
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => {
  server?.stop()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** `parley query` as a child that resolves when it exits. */
const queryAsync = (url: string, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [binary, "--storage", url, "query", "--script", script, ...args], {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

describe.skipIf(pgSkip !== undefined)(
  `parley on PostgreSQL${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    it("query writes to the database; ls, print and check read it ($PARLEY_STORAGE works the same)", () => {
      const url = freshDatabase(server!)
      const q = runParley(["--storage", url, "query", "--new", "--script", script, "hello from pg"], { cwd: dir })
      expect(q.code, q.stderr).toBe(0)
      expect(q.stdout).toBe("hi there\n")
      const id = /conversation (\d+) \(new\)/.exec(q.stderr)![1]!
      const ls = runParley(["conversation", "ls"], { cwd: dir, env: { PARLEY_STORAGE: url } })
      expect(ls.code, ls.stderr).toBe(0)
      expect(ls.stdout).toMatch(
        new RegExp(`^${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d      3 events  hello from pg\\n$`)
      )
      const print = runParley(["--storage", url, "conversation", "print", id, "--format", "json"], { cwd: dir })
      expect(print.code, print.stderr).toBe(0)
      expect(print.stdout).toContain("hello from pg")
      const check = runParley(["--storage", url, "conversation", "check"], { cwd: dir })
      expect(check.code, check.stderr).toBe(0)
      expect(check.stdout).toBe(`ok        ${id}  ${url}#${id}\n`)
      // A second turn continues the same conversation.
      const again = runParley(["--storage", url, "query", "--id", id, "--script", script, "and again"], { cwd: dir })
      expect(again.code, again.stderr).toBe(0)
      expect(runParley(["--storage", url, "conversation", "ls"], { cwd: dir }).stdout).toContain(
        "      6 events  hello from pg"
      )
    })

    it("12 parallel query --new give 12 distinct conversations", async () => {
      const url = freshDatabase(server!)
      const runs = await Promise.all(Array.from({ length: 12 }, (_, i) => queryAsync(url, ["--new", `q${i}`])))
      for (const r of runs) expect(r.code, r.stderr).toBe(0)
      const ids = runs.map((r) => /conversation (\d+) \(new\)/.exec(r.stderr)![1])
      expect(new Set(ids).size).toBe(12)
      expect(runParley(["--storage", url, "conversation", "ls"], { cwd: dir }).stdout.trim().split("\n")).toHaveLength(
        12
      )
    }, 120_000)

    it("a conversation another process has open: query fails at once naming its pid and host", async () => {
      const url = freshDatabase(server!)
      const id = ConversationId.parse("17738399468")!
      await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const store = yield* ConversationStore
            yield* store.create({
              id,
              metadata: ConversationMetadata.make({ title: "held", last_activated_at: Timestamp.now() })
            })
            const started = Date.now()
            const r = yield* Effect.promise(() => queryAsync(url, ["--id", id, "blocked"]))
            expect(Date.now() - started).toBeLessThan(10_000)
            expect(r.code).toBe(1)
            expect(r.stderr).toContain(
              `Conversation ${id} is being written by another parley process (pid ${process.pid} on ${os.hostname()})`
            )
          })
        ).pipe(Effect.provide(Layer.orDie(PgConversationStore.layer({ url }))))
      )
      // Released with the session: the same query now runs.
      const r = runParley(["--storage", url, "query", "--id", id, "--script", script, "now"], { cwd: dir })
      expect(r.code, r.stderr).toBe(0)
    }, 60_000)

    it("an unreachable server is one line naming host, database and what to check", () => {
      const r = runParley(["--storage", "postgres://parley@127.0.0.1:1/nope", "conversation", "ls"], { cwd: dir })
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe(
        "parley: postgres://parley@127.0.0.1:1/nope: cannot use PostgreSQL at 127.0.0.1:1, database nope: PgConnection: Failed to connect: connect ECONNREFUSED 127.0.0.1:1. Check that the server runs and accepts connections there, and the user, password and database in the url\n"
      )
    })
  }
)
