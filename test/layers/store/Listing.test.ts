/**
 * `conversation ls` from the sidecar index (issue 16): a row is reused only
 * while every file it came from is unchanged; damage is remembered (not
 * re-parsed) until the files change; the order is by the time each
 * conversation was last active, whatever its timestamp's form.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Listing from "../../../src/layers/store/Listing.ts"
import { tempDir } from "../../support/Fixtures.ts"

const entry = (timestamp: string, type: string, extra: Record<string, unknown> = {}) => ({ timestamp, type, ...extra })
const pretty = (entries: ReadonlyArray<object>) =>
  entries.length === 0 ? "[]\n" : "[\n" + entries.map((e) => "  " + JSON.stringify(e, null, 2).replaceAll("\n", "\n  ")).join(",\n") + "\n]\n"

/** Writes one conversation directory (base_config.json, so the first entry may be anything). */
const write = (conversations: string, name: string, lastActive: string, entries: ReadonlyArray<object>, title = name) => {
  const dir = path.join(conversations, name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "metadata.json"), JSON.stringify({ title, last_activated_at: lastActive }, null, 2) + "\n")
  fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
  fs.writeFileSync(path.join(dir, "events.json"), pretty(entries))
  return dir
}

const oneTurn = [entry("2026-03-01 10:00:00.0", "turn_start"), entry("2026-03-01 10:00:00.1", "chat_request", { content: "hi" })]
const indexStat = (conversations: string) => {
  const st = fs.statSync(path.join(conversations, Listing.INDEX))
  return `${st.ino}:${st.mtimeMs}`
}

describe("Listing.list", () => {
  it("reuses a row only while its files are unchanged", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    const dir = write(conversations, "17000000001-a", "2026-03-01 10:00:00.0", oneTurn, "First title")
    const first = await Listing.list(conversations, { archived: false })
    expect(first.conversations.map((c) => [c.title, c.events, c.incomplete])).toStrictEqual([["First title", 2, { state: "pending-llm-response" }]])
    const stamp = indexStat(conversations)
    // Unchanged: served from the index, which is not rewritten.
    expect((await Listing.list(conversations, { archived: false })).conversations).toStrictEqual(first.conversations)
    expect(indexStat(conversations)).toBe(stamp)
    // metadata.json changed (the same size): the new title.
    fs.writeFileSync(path.join(dir, "metadata.json"), JSON.stringify({ title: "Other title", last_activated_at: "2026-03-01 10:00:00.0" }, null, 2) + "\n")
    expect((await Listing.list(conversations, { archived: false })).conversations.map((c) => c.title)).toStrictEqual(["Other title"])
    // events.json replaced: the new count and state.
    fs.writeFileSync(path.join(dir, "events.json.tmp"), pretty([...oneTurn, entry("2026-03-01 10:00:01.0", "chat_response", { message: "hello" })]))
    fs.renameSync(path.join(dir, "events.json.tmp"), path.join(dir, "events.json"))
    expect((await Listing.list(conversations, { archived: false })).conversations.map((c) => [c.events, c.incomplete])).toStrictEqual([[3, null]])
    // A journal line appended beside it (a turn still running): counted.
    const line = { at: 3, base: String(fs.statSync(path.join(dir, "events.json")).size), entry: entry("2026-03-01 10:00:02.0", "turn_start") }
    fs.writeFileSync(path.join(dir, "events.json.journal"), JSON.stringify(line) + "\n")
    expect((await Listing.list(conversations, { archived: false })).conversations.map((c) => c.events)).toStrictEqual([4])
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("reports a damaged conversation on every listing without re-reading it, and lists it once repaired", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-good", "2026-03-01 10:00:00.0", oneTurn)
    const bad = write(conversations, "17000000002-bad", "2026-03-01 10:00:00.0", oneTurn)
    fs.writeFileSync(path.join(bad, "events.json"), "[\n  {\n    \"type\": 5\n  }\n]\n")
    const first = await Listing.list(conversations, { archived: false })
    expect(first.conversations.map((c) => c.id)).toStrictEqual(["17000000001"])
    expect(first.damaged.map((d) => [d.id, d.reason.replace(bad, "<dir>")])).toStrictEqual([
      ["17000000002", '<dir>/events.json: entry 0: field "type" must be a string, got number 5']
    ])
    const stamp = indexStat(conversations)
    expect(await Listing.list(conversations, { archived: false })).toStrictEqual(first)
    expect(indexStat(conversations)).toBe(stamp) // remembered, so nothing was decoded and nothing rewritten
    fs.writeFileSync(path.join(bad, "events.json"), pretty(oneTurn))
    const repaired = await Listing.list(conversations, { archived: false })
    expect([repaired.conversations.map((c) => c.id).sort(), repaired.damaged]).toStrictEqual([["17000000001", "17000000002"], []])
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("orders by last activity (fractions of any length, RFC 3339 offsets), then by the higher id", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-a", "2026-03-01 10:00:00.65", [])
    write(conversations, "17000000002-b", "2026-03-01 10:00:00.7", [])
    write(conversations, "17000000003-c", "2026-03-01 09:00:00.0", [])
    write(conversations, "17000000004-d", "2026-03-01T09:30:00-01:00", []) // 10:30 UTC: the latest
    write(conversations, "17000000005-e", "2026-03-01 10:00:00.650", []) // ties with a: the higher id first
    write(conversations, "17000000006-f", "2026-03-01 09:00:00", []) // ties with c
    write(conversations, "17000000007-g", "2026-03-01T08:00:00Z", []) // the largest string
    write(conversations, "17000000008-h", "1969-12-31 23:59:59.5", []) // before the epoch: the earliest
    for (let round = 0; round < 2; round++) { // from the files, then from the index
      const { conversations: rows } = await Listing.list(conversations, { archived: false })
      expect(rows.map((c) => c.id.slice(-1))).toStrictEqual(["4", "2", "5", "1", "6", "3", "7", "8"])
    }
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("an index it cannot read (damaged, another version) is rebuilt from the files", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-a", "2026-03-01 10:00:00.0", oneTurn)
    for (const text of ["{not json", JSON.stringify({ version: 2, rows: { "17000000001-a": { stamp: "x", summary: {} } } })]) {
      fs.writeFileSync(path.join(conversations, Listing.INDEX), text)
      const { conversations: rows } = await Listing.list(conversations, { archived: false })
      expect(rows.map((c) => [c.id, c.events])).toStrictEqual([["17000000001", 2]])
    }
    fs.rmSync(root, { recursive: true, force: true })
  })
})
