/**
 * `parley conversation compact ID` (RFD 064;
 * docs/models.md#long-conversations-compactions-and-context-windows-rfd-064): append
 * compactions JP reads, so the model sees a smaller conversation; the stored
 * events are never changed.
 *
 * - The rules: `[[conversation.compaction.rules]]` in config, else JP's
 *   built-in one (keep the first turn and the last 3, strip reasoning and
 *   tool calls). Each rule appends one compaction.
 * - `--reasoning`, `--tools[=MODE]`, `--summary`: one rule of those policies
 *   instead; `--compact=SPEC` (JP's DSL, repeatable): a rule each; a bare
 *   `--compact` keeps the configured rules too.
 * - `--from` / `--to` (1-based turns, `-N` from the end, a duration,
 *   `last-compaction`) and `--keep-first` / `--keep-last`: the range of every
 *   rule.
 * - A summary is written by `--model`, else the rule's `summary.model.id`,
 *   else the conversation's model, else `assistant.model`.
 * - `--reset` removes every compaction, `--reset=N` the N-th (1-based).
 * - `--dry-run`: nothing is written; what would be, with the estimated tokens.
 * - It takes the conversation's lock (a running `parley query` on it makes
 *   it fail at once, naming the pid).
 *
 * @example
 * ```sh
 * parley conversation compact 17738399468 --dry-run
 * parley conversation compact 17738399468 --from 2 --to -3 --reasoning
 * parley conversation compact 17738399468 --compact=s:..-3 --model anthropic/claude-haiku-4-5
 * parley conversation compact 17738399468 --reset=2
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { type Compaction, describeRule, turnsText } from "../../domain/event/Compaction.ts"
import * as Timestamp from "../../domain/event/Timestamp.ts"
import * as Conversation from "../../domain/storage/Conversation.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import type * as Compact from "../../domain/stream/Compact.ts"
import * as CompactOptions from "../../domain/stream/CompactOptions.ts"
import * as ConfigFile from "../../layers/ConfigFile.ts"
import * as ProviderLive from "../../layers/provider/ProviderLive.ts"
import {
  type CompactOutcome,
  compact as compactProgram,
  toJson,
  type ResetOutcome,
  reset as resetProgram
} from "../../programs/CompactConversation.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import type { ConversationSession } from "../../services/ConversationSession.ts"
import { CliFailure } from "../CliFailure.ts"
import { formatFlag } from "../Format.ts"
import * as ModelChoice from "../ModelChoice.ts"
import { providerOptions } from "../../layers/provider/ProviderOptions.ts"
import { storage } from "../Root.ts"
import { compactFlag } from "../CompactFlag.ts"
import { scriptFlag, scriptPath } from "../ScriptFlag.ts"
import * as Usage from "../Usage.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

const PATH = ["parley", "conversation", "compact"]

const flags = {
  id: Argument.String("id").pipe(Argument.withDescription("Conversation to compact")),
  keepFirst: Flag.Int("keep-first").pipe(Flag.withDescription("Turns kept as they are at the start"), Flag.optional),
  keepLast: Flag.Int("keep-last").pipe(Flag.withDescription("Turns kept as they are at the end"), Flag.optional),
  from: Flag.String("from").pipe(
    Flag.withDescription("First turn compacted: N (from 1), -N from the end, a duration (5h) or last-compaction"),
    Flag.optional
  ),
  to: Flag.String("to").pipe(
    Flag.withDescription("Last turn compacted: N (from 1), -N from the end (-1: the last) or a duration (2h)"),
    Flag.optional
  ),
  reasoning: Flag.Boolean("reasoning").pipe(Flag.withDescription("Strip reasoning"), Flag.withDefault(false)),
  tools: Flag.String("tools").pipe(
    Flag.withDescription("Strip tool calls: strip (bare), strip-requests, strip-responses or omit"),
    Flag.withOptionalValue("strip"),
    Flag.optional
  ),
  summary: Flag.Boolean("summary").pipe(
    Flag.withDescription("Replace the turns with a summary written by the model"),
    Flag.withDefault(false)
  ),
  compact: compactFlag,
  model: Flag.String("model").pipe(
    Flag.withDescription(
      "The model that writes summaries (default: the rule's summary.model, the conversation's, then assistant.model)"
    ),
    Flag.optional
  ),
  script: scriptFlag,
  reset: Flag.String("reset").pipe(
    Flag.withDescription("Remove every compaction (bare), or --reset=N the N-th (from 1)"),
    Flag.withOptionalValue("all"),
    Flag.optional
  ),
  dryRun: Flag.Boolean("dry-run").pipe(
    Flag.withDescription("Write nothing; print what would be done and the estimated tokens before and after"),
    Flag.withDefault(false)
  ),
  format: formatFlag
}

type Flags = Command.Command.Config.Infer<typeof flags>

const tokens = (n: number) => `${n.toLocaleString("en-US")} tokens`

const sizes = (before: number, after: number) => `about ${tokens(before)} → ${tokens(after)}`

/** `turns 2–5 (reasoning stripped)`, for a list of several. */
const part = (c: Compaction) => `${turnsText(c.rule)} (${describeRule(c.rule)})`

