/**
 * `parley query [MESSAGE]` — send a message, run the tools the assistant
 * calls (asking their questions), and keep every event on disk as it
 * happens. The live layers come from `Live.ts`; this module turns flags into
 * a run and the run into output:
 *
 * - the conversation id on stderr at the start of every run;
 * - the reply on stdout as it streams (`--format text`), or one JSON
 *   document when the run ends (`--format json`, see `Report.ts`);
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
import * as path from "node:path"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { printable } from "../domain/render/TerminalText.ts"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import type { Notice } from "../programs/Notice.ts"
import * as Query from "../programs/Query.ts"
import { CliFailure } from "./CliFailure.ts"
import * as Editor from "./Editor.ts"
import { formatFlag } from "./Format.ts"
import * as ErrorLine from "./ErrorLine.ts"
import * as Hint from "./Hint.ts"
import * as Live from "./Live.ts"
import { Report, outcomeName } from "./Report.ts"
import * as ResumeMenu from "./ResumeMenu.ts"
import * as Style from "./Style.ts"
import { storage } from "./Root.ts"
import * as Usage from "./Usage.ts"

/** What a query run does, after its flags are parsed (the demo builds it directly). */
export interface RunQueryParams {
  readonly message: string | undefined
  readonly target: Query.Target
  readonly continueTurn: boolean
  readonly discardTurn: boolean
  readonly format: "text" | "json"
}

/**
 * stdout's text, one reply per line: a reply cut mid-line is ended before
 * anything else is printed. On a terminal the model's control characters are
 * shown, not obeyed (a reply could otherwise clear the screen, retitle the
 * window or write the clipboard); piped, the reply is passed on as it came.
 */
class TextOut {
  private last = ""
  private readonly terminal = process.stdout.isTTY === true
  constructor(private readonly enabled: boolean) {}
  write(text: string): void {
    if (!this.enabled || text === "") return
    this.last = text
    process.stdout.write(this.terminal ? printable(text, "\n\t") : text)
  }
  endLine(): void {
    if (this.last !== "" && !this.last.endsWith("\n")) process.stdout.write("\n")
    this.last = ""
  }
}

/** What the run's output needs while it runs, and how it ends. */
const makeOutput = (run: Live.Run["Service"], params: RunQueryParams) => {
  const report = new Report()
  const text = new TextOut(params.format === "text")
  const { status } = run
  let kept: string | undefined
  /** The context hints repeat: `--model` only while the conversation may not remember it, `--script` for the scripted model. */
  const hint = (): Hint.Context => ({
    storage: run.hint.storage,
    model: report.model === undefined ? run.hint.model : undefined,
    script: report.model === undefined || report.model === "scripted" ? run.hint.script : undefined
  })
  const stderr = (line: string) =>
    status.around(() => {
      text.endLine()
      process.stderr.write(line + "\n")
    })
  return {
    report,
    hint,
    endLine: Effect.sync(() => text.endLine()),
    conversation: (id: ConversationId.ConversationId, created: boolean) =>
      Effect.suspend(() => {
        report.conversationId = id
        report.created = created
        // Dim only where stderr is the terminal: a redirected stderr gets plain text.
        const dim = process.stderr.isTTY === true && status.style.color ? status.style.dim : Style.plain.dim
        return stderr(dim(`conversation ${id}${created ? " (new)" : ""}`))
      }),
    text: (chunk: string) =>
      Effect.sync(() => {
        report.text(chunk)
        text.write(chunk)
      }),
    warning: (warning: string) => stderr(`parley: ${Style.printable(warning)}`),
    notice: (n: Notice) => Effect.suspend(() => (report.notice(n), status.notice(n))),
    chose: (model: string) => Effect.sync(() => void (report.model = model)),
    edit: (pending: string) =>
      Effect.map(Editor.edit(pending), (result) => {
        if (result._tag === "Edited") return result.text
        kept = result.why
        return undefined
      }),
    keptBecause: () => kept,
    stderr,
    json: (doc: unknown) => Effect.sync(() => void process.stdout.write(JSON.stringify(doc, null, 2) + "\n"))
  }
}

type Output = ReturnType<typeof makeOutput>

