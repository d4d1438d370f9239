/**
 * `parley conversation send ID MESSAGE [--when after|next|now]` and
 * `parley conversation send ID --withdraw N` (docs/cli.md#talk-to-a-running-turn):
 * the edge of `programs/Send.ts` — it parses, starts a background run when
 * one is needed (`query --continue-turn --id ID`, as `query --detach` starts
 * one) and renders. Prints the queued message's id on stdout.
 *
 * @example
 * ```sh
 * parley conversation send 17738399468 "also run the tests" --when next
 * parley conversation send 17738399468 --withdraw 1
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as QueuedMessage from "../../domain/storage/QueuedMessage.ts"
import * as DetachedRun from "../../layers/host/DetachedRun.ts"
import * as HostTurns from "../../layers/host/HostTurns.ts"
import * as Send from "../../programs/Send.ts"
import { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"
import * as Hint from "../Hint.ts"
import { storage } from "../Root.ts"
import * as Usage from "../Usage.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

const PATH = ["parley", "conversation", "send"]

/** The arguments of the background run that resumes (or delivers to) conversation `id`. */
const runArgs = (id: string, given: string | undefined, configGiven: string | undefined) => [
  ...(given !== undefined ? ["--storage", given] : []),
  ...(configGiven !== undefined ? ["--config", configGiven] : []),
  "query",
  "--continue-turn",
  "--id",
  id
]

/**
 * Starts the background run that resumes (or delivers to) conversation `id`
 * of storage `dir` (`given`, `configGiven`: the flags as given, repeated).
 */
export const background = (dir: string, id: string, given: string | undefined, configGiven: string | undefined) => {
  const hint = { storage: given, config: configGiven }
  return Effect.try({ try: () => DetachedRun.ensureRunDir(dir), catch: (e) => ErrorLine.failure(e, hint) }).pipe(
    Effect.flatMap((runDir) => DetachedRun.start(runDir, runArgs(id, given, configGiven))),
    Effect.mapError((e) => ErrorLine.failure(e, hint)),
    Effect.asVoid
  )
}

/** What `send` (and attach's `m`) says on stderr. */
export const said = (sent: Send.Sent, id: string, hint: Hint.Context): string => {
  const n = sent.queued.id
  const back = `${Hint.command(["conversation", "send", id, "--withdraw", String(n)], hint)} withdraws it until then.`
  switch (sent._tag) {
    case "Queued":
      if (sent.restarted)
        return `Stopped the running turn (pid ${sent.pid}); it goes on in the background with message ${n}.`
      return sent.queued.when === "next"
        ? `Queued message ${n}: the running turn (pid ${sent.pid}) gets it with its next request to the model (or, if it makes none, as a turn of its own). ${back}`
        : `Queued message ${n}: a new turn starts with it when the running turn (pid ${sent.pid}) ends. ${back}`
    case "Started":
      return `Nothing was running: a run in the background delivers message ${n}. Follow it with ${Hint.command(["conversation", "attach", id], hint)}.`
    case "WaitsForTurn":
      return [
        `Queued message ${n}: ${ConversationId.display(id)} has an incomplete turn (${sent.detail}); the message is delivered after it.`,
        `    ${Hint.resume(id, hint)}    Resume the incomplete turn, then the message.`,
        `    ${Hint.discard(id, hint)}    Discard it (the next run delivers the message).`,
        `    ${back}`
      ].join("\n")
  }
}

/** `--withdraw N`: what became of it. */
const withdrawn = (id: ConversationId.ConversationId, n: number) =>
  Effect.flatMap(Send.withdraw(id, n), (outcome) => {
    switch (outcome) {
      case "withdrawn":
        return Console.error(`Withdrew message ${n}.`)
      case "already-withdrawn":
        return Console.error(`Message ${n} was already withdrawn.`)
      case "delivered":
        return Effect.fail(new CliFailure({ code: 1, message: `Message ${n} was already delivered.` }))
      case "unknown":
        return Effect.fail(
          new CliFailure({ code: 1, message: `${ConversationId.display(id)} has no queued message ${n}.` })
        )
    }
  })

export const send = Command.make(
  "send",
  {
    id: Argument.String("id").pipe(Argument.withDescription("The conversation to send to")),
    message: Argument.String("message").pipe(Argument.withDescription("The message"), Argument.optional),
    when: Flag.Literals("when", QueuedMessage.When.literals).pipe(
      Flag.withDescription(
        "When a running turn gets it: after it ends (default), at its next request to the model, or now (stops it as Ctrl-C does)"
      ),
      Flag.optional
    ),
    withdraw: Flag.Int("withdraw").pipe(
      Flag.withDescription("Withdraw queued message N (until a run took it)"),
      Flag.optional
    )
  },
  (f) =>
    Effect.gen(function* () {
      const { dir, given, configGiven } = yield* storage
      const hint = { storage: given, config: configGiven }
      const id = yield* parseIdArgument(f.id, "send")
      if (Option.isSome(f.withdraw)) return yield* withStore(withdrawn(id, f.withdraw.value))
      if (Option.isNone(f.message) || f.message.value.trim() === "")
        return yield* Usage.failure(PATH, "Nothing to send: give a message (or --withdraw N).")
      const start = () => background(dir, id, given, configGiven)
      const sent = yield* withStore(
        Send.send({
          id,
          message: f.message.value,
          surface: "terminal",
          start,
          ...(Option.isSome(f.when) ? { when: f.when.value } : {})
        }).pipe(Effect.provide(HostTurns.layer(dir)))
      ).pipe(Effect.mapError((e) => (e instanceof CliFailure ? e : ErrorLine.failure(e, hint))))
      yield* Console.log(String(sent.queued.id))
      yield* Console.error(said(sent, id, hint))
    })
).pipe(Command.withDescription("Send a message to a conversation, queued while its turn runs (or --withdraw N)"))
