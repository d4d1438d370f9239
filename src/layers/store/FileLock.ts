/**
 * A cross-process lock per conversation: `<storage>/locks/jp-c<id>.lock`
 * holding `{ "pid", "acquired_at" }` (JP's diagnostic lock-file shape). We
 * hand-roll this rather than use `proper-lockfile` because users must be told
 * *which* process holds the conversation, and that library records no owner.
 *
 * The lock file never exists without its owner: it is written to a private
 * temp file first and `link()`ed into place, which fails if a lock exists.
 * A lock is stale when its holder is gone: its pid is dead, a zombie, or
 * impossible (≤ 1: 0 and -1 would "signal" whole process groups and look
 * alive forever), or its pid now belongs to another program (the lock
 * records the holder's start time, `proc_start`, and a lock without one must
 * name a `parley` or `jp` process), or it is our own pid but not a lock this
 * process took (a container restarts parley as pid 1 every time). Only the
 * holder of `<lock>.takeover` (taken the same way) may remove a stale lock,
 * so racing processes never delete a lock another has just taken.
 *
 * What a `kill -9` leaves behind is swept by the next writer (docs/storage.md#new-ids-and-locks):
 * {@link sweepTemps} removes temp files of dead writers, {@link dropIfStale}
 * a stale lock (the store calls it for conversations that do not exist).
 *
 * @example
 * ```ts
 * import * as FileLock from "parley/layers/store/FileLock"
 * const result = await FileLock.acquire("/s/locks/jp-c1.lock") // { _tag: "Acquired" } | { _tag: "Held", pid }
 * await FileLock.release("/s/locks/jp-c1.lock")
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as JsonText from "../../domain/storage/JsonText.ts"
import { DIR_MODE, FILE_MODE } from "../../domain/storage/PrivateDir.ts"
import * as ErrorCode from "../ErrorCode.ts"
import * as FileCalls from "./FileCalls.ts"

export type AcquireResult = { readonly _tag: "Acquired" } | { readonly _tag: "Held"; readonly pid: number }

/** Locks this process holds (to tell our own lock from a dead namesake's): process state, as a lock file names the process (its pid), not a scope. */
const held = new Set<string>()

/**
 * Per lock, the last of this process's takes and releases of it. They run one
 * at a time: a lock file names a process, not a fiber, so a sibling fiber
 * reading our lock between its link into place and its entry in `held` (or
 * between a release forgetting it and removing it) would call it stale, take
 * it over, and both would hold it.
 */
const queues = new Map<string, Promise<void>>()

const serially = <A>(file: string, f: () => Promise<A>): Promise<A> => {
  const run = (queues.get(file) ?? Promise.resolve()).then(f)
  const tail = run.then(
    () => undefined,
    () => undefined
  )
  queues.set(file, tail)
  void tail.then(() => {
    if (queues.get(file) === tail) queues.delete(file)
  })
  return run
}

/** An unreadable lock younger than this is being created right now: treat it as held. */
const UNREADABLE_GRACE_MS = 10_000

