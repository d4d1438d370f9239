/**
 * `parley query [MESSAGE]` — send a message, run the tools the assistant
 * calls (asking their questions), and keep every event on disk as it
 * happens. The live layers come from `Live.ts`; this module turns flags into
 * a run and the run into output:
 *
 * - the conversation id on stderr at the start of every run;
 * - the reply on stdout as it streams (`--format text`), one JSON
 *   document when the run ends (`--format json`, see `RunReport.ts`), or the
 *   run's events as they happen, one JSON object a line, then that document
 *   on the last line (`--format jsonl`, see `RunEventLine.ts`);
 * - a reader that closes stdout early stops the run (`parley query | head`),
 *   or, with `--persist-on-sigpipe`, leaves it to finish the turn;
 * - status on the person's terminal (`Status.ts`);
 * - errors as one line plus, when the turn was left incomplete, the command
 *   that resumes it — a command that works when pasted (`Hint.ts`).
 *
 * @example
 * ```sh
 * parley query "Write a note to a.txt" --model scripted --script steps.json
 * parley query --continue-turn --id 17738399468
 * parley query "Summarise" --new --format json
 * ```
 */
import * as Effect from "effect/Effect"
import * as Stdin from "../layers/file/Stdin.ts"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import * as Query from "../programs/Query.ts"
import type { CliFailure } from "./CliFailure.ts"
import { compactFlag, parseCompact } from "./CompactFlag.ts"
import { queryFormatFlag } from "./Format.ts"
import * as Detach from "./Detach.ts"
import * as Live from "./Live.ts"
import { runQuery } from "./QueryRun.ts"
import { persistOnBrokenStdout } from "./RunMain.ts"
import { detachedPolicyFlag } from "./DetachedPolicyFlag.ts"
import { scriptFlag, scriptPath } from "./ScriptFlag.ts"
import { storage } from "./Root.ts"
import * as Usage from "./Usage.ts"

const flags = {
  message: Argument.String("message").pipe(
    Argument.withDescription("What to ask (read from stdin when omitted and stdin is not a terminal)"),
    Argument.optional
  ),
  id: Flag.String("id").pipe(
    Flag.withDescription("Continue this conversation (17738399468 or jp-c17738399468)"),
    Flag.optional
  ),
  new: Flag.Boolean("new").pipe(Flag.withDescription("Start a new conversation"), Flag.withDefault(false)),
  model: Flag.String("model").pipe(
    Flag.withDescription(
      "anthropic/<model>, openai/<model> or scripted (default: the conversation's model, then assistant.model in config.toml)"
    ),
    Flag.optional
  ),
  script: scriptFlag,
  compact: compactFlag,
  continueTurn: Flag.Boolean("continue-turn").pipe(
    Flag.withDescription("Resume the conversation's incomplete turn, if any"),
    Flag.withDefault(false)
  ),
  discardTurn: Flag.Boolean("discard-turn").pipe(
    Flag.withDescription("Drop the conversation's incomplete turn, if any"),
    Flag.withDefault(false)
  ),
  detachedPolicy: detachedPolicyFlag,
  detach: Flag.Boolean("detach").pipe(
    Flag.withDescription(
      "Run in the background, beyond this terminal; print the conversation id and how to answer or stop it"
    ),
    Flag.withDefault(false)
  ),
  format: queryFormatFlag,
  persistOnSigpipe: Flag.Boolean("persist-on-sigpipe").pipe(
    Flag.withDescription("When the reader of stdout goes away (`| head -1`), finish the turn instead of stopping it"),
    Flag.withDefault(false)
  )
}

type Flags = Command.Command.Config.Infer<typeof flags>

const PATH = ["parley", "query"]

/** Which conversation the flags name; conflicting flags are usage errors. */
const targetOf = (f: Flags): Effect.Effect<Query.Target, CliFailure> =>
  Effect.gen(function* () {
    if (f.continueTurn && f.discardTurn)
      return yield* Usage.failure(PATH, "--continue-turn and --discard-turn cannot be used together.")
    if (f.new && Option.isSome(f.id)) return yield* Usage.failure(PATH, "--new and --id cannot be used together.")
    if (f.new) return Query.Target.New()
    if (Option.isNone(f.id)) return Query.Target.MostRecent()
    const id = ConversationId.parse(f.id.value)
    if (id === undefined) {
      return yield* Usage.failure(
        PATH,
        `--id: "${f.id.value}" is not a conversation id (expected a number like 17738399468 or jp-c17738399468).`
      )
    }
    return Query.Target.Id({ id })
  })

/** The live services for the flags (storage from the root's shared flag). */
const live = (f: Flags) =>
  Live.layerFrom(
    Effect.map(storage, (s) => ({
      storage: s.dir,
      storageGiven: s.given,
      config: s.configGiven,
      model: Option.getOrUndefined(f.model),
      // Absolute, so a printed command works from anywhere.
      script: scriptPath(f.script),
      detachedPolicy: Option.getOrUndefined(f.detachedPolicy)
    }))
  )

export const query = Command.make("query", flags, (f) =>
  Effect.gen(function* () {
    const target = yield* targetOf(f)
    const compact = yield* parseCompact(PATH, f.compact)
    const fromStdin = Option.isNone(f.message) && !f.continueTurn && !f.discardTurn ? yield* Stdin.message : undefined
    if (f.detach) {
      // Nothing is built here: the background run loads config, tools and servers itself.
      const { dir, given, configGiven } = yield* storage
      return yield* Detach.detach({
        storage: dir,
        storageGiven: given,
        configGiven,
        script: scriptPath(f.script),
        detachedPolicy: Option.getOrUndefined(f.detachedPolicy),
        stdinMessage: fromStdin
      })
    }
    const message = Option.getOrUndefined(f.message) ?? fromStdin
    if (f.persistOnSigpipe) yield* Effect.sync(persistOnBrokenStdout)
    yield* runQuery({
      message,
      target,
      continueTurn: f.continueTurn,
      discardTurn: f.discardTurn,
      format: f.format,
      ...(compact !== undefined ? { compact } : {})
    }).pipe(Effect.provide(live(f)))
  })
).pipe(Command.withDescription("Send a message and run the assistant's tools (resumable)"))
