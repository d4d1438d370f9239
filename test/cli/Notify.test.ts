// Notifications (docs/questions-and-approvals.md#notifications): `[notify]`'s command and webhook are told of every question and
// approval a run opens and closes, and of its end, against a real HTTP receiver on 127.0.0.1 and a real
// script. Signatures verify with the secret and not without it; a receiver failing twice gets the same
// delivery three times; a receiver that is down does not slow the run, and what was spooled arrives once
// it is up and the next parley process of the storage runs (a run, `parley inbox`, `parley serve`); no secret
// value appears anywhere.
import { treeBytes } from "../support/TreeBytes.ts"
import { execFile } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary } from "../support/Cli.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { makeProject, type Project, waitFor, writeScript } from "../support/Project.ts"
import { bodies, type Receiver, startReceiver } from "../support/Receiver.ts"
import * as Serve from "../support/Serve.ts"
import { runParley } from "../support/Cli.ts"

const SECRET_ANSWER = "tok-S3cr3tValue-9f8e7d6c5b4a"
const HOOK_SECRET = "hook-key-0123456789abcdef"
const PARLEY_TOKEN = "cluster-token-abcdefghijklmnopqrstuvwxyz012345"
const ENV = { HOOK_SECRET, PARLEY_TOKEN, PARLEY_STORAGE: undefined, PARLEY_SCRIPT: undefined }

const started: Array<number> = []
const receivers: Array<Receiver> = []
afterEach(async () => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone already.
    }
  }
  for (const r of receivers.splice(0)) await r.close()
})

const receiver = async (port = 0) => {
  const r = await startReceiver(port)
  receivers.push(r)
  return r
}

const tool = (name: string, run: string) => `
[conversation.tools.${name}]
source = "local"
command = "python3 asker.py"
description = "Asks twice."
parameters = { type = "object", properties = { name = { type = "string" } }, required = ["name"] }
run = "${run}"

[conversation.tools.${name}.questions.token]
answer = "${SECRET_ANSWER}"
`

/** A project with two asking tools (the second needs an approval), questions that wait, and `[notify]`. */
const project = (notify: string): Project => {
  const p = makeProject()
  fs.copyFileSync(path.join(repoRoot, "test", "fixtures", "tools", "asker.py"), path.join(p.root, "asker.py"))
  fs.writeFileSync(path.join(p.root, "hook.sh"), "cat >> hook.jsonl\necho >> hook.jsonl\nenv >> hook.env\n")
  fs.appendFileSync(
    path.join(p.storage, "config.toml"),
    `${tool("asker_a", "unattended")}${tool("asker_b", "ask")}\n[conversation.inquiry]\ndetached = "wait"\n\n[notify]\n${notify}\n`
  )
  return p
}

const call = (id: string, name: string, arg: string) => ({ id, name, arguments: { name: arg } })

const parley = (p: Project, args: ReadonlyArray<string>) =>
  runParley(["--storage", p.storage, ...args], { cwd: p.root, env: ENV })

/** `parley ARGS` without blocking this process (the receiver lives in it): its exit code and stdout. */
const parleyAsync = (p: Project, args: ReadonlyArray<string>) =>
  new Promise<{ code: number; stdout: string }>((resolve) => {
    const env = { ...process.env, ...ENV } as NodeJS.ProcessEnv
    delete env["PARLEY_STORAGE"]
    delete env["PARLEY_SCRIPT"]
    execFile(
      process.execPath,
      [binary, "--storage", p.storage, ...args],
      { cwd: p.root, env, timeout: 60_000 },
      (error, stdout) => resolve({ code: error === null ? 0 : 1, stdout })
    )
  })

/** `parley conversation answer` without blocking this process. */
const answer = async (p: Project, id: string, inquiry: string, value: string) =>
  (await parleyAsync(p, ["conversation", "answer", id, inquiry, value])).code

const detach = (p: Project, script: string) => {
  const r = parley(p, ["query", "--detach", "--new", "go", "--script", script])
  expect(r.code).toBe(0)
  started.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
  return r.stdout.trim()
}

