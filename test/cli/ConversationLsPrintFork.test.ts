import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { runParley } from "../support/Cli.ts"
import { copyToTemp, corpora, fixtureCorpus, snapshotTree, tempDir } from "../support/Fixtures.ts"

const EVENT_TYPES = new Set([
  "turn_start",
  "chat_request",
  "chat_response",
  "tool_call_request",
  "tool_call_response",
  "inquiry_request",
  "inquiry_response"
])

interface LsRow {
  readonly id: string
  readonly title: string | null
  readonly events: number
  readonly last_event_at: string | null
  readonly archived: boolean
  readonly incomplete: { state: string; tool?: string } | null
  readonly tokens: number
}

const ls = (storage: string, ...extra: Array<string>) => {
  const r = runParley(["conversation", "ls", "--storage", storage, "--format", "json", ...extra])
  expect(r.stderr).toBe("")
  expect(r.code).toBe(0)
  return JSON.parse(r.stdout) as Array<LsRow>
}

/** Writes a hand-made conversation (current format) into a storage dir. */
const writeConversation = (storage: string, id: string, entries: Array<Record<string, unknown>>) => {
  const dir = path.join(storage, "conversations", `${id}-case`)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "metadata.json"),
    JSON.stringify({ title: `case ${id}`, last_activated_at: "2026-03-01 10:00:00.0" }, null, 2) + "\n"
  )
  fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
  fs.writeFileSync(path.join(dir, "events.json"), JSON.stringify(entries, null, 2) + "\n")
}

let clock = 0
const t = () => `2026-03-01 10:00:${String(10 + clock++).padStart(2, "0")}.5`
const b64 = (s: string) => Buffer.from(s).toString("base64")
const ev = {
  ts: () => ({ timestamp: t(), type: "turn_start" }),
  req: (content: string) => ({ timestamp: t(), type: "chat_request", content }),
  msg: (message: string) => ({ timestamp: t(), type: "chat_response", message }),
  call: (id: string, name: string) => ({
    timestamp: t(),
    type: "tool_call_request",
    id,
    name,
    arguments: { path: b64("a.txt") }
  }),
  result: (id: string) => ({ timestamp: t(), type: "tool_call_response", id, content: b64("ok"), is_error: false }),
  ask: (id: string, name: string, text: string) => ({
    timestamp: t(),
    type: "inquiry_request",
    id,
    source: { source: "tool", name },
    question: { text, answer_type: { type: "boolean" }, default: true }
  }),
  answer: (id: string) => ({ timestamp: t(), type: "inquiry_response", outcome: "answered", id, answer: true })
}

