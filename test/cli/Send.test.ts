// Talking to a running turn (docs/cli.md#talk-to-a-running-turn): `conversation send` queues a message beside the
// conversation while a turn runs; the run delivers it at its next model request (`next`), as a turn of its own when
// the turn ends (`after`), or stops the turn and goes on with it (`now`); a kill -9 of the run neither loses nor
// repeats it; two senders at once are both delivered in the order of their ids; the conversation stays valid.
import * as fs from "node:fs"
import * as path from "node:path"
import { spawn } from "node:child_process"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary, runParley } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import {
  conversationDir,
  exited,
  hostSockets,
  killGroup,
  makeProject,
  parley,
  persisted,
  type Project,
  spawnParley,
  waitFor,
  waitForLines,
  writeScript
} from "../support/Project.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
const pids: Array<number> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone
    }
  }
})

const slowCall = { id: "c1", name: "counter", arguments: { name: "slow" } }

/** Starts a run whose tool `slow` blocks until `slow.block` is removed; resolves with its id once the tool runs. */
const running = async (p: Project, steps: ReadonlyArray<unknown>) => {
  fs.writeFileSync(path.join(p.root, "slow.block"), "")
  const script = writeScript(p, "s.json", steps)
  const child = spawnParley(p, ["query", "--new", "go", "--script", script])
  children.push(child)
  await waitForLines("the tool to run", path.join(p.root, "slow.pid"), 1, 60_000)
  await waitFor("the host's socket", () => hostSockets(p).length === 1, 60_000)
  return { child, id: hostSockets(p)[0]!.replace(".sock", "") }
}

const unblock = (p: Project) => fs.rmSync(path.join(p.root, "slow.block"), { force: true })

/** `conversation send` with `$PARLEY_SCRIPT` (what a run it starts in the background follows). */
const send = (p: Project, args: ReadonlyArray<string>, script?: string) =>
  runParley(["--storage", p.storage, "conversation", "send", ...args], {
    cwd: p.root,
    env: { PARLEY_STORAGE: undefined, PARLEY_SCRIPT: script }
  })

const requests = (p: Project) => persisted(p).filter((e) => e.type === "chat_request")
/** Who sent a request (its `parley_message` metadata; JP keeps a metadata string base64 on disk). */
const sentBy = (e: Record<string, unknown>) => {
  const m = (e["metadata"] as Record<string, { id: number; via: string }> | undefined)?.["parley_message"]
  return m === undefined ? undefined : { id: m.id, via: Buffer.from(m.via, "base64").toString("utf8") }
}
const checked = (p: Project, id: string) => {
  const r = parley(p, ["conversation", "check", id])
  expect(r.code, r.stdout + r.stderr).toBe(0)
}

