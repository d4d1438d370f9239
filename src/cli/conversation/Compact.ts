/**
 * `parley conversation compact ID` (RFD 064;
 * docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): append one
 * compaction JP reads, so the model sees a smaller conversation; the stored
 * events are never changed.
 *
 * - Default: JP's built-in mechanical rule — turns `--keep-first` (1) …
 *   `last − --keep-last` (3), reasoning stripped, tool calls stripped.
 * - `--summary`: those turns replaced by a summary the model writes
 *   (`--model`, else the conversation's model, else `assistant.model`).
 * - `--dry-run`: nothing is appended; the estimated tokens before and after.
 * - No turn between the kept ones: "Nothing to compact", exit 0.
 * - It takes the conversation's lock (a running `parley query` on it makes
 *   it fail at once, naming the pid).
 *
 * @example
 * ```sh
 * parley conversation compact 17738399468 --dry-run
 * parley conversation compact 17738399468 --keep-last 5 --summary --model anthropic/claude-haiku-4-5
 * ```
 */
import * as path from "node:path"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { describeRule, turnsText } from "../../domain/event/Compaction.ts"
import * as Conversation from "../../domain/storage/Conversation.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as EntryCodec from "../../domain/storage/EntryCodec.ts"
import * as Compact from "../../domain/stream/Compact.ts"
import * as ConfigFile from "../../layers/ConfigFile.ts"
import * as ProviderLive from "../../layers/provider/ProviderLive.ts"
import { CompactMode, type CompactOutcome, compact as compactProgram } from "../../programs/CompactConversation.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import type { ConversationSession } from "../../services/ConversationSession.ts"
import { CliFailure } from "../CliFailure.ts"
import { formatFlag } from "../Format.ts"
import * as ModelChoice from "../ModelChoice.ts"
import { providerOptions } from "../ProviderOptions.ts"
import { storage } from "../Root.ts"
import * as Usage from "../Usage.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

const PATH = ["parley", "conversation", "compact"]

const flags = {
  id: Argument.String("id").pipe(Argument.withDescription("Conversation to compact")),
  keepFirst: Flag.Int("keep-first").pipe(
    Flag.withDescription("Turns kept as they are at the start"),
    Flag.withDefault(Compact.DEFAULT_RULE.keep_first)
  ),
  keepLast: Flag.Int("keep-last").pipe(
    Flag.withDescription("Turns kept as they are at the end"),
    Flag.withDefault(Compact.DEFAULT_RULE.keep_last)
  ),
  summary: Flag.Boolean("summary").pipe(
    Flag.withDescription("Replace the turns with a summary written by the model"),
    Flag.withDefault(false)
  ),
  model: Flag.String("model").pipe(
    Flag.withDescription("The model that writes the summary (default: the conversation's, then assistant.model)"),
    Flag.optional
  ),
  script: Flag.String("script").pipe(
    Flag.withDescription("Steps for the scripted model (JSON file; default $PARLEY_SCRIPT)"),
    Flag.withFallbackConfig(Config.String("PARLEY_SCRIPT")),
    Flag.optional
  ),
  dryRun: Flag.Boolean("dry-run").pipe(
    Flag.withDescription("Append nothing; print the estimated tokens before and after"),
    Flag.withDefault(false)
  ),
  format: formatFlag
}

type Flags = Command.Command.Config.Infer<typeof flags>

const tokens = (n: number) => `${n.toLocaleString("en-US")} tokens`

