/**
 * `parley query [MESSAGE]` — send a message, run the tools the assistant
 * calls (asking their questions), and keep every event on disk as it
 * happens. Here the live layers are chosen: file store, config file, live
 * executor, the provider for `--model`, the LLM inquiry backend, and the
 * terminal prompter when stdin and stdout are TTYs.
 *
 * @example
 * ```sh
 * parley query "Write a note to a.txt" --model scripted --script steps.json
 * parley query --continue-turn --id 17738399468
 * ```
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Prompt from "effect/cli/Prompt"
import * as ConversationId from "../domain/storage/ConversationId.ts"
import * as ConfigFile from "../layers/ConfigFile.ts"
import * as ExecutorLive from "../layers/executor/ExecutorLive.ts"
import * as LlmInquiryBackend from "../layers/LlmInquiryBackend.ts"
import * as TerminalPromptBackend from "../layers/prompt/TerminalPromptBackend.ts"
import * as PersonTerminal from "./PersonTerminal.ts"
import { keyPrompt } from "../layers/prompt/KeyPrompt.ts"
import * as ProviderLive from "../layers/provider/ProviderLive.ts"
import * as FileConversationStore from "../layers/store/FileConversationStore.ts"
import { Config } from "../services/Config.ts"
import { Executor } from "../services/Executor.ts"
import { PromptBackend, PromptFailed } from "../services/PromptBackend.ts"
import * as Query from "../programs/Query.ts"
import { CliFailure } from "./CliFailure.ts"
import { storageDir } from "./Root.ts"
import { VERSION } from "./Version.ts"

/** A prompter for runs without a TTY: nothing is ever asked (JP routes questions to the inquiry backend). */
const headlessPrompts = Layer.succeed(PromptBackend, PromptBackend.of({
  interactive: false,
  permission: () => Effect.fail(new PromptFailed({ reason: "no terminal" })),
  question: () => Effect.fail(new PromptFailed({ reason: "no terminal" }))
}))

/** Status (spinner, tool lines) goes to the person's terminal: stderr when it is one, else /dev/tty. */
const statusTty = () => (process.stderr.isTTY === true ? process.stderr : PersonTerminal.reach())
const dim = (s: string) => (statusTty() !== undefined ? `\x1b[2m${s}\x1b[22m` : s)

/** A spinner on the terminal (TTY only) while the model has not said anything yet. */
const makeSpinner = (label: string) => {
  const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
  let timer: ReturnType<typeof setInterval> | undefined
  return (waiting: boolean) =>
    Effect.sync(() => {
      const out = statusTty()
      if (out === undefined) return
      if (waiting && timer === undefined) {
        let i = 0
        timer = setInterval(() => out.write(`\r${dim(`${frames[i++ % frames.length]} ${label}`)}`), 80)
      } else if (!waiting && timer !== undefined) {
        clearInterval(timer)
        timer = undefined
        out.write("\r\x1b[2K")
      }
    })
}

/**
 * Stops the whole run the way Ctrl-C does when no prompt is on screen (a
 * prompt reads keys in raw mode, so the terminal sends no SIGINT itself):
 * every finalizer runs, and the exit code is 130.
 */
const interruptRun = Effect.sync(() => void process.kill(process.pid, "SIGINT"))

/** Opens `text` in `$VISUAL`/`$EDITOR` and returns what was saved. */
const editInEditor = (text: string) =>
  Effect.sync(() => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "parley-edit-")), "QUERY_MESSAGE.md")
    fs.writeFileSync(file, text)
    const editor = process.env["VISUAL"] ?? process.env["EDITOR"] ?? "vi"
    spawnSync("sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" })
    const edited = fs.readFileSync(file, "utf8").trimEnd()
    fs.rmSync(path.dirname(file), { recursive: true, force: true })
    return edited === "" ? text : edited
  })

