/**
 * The `parley` root command and the flags every subcommand shares
 * (`--storage DIR`, accepted before or after the subcommand name).
 *
 * @example
 * ```ts
 * import { root, storageDir } from "./Root.ts"
 * const dir = yield* storageDir // resolved per contract §2
 * ```
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { resolveStorageDir } from "../programs/StorageDir.ts"

export const root = Command.make("parley").pipe(
  Command.withSharedFlags({
    storage: Flag.String("storage").pipe(
      Flag.withDescription("Storage directory (default: $PARLEY_STORAGE, the nearest .parley/, or ./.parley)"),
      Flag.optional
    )
  }),
  Command.withDescription("Tool inquiries for LLM agents: parallel tools that ask questions, recorded and resumable.")
)

/** The storage directory for this invocation. */
export const storageDir = Effect.gen(function*() {
  const { storage } = yield* root
  return resolveStorageDir({ flag: Option.getOrUndefined(storage), env: process.env, cwd: process.cwd() })
})
