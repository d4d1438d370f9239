/**
 * A cross-process lock per conversation: `<storage>/locks/jp-c<id>.lock`
 * created with O_EXCL, holding `{ "pid", "acquired_at" }` (JP's diagnostic
 * lock-file shape). A lock whose pid is no longer alive is stale and taken
 * over. We hand-roll this rather than use `proper-lockfile` because users
 * must be told *which* process holds the conversation, and that library
 * records no owner.
 *
 * @example
 * ```ts
 * import * as FileLock from "./FileLock.ts"
 * const result = await FileLock.acquire("/s/locks/jp-c1.lock") // { _tag: "Acquired" } | { _tag: "Held", pid }
 * await FileLock.release("/s/locks/jp-c1.lock")
 * ```
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"

export type AcquireResult = { readonly _tag: "Acquired" } | { readonly _tag: "Held"; readonly pid: number }

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === "EPERM"
  }
}

const readHolder = async (file: string): Promise<number | undefined> => {
  try {
    const parsed: unknown = JSON.parse(await fs.readFile(file, "utf8"))
    const pid = (parsed as { pid?: unknown }).pid
    return typeof pid === "number" ? pid : undefined
  } catch {
    return undefined
  }
}

/** Tries once to take the lock (taking over a stale one). Never waits. */
export const acquire = async (file: string): Promise<AcquireResult> => {
  await fs.mkdir(path.dirname(file), { recursive: true })
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await fs.open(file, "wx", 0o644)
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, acquired_at: new Date().toISOString() }) + "\n")
        await handle.sync()
      } finally {
        await handle.close()
      }
      return { _tag: "Acquired" }
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error
      const pid = await readHolder(file)
      if (pid !== undefined && pid !== process.pid && isAlive(pid)) return { _tag: "Held", pid }
      if (pid === process.pid) return { _tag: "Held", pid }
      // Stale (holder died, or the file is half-written by a crash): move it
      // aside atomically so two processes cannot both remove a fresh lock.
      const aside = `${file}.stale-${process.pid}`
      try {
        await fs.rename(file, aside)
        await fs.rm(aside, { force: true })
      } catch {
        // Someone else took it over first; try again.
      }
    }
  }
  const pid = await readHolder(file)
  return { _tag: "Held", pid: pid ?? -1 }
}

/** Releases the lock if this process holds it. */
export const release = async (file: string): Promise<void> => {
  const pid = await readHolder(file)
  if (pid === process.pid) await fs.rm(file, { force: true })
}
