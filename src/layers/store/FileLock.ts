/**
 * A cross-process lock per conversation: `<storage>/locks/jp-c<id>.lock`
 * holding `{ "pid", "acquired_at" }` (JP's diagnostic lock-file shape). We
 * hand-roll this rather than use `proper-lockfile` because users must be told
 * *which* process holds the conversation, and that library records no owner.
 *
 * The lock file never exists without its owner: it is written to a private
 * temp file first and `link()`ed into place, which fails if a lock exists.
 * A lock is stale when its pid is dead, or is our own pid but not a lock
 * this process took (a container restarts parley as pid 1 every time).
 * Only the holder of `<lock>.takeover` (taken the same way) may remove a
 * stale lock, so racing processes never delete a lock another has just taken.
 *
 * @example
 * ```ts
 * import * as FileLock from "parley/layers/store/FileLock"
 * const result = await FileLock.acquire("/s/locks/jp-c1.lock") // { _tag: "Acquired" } | { _tag: "Held", pid }
 * await FileLock.release("/s/locks/jp-c1.lock")
 * ```
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"

export type AcquireResult = { readonly _tag: "Acquired" } | { readonly _tag: "Held"; readonly pid: number }

/** Locks this process holds (to tell our own lock from a dead namesake's). */
const held = new Set<string>()

/** An unreadable lock younger than this is being created right now: treat it as held. */
const UNREADABLE_GRACE_MS = 10_000

/** Whether process `pid` exists (EPERM: it does, owned by someone else). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: string }).code === "EPERM"
  }
}

const readHolder = async (file: string): Promise<{ pid: number | undefined; ageMs: number } | undefined> => {
  try {
    const [text, stat] = await Promise.all([fs.readFile(file, "utf8"), fs.stat(file)])
    let pid: number | undefined
    try {
      const parsed = (JSON.parse(text) as { pid?: unknown }).pid
      pid = typeof parsed === "number" ? parsed : undefined
    } catch {
      pid = undefined
    }
    return { pid, ageMs: Date.now() - stat.mtimeMs }
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined
    throw error
  }
}

const isStale = (file: string, holder: { pid: number | undefined; ageMs: number }): boolean => {
  if (holder.pid === undefined) return holder.ageMs > UNREADABLE_GRACE_MS
  if (holder.pid === process.pid) return !held.has(file)
  return !isAlive(holder.pid)
}

/** Creates `file` atomically with our record in it; false if it already exists. */
const create = async (file: string): Promise<boolean> => {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  await fs.writeFile(temp, JSON.stringify({ pid: process.pid, acquired_at: new Date().toISOString() }) + "\n")
  try {
    await fs.link(temp, file)
    return true
  } catch (error) {
    if ((error as { code?: string }).code === "EEXIST") return false
    throw error
  } finally {
    await fs.rm(temp, { force: true })
  }
}

/** Tries to take the lock (taking over a stale one). Never waits. */
export const acquire = async (file: string): Promise<AcquireResult> => {
  await fs.mkdir(path.dirname(file), { recursive: true })
  const takeover = `${file}.takeover`
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await create(file)) {
      held.add(file)
      return { _tag: "Acquired" }
    }
    const holder = await readHolder(file)
    if (holder === undefined) continue // released meanwhile: try again
    if (!isStale(file, holder)) return { _tag: "Held", pid: holder.pid ?? -1 }
    // Stale. Only the process holding the takeover lock may remove it, so a
    // racer can never delete a lock another process has just taken.
    if (!(await create(takeover))) {
      const taker = await readHolder(takeover)
      if (taker !== undefined && taker.ageMs > UNREADABLE_GRACE_MS) {
        await fs.rm(takeover, { force: true }) // a taker that died mid-takeover
        continue
      }
      return { _tag: "Held", pid: taker?.pid ?? holder.pid ?? -1 }
    }
    try {
      const again = await readHolder(file)
      if (again !== undefined && !isStale(file, again)) return { _tag: "Held", pid: again.pid ?? -1 }
      await fs.rm(file, { force: true })
      if (await create(file)) {
        held.add(file)
        return { _tag: "Acquired" }
      }
      const winner = await readHolder(file)
      return { _tag: "Held", pid: winner?.pid ?? -1 }
    } finally {
      await fs.rm(takeover, { force: true })
    }
  }
  const holder = await readHolder(file)
  return { _tag: "Held", pid: holder?.pid ?? -1 }
}

/** Releases the lock if this process holds it. */
export const release = async (file: string): Promise<void> => {
  if (!held.has(file)) return
  held.delete(file)
  const holder = await readHolder(file)
  if (holder?.pid === process.pid) await fs.rm(file, { force: true })
}
