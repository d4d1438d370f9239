/**
 * Test helpers: the JP corpora the tests read (a committed subset that is
 * always there, and the whole shared corpus when it sits beside the clone —
 * docs/storage.md#layout), temp copies of them (tests never touch either in place) and
 * small event builders.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
export const sharedDir = path.resolve(repoRoot, "..", "shared")
/** The committed subset: real JP files, byte for byte (see its README). */
export const fixtureCorpusRoot = path.join(repoRoot, "test", "fixtures", "corpus")

/** A storage directory of real JP conversations, and what the tests know about it. */
export interface Corpus {
  /** Short test-name label (vitest cuts `$label` at 40 characters). */
  readonly label: string
  /** The storage directory (it holds `conversations/`). */
  readonly dir: string
  /** True when the directory is missing: the tests on it are skipped, not failed. */
  readonly absent: boolean
  /** Why the tests on it are skipped (for `ctx.skip(corpus.absent, corpus.skipNote)`). */
  readonly skipNote: string
  /** Conversation ids in `conversations/.archive/`. */
  readonly archived: ReadonlyArray<string>
  /** Live plus archived conversations. */
  readonly conversations: number
}

const corpus = (name: string, dir: string, archived: ReadonlyArray<string>, conversations: number): Corpus => {
  const absent = !fs.existsSync(dir)
  const skipNote = `${path.relative(repoRoot, dir)} not found beside the repository`
  return { label: name, dir, absent, skipNote, archived, conversations }
}

/** Six of the 21 HEAD conversations (5 live, 1 archived): always present. */
export const fixtureCorpus = corpus(
  "the corpus subset in test/fixtures",
  path.join(fixtureCorpusRoot, "jp"),
  ["17659773217"],
  6
)
/** All 21 HEAD conversations (20 live, 1 archived), when ../shared is beside the clone. */
export const sharedCorpus = corpus(
  "the whole corpus in ../shared",
  path.join(sharedDir, "corpus", "jp"),
  ["17659773217"],
  21
)
/** Every corpus a whole-corpus test runs on: the subset always, the whole corpus when present. */
export const corpora: ReadonlyArray<Corpus> = [fixtureCorpus, sharedCorpus]

/** Folders of storage directories from older JP revisions (legacy formats): 3 conversations in 2 folders. */
export const fixtureHistory = corpus(
  "the history subset in test/fixtures",
  path.join(fixtureCorpusRoot, "jp-history"),
  [],
  3
)
/** All 39 conversations of jp-history, when ../shared is beside the clone. */
export const sharedHistory = corpus(
  "the whole history in ../shared",
  path.join(sharedDir, "corpus", "jp-history"),
  [],
  39
)
export const historyCorpora: ReadonlyArray<Corpus> = [fixtureHistory, sharedHistory]

/** A fresh temp directory, removed by the caller (or left in /tmp for inspection). */
export const tempDir = (prefix = "parley-test-"): string => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

/** Copies a storage directory (or any folder) to a new temp dir and returns the copy. */
export const copyToTemp = (source: string, prefix = "parley-corpus-"): string => {
  const dir = tempDir(prefix)
  fs.cpSync(source, dir, { recursive: true })
  return dir
}

/** Every file under `dir`, relative path → bytes (to prove nothing changed). */
export const snapshotTree = (dir: string): Map<string, string> => {
  const out = new Map<string, string>()
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else out.set(path.relative(dir, p), fs.readFileSync(p).toString("base64"))
    }
  }
  walk(dir)
  return out
}
