/**
 * Test helpers: temp copies of the shared corpus (tests never touch
 * ../shared in place) and small event builders.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
export const sharedDir = path.resolve(repoRoot, "..", "shared")
export const corpusDir = path.join(sharedDir, "corpus", "jp")
export const historyDir = path.join(sharedDir, "corpus", "jp-history")

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
