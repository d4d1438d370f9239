/**
 * `conversation attach` in a run's first moment: a run nobody watches is
 * served once it calls a tool, asks, or has run 200 ms (docs/benchmarks.md,
 * start-up of a query), so an attach then finds the run's lock held but no
 * socket yet. It must wait for the socket and follow the run, not say the
 * turn is not running. The run is held still (SIGSTOP) in that moment so the
 * attach meets it there whatever the machine's load.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import {
  conversationIdOf,
  exited,
  hostSockets,
  makeProject,
  parley,
  spawnParley,
  waitFor,
  writeScript
} from "../support/Project.ts"
import * as Effect from "effect/Effect"

const children: Array<ChildProcess> = []
afterEach(() => {
  for (const c of children.splice(0)) {
    try {
      c.kill("SIGCONT")
      c.kill("SIGKILL")
    } catch {
      // Gone already.
    }
  }
})

describe("conversation attach before the run is served", () => {
  it.live("waits for the socket of a run whose lock is held, then follows it to its end", () =>
    Effect.gen(function* () {
      const fake = yield* FakeLlmServer.make
      const p = makeProject()
      const script = writeScript(p, "s.json", [{ message: "Hi." }])
      expect(parley(p, ["query", "--model", "scripted", "--script", script, "hello"]).code).toBe(0)
      const id = conversationIdOf(p)
      fake.enqueueOpenAi({ content: "Later on.", headersDelayMs: 500 })
      const lock = path.join(p.storage, "locks", `jp-c${id}.lock`)
      const query = spawnParley(p, ["query", "--id", id, "--model", "openai/gpt-test", "again"], {
        OPENAI_API_KEY: "k",
        OPENAI_BASE_URL: `${fake.url}/v1`
      })
      children.push(query)
      yield* Effect.promise(() => waitFor("the run's lock", () => fs.existsSync(lock), 20_000))
      query.kill("SIGSTOP")
      // Held before its host was due: the attach meets a held lock and no socket.
      expect(hostSockets(p)).toStrictEqual([])
      const attach = spawnParley(p, ["conversation", "attach", id])
      children.push(attach)
      yield* Effect.sleep(600)
      query.kill("SIGCONT")
      const [attached, ran] = yield* Effect.promise(() => Promise.all([exited(attach), exited(query)]))
      expect(ran, query.output()).toBe(0)
      expect(attach.output()).not.toContain("no running turn")
      expect(attached, attach.output()).toBe(0)
      expect(attach.output()).toContain("Later on.")
    }).pipe(Effect.scoped)
  )

  it("says at once that a conversation nobody holds has no running turn", () => {
    const p = makeProject()
    const script = writeScript(p, "s.json", [{ message: "Hi." }])
    expect(parley(p, ["query", "--model", "scripted", "--script", script, "hello"]).code).toBe(0)
    const r = parley(p, ["conversation", "attach", conversationIdOf(p)])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("has no running turn to attach to")
  })
})