/** One line for a person. */
const textOf = (id: string, outcome: CompactOutcome): string => {
  switch (outcome._tag) {
    case "NothingToCompact":
      return `Nothing to compact: ${id} has ${outcome.turns} ${outcome.turns === 1 ? "turn" : "turns"}, and the kept turns cover them all (about ${tokens(outcome.tokens)}).`
    case "Compacted": {
      const [only] = outcome.compactions
      const what =
        outcome.compactions.length === 1
          ? `${turnsText(only!.rule)} of ${id} (${describeRule(only!.rule)})`
          : `${outcome.compactions.map(part).join(", ")} of ${id}`
      return `Compacted ${what}: ${sizes(outcome.tokensBefore, outcome.tokensAfter)}.`
    }
    case "Preview": {
      const one = outcome.items.length === 1
      const what = outcome.items.map((i) => {
        const range = turnsText({ from_turn: i.range.from, to_turn: i.range.to })
        // One rule reads as before rules came: "compact turns 2–5 of ID (what)".
        const of = one ? ` of ${id}` : ""
        return i.rule === undefined
          ? `summarize ${range}${of}${i.model !== undefined ? ` with ${i.model}` : ""}`
          : `compact ${range}${of} (${describeRule(i.rule)})`
      })
      const whole = `Would ${what.join(", ")}${one ? "" : ` of ${id}`}`
      if (outcome.tokensAfter === undefined)
        return `${whole}: about ${tokens(outcome.tokensBefore)} now; a summary's size is known once it is written.`
      return `${whole}: ${sizes(outcome.tokensBefore, outcome.tokensAfter)}.`
    }
  }
}

/** The flags as `CompactOptions` reads them. */
const optionsOf = (f: Flags) => ({
  reasoning: f.reasoning,
  summary: f.summary,
  tools: Option.getOrUndefined(f.tools),
  compact: f.compact,
  from: Option.getOrUndefined(f.from),
  to: Option.getOrUndefined(f.to),
  keepFirst: Option.getOrUndefined(f.keepFirst),
  keepLast: Option.getOrUndefined(f.keepLast)
})

/** Each summary rule's writer: `--model`, the rule's, the conversation's, then `assistant.model`, checked like a query's. */
const withSummarizers = (
  f: Flags,
  rules: ReadonlyArray<Compact.Rule>,
  session: ConversationSession,
  configFile: string
) =>
  Effect.gen(function* () {
    if (!rules.some((r) => r.summary !== undefined)) return { rules, providers: {} }
    const config = yield* ConfigFile.load(configFile).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
    )
    const script = scriptPath(f.script)
    const providers = providerOptions(config, script)
    const remembered = Conversation.rememberedModel(session.baseConfig, (yield* session.snapshot).entries)
    const choose = (flag: string | undefined) =>
      ModelChoice.make({ flag, script, config, configFile, providers, command: PATH, checkInquiryModel: false })(
        remembered
      )
    const resolved: Array<Compact.Rule> = []
    for (const rule of rules) {
      if (rule.summary === undefined) resolved.push(rule)
      else {
        const model = yield* choose(Option.getOrUndefined(f.model) ?? rule.summary.model)
        resolved.push({ ...rule, summary: { ...rule.summary, model } })
      }
    }
    return { rules: resolved, providers }
  })

