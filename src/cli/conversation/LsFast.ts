/**
 * `parley conversation ls` in its common case, without Effect (issue 50: `ls` within 1.5×
 * `node -e 0`; docs/startup.md#start-up-of-the-reading-commands): a storage directory whose
 * listed conversations have no host socket (a live run is asked over RPC: `layers/host/Running.ts`)
 * and no question a killed `parley ask` may have left (closed first: `programs/UnhostedAsks.ts`),
 * read without an error (the store's error, with its next step, is the Effect path's). Anything
 * else is declined before any output is written or a failed notification taken (the listing may
 * have refreshed its index, a cache the Effect path's listing reads), and `ReadingRun.ts` lists
 * from the start. It has nothing to finish, so a signal ends it by the signal (a shell's script stops
 * at Ctrl-C), even while a read blocks (a FIFO in place of a file): `process.exit` would wait for it.
 *
 * The rows, their text and the notifications taken are the Effect path's own code
 * (`layers/store/Listing.ts`, `LsText.ts`, `layers/notify/SpoolDir.ts`): both print the same bytes.
 * Built, it is a script of its own (`dist/parley-ls.cjs`, scripts/build.mjs), small: V8 reads a
 * code cache entry for every function of the script it runs, called or not.
 *
 * @example
 * ```ts
 * import { run } from "./LsFast.ts"
 * const listed = await run({ _tag: "Ls", storage: "/work/.parley", archived: false, format: "text" })
 * // true: listed, and the process ends with 0 once its output is out; false: nothing done
 * ```
 */
import * as path from "node:path"
import * as UnhostedAsk from "../../domain/run/UnhostedAsk.ts"
import * as Storage from "../../domain/storage/Storage.ts"
import * as HostPath from "../../layers/host/HostPath.ts"
import * as Spool from "../../layers/notify/SpoolDir.ts"
import * as StoreListing from "../../layers/store/Listing.ts"
import type { Reading } from "../ReadingArgv.ts"
import { storageOf } from "../ReadingStorage.ts"
import * as Stdout from "../Stdout.ts"
import { type Gathered, render } from "./LsText.ts"

/**
 * The listing of the storage directory `dir`, as `layers/host/Listing.ts` gathers it, when it is the common case;
 * `undefined` (no notification taken) otherwise.
 */
export const gather = async (dir: string, archived: boolean): Promise<Gathered | undefined> => {
  let listing: Awaited<ReturnType<typeof StoreListing.list>>
  try {
    listing = await StoreListing.list(path.join(path.resolve(dir), "conversations"), { archived })
  } catch {
    return undefined
  }
  const rows = listing.conversations
  const hosted = new Set(HostPath.sockets(dir).map((s) => s.id))
  if (rows.some((r) => hosted.has(r.id))) return undefined
  if (UnhostedAsk.of(rows, new Map()).length > 0) return undefined
  // Taken once decided: a failed notification is shown once, on its conversation's row.
  const failed = Spool.takeErrors(
    dir,
    rows.map((r) => r.id)
  )
  return { rows, damaged: listing.damaged, running: new Map(), failed }
}

/** Lists as `ls` does when `reading` is the common case, and ends the process; `false` when it declined (nothing done). */
export const run = async (reading: Extract<Reading, { _tag: "Ls" }>): Promise<boolean> => {
  const storage = storageOf(reading.storage)
  if ("problem" in storage || Storage.of(storage.dir)._tag !== "Directory") return false
  const gathered = await gather(storage.dir, reading.archived)
  if (gathered === undefined) return false
  // Loaded once it is decided: its watch of the outputs is the run's (ReadingRun's own, when declined).
  const { exitOnceFlushed } = await import("../../layers/ProcessOutput.ts")
  const { warnings, text } = render(gathered, { archived: reading.archived, format: reading.format }, storage)
  for (const line of warnings) process.stderr.write(`${line}\n`)
  Stdout.write(text, (shown) => shown)
  exitOnceFlushed(0, false)
  return true
}