describe("conversation ls / print (built binary)", () => {
  it.for(corpora)(
    "lists the conversations of $label with event counts and last_event_at matching the files",
    (corpus, ctx) => {
      ctx.skip(corpus.absent, corpus.skipNote)
      const storage = copyToTemp(corpus.dir)
      const rows = ls(storage, "--archived")
      expect(rows.length).toBe(corpus.conversations)
      expect(rows.filter((r) => r.archived).map((r) => r.id)).toStrictEqual(corpus.archived)
      const conversations = path.join(storage, "conversations")
      const dirs = [
        ...fs
          .readdirSync(conversations)
          .filter((n) => /^\d/.test(n))
          .map((n) => path.join(conversations, n)),
        ...fs.readdirSync(path.join(conversations, ".archive")).map((n) => path.join(conversations, ".archive", n))
      ]
      for (const dir of dirs) {
        const id = path.basename(dir).split("-")[0]!
        const entries = JSON.parse(fs.readFileSync(path.join(dir, "events.json"), "utf8")) as Array<{
          type: string
          timestamp?: string
        }>
        const events = entries.filter((e) => EVENT_TYPES.has(e.type))
        const row = rows.find((r) => r.id === id)!
        expect(row.events).toBe(events.length)
        expect(row.last_event_at).toBe(Timestamp.toRfc3339(events.at(-1)!.timestamp!))
        expect(row.title).toBe(JSON.parse(fs.readFileSync(path.join(dir, "metadata.json"), "utf8")).title)
        expect(row.incomplete).toBeNull()
        expect(row.tokens).toBeGreaterThan(0)
      }
      // Without --archived, the archived one is hidden; a second listing uses the index and agrees.
      expect(ls(storage).length).toBe(corpus.conversations - corpus.archived.length)
      expect(ls(storage, "--archived")).toStrictEqual(rows)
    }
  )

  // Two whole processes per conversation of the corpus: bounded for a loaded 2-core machine, not the default minute.
  it.for(corpora)(
    "prints every conversation of $label in both formats without changing a byte",
    { timeout: 300_000 },
    (corpus, ctx) => {
      ctx.skip(corpus.absent, corpus.skipNote)
      const storage = copyToTemp(corpus.dir)
      const before = snapshotTree(path.join(storage, "conversations"))
      for (const row of ls(storage, "--archived")) {
        const md = runParley(["conversation", "print", row.id, "--storage", storage])
        expect(md.code).toBe(0)
        expect(md.stdout.startsWith(`# ${row.title}`)).toBe(true)
        const js = runParley(["conversation", "print", `jp-c${row.id}`, "--storage", storage, "--format", "json"])
        expect(js.code).toBe(0)
        const entries = JSON.parse(js.stdout) as Array<{ type: string }>
        expect(entries.filter((e) => EVENT_TYPES.has(e.type)).length).toBe(row.events)
      }
      const after = snapshotTree(path.join(storage, "conversations"))
      after.delete(".parley-index.json")
      expect(after).toStrictEqual(before)
    }
  )

  it("print --format json removes the storage base64 and renders legacy inquiry answers", () => {
    const storage = copyToTemp(fixtureCorpus.dir)
    const js = runParley(["conversation", "print", "17727484633", "--storage", storage, "--format", "json"])
    const entries = JSON.parse(js.stdout) as Array<Record<string, unknown>>
    const call = entries.find((e) => e["type"] === "tool_call_request")!
    const dir = fs.readdirSync(path.join(storage, "conversations")).find((n) => n.startsWith("17727484633"))!
    const raw = (
      JSON.parse(fs.readFileSync(path.join(storage, "conversations", dir, "events.json"), "utf8")) as Array<
        Record<string, unknown>
      >
    ).find((e) => e["type"] === "tool_call_request")!
    const decode = (v: unknown): unknown =>
      typeof v === "string"
        ? Buffer.from(v, "base64").toString("utf8")
        : Array.isArray(v)
          ? v.map(decode)
          : typeof v === "object" && v !== null
            ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decode(x)]))
            : v
    expect(call["arguments"]).toStrictEqual(decode(raw["arguments"]))
    expect(call["arguments"]).not.toStrictEqual(raw["arguments"])
    const response = entries.find((e) => e["type"] === "tool_call_response")!
    expect(typeof response["content"]).toBe("string")
    expect(entries[0]!["type"]).toBe("config_delta")
    const md = runParley(["conversation", "print", "17727484633", "--storage", storage]).stdout
    expect(md).toContain("Answer: true")
  })

  it("hand-made incomplete conversations show the right state in ls and markers in print", () => {
    const storage = tempDir()
    const cases: Array<[string, Array<Record<string, unknown>>, LsRow["incomplete"], Array<string>]> = [
      ["17000000001", [ev.ts(), ev.req("hi")], { state: "pending-llm-response" }, ["Incomplete turn"]],
      [
        "17000000002",
        [ev.ts(), ev.req("hi"), ev.call("c1", "fs_read_file"), ev.call("c2", "cargo_check")],
        { state: "pending-tool-execution" },
        ["Incomplete turn", "fs_read_file", "cargo_check"]
      ],
      [
        "17000000003",
        [ev.ts(), ev.req("hi"), ev.call("c1", "fs_read_file"), ev.call("c2", "cargo_check"), ev.result("c1")],
        { state: "pending-tool-execution" },
        ["✓ fs_read_file", "cargo_check"]
      ],
      [
        "17000000004",
        [
          ev.ts(),
          ev.req("hi"),
          ev.call("c1", "fs_read_file"),
          ev.call("c2", "fs_modify_file"),
          ev.result("c1"),
          ev.ask("c2.apply.1", "fs_modify_file", "Overwrite existing file?")
        ],
        { state: "waiting-for-input", tool: "fs_modify_file" },
        ["⏸ fs_modify_file", "Overwrite existing file?"]
      ],
      [
        "17000000005",
        [ev.ts(), ev.req("hi"), ev.call("c1", "fs_read_file"), ev.result("c1")],
        { state: "pending-follow-up" },
        ["Incomplete turn"]
      ],
      [
        "17000000006",
        [
          ev.ts(),
          ev.req("hi"),
          ev.call("c1", "fs_read_file"),
          ev.ask("c1.q.1", "fs_read_file", "ok?"),
          ev.answer("c1.q.1"),
          ev.result("c1"),
          ev.msg("done")
        ],
        null,
        []
      ]
    ]
    for (const [id, entries] of cases) writeConversation(storage, id, entries)
    const rows = ls(storage)
    for (const [id, , incomplete, markers] of cases) {
      expect(rows.find((r) => r.id === id)!.incomplete).toStrictEqual(incomplete)
      const md = runParley(["conversation", "print", id, "--storage", storage]).stdout
      for (const m of markers) expect(md).toContain(m)
      if (incomplete === null) expect(md).not.toContain("Incomplete turn")
    }
  })

  it("a damaged conversation is listed as damaged by ls (text and JSON) and named by check; bad ids and flags fail with usage errors", () => {
    const storage = tempDir()
    writeConversation(storage, "17000000001", [ev.ts(), ev.req("hi"), ev.msg("hello")])
    writeConversation(storage, "17000000002", [ev.ts(), { timestamp: t(), type: "chat_request" }])
    const listed = runParley(["conversation", "ls", "--storage", storage, "--format", "json"])
    expect(listed.code).toBe(0)
    const rows = JSON.parse(listed.stdout) as Array<LsRow & { damaged: string | null }>
    expect(rows.map((r) => [r.id, r.damaged === null])).toStrictEqual([
      ["17000000001", true],
      ["17000000002", false]
    ])
    expect(rows[1]).toMatchObject({ title: null, events: null, archived: false, incomplete: null, tokens: null })
    expect(rows[1]!.damaged).toMatch(/events\.json: entry 1: chat_request: missing field "content"$/)
    // One line names the damaged conversation and what to run next (a command that works when pasted: docs/cli.md#status-lines).
    expect(listed.stderr).toMatch(
      /^parley: 17000000002 cannot be read; run `parley conversation check 17000000002 --storage \S+` for details\n$/
    )
    expect(listed.stderr).toContain(`--storage ${storage}\``)
    const text = runParley(["conversation", "ls", "--storage", storage])
    expect(text.code).toBe(0)
    expect(text.stdout.split("\n")[1]).toMatch(/^17000000002  -\s+damaged\s+\S*events\.json: entry 1: /)
    // Damaged alone is never "No conversations yet".
    fs.rmSync(path.join(storage, "conversations", "17000000001-case"), { recursive: true })
    const alone = runParley(["conversation", "ls", "--storage", storage])
    expect(alone.stdout).not.toContain("No conversations yet")
    expect(alone.stdout).toMatch(/^17000000002  .*damaged/)
    const bad = runParley(["conversation", "print", "not-an-id", "--storage", storage])
    expect(bad.code).toBe(2)
    const fmt = runParley(["conversation", "ls", "--storage", storage, "--format", "yaml"])
    expect(fmt.code).toBe(2)
    expect(fmt.stderr + fmt.stdout).toContain("yaml")
  })
})

