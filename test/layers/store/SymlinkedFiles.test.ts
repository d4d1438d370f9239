/**
 * The store's own files may be symlinks a person made (docs/security.md#other-users-on-the-machine):
 * `events.json` and `metadata.json` kept elsewhere. Writing the conversation
 * writes the files the links name and keeps the links.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { withoutRunHeader } from "../../support/Cli.ts"
import { tempDir } from "../../support/Fixtures.ts"
import { conversationDir, makeProject, parley, writeScript } from "../../support/Project.ts"

describe("store files that are symlinks", () => {
  it("a second run appends through linked events.json and metadata.json; the links stay links", () => {
    const p = makeProject()
    const first = parley(p, ["query", "--new", "First", "--script", writeScript(p, "one.json", [{ message: "One." }])])
    expect([first.code, withoutRunHeader(first.stderr)]).toStrictEqual([0, ""])
    const dir = conversationDir(p)
    const elsewhere = tempDir("parley-linked-")
    for (const name of ["events.json", "metadata.json"]) {
      fs.renameSync(path.join(dir, name), path.join(elsewhere, name))
      fs.symlinkSync(path.join(elsewhere, name), path.join(dir, name))
    }
    const id = path.basename(dir).split("-")[0]!
    const second = parley(p, [
      "query",
      "--id",
      id,
      "Second",
      "--script",
      writeScript(p, "two.json", [{ message: "Two." }])
    ])
    expect([second.code, withoutRunHeader(second.stderr)]).toStrictEqual([0, ""])
    for (const name of ["events.json", "metadata.json"]) {
      expect(fs.lstatSync(path.join(dir, name)).isSymbolicLink()).toBe(true)
    }
    const events = JSON.parse(fs.readFileSync(path.join(elsewhere, "events.json"), "utf8")) as Array<{ type: string }>
    expect(events.filter((e) => e.type === "chat_request")).toHaveLength(2)
    expect(fs.readdirSync(elsewhere).sort()).toStrictEqual(["events.json", "metadata.json"])
    expect(parley(p, ["conversation", "check", id]).code).toBe(0)
  })
})
