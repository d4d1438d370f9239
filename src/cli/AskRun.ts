/**
 * The work of `parley ask` (docs/ask.md): reads the flags into
 * `programs/Ask.ts`'s options, serves the question on the conversation's
 * host socket (`layers/host/HostServer.ts`, as a running turn's is: the
 * inbox, `conversation answer`, `attach`, `serve` and its page reach it
 * there), prompts at this terminal when there is one (first answer wins),
 * and prints the answer: exit 0 answered, 3 timed out, 130 cancelled.
 *
 * @example
 * ```ts
 * import * as AskRun from "./AskRun.ts"
 * yield* AskRun.run(flags, yield* storage)
 * ```
 */
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import { parseDuration } from "../domain/stream/Compact.ts"
import * as AskDomain from "../domain/tool/Ask.ts"
import * as AnswerFit from "../domain/tool/AnswerFit.ts"
import { printable } from "../domain/render/TerminalText.ts"
import * as HostWhenKnown from "../layers/host/HostWhenKnown.ts"
import * as HostTurns from "../layers/host/HostTurns.ts"
import * as PersonTerminal from "../layers/prompt/PersonTerminal.ts"
import * as RunLive from "../layers/RunLive.ts"
import * as Ask from "../programs/Ask.ts"
import type { Question } from "../domain/tool/Question.ts"
import type { AskFlags } from "./AskFlags.ts"
import { CliFailure } from "./CliFailure.ts"
import { withStoreAt } from "./conversation/Store.ts"
import * as ErrorLine from "./ErrorLine.ts"
import * as NotifyHooks from "./NotifyHooks.ts"
import type { storage } from "./Root.ts"
import * as Stdout from "./Stdout.ts"
import * as Usage from "./Usage.ts"
import { VERSION } from "./Version.ts"

/** The storage as `Root.storage` reads it. */
export type StorageAt = Effect.Success<typeof storage>

/** Exit codes (contract §8). */
export const EXIT = { answered: 0, timedOut: 3, cancelled: 130 } as const

const usage = (message: string) => Usage.failure(["parley", "ask"], message)

/** The `--default` as the question's type reads it. */
const defaultOf = (flags: AskFlags): Result.Result<Schema.Json | undefined, string> => {
  if (Option.isNone(flags.default)) return Result.succeed(undefined)
  if (flags.type === "secret") return Result.fail("a secret takes no --default (it would be recorded)")
  const type = flags.type === "select" ? { type: "select" as const, options: [...flags.option] } : { type: flags.type }
  return AnswerFit.parse(type, flags.default.value)
}

/** Which conversation records the question. */
const targetOf = (flags: AskFlags): Result.Result<Ask.Target, string> => {
  if (flags.new && Option.isSome(flags.conversation)) return Result.fail("--new and --conversation cannot be combined")
  if (Option.isSome(flags.conversation)) {
    const id = ConversationId.parse(flags.conversation.value)
    return id === undefined
      ? Result.fail(`"${flags.conversation.value}" is not a conversation id`)
      : Result.succeed({ _tag: "Id", id })
  }
  const title = Ask.titleFor(process.cwd())
  return Result.succeed(flags.new ? { _tag: "New", title } : Ask.titled(title))
}

/** The flags as the program's options, or what is wrong with them (exit 2). */
export const optionsOf = (flags: AskFlags, text: string): Result.Result<Ask.AskOptions, string> => {
  if (text.trim() === "") return Result.fail("the question is empty")
  if (flags.type === "select" && flags.option.length === 0) return Result.fail("a select needs --option (repeat it)")
  if (flags.type !== "select" && flags.option.length > 0) return Result.fail("--option is for --type select")
  const fallback = defaultOf(flags)
  if (Result.isFailure(fallback)) return Result.fail(`--default: ${fallback.failure}`)
  const target = targetOf(flags)
  if (Result.isFailure(target)) return Result.fail(target.failure)
  const timeout = Option.map(flags.timeout, parseDuration)
  if (Option.isSome(timeout) && timeout.value === undefined)
    return Result.fail(`--timeout takes a duration like 30s, 10m or 1h`)
  if (flags.onTimeout === "default" && fallback.success === undefined)
    return Result.fail("--on-timeout default needs a --default")
  return Result.succeed({
    type: flags.type,
    options: flags.option,
    default: fallback.success,
    context: Option.getOrUndefined(flags.context),
    key: Option.getOrUndefined(flags.key),
    source: Option.getOrUndefined(flags.source),
    target: target.success,
    timeout: Option.isSome(timeout) && timeout.value !== undefined ? `${timeout.value} millis` : undefined,
    onTimeout: flags.onTimeout
  })
}

