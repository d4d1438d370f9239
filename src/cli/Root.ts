/**
 * The `parley` root command and the flags every subcommand shares
 * (`--storage DIR`, accepted before or after the subcommand name; its
 * fallback is `$PARLEY_STORAGE`, read here through effect/cli's config
 * fallback and nowhere else).
 *
 * @example
 * ```ts
 * import { root, storage } from "./Root.ts"
 * const { dir, given } = yield* storage // resolved per contract §2
 * ```
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { resolveStorageDir } from "../programs/StorageDir.ts"

export const root = Command.make("parley").pipe(
  Command.withSharedFlags({
    storage: Flag.String("storage").pipe(
      Flag.withDescription("Storage directory (default: $PARLEY_STORAGE, the nearest .parley/, or ./.parley)"),
      Flag.withFallbackConfig(Config.String("PARLEY_STORAGE")),
      Flag.optional
    )
  }),
  Command.withDescription("Tool inquiries for LLM agents: parallel tools that ask questions, recorded and resumable.")
)

/**
 * The storage directory for this invocation: `dir`, resolved (contract §2),
 * and `given`, the directory as given by `--storage` or `$PARLEY_STORAGE`
 * (`undefined` when it was found by looking up from here), which hints repeat.
 */
export const storage = Effect.gen(function*() {
  const flag = Option.getOrUndefined((yield* root).storage)
  const given = flag === undefined || flag === "" ? undefined : flag
  // The environment was read by the flag's fallback: do not read it again.
  const dir = resolveStorageDir({ flag: given, env: {}, cwd: process.cwd() })
  return { dir, given: given === undefined ? undefined : dir }
})

/** The storage directory for this invocation. */
export const storageDir = Effect.map(storage, (s) => s.dir)
