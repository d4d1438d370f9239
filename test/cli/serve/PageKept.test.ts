// parley serve (docs/serve.md#the-page): a conversation's page is kept while the conversation is unchanged
// (`ConversationStore.version`: its directory and its files' sizes, times and inodes). Viewed again, the same
// bytes; after a new turn, a renamed title, a turn recorded by another process, or damage, what is on disk now.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import {
  conversationDir,
  conversationIdOf,
  makeProject,
  parley,
  type Project,
  waitingProject,
  writeScript
} from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const servers: Array<Serve.Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop()
})

const page = async (s: Serve.Server, id: string) => {
  const r = await fetch(`${s.base}/conversations/${id}`, { headers: s.auth })
  return { status: r.status, type: r.headers.get("content-type"), text: await r.text() }
}

/** A turn of `p`'s conversation (a new one when `id` is absent) whose scripted reply is `reply`. */
const turn = (p: Project, message: string, reply: string, id?: string) => {
  const script = writeScript(p, `s-${reply.length}-${Date.now()}.json`, [{ message: reply }])
  const r = parley(p, ["query", ...(id === undefined ? ["--new"] : ["--id", id]), message, "--script", script])
  expect(r.code, r.stderr).toBe(0)
}

describe("parley serve: a conversation's page kept while it is unchanged", () => {
  it("the same bytes viewed again; a turn another process records, then damage, show at once", async () => {
    const p = makeProject()
    turn(p, "first question", "The first reply.")
    const id = conversationIdOf(p)
    const s = await Serve.start(p)
    servers.push(s)

    const first = await page(s, id)
    expect(first.status).toBe(200)
    expect(first.type).toBe("text/html; charset=utf-8")
    expect(first.text).toContain("The first reply.")
    expect((await page(s, id)).text).toBe(first.text)

    // Recorded by another process (the CLI), while the server keeps the page it drew.
    turn(p, "second question", "The second reply.", id)
    const second = await page(s, id)
    expect(second.text).toContain("The second reply.")
    expect(second.text).toContain("The first reply.")

    // Damaged in place, same directory: the page says so, not what it drew before.
    fs.writeFileSync(path.join(conversationDir(p), "events.json"), "[{ not json")
    const damaged = await page(s, id)
    expect(damaged.status).toBe(500)
    expect(damaged.text).not.toContain("The second reply.")
  })

  it("a title another program writes (a new file renamed over metadata.json) shows on the next view", async () => {
    const p = makeProject()
    turn(p, "a question", "A reply.")
    const id = conversationIdOf(p)
    const file = path.join(conversationDir(p), "metadata.json")
    const titled = (title: string) => {
      const metadata = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>
      // As JP writes it: a new file renamed into place.
      fs.writeFileSync(`${file}.tmp`, `${JSON.stringify({ ...metadata, title }, null, 2)}\n`)
      fs.renameSync(`${file}.tmp`, file)
    }
    titled("Title AAAA")
    const s = await Serve.start(p)
    servers.push(s)
    expect((await page(s, id)).text).toContain("<title>Title AAAA</title>")
    titled("Title BBBB")
    expect((await page(s, id)).text).toContain("<title>Title BBBB</title>")
  })

  it("a settled conversation's page is sent as kept; a message queued for it (its files unchanged) draws it again", async () => {
    const p = waitingProject()
    const script = writeScript(p, "s.json", [
      {
        message: "Working on it.",
        tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }]
      }
    ])
    // Nobody to ask: the question is deferred and the turn is left incomplete, nothing runs.
    expect(parley(p, ["query", "--new", "deploy", "--script", script, "--detached-policy", "defer"]).code).toBe(3)
    const id = conversationIdOf(p)
    const dir = conversationDir(p)
    // Settled: changed an hour ago (a version of files changed within a few seconds is never the same twice).
    const hourAgo = new Date(Date.now() - 3_600_000)
    for (const f of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, f), hourAgo, hourAgo)
    const s = await Serve.start(p)
    servers.push(s)
    const first = await page(s, id)
    expect(first.text).toContain("Working on it.")
    expect(first.text).toContain('data-state="incomplete"')

    // Rewritten in place to the same size and given back its time: a stamp that cannot tell (the limit
    // docs/serve.md states), used here to see that the kept page is what is sent.
    const events = path.join(dir, "events.json")
    const text = fs.readFileSync(events, "utf8")
    const inode = fs.statSync(events).ino
    fs.writeFileSync(events, text.replace("Working on it.", "WORKING ON IT."))
    fs.utimesSync(events, hourAgo, hourAgo)
    expect(fs.statSync(events).ino).toBe(inode)
    expect((await page(s, id)).text).toBe(first.text)

    // The live part changes (a queued message), the files do not: the page is drawn again.
    const sent = parley(p, ["conversation", "send", id, "hello from the test"])
    expect(sent.stdout.trim(), sent.stderr).toBe("1")
    const third = await page(s, id)
    expect(third.text).toContain("hello from the test")
    expect(third.text).toContain("WORKING ON IT.")
  })
})
