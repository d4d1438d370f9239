/**
 * What `parley conversation ls` does, once its command line is read (issue
 * 28: no effect/cli here, so the fast path of `ReadingRun.ts` and the
 * effect/cli command of `Ls.ts` run the same code).
 *
 * @example
 * ```ts
 * import { list } from "./LsRun.ts"
 * list({ archived: false, format: "json" }, { dir: "/work/.parley", given: undefined })
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Listing from "../../layers/host/Listing.ts"
import * as Stdout from "../Stdout.ts"
import { type ListOptions, render } from "./LsText.ts"
import { type StorageAt, withStoreAt } from "./Store.ts"

export type { ListOptions } from "./LsText.ts"

/** Lists the conversations of `storage` on stdout. */
export const list = (options: ListOptions, storage: StorageAt) =>
  withStoreAt(
    storage,
    Effect.gen(function* () {
      const { warnings, text } = render(yield* Listing.gather(storage.dir, options.archived), options, storage)
      for (const line of warnings) yield* Console.error(line)
      // The whole listing in one write (Stdout.ts: without building process.stdout, and one write for
      // 10,000 rows instead of one each).
      yield* Effect.sync(() => Stdout.write(text, (shown) => shown))
    })
  )
