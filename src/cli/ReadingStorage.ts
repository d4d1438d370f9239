/**
 * The storage of a reading command line (`ReadingArgv.ts`) as the full command line resolves it
 * (`Root.storage`): `--storage`, else `$PARLEY_STORAGE`, else looked up from the working directory;
 * or, for a database url the full command line refuses, why. Shared by the reading commands' two
 * fast scripts (`ReadingRun.ts`, `conversation/LsFast.ts`).
 *
 * @example
 * ```ts
 * import { storageOf } from "./ReadingStorage.ts"
 * storageOf("/work/.parley") // { dir: "/work/.parley", given: "/work/.parley" }
 * storageOf("postgres://") // { problem: "…" }
 * ```
 */
import { databaseUrlProblem, resolveStorageDir } from "../programs/StorageDir.ts"
import type { StorageAt } from "./conversation/Store.ts"

/** A `--storage` (or `$PARLEY_STORAGE`) the full command line refuses, and why. */
export interface Refused {
  readonly problem: string
}

/** The storage `flag` (`--storage`; absent: `$PARLEY_STORAGE`, then the one found from here) names, or why it is refused. */
export const storageOf = (flag: string | undefined): StorageAt | Refused => {
  const given = flag ?? process.env["PARLEY_STORAGE"]
  const named = given === undefined || given === "" ? undefined : given
  const problem = named === undefined ? undefined : databaseUrlProblem(named)
  if (problem !== undefined) return { problem }
  const dir = resolveStorageDir({ flag: named, env: {}, cwd: process.cwd() })
  return { dir, given: named === undefined ? undefined : dir }
}