/** The command that resumes the turn, when the run left it incomplete. */
const resumeHint = (out: Output): string | undefined =>
  out.report.stopped !== undefined && out.report.stopped !== null && out.report.conversationId !== undefined
    ? Hint.resume(out.report.conversationId, out.hint())
    : undefined

/** A failed run as one CLI error: the message, then the resume command when the turn can be resumed. */
const failure = (out: Output, error: unknown): CliFailure => {
  if (error instanceof CliFailure) return error
  const ctx = out.hint()
  if (error instanceof Query.IncompleteTurnPending) {
    return new CliFailure({
      code: 1,
      message: [
        `Conversation ${ConversationId.display(error.id as ConversationId.ConversationId)} has an incomplete turn (${error.detail}).`,
        `    ${Hint.resume(error.id, ctx)}    Resume the incomplete turn.`,
        `    ${Hint.discard(error.id, ctx)}    Discard the incomplete turn and start fresh.`
      ].join("\n")
    })
  }
  const message = ErrorLine.line(error, ctx)
  const resume = resumeHint(out)
  return new CliFailure({ code: 1, message: message + (resume !== undefined ? `\n${SAVED} ${resume}` : "") })
}

const SAVED = "The turn is saved; resume it with:"

/** The error alone, without the resume line (the JSON document has `resume` for that). */
const errorOnly = (failed: CliFailure): string => failed.message.split(`\n${SAVED}`)[0]!

/** What the person is told when the run ends normally (stderr), or the failure it is. */
const ending = (out: Output, result: Query.QueryResult): Effect.Effect<void, CliFailure> => {
  const id = ConversationId.display(result.conversationId)
  switch (result.outcome._tag) {
    case "Discarded":
      return out.stderr(`Discarded the incomplete turn of ${id}.`)
    case "NothingToDiscard":
      return out.stderr(`${id} has no incomplete turn; nothing to discard.`)
    case "NothingToResume":
      return out.stderr(`${id} has no incomplete turn; nothing to resume.`)
    case "EditAbandoned":
      return Effect.fail(new CliFailure({
        code: 1,
        message: `Kept the pending query as it was (${out.keptBecause() ?? "nothing to send"}); nothing was sent.\n${SAVED} ${Hint.resume(result.conversationId, out.hint())}`
      }))
    default:
      return Effect.void
  }
}

/** Runs `parley query` on the live services and prints what it did. */
export const runQuery = (params: RunQueryParams) =>
  Effect.gen(function*() {
    const run = yield* Live.Run
    const out = makeOutput(run, params)
    const json = (end: { outcome: string; error?: string; resume?: string }) =>
      params.format === "json" ? out.json(out.report.toJson(end)) : Effect.void
    // The turn the menu showed: still incomplete when the person quits or the edit is abandoned.
    let shown: Query.IncompleteInfo["summary"] | undefined
    const askResume = (person: NonNullable<typeof run.person>) => (info: Query.IncompleteInfo) => {
      shown = info.summary
      return ResumeMenu.ask(person)(info)
    }
    const result = yield* Query.query({
      message: params.message,
      target: params.target,
      continueTurn: params.continueTurn,
      discardTurn: params.discardTurn,
      model: (remembered) => Effect.tap(run.chooseModel(remembered), out.chose),
      ...(run.config.assistant?.system_prompt !== undefined ? { systemPrompt: run.config.assistant.system_prompt } : {}),
      root: run.root,
      interactive: run.person !== undefined,
      ...(run.person !== undefined ? { askResume: askResume(run.person), editMessage: out.edit } : {}),
      onConversation: out.conversation,
      onWaiting: (on) =>
        Effect.suspend(() => {
          if (on) out.report.replyStarted()
          return run.status.waiting(on, `waiting for ${out.report.model ?? "the model"}`)
        }),
      onWarning: out.warning,
      onText: out.text,
      onToolCalls: () => out.endLine,
      onNotice: out.notice
    }).pipe(
      Effect.onInterrupt(() =>
        Effect.gen(function*() {
          yield* json({ outcome: "interrupted", ...(resumeHint(out) !== undefined ? { resume: resumeHint(out)! } : {}) })
          if (out.report.stopped === undefined) return yield* out.endLine
          const resume = resumeHint(out)
          yield* out.stderr(resume !== undefined
            ? `parley: interrupted. What finished is saved; resume with: ${resume}`
            : "parley: interrupted. The reply so far is saved; the turn is complete.")
        })
      ),
      Effect.catch((error) => {
        const failed = failure(out, error)
        return json({ outcome: "failed", error: errorOnly(failed), ...(resumeHint(out) !== undefined ? { resume: resumeHint(out)! } : {}) }).pipe(
          Effect.andThen(out.endLine),
          Effect.andThen(Effect.fail(failed))
        )
      })
    )
    yield* out.endLine
    if (result.outcome._tag === "Quit" || result.outcome._tag === "EditAbandoned") out.report.stopped = shown ?? null
    const left = resumeHint(out) !== undefined ? { resume: resumeHint(out)! } : {}
    const end = ending(out, result)
    yield* end.pipe(Effect.catch((failed) => json({ outcome: outcomeName(result.outcome), error: errorOnly(failed), ...left }).pipe(Effect.andThen(Effect.fail(failed)))))
    yield* json({ outcome: outcomeName(result.outcome), ...left })
    return result
  })