/** The inline incomplete-turn prompt (RFD 023): r · d · q · ? (+ e when the query itself is pending). */
const askResume = (context: Context.Context<Prompt.Environment>) => (info: Query.IncompleteInfo) =>
  Effect.gen(function*() {
    const lines = [`⚠ Conversation ${ConversationId.display(info.conversationId)} has an incomplete turn.`, ""]
    for (const call of info.analysis.toolCalls) {
      const mark = call.status === "completed" ? "✓" : call.status === "failed" ? "✗" : call.status === "waiting-for-input" ? "⏸" : "…"
      const question = call.inquiries.find((q) => q.response === null)?.request.question.text.split("\n")[0]
      lines.push(`  ${mark} ${call.request.name} — ${call.status.replaceAll("-", " ")}${question !== undefined ? `: "${question}"` : ""}`)
    }
    if (info.analysis.toolCalls.length === 0) lines.push(`  ${Query.describeIncomplete(info.summary, info.analysis)}`)
    PersonTerminal.write(lines.join("\n") + "\n\n")
    const keys = [
      { key: "r", label: "resume the incomplete turn" },
      { key: "d", label: "discard it and start fresh" },
      ...(info.summary.state === "pending-llm-response" ? [{ key: "e", label: "edit the pending query, then resume" }] : []),
      { key: "q", label: "exit" }
    ]
    const key = yield* Prompt.run(keyPrompt({ message: "What now?", keys })).pipe(
      Effect.provide(context),
      // Ctrl-C here stops the run, as it does anywhere else (exit 130); end the prompt's line first.
      Effect.catch(() => Effect.sync(() => PersonTerminal.write(`${TerminalPromptBackend.CANCELLED}\n`)).pipe(Effect.andThen(Effect.interrupt)))
    )
    return (({ r: "resume", d: "discard", e: "edit" }) as Record<string, Query.ResumeChoice>)[key] ?? "quit"
  })

const readStdin = Effect.promise(async () => {
  if (process.stdin.isTTY === true) return undefined
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString("utf8").trim()
  return text === "" ? undefined : text
})

/** What a query run needs, after flags are parsed (the demo builds it directly). */
export interface RunQueryParams {
  readonly storage: string
  readonly message: string | undefined
  readonly target: Query.Target
  readonly model: string | undefined
  readonly script: string | undefined
  readonly continueTurn: boolean
  readonly discardTurn: boolean
}