/**
 * Serves the question's conversation on its host socket once it is known,
 * for the caller's scope; the host's `Interrupt` (`conversation kill`, the
 * API's stop) completes `cancel`. A host that cannot listen only costs the
 * other surfaces: the asker's own prompt still works, and says why.
 */
export const hostWhenKnown = (dir: string, cancel: Deferred.Deferred<void>) =>
  HostWhenKnown.serve({
    storage: dir,
    interrupt: Deferred.succeed(cancel, undefined),
    detachedPolicy: "wait",
    parley: VERSION,
    unavailable: (e) => Console.error(`parley: ${ErrorLine.line(e, {})} Only this terminal can answer the question.`)
  })

/** The asker's own prompt, when a person is at this terminal. */
const terminalPrompt = Effect.gen(function* () {
  if (!PersonTerminal.isInteractive()) return undefined
  const prompts = yield* PersonTerminal.promptBackend()
  return (question: Question): Effect.Effect<Schema.Json, unknown> =>
    Effect.map(prompts.question({ toolName: AskDomain.TOOL, question }), (reply) => reply.answer)
})

/** What the asker prints on stdout. */
export const printed = (answered: Ask.Answered, format: "text" | "json"): string =>
  format === "json"
    ? JSON.stringify({
        answer: answered.answer,
        answered_by: answered.by,
        via: answered.via ?? null,
        conversation_id: answered.conversationId,
        inquiry_id: answered.inquiryId
      })
    : AskDomain.answerText(answered.answer)

/** The exit of an ask that ended without an answer. */
const ended = (e: unknown, at: StorageAt) =>
  e instanceof Ask.AskTimedOut
    ? new CliFailure({ code: EXIT.timedOut, message: e.message })
    : e instanceof Ask.AskCancelled
      ? new CliFailure({ code: EXIT.cancelled, message: e.message })
      : e instanceof CliFailure
        ? e
        : ErrorLine.failure(e, { storage: at.given, config: at.configGiven })

/** Runs `parley ask` with its flags. */
export const run = (flags: AskFlags, at: StorageAt) =>
  Effect.scoped(
    Effect.gen(function* () {
      if (Option.isNone(flags.text)) return yield* usage("parley ask needs the question (or --claude-code-hook).")
      const read = optionsOf(flags, flags.text.value)
      if (Result.isFailure(read)) return yield* usage(`${read.failure}.`)
      const cancel = yield* Deferred.make<void>()
      yield* NotifyHooks.attachAsk(at)
      yield* Effect.forkScoped(hostWhenKnown(at.dir, cancel))
      const prompt = yield* terminalPrompt
      const options = { ...read.success, prompt, cancelled: Deferred.await(cancel) }
      const answered = yield* Ask.ask(flags.text.value, options)
      // Written as print writes (Stdout.ts): on a terminal, an answer typed elsewhere is shown, never obeyed;
      // into a pipe, as given.
      const line = `${printed(answered, flags.format)}\n`
      yield* Effect.sync(() => Stdout.write(line, (text) => printable(text, "\n\t")))
    }).pipe(Effect.mapError((e) => ended(e, at)))
  ).pipe(withLayers(at))

/** The store, the run's event hub and open questions, and the running turns of the storage. */
const withLayers =
  (at: StorageAt) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    withStoreAt(at, effect).pipe(Effect.provide(Layer.merge(RunLive.layer, HostTurns.layer(at.dir))))