describe("conversation fork (built binary)", () => {
  it("copies events, including an incomplete turn, into a new conversation; both can be resumed separately", () => {
    const storage = tempDir()
    writeConversation(storage, "17000000001", [
      ev.ts(),
      ev.req("first"),
      ev.msg("one"),
      ev.ts(),
      ev.req("second"),
      ev.call("c1", "fs_modify_file"),
      ev.ask("c1.apply.1", "fs_modify_file", "Apply?")
    ])
    const r = runParley(["conversation", "fork", "17000000001", "--storage", storage, "--format", "json"])
    expect(r.code).toBe(0)
    const { id } = JSON.parse(r.stdout) as { id: string }
    expect(id).not.toBe("17000000001")
    const rows = ls(storage)
    expect(rows.find((x) => x.id === id)!.incomplete).toStrictEqual({
      state: "waiting-for-input",
      tool: "fs_modify_file"
    })
    expect(rows.find((x) => x.id === "17000000001")!.incomplete).toStrictEqual({
      state: "waiting-for-input",
      tool: "fs_modify_file"
    })
    expect(rows.find((x) => x.id === id)!.events).toBe(7)
  })

  it("--until cutting mid-turn leaves that turn incomplete in the fork", () => {
    const storage = tempDir()
    clock = 0
    const entries = [
      ev.ts(),
      ev.req("first"),
      ev.msg("one"),
      ev.ts(),
      ev.req("second"),
      ev.call("c1", "fs_read_file"),
      ev.result("c1"),
      ev.msg("two")
    ]
    writeConversation(storage, "17000000009", entries)
    const until = (entries[6] as { timestamp: string }).timestamp // the tool response and later are cut
    const r = runParley([
      "conversation",
      "fork",
      "17000000009",
      "--until",
      until,
      "--storage",
      storage,
      "--format",
      "json"
    ])
    expect(r.code).toBe(0)
    const { id } = JSON.parse(r.stdout) as { id: string }
    const row = ls(storage).find((x) => x.id === id)!
    expect(row.events).toBe(6)
    expect(row.incomplete).toStrictEqual({ state: "pending-tool-execution" })
    const bad = runParley(["conversation", "fork", "17000000009", "--until", "tomorrow", "--storage", storage])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(`--until: "tomorrow" is not a time`)
  })

  it("--from (inclusive) keeps the later turns; with --until, a window; a bad --from is a usage error", () => {
    const storage = tempDir()
    clock = 0
    const entries = [
      ev.ts(),
      ev.req("first"),
      ev.msg("one"),
      ev.ts(),
      ev.req("second"),
      ev.msg("two"),
      ev.ts(),
      ev.req("third"),
      ev.msg("three")
    ]
    writeConversation(storage, "17000000010", entries)
    const from = (entries[3] as { timestamp: string }).timestamp // the second turn's start: kept
    const r = runParley([
      "conversation",
      "fork",
      "17000000010",
      "--from",
      from,
      "--storage",
      storage,
      "--format",
      "json"
    ])
    expect(r.code).toBe(0)
    const { id } = JSON.parse(r.stdout) as { id: string }
    const printed = JSON.parse(
      runParley(["conversation", "print", id, "--format", "json", "--storage", storage]).stdout
    ) as Array<{ type: string; content?: string }>
    expect(printed.filter((e) => e.type === "chat_request").map((e) => e.content)).toStrictEqual(["second", "third"])
    const until = (entries[6] as { timestamp: string }).timestamp
    const windowed = runParley([
      "conversation",
      "fork",
      "17000000010",
      "--from",
      from,
      "--until",
      until,
      "--storage",
      storage,
      "--format",
      "json"
    ])
    const wid = (JSON.parse(windowed.stdout) as { id: string }).id
    const w = JSON.parse(
      runParley(["conversation", "print", wid, "--format", "json", "--storage", storage]).stdout
    ) as Array<{ type: string; content?: string }>
    expect(w.filter((e) => e.type === "chat_request").map((e) => e.content)).toStrictEqual(["second"])
    const bad = runParley(["conversation", "fork", "17000000010", "--from", "yesterday", "--storage", storage])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(`--from: "yesterday" is not a time`)
    // From at or after until would keep nothing: a usage error, and no conversation made.
    const before = fs.readdirSync(path.join(storage, "conversations")).length
    for (const [f, u] of [
      [until, from],
      [from, from]
    ]) {
      const empty = runParley([
        "conversation",
        "fork",
        "17000000010",
        "--from",
        f!,
        "--until",
        u!,
        "--storage",
        storage
      ])
      expect(empty.code).toBe(2)
      expect(empty.stderr).toContain(`is not before --until`)
    }
    expect(fs.readdirSync(path.join(storage, "conversations")).length).toBe(before)
  })
})