const readStdin = Effect.promise(async () => {
  if (process.stdin.isTTY === true) return undefined
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString("utf8").trim()
  return text === "" ? undefined : text
})

const flags = {
  message: Argument.String("message").pipe(Argument.withDescription("What to ask (read from stdin when omitted and stdin is not a terminal)"), Argument.optional),
  id: Flag.String("id").pipe(Flag.withDescription("Continue this conversation (17738399468 or jp-c17738399468)"), Flag.optional),
  new: Flag.Boolean("new").pipe(Flag.withDescription("Start a new conversation"), Flag.withDefault(false)),
  model: Flag.String("model").pipe(
    Flag.withDescription("anthropic/<model>, openai/<model> or scripted (default: the conversation's model, then assistant.model in config.toml)"),
    Flag.optional
  ),
  script: Flag.String("script").pipe(
    Flag.withDescription("Steps for the scripted model (JSON file; default $PARLEY_SCRIPT)"),
    Flag.withFallbackConfig(Config.String("PARLEY_SCRIPT")),
    Flag.optional
  ),
  continueTurn: Flag.Boolean("continue-turn").pipe(Flag.withDescription("Resume the conversation's incomplete turn, if any"), Flag.withDefault(false)),
  discardTurn: Flag.Boolean("discard-turn").pipe(Flag.withDescription("Drop the conversation's incomplete turn, if any"), Flag.withDefault(false)),
  format: formatFlag
}

type Flags = Command.Command.Config.Infer<typeof flags>

const PATH = ["parley", "query"]

/** Which conversation the flags name; conflicting flags are usage errors. */
const targetOf = (f: Flags): Effect.Effect<Query.Target, CliFailure> =>
  Effect.gen(function*() {
    if (f.continueTurn && f.discardTurn) return yield* Usage.failure(PATH, "--continue-turn and --discard-turn cannot be used together.")
    if (f.new && Option.isSome(f.id)) return yield* Usage.failure(PATH, "--new and --id cannot be used together.")
    if (f.new) return Query.Target.New()
    if (Option.isNone(f.id)) return Query.Target.MostRecent()
    const id = ConversationId.parse(f.id.value)
    if (id === undefined) {
      return yield* Usage.failure(PATH, `--id: "${f.id.value}" is not a conversation id (expected a number like 17738399468 or jp-c17738399468).`)
    }
    return Query.Target.Id({ id })
  })

/** The live services for the flags (storage from the root's shared flag). */
const live = (f: Flags) =>
  Live.layerFrom(Effect.map(storage, (s) => ({
    storage: s.dir,
    storageGiven: s.given,
    model: Option.getOrUndefined(f.model),
    // Absolute, so a printed command works from anywhere.
    script: Option.match(f.script, { onNone: () => undefined, onSome: (file) => (file === "" ? undefined : path.resolve(file)) })
  })))

export const query = Command.make("query", flags, (f) =>
  Effect.gen(function*() {
    const target = yield* targetOf(f)
    const message = Option.getOrUndefined(f.message) ?? (f.continueTurn || f.discardTurn ? undefined : yield* readStdin)
    yield* runQuery({ message, target, continueTurn: f.continueTurn, discardTurn: f.discardTurn, format: f.format })
  })).pipe(
    Command.provide(live),
    Command.withDescription("Send a message and run the assistant's tools (resumable)")
  )
