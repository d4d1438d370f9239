/**
 * `parley conversation import DIR` and `parley conversation export [ID] --to
 * DIR` through the built CLI (docs/postgres.md#import-and-export): the corpus (all 21 when
 * ../shared is beside the clone) and every history folder go file →
 * `import` → PostgreSQL → `export` → file byte for byte; an id already at
 * the other end is skipped with a line, never overwritten (exit 1); an
 * unknown id, a --to that is not a directory and a DIR without
 * conversations/ are one clear line each. Export and import work between
 * directories too. Copies only: nothing under ../shared is touched.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { runParley } from "../support/Cli.ts"
import { copyToTemp, corpora, historyCorpora, snapshotTree, tempDir } from "../support/Fixtures.ts"
import { freshDatabase, type PgServer, pgSkip, psql, startPg } from "../support/Pg.ts"

let server: PgServer | undefined
const work = tempDir("parley-pg-transfer-")
beforeAll(async () => {
  if (pgSkip === undefined) server = await startPg()
}, 60_000)
afterAll(() => {
  server?.stop()
  fs.rmSync(work, { recursive: true, force: true })
})

const parley = (args: ReadonlyArray<string>) => runParley(args, { cwd: work, timeoutMs: 240_000 })

/** How many conversation directories `dir` holds. */
const conversationDirs = (dir: string): number =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory() && /^\d+(-|$)/.test(d.name)).length
    : 0

/** file → import → PostgreSQL → export → file: the export and the database url. */
const roundTrip = (storage: string, count: number) => {
  const url = freshDatabase(server!)
  const imported = parley(["--storage", url, "conversation", "import", storage])
  expect(imported.code, imported.stderr).toBe(0)
  expect(imported.stdout).toMatch(
    new RegExp(`^Imported ${count} conversations? from ${storage.replaceAll("/", "\\/")}\\.`)
  )
  const out = path.join(tempDir("parley-export-"), "out")
  const exported = parley(["conversation", "export", "--to", out, "--storage", url])
  expect(exported.code, exported.stderr).toBe(0)
  expect(exported.stdout).toBe(`Exported ${count} conversation${count === 1 ? "" : "s"} to ${out}.\n`)
  return { url, out }
}