/** One line for a person. */
const textOf = (id: string, outcome: CompactOutcome, mode: CompactMode): string => {
  switch (outcome._tag) {
    case "NothingToCompact":
      return `Nothing to compact: ${id} has ${outcome.turns} ${outcome.turns === 1 ? "turn" : "turns"}, and the kept turns cover them all (about ${tokens(outcome.tokens)}).`
    case "Compacted":
      return `Compacted ${turnsText(outcome.compaction.rule)} of ${id} (${describeRule(outcome.compaction.rule)}): about ${tokens(outcome.tokensBefore)} → ${tokens(outcome.tokensAfter)}.`
    case "Preview": {
      const range = turnsText({ from_turn: outcome.range.from, to_turn: outcome.range.to })
      if (mode._tag === "Summary" || outcome.rule === undefined || outcome.tokensAfter === undefined) {
        const model = mode._tag === "Summary" ? ` with ${mode.model}` : ""
        return `Would summarize ${range} of ${id}${model}: about ${tokens(outcome.tokensBefore)} now; the summary's size is known once it is written.`
      }
      return `Would compact ${range} of ${id} (${describeRule(outcome.rule)}): about ${tokens(outcome.tokensBefore)} → ${tokens(outcome.tokensAfter)}.`
    }
  }
}

/** The JSON document. */
const jsonOf = (id: string, outcome: CompactOutcome) => {
  switch (outcome._tag) {
    case "NothingToCompact":
      return {
        id,
        outcome: "nothing-to-compact",
        turns: outcome.turns,
        tokens_before: outcome.tokens,
        tokens_after: outcome.tokens
      }
    case "Compacted":
      return {
        id,
        outcome: "compacted",
        from_turn: outcome.compaction.rule.from_turn,
        to_turn: outcome.compaction.rule.to_turn,
        tokens_before: outcome.tokensBefore,
        tokens_after: outcome.tokensAfter,
        compaction: EntryCodec.toPlainJson(outcome.compaction)
      }
    case "Preview":
      return {
        id,
        outcome: "dry-run",
        from_turn: outcome.range.from,
        to_turn: outcome.range.to,
        tokens_before: outcome.tokensBefore,
        tokens_after: outcome.tokensAfter ?? null
      }
  }
}

/** The summariser: chosen and checked like a query's model, from the flag, the conversation, then config. */
const summaryMode = (f: Flags, session: ConversationSession, configFile: string) =>
  Effect.gen(function* () {
    const config = yield* ConfigFile.load(configFile).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
    )
    const script = Option.match(f.script, {
      onNone: () => undefined,
      onSome: (file) => (file === "" ? undefined : path.resolve(file))
    })
    const providers = providerOptions(config, script)
    const remembered = Conversation.rememberedModel(session.baseConfig, (yield* session.snapshot).entries)
    const model = yield* ModelChoice.make({
      flag: Option.getOrUndefined(f.model),
      script,
      config,
      configFile,
      providers,
      command: PATH,
      checkInquiryModel: false
    })(remembered)
    return { mode: CompactMode.Summary({ model }), providers }
  })

const run = (f: Flags) =>
  withStore(
    Effect.gen(function* () {
      const id = yield* parseIdArgument(f.id, "compact")
      if (f.keepFirst < 0 || f.keepLast < 0)
        return yield* Usage.failure(PATH, "--keep-first and --keep-last take a number of turns (0 or more).")
      if (Option.isSome(f.model) && !f.summary)
        return yield* Usage.failure(PATH, "--model names the model that writes a summary: use it with --summary.")
      // --config, else $PARLEY_CONFIG, else the storage's config.toml (a database's: ./.parley/config.toml).
      const { config } = yield* storage
      return yield* Effect.scoped(
        Effect.gen(function* () {
          const session = yield* ConversationStore.use((store) => store.open(id))
          const keep = { keepFirst: f.keepFirst, keepLast: f.keepLast }
          const summary = f.summary ? yield* summaryMode(f, session, config) : undefined
          const mode = summary?.mode ?? CompactMode.Mechanical({ rule: Compact.DEFAULT_RULE })
          const outcome = yield* compactProgram({ session, keep, mode, dryRun: f.dryRun }).pipe(
            Effect.provide(ProviderLive.layer(summary?.providers ?? {}))
          )
          const shown = ConversationId.display(id)
          yield* Console.log(
            f.format === "json" ? JSON.stringify(jsonOf(id, outcome), null, 2) : textOf(shown, outcome, mode)
          )
        })
      )
    })
  )

export const compact = Command.make("compact", flags, run).pipe(
  Command.withDescription(
    "Compact a conversation for the model (RFD 064): strip old reasoning and tool output, or summarize old turns"
  )
)
