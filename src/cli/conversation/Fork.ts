/**
 * `parley conversation fork ID [--from TIMESTAMP] [--until TIMESTAMP]` (RFD 023): a new
 * conversation with the source's events — its incomplete turn included, so
 * each copy can be resumed or discarded on its own. `--from` keeps events
 * stamped at or after its instant (inclusive, JP's meaning), `--until`
 * events stamped before its instant; a cut that falls mid-turn leaves that turn
 * incomplete in the fork instead of repairing it away. `--compact[=SPEC]`
 * (JP's, RFD 064's DSL) compacts the fork as it is made (the source is
 * untouched): bare, with the configured rules; each SPEC adds a rule.
 *
 * @example
 * ```sh
 * parley conversation fork 17738399468 --until "2026-03-18 14:00:00"
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import * as Usage from "../Usage.ts"
import { formatFlag } from "../Format.ts"
import { parseIdArgument, withStore } from "./Shared.ts"
import * as Compact from "../../domain/stream/Compact.ts"
import * as ConfigFile from "../../layers/ConfigFile.ts"
import * as ProviderLive from "../../layers/provider/ProviderLive.ts"
import * as ForkConversation from "../../programs/ForkConversation.ts"
import { CliFailure } from "../CliFailure.ts"
import { compactFlag, parseCompact } from "../CompactFlag.ts"
import { storage } from "../Root.ts"

const PATH = ["parley", "conversation", "fork"]

/**
 * The rules of `fork --compact[=SPEC]` (JP's flag, RFD 064's DSL): a bare
 * `--compact` applies the configured rules, each SPEC adds one. A summary
 * needs a model to write it, which fork does not choose: such a rule is
 * refused, pointing at `conversation compact`.
 */
const forkRules = (values: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const flag = yield* parseCompact(PATH, values)
    if (flag === undefined) return undefined
    const { config: configFile } = yield* storage
    const config = yield* ConfigFile.load(configFile).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
    )
    const configured = Compact.configRules(config.conversation?.compaction?.rules)
    const rules = Compact.combineRules(configured, flag.useConfigRules, flag.specs)
    if (rules.some((r) => r.summary !== undefined))
      return yield* Usage.failure(
        PATH,
        "--compact: a summary needs a model to write it; fork without it, then run `parley conversation compact NEW_ID --summary` on the fork."
      )
    return rules
  })

export const fork = Command.make(
  "fork",
  {
    id: Argument.String("id").pipe(Argument.withDescription("Conversation to fork")),
    from: Flag.String("from").pipe(
      Flag.withDescription(
        'Keep only events at or after this time (inclusive; "YYYY-MM-DD HH:MM:SS[.f]" UTC, or RFC 3339)'
      ),
      Flag.optional
    ),
    until: Flag.String("until").pipe(
      Flag.withDescription('Keep only events before this time ("YYYY-MM-DD HH:MM:SS[.f]" UTC, or RFC 3339)'),
      Flag.optional
    ),
    compact: compactFlag,
    format: formatFlag
  },
  ({ id, from, until, compact, format }) =>
    withStore(
      Effect.gen(function* () {
        const cid = yield* parseIdArgument(id, "fork")
        const limit = Option.getOrUndefined(until)
        const start = Option.getOrUndefined(from)
        for (const [flag, value] of [
          ["--from", start],
          ["--until", limit]
        ] as const) {
          if (value !== undefined && Timestamp.toEpochNanos(value) === undefined) {
            return yield* Usage.failure(
              PATH,
              `${flag}: "${value}" is not a time (use "YYYY-MM-DD HH:MM:SS" in UTC, or RFC 3339).`
            )
          }
        }
        // --from is inclusive and --until exclusive: from at or after until keeps nothing.
        if (
          start !== undefined &&
          limit !== undefined &&
          Timestamp.toEpochNanos(start)! >= Timestamp.toEpochNanos(limit)!
        ) {
          return yield* Usage.failure(
            ["parley", "conversation", "fork"],
            `--from "${start}" is not before --until "${limit}": the fork would keep no event.`
          )
        }
        const rules = yield* forkRules(compact)
        const newId = yield* ForkConversation.fork({ source: cid, from: start, until: limit, rules }).pipe(
          Effect.provide(ProviderLive.layer({}))
        )
        if (format === "json") yield* Console.log(JSON.stringify({ id: newId, forked_from: cid }))
        else yield* Console.log(`Forked ${ConversationId.display(cid)} into ${ConversationId.display(newId)}.`)
      })
    )
).pipe(
  Command.withDescription(
    "Copy a conversation (optionally from and/or up to a time, optionally compacted) into a new one"
  )
)