/** Chooses the live layers for `params` and runs the query program. */
export const runQuery = (params: RunQueryParams) =>
  Effect.scoped(Effect.gen(function*() {
    const { storage, script } = params
    // Config first: a broken config.toml stops us before any conversation is touched.
    const config = yield* ConfigFile.load(ConfigFile.fileOf(storage)).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
    )
    // Discarding a turn (with nothing new to send) calls no model: none is needed.
    const callsNoModel = params.discardTurn && (params.message === undefined || params.message.trim() === "")
    const model = params.model ?? config.assistant?.model ?? (script !== undefined || callsNoModel ? "scripted" : undefined)
    if (model === undefined) {
      return yield* new CliFailure({
        code: 1,
        message: `No model chosen. Pass --model (anthropic/<model>, openai/<model>, or scripted with --script FILE), or set assistant.model in ${ConfigFile.fileOf(storage)}.`
      })
    }
    const bad = ProviderLive.checkModel(model)
    if (bad !== undefined) return yield* new CliFailure({ code: 2, message: `--model: ${bad.message}` })
    if (model === "scripted" && script === undefined && !callsNoModel) {
      return yield* new CliFailure({ code: 2, message: "The scripted model needs steps: pass --script FILE (or set $PARLEY_SCRIPT)." })
    }
    const { message, target } = params
    const interactive = PersonTerminal.isInteractive()
    const root = path.dirname(storage)

    const providers = config.providers ?? {}
    const providerOptions: ProviderLive.ProviderLiveOptions = {
      ...(script !== undefined ? { scriptPath: script } : {}),
      anthropic: providers["anthropic"]?.base_url !== undefined ? { baseUrl: providers["anthropic"].base_url } : {},
      openai: providers["openai"]?.base_url !== undefined ? { baseUrl: providers["openai"].base_url } : {}
    }
    // Keys and scripts are checked before a conversation is created or touched.
    if (!callsNoModel) {
      yield* ProviderLive.checkReady(model, providerOptions).pipe(Effect.mapError((e) => new CliFailure({ code: 1, message: e.message })))
    }
    const configuredInquiryModel = config.conversation?.inquiry?.assistant?.model
    if (configuredInquiryModel !== undefined && !callsNoModel) {
      yield* ProviderLive.checkReady(configuredInquiryModel, providerOptions).pipe(
        Effect.mapError((e) => new CliFailure({ code: 1, message: `conversation.inquiry.assistant.model: ${e.message}` }))
      )
    }
    fs.mkdirSync(storage, { recursive: true })
    const providerLayer = ProviderLive.layer(providerOptions)
    const configLayer = Layer.succeed(Config, Config.of({ file: ConfigFile.fileOf(storage), data: config }))
    // MCP servers start with the executor (their tools are in the first request) and stop when the run ends.
    const executorLayer = ExecutorLive.layerWith({ mcp: { root, interactive, clientInfo: { name: "parley", version: VERSION } } }).pipe(Layer.provide(configLayer))
    const inquiryModel = config.conversation?.inquiry?.assistant?.model
    const inquiryLayer = Layer.unwrap(Effect.gen(function*() {
      const executor = yield* Executor
      return LlmInquiryBackend.layer({
        model,
        ...(inquiryModel !== undefined ? { inquiryModel } : {}),
        ...(config.assistant?.system_prompt !== undefined ? { systemPrompt: config.assistant.system_prompt } : {}),
        tools: executor.definitions
      })
    })).pipe(Layer.provide(Layer.merge(providerLayer, executorLayer)))
    // Prompts go to the person's terminal whatever stdout is (`parley query … | tee log` still asks).
    // The terminal lives as long as the run (its key reader and raw mode are scoped).
    const promptContext = interactive
      ? Context.merge(yield* Effect.context<Prompt.Environment>(), yield* Layer.build(PersonTerminal.layer))
      : undefined
    const services = Layer.mergeAll(
      FileConversationStore.layer({ storageDir: storage }),
      configLayer,
      executorLayer,
      providerLayer,
      inquiryLayer,
      interactive
        ? TerminalPromptBackend.layerWith({ onRepeatedCancel: interruptRun }).pipe(Layer.provide(Layer.succeedContext(promptContext!)))
        : headlessPrompts
    )

    let printed = ""
    let conversationId: string | undefined
    const result = yield* Query.query({
      message,
      target,
      model,
      ...(config.assistant?.system_prompt !== undefined ? { systemPrompt: config.assistant.system_prompt } : {}),
      root,
      continueTurn: params.continueTurn,
      discardTurn: params.discardTurn,
      interactive,
      ...(promptContext !== undefined ? { askResume: askResume(promptContext), editMessage: editInEditor } : {}),
      onConversation: (id) => Effect.sync(() => (conversationId = id)),
      onWaiting: makeSpinner(`waiting for ${model}`),
      onWarning: (text) =>
        Effect.sync(() => {
          if (printed !== "" && !printed.endsWith("\n")) process.stdout.write("\n")
          printed = ""
          process.stderr.write(`parley: ${text}\n`)
        }),
      onText: (text) => Effect.sync(() => {
        printed = text
        process.stdout.write(text)
      }),
      onToolCalls: (calls) =>
        Effect.sync(() => {
          if (printed !== "" && !printed.endsWith("\n")) process.stdout.write("\n")
          printed = ""
          statusTty()?.write(dim(`⚙ ${calls.map((c) => c.name).join(", ")}\n`))
        })
    }).pipe(
      Effect.provide(services),
      Effect.onInterrupt(() =>
        Effect.sync(() => {
          if (printed !== "" && !printed.endsWith("\n")) process.stdout.write("\n")
          if (conversationId !== undefined) {
            process.stderr.write(`parley: interrupted. What finished is saved; resume with: parley query --continue-turn --id ${conversationId}\n`)
          }
        })
      ),
      Effect.mapError((e) => {
        // The error goes on its own line, not after a reply cut mid-line.
        if (printed !== "" && !printed.endsWith("\n")) process.stdout.write("\n")
        printed = ""
        if (e instanceof CliFailure) return e
        const resumable = e._tag === "ProviderError" && conversationId !== undefined
        return new CliFailure({
          code: 1,
          message: e.message + (resumable ? `\nThe turn is saved; retry with: parley query --continue-turn --id ${conversationId}` : "")
        })
      })
    )
    if (printed !== "" && !printed.endsWith("\n")) process.stdout.write("\n")
    if (result.outcome._tag === "Discarded" && message === undefined) {
      process.stderr.write(`Discarded the incomplete turn of ${ConversationId.display(result.conversationId)}.\n`)
    }
    if (result.outcome._tag === "NothingToDiscard") {
      process.stderr.write(`${ConversationId.display(result.conversationId)} has no incomplete turn; nothing to discard.\n`)
    }
    if (result.outcome._tag === "NothingToResume") {
      process.stderr.write(`${ConversationId.display(result.conversationId)} has no incomplete turn; nothing to resume.\n`)
    }
    return result
  }))