describe("conversation send to a running turn", () => {
  it("after (the default): queued beside the events, then a turn of its own once the running one ends", async () => {
    const p = makeProject()
    const { child, id } = await running(p, [
      { message: "Working.", tool_calls: [slowCall] },
      { message: "Done." },
      { message: "Second." }
    ])
    const r = send(p, [id, "also check the tests"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe("1\n")
    expect(r.stderr).toContain("Queued message 1: a new turn starts with it when the running turn")
    // Kept beside the events (private), not in them, until delivered.
    const queue = path.join(conversationDir(p), ".parley-queue.jsonl")
    expect(fs.statSync(queue).mode & 0o777).toBe(0o600)
    expect(requests(p).map((e) => e["content"])).toStrictEqual(["go"])
    expect(parley(p, ["conversation", "ls"]).stdout).toContain("[1 message queued]")
    unblock(p)
    expect(await exited(child)).toBe(0)
    expect(parley(p, ["conversation", "ls"]).stdout).not.toContain("queued")
    const entries = persisted(p)
    expect(entries.filter((e) => e.type === "turn_start")).toHaveLength(2)
    expect(requests(p).map((e) => [e["content"], sentBy(e)])).toStrictEqual([
      ["go", undefined],
      ["also check the tests", { id: 1, via: "terminal" }]
    ])
    expect(entries.at(-1)).toMatchObject({ type: "chat_response", message: "Second." })
    checked(p, id)
    // Delivered: too late to withdraw.
    const late = send(p, [id, "--withdraw", "1"])
    expect(late.code).toBe(1)
    expect(late.stderr).toContain("Message 1 was already delivered.")
  })

  it("--withdraw takes a queued message back before the turn ends", async () => {
    const p = makeProject()
    const { child, id } = await running(p, [{ message: "Working.", tool_calls: [slowCall] }, { message: "Done." }])
    expect(send(p, [id, "never mind"]).code).toBe(0)
    const w = send(p, [id, "--withdraw", "1"])
    expect(w.code, w.stderr).toBe(0)
    expect(w.stderr).toBe("Withdrew message 1.\n")
    unblock(p)
    expect(await exited(child)).toBe(0)
    expect(requests(p).map((e) => e["content"])).toStrictEqual(["go"])
    expect(send(p, [id, "--withdraw", "7"]).code).toBe(1)
  }, 120_000)

  it("two senders at once: both delivered, each its own turn, in the order of the ids they were given", async () => {
    const p = makeProject()
    const { child, id } = await running(p, [
      { message: "Working.", tool_calls: [slowCall] },
      { message: "Done." },
      { message: "One." },
      { message: "Two." }
    ])
    const senders = ["from here", "from there"].map((m) => {
      const s = spawnParley(p, ["conversation", "send", id, m])
      children.push(s)
      return s
    })
    expect(await Promise.all(senders.map(exited))).toStrictEqual([0, 0])
    const ids = senders.map((s) => Number(s.output().match(/^(\d+)$/m)![1]))
    expect([...ids].sort()).toStrictEqual([1, 2])
    unblock(p)
    expect(await exited(child)).toBe(0)
    const byId = ids[0] === 1 ? ["from here", "from there"] : ["from there", "from here"]
    expect(requests(p).map((e) => e["content"])).toStrictEqual(["go", ...byId])
    expect(requests(p).map((e) => (sentBy(e) as { id: number } | undefined)?.id)).toStrictEqual([undefined, 1, 2])
    checked(p, id)
  }, 120_000)

  it("kill -9 of the run after queueing: the next run delivers it exactly once; a send meanwhile waits for the incomplete turn", async () => {
    const p = makeProject()
    const { child, id } = await running(p, [{ message: "Working.", tool_calls: [slowCall] }])
    expect(send(p, [id, "first"]).code).toBe(0)
    child.kill("SIGKILL")
    await exited(child)
    killGroup(Number(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8")))
    unblock(p)
    // Nothing runs now, and the turn is incomplete: the message waits for it.
    const waiting = send(p, [id, "second"])
    expect(waiting.code, waiting.stderr).toBe(0)
    expect(waiting.stdout).toBe("2\n")
    expect(waiting.stderr).toContain("has an incomplete turn")
    expect(waiting.stderr).toContain(`query --continue-turn --id ${id}`)
    const script = writeScript(p, "r.json", [{ message: "Done." }, { message: "A." }, { message: "B." }])
    const resumed = parley(p, ["query", "--continue-turn", "--id", id, "--script", script])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(requests(p).map((e) => e["content"])).toStrictEqual(["go", "first", "second"])
    // Again: nothing is delivered twice.
    const again = parley(p, ["query", "--continue-turn", "--id", id, "--script", script])
    expect(again.code, again.stderr).toBe(0)
    expect(requests(p).map((e) => e["content"])).toStrictEqual(["go", "first", "second"])
    checked(p, id)
  }, 120_000)

  it("a discarded turn: the message queued during it is kept, and the next run delivers it once", async () => {
    const p = makeProject()
    const { child, id } = await running(p, [{ message: "Working.", tool_calls: [slowCall] }])
    expect(send(p, [id, "kept"]).stdout).toBe("1\n")
    child.kill("SIGKILL")
    await exited(child)
    killGroup(Number(fs.readFileSync(path.join(p.root, "slow.pid"), "utf8")))
    unblock(p)
    const discarded = parley(p, ["query", "--discard-turn", "--id", id])
    expect(discarded.code, discarded.stderr).toBe(0)
    expect(requests(p).map((e) => e["content"])).toStrictEqual([])
    expect(parley(p, ["conversation", "ls"]).stdout).toContain("[1 message queued]")
    const script = writeScript(p, "d.json", [{ message: "Kept." }, { message: "Never." }])
    for (let i = 0; i < 2; i++) {
      const r = parley(p, ["query", "--continue-turn", "--id", id, "--script", script])
      expect(r.code, r.stderr).toBe(0)
      expect(requests(p).map((e) => [e["content"], sentBy(e)])).toStrictEqual([["kept", { id: 1, via: "terminal" }]])
    }
    checked(p, id)
  }, 120_000)

  it("now: the turn stops (a finished tool's result kept, the cut one answered as interrupted) and goes on with the message", async () => {
    const p = makeProject()
    const { child, id } = await running(p, [
      {
        message: "Working.",
        tool_calls: [{ id: "f1", name: "counter", arguments: { name: "fast" } }, slowCall]
      }
    ])
    await waitFor("the fast tool's result", () =>
      persisted(p).some((e) => e.type === "tool_call_response" && e["id"] === "f1")
    )
    const next = writeScript(p, "n.json", [{ message: "Understood." }])
    const started = Date.now()
    const r = send(p, [id, "stop that and summarise", "--when", "now"], next)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("Stopped the running turn")
    expect(Date.now() - started).toBeLessThan(30_000)
    expect(await exited(child)).not.toBe(null)
    await waitFor(
      "the turn to go on with the message",
      () => persisted(p).at(-1)?.["message"] === "Understood." && hostSockets(p).length === 0,
      30_000
    )
    const tail = persisted(p).filter((e) => e.type !== "turn_start")
    const responses = tail.filter((e) => e.type === "tool_call_response")
    expect(responses.find((e) => e["id"] === "f1")).toMatchObject({ is_error: false })
    expect(responses.find((e) => e["id"] === "c1")).toMatchObject({ is_error: true })
    expect(persisted(p).filter((e) => e.type === "turn_start")).toHaveLength(1)
    const last = tail.slice(-2)
    expect(last[0]).toMatchObject({ type: "chat_request", content: "stop that and summarise" })
    expect(sentBy(last[0]!)).toStrictEqual({ id: 1, via: "terminal" })
    checked(p, id)
    const printed = parley(p, ["conversation", "print", id])
    expect(printed.stdout).toContain("stop that and summarise")
  }, 120_000)

  it("nothing running: send starts a run in the background that delivers it", async () => {
    const p = makeProject()
    const first = parley(p, ["query", "--new", "hi", "--script", writeScript(p, "a.json", [{ message: "Hello." }])])
    expect(first.code, first.stderr).toBe(0)
    const id = path.basename(conversationDir(p)).split("-")[0]!
    const r = send(p, [id, "and again"], writeScript(p, "b.json", [{ message: "Again." }]))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("Nothing was running")
    await waitFor("the delivery", () => persisted(p).at(-1)?.["message"] === "Again." && hostSockets(p).length === 0)
    expect(requests(p).map((e) => e["content"])).toStrictEqual(["hi", "and again"])
  }, 120_000)
})

describe("conversation send --when next (real SDK, fake provider on 127.0.0.1)", () => {
  it.live(
    "the next request's messages hold it after the tool result; recorded as JP records a reply typed mid-turn",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = makeProject()
        fs.writeFileSync(path.join(p.root, "slow.block"), "")
        fake.enqueueAnthropic(
          {
            blocks: [{ type: "tool_use", id: "toolu_1", name: "counter", input: { name: "slow" } }],
            stopReason: "tool_use"
          },
          { blocks: [{ type: "text", text: "Noted." }] }
        )
        const host = spawn(
          process.execPath,
          [binary, "--storage", p.storage, "query", "--new", "--model", "anthropic/claude-test", "count"],
          {
            cwd: p.root,
            env: { ...process.env, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url, PARLEY_STORAGE: "" },
            stdio: ["ignore", "pipe", "pipe"]
          }
        )
        children.push(host)
        if (host.pid !== undefined) pids.push(host.pid)
        yield* Effect.promise(() =>
          // A whole process that loads the Anthropic SDK, then a tool process: 20 s was hit under a parallel suite.
          waitFor(
            "the tool and the socket",
            () => fs.existsSync(path.join(p.root, "slow.pid")) && hostSockets(p).length === 1,
            60_000
          )
        )
        const id = hostSockets(p)[0]!.replace(".sock", "")
        const r = send(p, [id, "use the blue one", "--when", "next"])
        expect(r.code, r.stderr).toBe(0)
        expect(r.stderr).toContain("gets it with its next request to the model")
        unblock(p)
        expect(yield* Effect.promise(() => exited(host))).toBe(0)
        expect(fake.requests).toHaveLength(2)
        const messages = fake.requests[1]!.body.messages as Array<{ role: string; content: unknown }>
        const last = JSON.stringify(messages.at(-1))
        expect(messages.at(-1)!.role).toBe("user")
        expect(last.indexOf("tool_result")).toBeGreaterThanOrEqual(0)
        expect(last.indexOf("use the blue one")).toBeGreaterThan(last.indexOf("tool_result"))
        const entries = persisted(p)
        const types = entries.map((e) => e.type)
        expect(types.filter((t) => t === "turn_start")).toHaveLength(1)
        const at = types.lastIndexOf("chat_request")
        expect(types[at - 1]).toBe("tool_call_response")
        expect(entries[at]).toMatchObject({ content: "use the blue one" })
        expect(types[at + 1]).toBe("chat_response")
        checked(p, id)
      }),
    120_000
  )
})
