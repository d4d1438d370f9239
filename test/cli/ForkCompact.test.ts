// JP's `conversation fork --compact[=SPEC]` (RFD 064's DSL; jp_cli's fork.rs): the fork is compacted as it
// is made — a bare `--compact` with the configured rules, each SPEC adding a rule — and the source is
// untouched. A summary needs a model, which fork does not choose: it is refused with one line.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { makeProject, parley, type Project, writeScript } from "../support/Project.ts"

/** A conversation of three finished turns; its id. */
const threeTurns = (p: Project) => {
  const script = writeScript(p, "s.json", [{ message: "One." }, { message: "Two." }, { message: "Three." }])
  expect(parley(p, ["query", "--new", "first", "--script", script]).code).toBe(0)
  const id = (JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{ id: string }>)[0]!.id
  for (const m of ["second", "third"]) expect(parley(p, ["query", "--id", id, m, "--script", script]).code).toBe(0)
  return id
}

/** The compaction events of conversation `id`. */
const compactions = (p: Project, id: string) => {
  const dir = fs.readdirSync(path.join(p.storage, "conversations")).find((d) => d.startsWith(`${id}-`) || d === id)!
  const events = JSON.parse(
    fs.readFileSync(path.join(p.storage, "conversations", dir, "events.json"), "utf8")
  ) as Array<Record<string, unknown>>
  return events.filter((e) => e["type"] === "compaction").map(({ timestamp, event_id, ...rest }) => rest)
}

describe("RFD 064 / JP: conversation fork --compact", () => {
  it("RFD 064 fork --compact=SPEC: the fork gets the rule's compaction, the source none; bare --compact adds the configured rules", () => {
    const p = makeProject()
    const id = threeTurns(p)
    const r = parley(p, ["conversation", "fork", id, "--compact=r:..2", "--format", "json"])
    expect(r.code, r.stderr).toBe(0)
    const forked = (JSON.parse(r.stdout) as { id: string }).id
    expect(compactions(p, forked)).toStrictEqual([{ type: "compaction", from_turn: 0, to_turn: 1, reasoning: "strip" }])
    expect(compactions(p, id)).toStrictEqual([])
    fs.appendFileSync(
      path.join(p.storage, "config.toml"),
      `\n[[conversation.compaction.rules]]\nkeep_last = 1\ntool_calls = "strip"\n`
    )
    const both = parley(p, ["conversation", "fork", id, "--compact", "--compact=r:..1", "--format", "json"])
    expect(both.code, both.stderr).toBe(0)
    const second = (JSON.parse(both.stdout) as { id: string }).id
    expect(
      compactions(p, second).map((c) => Object.keys(c).filter((k) => k !== "type" && !k.endsWith("_turn")))
    ).toStrictEqual([["tool_calls"], ["reasoning"]])
  })

  it("RFD 064 fork --compact: a summary rule is refused with one line (fork chooses no model), and nothing is forked", () => {
    const p = makeProject()
    const id = threeTurns(p)
    const r = parley(p, ["conversation", "fork", id, "--compact=s:..2"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("--compact: a summary needs a model to write it")
    expect((JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<unknown>).length).toBe(1)
  })
})
