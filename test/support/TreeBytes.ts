/**
 * Every file under a directory as bytes, for "no secret is anywhere" checks.
 * A file that goes between the listing and the read (a lock a process
 * released meanwhile) is skipped: it held nothing at the time it was read.
 */
import * as fs from "node:fs"
import * as path from "node:path"

const read = (file: string): Buffer => {
  try {
    return fs.readFileSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return Buffer.alloc(0)
    throw error
  }
}

/** The bytes of every regular file under `dir`, joined by newlines. */
export const treeBytes = (dir: string): Buffer =>
  Buffer.concat(
    fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .flatMap((e) => [read(path.join(e.parentPath, e.name)), Buffer.from("\n")])
  )
