import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { runParley } from "../support/Cli.ts"
import {
  copyToTemp,
  corpora,
  fixtureCorpus,
  historyCorpora,
  repoRoot,
  snapshotTree,
  tempDir
} from "../support/Fixtures.ts"

interface CheckRow {
  readonly id: string
  readonly path: string
  readonly ok: boolean
  readonly roundtrip: "identical" | "changed" | null
  readonly error?: string
}

describe("parley conversation check (built binary)", () => {
  it.for(corpora)(
    "reads every conversation of $label (live and archived) and round-trips them byte for byte",
    (corpus, ctx) => {
      ctx.skip(corpus.absent, corpus.skipNote)
      const storage = copyToTemp(corpus.dir)
      const before = snapshotTree(storage)
      const r = runParley(["conversation", "check", "--storage", storage, "--format", "json"])
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
      const rows = JSON.parse(r.stdout) as Array<CheckRow>
      expect(rows.length).toBe(corpus.conversations)
      expect(rows.filter((x) => x.path.includes(`${path.sep}.archive${path.sep}`)).length).toBe(corpus.archived.length)
      expect(rows.every((x) => x.ok && x.roundtrip === "identical")).toBe(true)
      expect(snapshotTree(storage)).toStrictEqual(before)
    }
  )

  it("accepts a JP-style id and --storage after the subcommand; unknown ids fail with a hint", () => {
    const storage = copyToTemp(fixtureCorpus.dir)
    const one = runParley(["conversation", "check", "jp-c17738399468", "--storage", storage, "--format", "json"])
    expect(one.code).toBe(0)
    expect((JSON.parse(one.stdout) as Array<CheckRow>).map((x) => x.id)).toStrictEqual(["17738399468"])
    const missing = runParley(["--storage", storage, "conversation", "check", "123"])
    expect(missing.code).toBe(1)
    // The hint repeats --storage, so it works when pasted (docs/cli.md#status-lines).
    expect(missing.stderr).toBe(
      `parley: No conversation with id 123. Run \`parley conversation ls --archived --storage ${storage}\` to see the ids.\n`
    )
    const bad = runParley(["conversation", "check", "nope", "--storage", storage])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(`"nope" is not a conversation id`)
  })

  it.for(historyCorpora)(
    "every folder of $label either loads or reports the file (and entry) — never a crash, never a write",
    (history, ctx) => {
      ctx.skip(history.absent, history.skipNote)
      const copy = copyToTemp(history.dir)
      const before = snapshotTree(copy)
      let conversations = 0
      for (const folder of fs.readdirSync(copy).filter((n) => fs.statSync(path.join(copy, n)).isDirectory())) {
        const r = runParley(["conversation", "check", "--storage", path.join(copy, folder), "--format", "json"])
        expect(r.stderr).not.toMatch(/at .*\.(ts|mjs|js):\d+/) // no stack trace
        const rows = JSON.parse(r.stdout) as Array<CheckRow>
        expect(rows.length).toBeGreaterThan(0)
        conversations += rows.length
        for (const row of rows) {
          if (row.ok) {
            expect(row.roundtrip === "identical" || row.roundtrip === "changed").toBe(true)
          } else {
            expect(row.error).toMatch(/(metadata|events|base_config)\.json(: entry \d+)?: /)
            expect(r.code).toBe(1)
          }
        }
      }
      expect(conversations).toBe(history.conversations)
      expect(snapshotTree(copy)).toStrictEqual(before)
    }
  )

  it("reports damage with file and entry and exits 1 (text format)", () => {
    const storage = tempDir()
    const dir = path.join(storage, "conversations", "17000000000-x")
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, "metadata.json"), `{"last_activated_at": "2026-01-01 00:00:00.0"}\n`)
    fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
    fs.writeFileSync(path.join(dir, "events.json"), `[{"timestamp":"2026-01-01 00:00:00.0","type":"chat_response"}]\n`)
    const r = runParley(["conversation", "check", "--storage", storage])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(
      `events.json: entry 0: chat_response: needs one of "message" (string), "reasoning" (string) or "data"`
    )
    expect(r.stderr).toBe("parley: 1 conversation(s) failed to decode and 0 would change on re-save (of 1).\n")
  })

  it("--version matches package.json", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string }
    const r = runParley(["--version"])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(pkg.version)
  })
})
