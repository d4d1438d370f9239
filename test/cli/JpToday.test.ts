// A storage directory written in today's JP shapes (test/fixtures/jp-today: labels as lists,
// event ids, event overlays, from JP's source): ls lists every conversation with its labels,
// print and check pass, a turn parley appends carries event ids, and every entry parley did not
// change keeps its bytes.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runParley, withoutRunHeader } from "../support/Cli.ts"
import { copyToTemp, repoRoot, snapshotTree } from "../support/Fixtures.ts"

const fixture = path.join(repoRoot, "test", "fixtures", "jp-today")
const IDS = ["17900000001", "17900000002", "17900000003", "17900000004"]

interface Row {
  readonly id: string
  readonly events: number
  readonly labels: Record<string, Array<string>>
  readonly damaged: string | null
}

const eventsOf = (storage: string, id: string): string => {
  const dir = path.join(storage, "conversations")
  return fs.readFileSync(path.join(dir, fs.readdirSync(dir).find((n) => n.startsWith(id))!, "events.json"), "utf8")
}

describe("today's JP format (built binary)", () => {
  it("ls lists every conversation with its labels; print and check pass; nothing is written", () => {
    const storage = copyToTemp(fixture)
    const before = snapshotTree(path.join(storage, "conversations"))
    const ls = runParley(["conversation", "ls", "--storage", storage, "--format", "json"])
    expect(ls.stderr).toBe("")
    expect(ls.code).toBe(0)
    const rows = JSON.parse(ls.stdout) as Array<Row>
    expect(rows.map((r) => [r.id, r.events, r.damaged])).toStrictEqual([
      ["17900000001", 6, null],
      ["17900000002", 8, null],
      ["17900000003", 10, null],
      ["17900000004", 3, null]
    ])
    expect(rows.map((r) => r.labels)).toStrictEqual([
      { branch: ["main"], crate: ["jp_config", "jp_llm"], draft: [""] },
      { provider: ["anthropic"] },
      { crate: ["jp_conversation"], team: ["platform", "storage"] },
      { branch: ["main"], team: ["platform"] }
    ])
    const text = runParley(["conversation", "ls", "--storage", storage])
    expect(text.stdout).toContain("Labels and event ids  {branch=main crate=jp_config crate=jp_llm draft}")
    const check = runParley(["conversation", "check", "--storage", storage, "--format", "json"])
    expect(check.code).toBe(0)
    expect(JSON.parse(check.stdout)).toMatchObject(IDS.map((id) => ({ id, ok: true, roundtrip: "identical" })))
    for (const id of IDS) {
      const md = runParley(["conversation", "print", id, "--storage", storage])
      expect(md.code).toBe(0)
      const html = runParley(["conversation", "print", id, "--storage", storage, "--format", "html"])
      expect(html.code).toBe(0)
      const json = runParley(["conversation", "print", id, "--storage", storage, "--format", "json"])
      expect(json.code).toBe(0)
    }
    expect(runParley(["conversation", "print", "17900000001", "--storage", storage]).stdout).toContain(
      "Labels: branch=main crate=jp_config crate=jp_llm draft"
    )
    expect(
      runParley(["conversation", "print", "17900000003", "--storage", storage, "--format", "html"]).stdout
    ).toContain(`<span class="labels">crate=jp_conversation team=platform team=storage</span>`)
    // An overlay reads as what it does to the model's view.
    expect(runParley(["conversation", "print", "17900000002", "--storage", storage]).stdout).toContain(
      '_Event overlay: for the model, drops `anthropic_thinking_signature` where `anthropic_thinking_signature` is "stale-sig"._'
    )
    // print --format json shows each entry's id where the file has it.
    const printed = JSON.parse(
      runParley(["conversation", "print", "17900000001", "--storage", storage, "--format", "json"]).stdout
    ) as Array<Record<string, unknown>>
    expect(printed.map((e) => e["event_id"])).toStrictEqual([
      "a1cfg01",
      "a1turn0",
      "a1req00",
      "a1rsn00",
      "a1call0",
      "a1res00",
      "a1msg00",
      "a1fut00"
    ])
    const after = snapshotTree(path.join(storage, "conversations"))
    after.delete(".parley-index.json")
    expect(after).toStrictEqual(before)
  }, 240_000) // some twenty processes: minutes on a loaded two-core machine

  for (const id of ["17900000001", "17900000004"]) {
    it(`a turn appended to ${id} carries event ids (first, unique, JP's format); the entries before it keep their bytes`, () => {
      const storage = copyToTemp(fixture)
      const old = eventsOf(storage, id)
      const script = path.join(storage, "script.json")
      fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "Next answer." }] }))
      const r = runParley(["--storage", storage, "query", "next", "--id", id, "--script", script])
      expect(withoutRunHeader(r.stderr)).toBe("")
      expect(r.code).toBe(0)
      const now = eventsOf(storage, id)
      // The old entries, byte for byte, then the new ones.
      expect(now.startsWith(old.slice(0, -"\n]\n".length) + ",\n")).toBe(true)
      const entries = JSON.parse(now) as Array<Record<string, unknown>>
      const oldCount = (JSON.parse(old) as Array<unknown>).length
      const added = entries.slice(oldCount)
      expect(added.map((e) => e["type"])).toContain("chat_request")
      for (const e of added) {
        expect(Object.keys(e)[0]).toBe("event_id")
        expect(e["event_id"]).toMatch(/^[0-9a-z]{7}$/)
      }
      const ids = entries.map((e) => e["event_id"]).filter((x) => typeof x === "string" && x !== "")
      expect(new Set(ids).size).toBe(ids.length)
      const check = runParley(["conversation", "check", id, "--storage", storage])
      expect(check.code).toBe(0)
    })
  }
})
