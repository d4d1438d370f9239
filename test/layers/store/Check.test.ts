/**
 * `conversation check` of one directory (docs/benchmarks.md: it compares the re-encoded
 * entries with the bytes read, piece by piece): identical only when every
 * byte matches, to the last one; what cannot be written back is an error
 * naming the file, and a value nested deeper than the writer goes is
 * written back as it was read.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as ConversationId from "../../../src/domain/storage/ConversationId.ts"
import { checkAll, checkOne } from "../../../src/layers/store/Check.ts"
import { fixtureCorpus, tempDir } from "../../support/Fixtures.ts"

const corpusDir = path.join(fixtureCorpus.dir, "conversations", "17727484633-preventing-rfd-summary-regeneration-churn")
const id = ConversationId.parse("17727484633")!

/** A copy of a corpus conversation whose events.json is `events(original)`. */
const conversationWith = (events: (original: Buffer) => Buffer | string) => {
  const dir = path.join(tempDir(), "conversations", path.basename(corpusDir))
  fs.cpSync(corpusDir, dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "events.json"), events(fs.readFileSync(path.join(corpusDir, "events.json"))))
  return dir
}

const check = async (dir: string) => {
  const result = await checkOne(id, { dir, archived: false })
  if (result === undefined) throw new Error("the conversation was removed while it was checked")
  fs.rmSync(path.dirname(path.dirname(dir)), { recursive: true, force: true })
  return { ...result, path: "", error: result.error?.replace(dir, "<dir>") }
}

describe("checkOne", () => {
  it("identical only when every byte, to the last, is what re-encoding writes", async () => {
    expect(await check(conversationWith((b) => b))).toStrictEqual({
      id,
      path: "",
      ok: true,
      roundtrip: "identical",
      error: undefined
    })
    // One more newline at the end: still valid JSON, but not what a re-save writes.
    expect((await check(conversationWith((b) => Buffer.concat([b, Buffer.from("\n")])))).roundtrip).toBe("changed")
    // One byte less (the final newline): the same.
    expect(await check(conversationWith((b) => b.subarray(0, b.length - 1)))).toMatchObject({
      ok: true,
      roundtrip: "changed"
    })
  })

  it("bytes that are not UTF-8 would be rewritten as U+FFFD: changed, not identical", async () => {
    const dir = conversationWith((b) => {
      const at = b.indexOf('"content": "') + 12 // inside a string value
      return Buffer.concat([b.subarray(0, at), Buffer.from([0xff]), b.subarray(at)])
    })
    expect(await check(dir)).toMatchObject({ ok: true, roundtrip: "changed" })
  })

  it("a value nested 20,000 deep (JSON.stringify cannot write it back) checks identical: it is written back as it was read (docs/decisions.md#json-depth)", async () => {
    const deep = "[".repeat(20_000) + "]".repeat(20_000)
    const dir = conversationWith((b) =>
      b.toString("utf8").replace('"type": "turn_start"', `"type": "turn_start",\n    "x": ${deep}`)
    )
    expect(await check(dir)).toMatchObject({ ok: true, roundtrip: "identical" })
  })
})

describe("checkAll", () => {
  it("returns every result in the order asked, whatever finishes first", async () => {
    const dirs = [conversationWith((b) => b), conversationWith(() => "not json"), conversationWith((b) => b)]
    const results = await checkAll(dirs.map((dir) => [id, { dir, archived: false }] as const))
    expect(results.map((r) => [r.path, r.ok])).toStrictEqual([
      [dirs[0], true],
      [dirs[1], false],
      [dirs[2], true]
    ])
    for (const dir of dirs) fs.rmSync(path.dirname(path.dirname(dir)), { recursive: true, force: true })
  })
})
