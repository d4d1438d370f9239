/**
 * `parley conversation check [ID] [--format json]`: decodes every conversation
 * (live and archived), re-encodes it, and compares bytes with the files.
 * Exit code 0 only if every conversation is ok and identical. Writes nothing.
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
import { ConversationStore } from "../../services/ConversationStore.ts"
import { CliFailure } from "../CliFailure.ts"
import { formatFlag } from "../Format.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

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