const resetText = (id: string, r: ResetOutcome, dryRun: boolean): string => {
  if (r.removed === 0) return `No compactions to remove from ${id}.`
  const verb = dryRun ? "Would remove" : "Removed"
  if (r.compaction !== undefined) return `${verb} the compaction of ${turnsText(r.compaction.rule)} from ${id}.`
  return `${verb} ${r.removed} ${r.removed === 1 ? "compaction" : "compactions"} from ${id}.`
}

/** `--reset[=N]`: it undoes compaction, so it takes no rule or range. */
const runReset = (f: Flags, id: ConversationId.ConversationId, value: string) =>
  Effect.gen(function* () {
    const o = optionsOf(f)
    const others = o.reasoning || o.summary || o.tools !== undefined || o.compact.length > 0
    const ranged = o.from !== undefined || o.to !== undefined || o.keepFirst !== undefined || o.keepLast !== undefined
    const index = CompactOptions.resetIndex(value, others || ranged || Option.isSome(f.model))
    if (typeof index === "object") return yield* Usage.failure(PATH, index.refused)
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const session = yield* ConversationStore.use((store) => store.open(id))
        const r = yield* resetProgram({ session, index, dryRun: f.dryRun }).pipe(
          Effect.mapError((e) =>
            e._tag === "StoreIoError" ? e : new CliFailure({ code: 1, message: `${e.message}.` })
          )
        )
        const shown = ConversationId.display(id)
        yield* Console.log(
          f.format === "json"
            ? JSON.stringify({ id, outcome: f.dryRun ? "dry-run" : "reset", removed: r.removed }, null, 2)
            : resetText(shown, r, f.dryRun)
        )
      })
    )
  })

const run = (f: Flags) =>
  withStore(
    Effect.gen(function* () {
      const id = yield* parseIdArgument(f.id, "compact")
      if (Option.isSome(f.reset)) return yield* runReset(f, id, f.reset.value)
      const conflict = CompactOptions.conflict(optionsOf(f))
      if (conflict !== undefined) return yield* Usage.failure(PATH, conflict)
      // --config, else $PARLEY_CONFIG, else the storage's config.toml (a database's: ./.parley/config.toml).
      const { config: configFile } = yield* storage
      const config = yield* ConfigFile.load(configFile).pipe(
        Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
      )
      const configured = CompactOptions.rulesOf(optionsOf(f), config.conversation?.compaction?.rules)
      if (typeof configured === "string") return yield* Usage.failure(PATH, configured)
      if (Option.isSome(f.model) && !configured.some((r) => r.summary !== undefined))
        return yield* Usage.failure(PATH, "--model names the model that writes a summary: use it with --summary.")
      return yield* Effect.scoped(
        Effect.gen(function* () {
          const session = yield* ConversationStore.use((store) => store.open(id))
          const bounds = CompactOptions.boundsOf(
            optionsOf(f),
            (yield* session.snapshot).entries,
            yield* Timestamp.current
          )
          if (typeof bounds === "string") return yield* Usage.failure(PATH, bounds)
          const { from, to } = bounds
          const { rules, providers } = yield* withSummarizers(f, configured, session, configFile)
          const outcome = yield* compactProgram({ session, rules, from, to, dryRun: f.dryRun }).pipe(
            Effect.provide(ProviderLive.layer(providers))
          )
          const shown = ConversationId.display(id)
          yield* Console.log(
            f.format === "json" ? JSON.stringify(toJson(id, outcome), null, 2) : textOf(shown, outcome)
          )
        })
      )
    })
  )

export const compact = Command.make("compact", flags, run).pipe(
  Command.withDescription(
    "Compact a conversation for the model (RFD 064): strip old reasoning and tool output, or summarize old turns; --reset undoes it"
  )
)
