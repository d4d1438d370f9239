// The journal's fold (src/layers/store/Journal.ts): an entry that does not decode never reaches JP's
// events.json.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Journal from "../../../src/layers/store/Journal.ts"
import { tempDir } from "../../support/Fixtures.ts"

const good = { type: "chat_request", timestamp: "2026-11-30T00:00:00.000Z", content: "hi" }
const bad = { type: "chat_request", timestamp: "not a time", content: "hi" }

/** A conversation directory whose events.json is an empty array. */
const conversation = () => {
  const dir = tempDir("parley-journal-")
  fs.writeFileSync(path.join(dir, Journal.EVENTS), "[]\n")
  return dir
}

describe("Journal.fold", () => {
  it("folds decodable entries into events.json and removes the journal", async () => {
    const dir = conversation()
    await Journal.append(dir, [{ at: 0, entry: good }], "3")
    expect(await Journal.fold(dir)).toBe("folded")
    expect(JSON.parse(fs.readFileSync(path.join(dir, Journal.EVENTS), "utf8"))).toStrictEqual([good])
    expect(fs.existsSync(path.join(dir, Journal.FILE))).toBe(false)
  })

  it("refuses an entry that does not decode, and leaves events.json and the journal as they were", async () => {
    const dir = conversation()
    await Journal.append(dir, [{ at: 0, entry: good }], "3")
    // A line this process did not encode (another writer's, a damaged one) after a good one.
    await Journal.append(dir, [{ at: 1, entry: bad }], "3")
    await expect(Journal.fold(dir)).rejects.toBeInstanceOf(Journal.JournalError)
    expect(fs.readFileSync(path.join(dir, Journal.EVENTS), "utf8")).toBe("[]\n")
    expect(fs.existsSync(path.join(dir, Journal.FILE))).toBe(true)
  })
})
