/**
 * `parley conversation check [ID] [--format json]`: decodes every conversation
 * (live and archived), re-encodes it, and compares bytes with the files.
 * Exit code 0 only if every conversation is ok and identical. Writes nothing.
 * A storage directory other users can reach gets one warning on stderr (the
 * exit code and the JSON stay as they are): parley makes new storage 0700,
 * but leaves what exists as it is.
 *
 * @example
 * ```sh
 * parley conversation check --storage ~/.jp --format json
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import { octal, openToOthers } from "../../domain/storage/PrivateDir.ts"
import * as PrivateDir from "../../layers/file/PrivateDir.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { storage } from "../Root.ts"
import { CliFailure } from "../CliFailure.ts"
import { formatFlag } from "../Format.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

/** One line on stderr when other users can read the conversations of the storage directory `dir`. */
const warnIfOpen = (dir: string) =>
  Effect.suspend(() => {
    const modes = PrivateDir.storageModes(dir)
    if (!openToOthers(modes)) return Effect.void
    const shown = modes.map(octal).join(", conversations/ ")
    return Console.error(
      `parley: warning: other users can read the conversations in ${dir} (mode ${shown}); \`chmod 700 ${dir}\` makes it private.`
    )
  })

export const check = Command.make(
  "check",
  {
    id: Argument.String("id").pipe(
      Argument.withDescription("Conversation id (17738399468 or jp-c17738399468)"),
      Argument.optional
    ),
    format: formatFlag
  },
  ({ id, format }) =>
    withStore(
      Effect.gen(function* () {
        const store = yield* ConversationStore
        const target = Option.isSome(id) ? yield* parseIdArgument(id.value, "check") : undefined
        const results = yield* store.check(target)
        const { where } = yield* storage
        if (where._tag === "Directory") yield* warnIfOpen(where.path)
        if (format === "json") {
          yield* Console.log(JSON.stringify(results, null, 2))
        } else {
          for (const r of results) {
            yield* Console.log(
              r.ok
                ? `${r.roundtrip === "identical" ? "ok       " : "changed  "} ${r.id}  ${r.path}`
                : `FAILED    ${r.id}  ${r.error}`
            )
          }
        }
        const failed = results.filter((r) => !r.ok).length
        const changed = results.filter((r) => r.ok && r.roundtrip !== "identical").length
        if (failed > 0 || changed > 0) {
          return yield* new CliFailure({
            code: 1,
            message: `${failed} conversation(s) failed to decode and ${changed} would change on re-save (of ${results.length}).`
          })
        }
      })
    )
).pipe(Command.withDescription("Decode and re-encode conversations; report any that fail or would change"))