export const query = Command.make(
  "query",
  {
    message: Argument.String("message").pipe(Argument.withDescription("What to ask (read from stdin when omitted and stdin is not a terminal)"), Argument.optional),
    id: Flag.String("id").pipe(Flag.withDescription("Continue this conversation (17738399468 or jp-c17738399468)"), Flag.optional),
    new: Flag.Boolean("new").pipe(Flag.withDescription("Start a new conversation"), Flag.withDefault(false)),
    model: Flag.String("model").pipe(Flag.withDescription("anthropic/<model>, openai/<model> or scripted (default: assistant.model in config.toml)"), Flag.optional),
    script: Flag.String("script").pipe(Flag.withDescription("Steps for the scripted model (JSON file; default $PARLEY_SCRIPT)"), Flag.optional),
    continueTurn: Flag.Boolean("continue-turn").pipe(Flag.withDescription("Resume the conversation's incomplete turn, if any"), Flag.withDefault(false)),
    discardTurn: Flag.Boolean("discard-turn").pipe(Flag.withDescription("Drop the conversation's incomplete turn, if any"), Flag.withDefault(false))
  },
  (flags) =>
    Effect.gen(function*() {
      if (flags.continueTurn && flags.discardTurn) {
        return yield* new CliFailure({ code: 2, message: "--continue-turn and --discard-turn cannot be used together." })
      }
      if (flags.new && Option.isSome(flags.id)) {
        return yield* new CliFailure({ code: 2, message: "--new and --id cannot be used together." })
      }
      let target: Query.Target = Query.Target.MostRecent()
      if (flags.new) target = Query.Target.New()
      if (Option.isSome(flags.id)) {
        const id = ConversationId.parse(flags.id.value)
        if (id === undefined) return yield* new CliFailure({ code: 2, message: `--id: "${flags.id.value}" is not a conversation id (expected a number like 17738399468 or jp-c17738399468).` })
        target = Query.Target.Id({ id })
      }
      const message = Option.getOrUndefined(flags.message) ?? (flags.continueTurn || flags.discardTurn ? undefined : yield* readStdin)
      yield* runQuery({
        storage: yield* storageDir,
        message,
        target,
        model: Option.getOrUndefined(flags.model),
        script: Option.getOrUndefined(flags.script) ?? process.env["PARLEY_SCRIPT"],
        continueTurn: flags.continueTurn,
        discardTurn: flags.discardTurn
      })
    })
).pipe(Command.withDescription("Send a message and run the assistant's tools (resumable)"))
