/**
 * The committed corpus subset (docs/storage.md#layout) must stay JP's real files, byte for
 * byte: a reformat, an editor's newline or git's line-ending conversion would
 * make the round-trip tests prove nothing about JP's format.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import {
  fixtureCorpus,
  fixtureCorpusRoot,
  fixtureHistory,
  sharedCorpus,
  sharedHistory,
  snapshotTree
} from "./Fixtures.ts"

describe("the committed corpus subset", () => {
  it("holds the conversations the tests name, with JP's own files", () => {
    const files = [...snapshotTree(path.join(fixtureCorpusRoot, "jp")).keys()].sort()
    expect(files.filter((f) => f.endsWith("events.json")).length).toBe(6)
    expect(files).toContain("conversations/17738399468-rfd-review-and-phase-1-planning/events.json")
    expect(files).toContain("conversations/17738348630-workspace-sanitization-strategy/events.json")
    expect(files).toContain("conversations/17727484633-preventing-rfd-summary-regeneration-churn/events.json")
    expect(files).toContain(
      "conversations/.archive/17659773217-google-api-streaming-event-conversion-issue/events.json"
    )
    // JP writes pretty JSON with a final newline and LF line ends.
    for (const f of files) {
      const text = fs.readFileSync(path.join(fixtureCorpusRoot, "jp", f), "utf8")
      expect(text.includes("\r")).toBe(false)
    }
  })

  it.for([
    { name: "jp", subset: fixtureCorpus, whole: sharedCorpus },
    { name: "jp-history", subset: fixtureHistory, whole: sharedHistory }
  ])("$name: every file of the subset is byte-identical to ../shared/corpus", ({ subset, whole }, ctx) => {
    ctx.skip(whole.absent, whole.skipNote)
    const mine = snapshotTree(subset.dir)
    expect(mine.size).toBeGreaterThan(0)
    for (const [file, bytes] of mine) {
      expect(fs.readFileSync(path.join(whole.dir, file)).toString("base64"), file).toBe(bytes)
    }
  })
})