describe.skipIf(pgSkip !== undefined)(
  `conversation import/export on PostgreSQL${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    for (const corpus of corpora) {
      it.skipIf(corpus.absent)(
        `${corpus.label}: file → import → PostgreSQL → export → file, byte for byte`,
        () => {
          const storage = copyToTemp(corpus.dir)
          const { url, out } = roundTrip(storage, corpus.conversations)
          expect(snapshotTree(out)).toStrictEqual(snapshotTree(storage))
          expect(fs.readdirSync(path.join(out, "conversations", ".archive"))).toHaveLength(corpus.archived.length)
          // The database reads them as the directory does.
          const check = parley(["--storage", url, "conversation", "check", "--format", "json"])
          expect(check.code, check.stderr).toBe(0)
          expect((JSON.parse(check.stdout) as Array<unknown>).length).toBe(corpus.conversations)
          fs.rmSync(storage, { recursive: true, force: true })
          fs.rmSync(path.dirname(out), { recursive: true, force: true })
        },
        300_000
      )
    }

    for (const history of historyCorpora) {
      it.skipIf(history.absent)(
        `${history.label}: every folder comes back byte for byte`,
        () => {
          const root = copyToTemp(history.dir)
          let conversations = 0
          for (const folder of fs
            .readdirSync(root)
            .filter((n) => fs.statSync(path.join(root, n)).isDirectory())
            .sort()) {
            const storage = path.join(root, folder)
            const count =
              conversationDirs(path.join(storage, "conversations")) +
              conversationDirs(path.join(storage, "conversations", ".archive"))
            const { out } = roundTrip(storage, count)
            expect(snapshotTree(out), folder).toStrictEqual(snapshotTree(storage))
            conversations += count
            fs.rmSync(path.dirname(out), { recursive: true, force: true })
          }
          expect(conversations).toBe(history.conversations)
          fs.rmSync(root, { recursive: true, force: true })
        },
        300_000
      )
    }

    it("an id already there is skipped with a line and exit 1, never overwritten; one conversation exports alone", () => {
      const storage = copyToTemp(corpora[0]!.dir)
      const url = freshDatabase(server!)
      const [first] = fs
        .readdirSync(path.join(storage, "conversations"))
        .filter((n) => /^\d/.test(n))
        .sort()
      const id = /^\d+/.exec(first!)![0]
      expect(parley(["--storage", url, "conversation", "import", storage]).code).toBe(0)
      // The planner has the statistics of what was imported (`Transfer.analyze`).
      const analyzed = `SELECT count(*) FROM pg_stat_user_tables
        WHERE relname IN ('parley_conversations', 'parley_events') AND last_analyze IS NOT NULL`
      expect(psql(url, analyzed).trim()).toBe("2")
      // A second import changes nothing in the database and says which ids it skipped.
      psql(url, `UPDATE parley_conversations SET title = 'kept' WHERE id = '${id}'`)
      const again = parley(["--storage", url, "conversation", "import", storage, "--format", "json"])
      expect(again.code).toBe(1)
      const doc = JSON.parse(again.stdout) as { imported: Array<string>; skipped: Array<string> }
      expect(doc.imported).toStrictEqual([])
      expect(doc.skipped).toHaveLength(corpora[0]!.conversations)
      expect(again.stderr).toContain(
        `parley: skipped jp-c${id}: the database has a conversation with this id already; it was not overwritten.\n`
      )
      expect(again.stderr).toMatch(/parley: \d+ conversations not imported: the database has them already\.\n$/)
      expect(psql(url, `SELECT title FROM parley_conversations WHERE id = '${id}'`).trim()).toBe("kept")
      // Export of one id, then again into the same directory: skipped, the files there untouched.
      const out = tempDir("parley-export-one-")
      const one = parley(["--storage", url, "conversation", "export", `jp-c${id}`, "--to", out])
      expect(one.code, one.stderr).toBe(0)
      expect(fs.readdirSync(path.join(out, "conversations"))).toStrictEqual([first])
      expect(snapshotTree(path.join(out, "conversations", first!))).toStrictEqual(
        snapshotTree(path.join(storage, "conversations", first!))
      )
      fs.appendFileSync(path.join(out, "conversations", first!, "events.json"), "mine")
      const before = snapshotTree(out)
      const twice = parley(["--storage", url, "conversation", "export", id, "--to", out])
      expect(twice.code).toBe(1)
      expect(twice.stderr).toBe(
        `parley: skipped jp-c${id}: ${out} has a conversation with this id already; it was not overwritten.\nparley: 1 conversation not exported: ${out} has it already.\n`
      )
      expect(snapshotTree(out)).toStrictEqual(before)
      fs.rmSync(storage, { recursive: true, force: true })
      fs.rmSync(out, { recursive: true, force: true })
    }, 120_000)

    it("clear errors: unknown id, --to not a directory (a link to one is written into), DIR without conversations/", () => {
      const url = freshDatabase(server!)
      const unknown = parley(["--storage", url, "conversation", "export", "17738399468", "--to", path.join(work, "x")])
      expect(unknown.code).toBe(1)
      expect(unknown.stderr).toBe(
        `parley: No conversation with id 17738399468. Run \`parley conversation ls --archived --storage ${url}\` to see the ids.\n`
      )
      expect(fs.existsSync(path.join(work, "x"))).toBe(false)
      const file = path.join(work, "a-file")
      fs.writeFileSync(file, "mine")
      const notDir = parley(["--storage", url, "conversation", "export", "--to", file])
      expect(notDir.code).toBe(1)
      expect(notDir.stderr).toBe(
        `parley: --to: ${file} is a file, not a directory; name a directory (it is made when missing).\n`
      )
      expect(fs.readFileSync(file, "utf8")).toBe("mine")
      const fifo = path.join(work, "a-fifo")
      execFileSync("mkfifo", [fifo])
      expect(parley(["--storage", url, "conversation", "export", "--to", fifo]).stderr).toBe(
        `parley: --to: ${fifo} is a FIFO, not a directory; name a directory (it is made when missing).\n`
      )
      expect(fs.lstatSync(fifo).isFIFO()).toBe(true)
      const noConversations = parley(["--storage", url, "conversation", "import", work])
      expect(noConversations.code).toBe(1)
      expect(noConversations.stderr).toBe(
        `parley: ${work} has no conversations/ folder; name a storage directory (the folder holding conversations/, such as .jp or .parley).\n`
      )
      const missing = parley(["--storage", url, "conversation", "import", path.join(work, "nope")])
      expect(missing.stderr).toBe(
        `parley: ${path.join(work, "nope")} does not exist; name a storage directory (the folder holding conversations/, such as .jp or .parley).\n`
      )
      // A symlink to a directory is written into; the link stays.
      const real = tempDir("parley-export-real-")
      const link = path.join(work, "link")
      fs.symlinkSync(real, link)
      const source = copyToTemp(corpora[0]!.dir)
      expect(parley(["--storage", url, "conversation", "import", source]).code).toBe(0)
      const viaLink = parley(["--storage", url, "conversation", "export", "--to", link])
      expect(viaLink.code, viaLink.stderr).toBe(0)
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
      expect(snapshotTree(real)).toStrictEqual(snapshotTree(source))
      fs.rmSync(real, { recursive: true, force: true })
      fs.rmSync(source, { recursive: true, force: true })
    }, 120_000)
  }
)

describe("conversation import/export between directories", () => {
  it("export from a file storage and import into one copy the directories byte for byte; ids there are skipped", () => {
    const source = copyToTemp(corpora[0]!.dir)
    const out = path.join(work, "dir-export")
    const exported = parley(["--storage", source, "conversation", "export", "--to", out])
    expect(exported.code, exported.stderr).toBe(0)
    expect(snapshotTree(out)).toStrictEqual(snapshotTree(source))
    const target = tempDir("parley-import-target-")
    const imported = parley(["--storage", target, "conversation", "import", out])
    expect(imported.code, imported.stderr).toBe(0)
    expect(snapshotTree(target)).toStrictEqual(snapshotTree(source))
    const again = parley(["--storage", target, "conversation", "import", out])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`has a conversation with this id already; it was not overwritten.`)
    expect(snapshotTree(target)).toStrictEqual(snapshotTree(source))
    const ls = parley(["--storage", target, "conversation", "ls", "--archived", "--format", "json"])
    expect((JSON.parse(ls.stdout) as Array<unknown>).length).toBe(corpora[0]!.conversations)
    for (const d of [source, target]) fs.rmSync(d, { recursive: true, force: true })
  }, 120_000)
})