const verifies = (secret: string, body: string, signature: unknown) =>
  signature === `sha256=${crypto.createHmac("sha256", secret).update(body).digest("hex")}`

/** Answers every person's question the receiver is told of, once, until the run ends. */
const answerAll = async (p: Project, r: Receiver, id: string) => {
  const answered = new Set<string>()
  await waitFor(
    "the run's end",
    () => {
      for (const b of bodies(r)) {
        const inquiry = String(b["inquiry_id"])
        if (b["event"] !== "question_opened" || b["answer_type"] === "secret" || answered.has(inquiry)) continue
        answered.add(inquiry)
        void answer(p, id, inquiry, "yes")
      }
      return bodies(r).some((b) => b["event"] === "run_ended")
    },
    120_000
  )
}

/** Every file under `dir`, as text (latin1: every byte kept). */
const allBytes = (dir: string): string => treeBytes(dir).toString("latin1")

describe("[notify]", () => {
  it("tells the command and the webhook of 5 questions in order, each closed by whom and how, signed, with no secret", async () => {
    const r = await receiver()
    const p = project(`command = ["sh", "hook.sh"]\nwebhook = { url = "${r.url}", secret = "\${env:HOOK_SECRET}" }`)
    const script = writeScript(p, "s.json", [
      { message: "A.", tool_calls: [call("c1", "asker_a", "alpha")] },
      { message: "B.", tool_calls: [call("c2", "asker_b", "beta")] },
      { message: "Done." }
    ])
    const id = detach(p, script)
    await answerAll(p, r, id)
    const got = bodies(r)
    const opened = got.filter((b) => b["event"] === "question_opened")
    expect(opened.map((b) => [b["kind"], b["tool"], b["answer_type"]])).toStrictEqual([
      ["question", "asker_a", "boolean"],
      ["question", "asker_a", "secret"],
      ["approval", "asker_b", "boolean"],
      ["question", "asker_b", "boolean"],
      ["question", "asker_b", "secret"]
    ])
    expect(opened.every((b) => b["conversation_id"] === id)).toBe(true)
    // Named as a person knows it: the conversation's title (its first message's line), on every event.
    expect(got.every((b) => b["title"] === "go")).toBe(true)
    expect(opened[2]!["arguments"]).toStrictEqual({ name: "beta" })
    expect(opened[0]!["answer_command"]).toContain(
      `conversation answer ${id} ${String(opened[0]!["inquiry_id"])} <yes|no> --storage`
    )
    expect(opened[2]!["answer_command"]).toContain(" <yes|no|always|never> ")
    // Each question is closed after it was opened, saying who answered and through what.
    const closedBy = got.find((b) => b["event"] === "question_closed" && b["answer"] === true)?.["answered_by"]
    expect(["you", "other"]).toContain(closedBy)
    for (const o of opened) {
      const at = got.indexOf(o)
      const closed = got.findIndex((b) => b["event"] === "question_closed" && b["inquiry_id"] === o["inquiry_id"])
      expect(closed).toBeGreaterThan(at)
      const c = got[closed]!
      if (o["answer_type"] === "secret") expect([c["answered_by"], c["answer"]]).toStrictEqual(["config", null])
      // A person's answer through `conversation answer`: the names the run's events give it (answerer, surface).
      else expect([c["answered_by"], typeof c["via"], c["answer"]]).toStrictEqual([closedBy, "string", true])
    }
    expect(got.at(-1)!["event"]).toBe("run_ended")
    // Signed: the secret verifies every body; another key verifies none.
    expect(r.received.every((x) => verifies(HOOK_SECRET, x.body, x.headers["x-parley-signature"]))).toBe(true)
    expect(r.received.some((x) => verifies("wrong-secret", x.body, x.headers["x-parley-signature"]))).toBe(false)
    expect(r.received.map((x) => x.headers["x-parley-delivery"])).toStrictEqual(got.map((b) => b["delivery_id"]))
    expect(new Set(got.map((b) => b["delivery_id"])).size).toBe(got.length)
    // The command got the same documents, with a local tool's environment.
    await waitFor("the command's last event", () =>
      fs.readFileSync(path.join(p.root, "hook.jsonl"), "utf8").includes("run_ended")
    )
    const told = fs
      .readFileSync(path.join(p.root, "hook.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(told.map((b) => b["delivery_id"])).toStrictEqual(got.map((b) => b["delivery_id"]))
    const env = fs.readFileSync(path.join(p.root, "hook.env"), "utf8")
    expect(env).not.toMatch(/^PARLEY_/m)
    expect(env).not.toContain(PARLEY_TOKEN)
    // No secret value in any payload, the command's input, or the spool.
    const everything = [...r.received.map((x) => x.body), allBytes(p.root)].join("\n")
    for (const secret of [SECRET_ANSWER, HOOK_SECRET, PARLEY_TOKEN]) {
      expect(r.received.filter((x) => x.body.includes(secret))).toStrictEqual([])
      expect(told.filter((b) => JSON.stringify(b).includes(secret))).toStrictEqual([])
    }
    expect(everything.includes(SECRET_ANSWER.slice(4))).toBe(
      // The config file names the secret answer: it is the only place it may be.
      fs.readFileSync(path.join(p.storage, "config.toml"), "utf8").includes(SECRET_ANSWER.slice(4))
    )
    expect(allBytes(path.join(p.storage, "run")).includes(SECRET_ANSWER)).toBe(false)
  }, 180_000)

  it("a receiver answering 500 twice, then 200, gets the event three times with one delivery id", async () => {
    const r = await receiver()
    r.statuses.push(500, 500)
    const p = project(`webhook = { url = "${r.url}", secret = "\${env:HOOK_SECRET}", events = ["question_opened"] }`)
    const script = writeScript(p, "s.json", [
      { message: "B.", tool_calls: [call("c2", "asker_b", "beta")] },
      { message: "Done." }
    ])
    const id = detach(p, script)
    await waitFor("three tries", () => r.received.length >= 3, 60_000)
    const first = r.received.slice(0, 3)
    expect(new Set(first.map((x) => x.headers["x-parley-delivery"])).size).toBe(1)
    expect(new Set(first.map((x) => x.body)).size).toBe(1)
    expect(first.every((x) => verifies(HOOK_SECRET, x.body, x.headers["x-parley-signature"]))).toBe(true)
    expect(JSON.parse(first[0]!.body)).toMatchObject({
      event: "question_opened",
      kind: "approval",
      conversation_id: id
    })
  }, 120_000)

  it("a hook that fails is logged and shown once as notify_error on the conversation's row", async () => {
    const r = await receiver()
    r.statuses.push(404)
    const p = project(`webhook = { url = "${r.url}", events = ["question_opened"] }`)
    const script = writeScript(p, "s.json", [{ message: "B.", tool_calls: [call("c2", "asker_b", "beta")] }])
    const id = detach(p, script)
    const log = path.join(p.storage, "run", "notify", "notify.log")
    await waitFor("the failure in the log", () => fs.readFileSync(log, "utf8").includes("HTTP 404"), 60_000)
    const rows = () =>
      JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<Record<string, unknown>>
    const first = rows()
    expect(first.map((row) => [row["id"], row["notify_error"]])).toStrictEqual([
      [id, expect.stringMatching(/^webhook question_opened [0-9a-f]+ failed: HTTP 404$/)]
    ])
    expect(rows().map((row) => row["notify_error"])).toStrictEqual([undefined])
    // The run is not failed by it: it still waits for its answer.
    expect(JSON.stringify(first[0]!["running"])).toContain("__permission__")
  }, 120_000)

  it("a receiver that is down does not slow the run; the spool is delivered by the storage's next process", async () => {
    const down = await receiver()
    const port = down.port
    await receivers.pop()!.close()
    const p = project(`webhook = { url = "http://127.0.0.1:${port}/hook", secret = "\${env:HOOK_SECRET}" }`)
    const plain = makeProject()
    const script = (q: Project) => writeScript(q, "s.json", [{ message: "Hello." }])
    const time = (q: Project) => {
      const t0 = performance.now()
      const res = parley(q, ["query", "--new", "hi", "--script", script(q)])
      expect(res.code).toBe(0)
      expect(res.stdout).toBe("Hello.\n")
      return performance.now() - t0
    }
    time(p)
    time(plain)
    // Interleaved, so a burst of load from the rest of the suite hits both sides alike; the best of each.
    const notifiedTimes: Array<number> = []
    const withoutTimes: Array<number> = []
    for (let i = 0; i < 4; i++) {
      notifiedTimes.push(time(p))
      withoutTimes.push(time(plain))
    }
    const notified = Math.min(...notifiedTimes)
    const without = Math.min(...withoutTimes)
    // The same run, told nothing: a down receiver costs it no waiting (slack for a loaded machine).
    expect(notified).toBeLessThan(without * 1.5 + 300)
    const spooled = fs.readdirSync(path.join(p.storage, "run", "notify")).filter((n) => n.endsWith(".json"))
    expect(spooled.length).toBe(5)
    expect(fs.statSync(path.join(p.storage, "run", "notify")).mode & 0o777).toBe(0o700)
    // The receiver's backoff, kept for the storage's next processes (none of them retries it at once).
    const backoff = path.join(p.storage, "run", "notify", "webhook.backoff")
    expect(JSON.parse(fs.readFileSync(backoff, "utf8"))).toMatchObject({ failures: expect.any(Number) })
    expect(fs.statSync(backoff).mode & 0o777).toBe(0o600)
    // Up again; the next process of the storage (a run waiting on a question) delivers what was spooled.
    const up = await receiver(port)
    const waiting = writeScript(p, "w.json", [{ message: "B.", tool_calls: [call("c2", "asker_b", "beta")] }])
    detach(p, waiting)
    await waitFor(
      "the spooled run_ended events",
      () => bodies(up).filter((b) => b["event"] === "run_ended").length === 5,
      60_000
    )
    expect(new Set(bodies(up).map((b) => b["delivery_id"])).size).toBe(bodies(up).length)
    // The receiver took them: its backoff is over.
    await waitFor("the backoff to end", () => !fs.existsSync(backoff), 10_000)
  }, 180_000)

  it("what a run spooled while the receiver was down is delivered once by `parley inbox`, and by `parley serve`", async () => {
    const first = await receiver()
    const port = first.port
    await receivers.pop()!.close()
    const p = project(`webhook = { url = "http://127.0.0.1:${port}/hook", secret = "\${env:HOOK_SECRET}" }`)
    const spool = path.join(p.storage, "run", "notify")
    const spooled = () => fs.readdirSync(spool).filter((n) => n.endsWith(".json"))
    const runWhileDown = (title: string) => {
      const res = parley(p, [
        "query",
        "--new",
        title,
        "--script",
        writeScript(p, `${title}.json`, [{ message: "Hi." }])
      ])
      expect(res.code).toBe(0)
      expect(spooled().length).toBe(1)
    }
    runWhileDown("first")
    const up = await receiver(port)
    const listed = await parleyAsync(p, ["inbox", "--format", "json"])
    expect([listed.code, JSON.parse(listed.stdout)]).toStrictEqual([0, []])
    // Delivered before the inbox ended, once, and gone from the spool; the next inbox has nothing to send.
    expect(bodies(up).map((b) => [b["event"], b["title"]])).toStrictEqual([["run_ended", "first"]])
    expect(spooled()).toStrictEqual([])
    expect((await parleyAsync(p, ["inbox"])).code).toBe(0)
    expect(bodies(up).length).toBe(1)

    await receivers.pop()!.close()
    runWhileDown("second")
    const again = await receiver(port)
    const server = await Serve.start(p, [], { HOOK_SECRET })
    started.push(server.child.pid!)
    await waitFor("the spooled run's end, told by the server", () => bodies(again).length > 0, 30_000)
    expect(bodies(again).map((b) => [b["event"], b["title"]])).toStrictEqual([["run_ended", "second"]])
    expect(spooled()).toStrictEqual([])
    expect(again.received.every((x) => verifies(HOOK_SECRET, x.body, x.headers["x-parley-signature"]))).toBe(true)
    await server.stop()
  }, 120_000)
})