/** Whether process `pid` exists (EPERM: it does, owned by someone else). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return ErrorCode.of(error) === "EPERM"
  }
}

/** `/proc/<pid>/stat`'s fields after the command name (state first), or undefined without /proc. */
const statFields = async (pid: number): Promise<Array<string> | undefined> => {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

/** When process `pid` started (clock ticks since boot, `/proc/<pid>/stat` field 22), or undefined without /proc. */
export const processStart = async (pid: number): Promise<string | undefined> => (await statFields(pid))?.[19]

/** A program that may hold a conversation lock: parley (any path naming it) or JP's `jp`. */
const mayHold = (argv: ReadonlyArray<string>): boolean =>
  argv.some((arg) => /parley/i.test(path.basename(arg))) || path.basename(argv[0] ?? "") === "jp"

/**
 * Whether the process named by a lock still holds it. Without /proc (not
 * Linux) only death counts; with it, a zombie, a process started after the
 * lock's holder (`proc_start` differs) or, for a lock that records no start,
 * a program that is neither parley nor JP does not.
 */
const holds = async (pid: number, start: string | undefined): Promise<boolean> => {
  if (pid <= 1 || !isAlive(pid)) return false
  const fields = await statFields(pid)
  if (fields === undefined) return true
  if (fields[0] === "Z") return false
  if (start !== undefined) return fields[19] === start
  try {
    const argv = (await fs.readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").filter((a) => a !== "")
    return argv.length === 0 || mayHold(argv) // a kernel thread or an unreadable one: leave it be
  } catch {
    return true
  }
}

interface Holder {
  readonly pid: number | undefined
  readonly start: string | undefined
  readonly ageMs: number
}

const readHolder = async (
  file: string,
  calls: FileCalls.FileCalls = FileCalls.promised
): Promise<Holder | undefined> => {
  try {
    const [text, mtimeMs] = await Promise.all([calls.readText(file), calls.mtimeMs(file)])
    if (text === undefined) return undefined
    let record: { pid?: unknown; proc_start?: unknown } = {}
    try {
      const parsed: unknown = JsonText.parse(text)
      if (typeof parsed === "object" && parsed !== null) record = parsed
    } catch {
      record = {}
    }
    return {
      pid: typeof record.pid === "number" && Number.isInteger(record.pid) ? record.pid : undefined,
      start: typeof record.proc_start === "string" ? record.proc_start : undefined,
      ageMs: Date.now() - mtimeMs
    }
  } catch (error) {
    if (ErrorCode.of(error) === "ENOENT") return undefined
    throw error
  }
}

const isStale = async (file: string, holder: Holder): Promise<boolean> => {
  if (holder.pid === undefined) return holder.ageMs > UNREADABLE_GRACE_MS
  if (holder.pid === process.pid) return !held.has(file)
  return !(await holds(holder.pid, holder.start))
}

/**
 * Whether the taker named by the takeover lock `file` is gone, to a sweep
 * (`sweepTemps`): stale as a lock is (dead at once, however young the file: a
 * writer `kill -9`ed mid-takeover), except that this process's own takeover
 * never is: one of its fibers may be taking the lock over. (A take itself asks
 * `isStale`: takes of one lock run one at a time, so a takeover lock naming
 * this process there is a namesake's, left by a pid 1 restarted.)
 */
const takerGone = async (file: string, taker: Holder): Promise<boolean> =>
  taker.pid !== process.pid && (await isStale(file, taker))

/** This process's start time (it never changes: read once, not at every lock taken). */
let ownStart: Promise<string | undefined> | undefined

/** Our record: JP's `{pid, acquired_at}`, and when this process started, to tell it from a later one with the same pid. */
const record = async (): Promise<string> => {
  ownStart ??= processStart(process.pid)
  const start = await ownStart
  return (
    JSON.stringify({
      pid: process.pid,
      acquired_at: new Date().toISOString(),
      ...(start === undefined ? {} : { proc_start: start })
    }) + "\n"
  )
}

/** Creates `file` atomically with our record in it; false if it already exists. */
const create = async (file: string): Promise<boolean> => {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  await fs.writeFile(temp, await record(), { mode: FILE_MODE })
  try {
    await fs.link(temp, file)
    return true
  } catch (error) {
    if (ErrorCode.of(error) === "EEXIST") return false
    throw error
  } finally {
    await fs.rm(temp, { force: true })
  }
}

/** Whether a live process holds the lock `file` now (read only: a stale lock is left where it is). */
export const heldLive = async (file: string): Promise<boolean> => {
  try {
    const holder = await readHolder(file)
    return holder !== undefined && holder.pid !== undefined && !(await isStale(file, holder))
  } catch {
    return false
  }
}

/** Tries to take the lock (taking over a stale one). Never waits for another process; a sibling fiber's take or release of the same lock, it does. */
export const acquire = (file: string): Promise<AcquireResult> => serially(file, () => take(file))

const take = async (file: string): Promise<AcquireResult> => {
  // A new locks/ is private; an existing one (JP's, shared) is used as it is.
  await fs.mkdir(path.dirname(file), { recursive: true, mode: DIR_MODE })
  const takeover = `${file}.takeover`
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await create(file)) {
      held.add(file)
      return { _tag: "Acquired" }
    }
    const holder = await readHolder(file)
    if (holder === undefined) continue // released meanwhile: try again
    if (!(await isStale(file, holder))) return { _tag: "Held", pid: holder.pid ?? -1 }
    // Stale. Only the process holding the takeover lock may remove it, so a
    // racer can never delete a lock another process has just taken.
    if (!(await create(takeover))) {
      const taker = await readHolder(takeover)
      if (taker !== undefined && (await isStale(takeover, taker))) {
        await fs.rm(takeover, { force: true }) // a taker that died mid-takeover
        continue
      }
      return { _tag: "Held", pid: taker?.pid ?? holder.pid ?? -1 }
    }
    try {
      const again = await readHolder(file)
      if (again !== undefined && !(await isStale(file, again))) return { _tag: "Held", pid: again.pid ?? -1 }
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

/** Whether this process holds the lock `file` (taken, not yet released). */
export const heldHere = (file: string): boolean => held.has(file)

/** Releases the lock if this process holds it (`calls`: how, `FileCalls.ts`). */
export const release = (file: string, calls: FileCalls.FileCalls = FileCalls.promised): Promise<void> =>
  serially(file, async () => {
    if (!held.has(file)) return
    try {
      const holder = await readHolder(file, calls)
      if (holder?.pid === process.pid) await calls.remove(file)
    } finally {
      held.delete(file)
    }
  })

/**
 * Removes `file` when it is a stale lock (taking it over first, so a lock
 * another process holds or has just taken is never removed). True when no
 * lock is left there.
 */
export const dropIfStale = async (file: string): Promise<boolean> => {
  if ((await readHolder(file)) === undefined) return true
  if ((await acquire(file))._tag === "Held") return false
  await release(file)
  return true
}

/** What `create` names its temp files: `<lock>.<pid>.<random>.tmp`. */
const TEMP = /\.(-?\d+)\.[a-z0-9]*\.tmp$/

/**
 * Removes the temp files of lock writers that died between writing and
 * linking them (a `kill -9` mid-create), and takeover locks whose holder is
 * gone. The locks themselves are left to {@link dropIfStale}.
 */
export const sweepTemps = async (dir: string): Promise<void> => {
  let names: Array<string>
  try {
    names = await fs.readdir(dir)
  } catch {
    return
  }
  for (const name of names) {
    const file = path.join(dir, name)
    const pid = TEMP.exec(name)?.[1]
    // Only death counts for a temp file: a live writer may be a library's process of any name.
    if (pid !== undefined && Number(pid) !== process.pid && (Number(pid) <= 1 || !isAlive(Number(pid)))) {
      await fs.rm(file, { force: true })
    } else if (name.endsWith(".takeover")) {
      const holder = await readHolder(file)
      if (holder !== undefined && (await takerGone(file, holder))) await fs.rm(file, { force: true })
    }
  }
}
