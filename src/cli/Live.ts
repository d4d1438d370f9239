/**
 * The edge (docs/architecture.md#a-turn): the one place the live layers of a
 * `parley query` run are built, from its settings (flags, environment) and
 * `config.toml` — the file store, the config, the live executor, the
 * provider router, the LLM inquiry backend, and the prompter (the person's
 * terminal, or none) — plus {@link Run}, what the CLI itself needs: the
 * person's terminal, the status lines, the model chooser and what hints
 * must repeat. The programs only ask for services.
 *
 * The config is read first: a broken `config.toml` stops the run before any
 * conversation is touched. The inquiry backend asks whichever model the run
 * ends up choosing (the conversation's remembered model is known only once
 * it is open), so it waits for that choice.
 *
 * @example
 * ```ts
 * import * as Live from "./Live.ts"
 * program.pipe(Effect.provide(Live.layer({ storage, storageGiven: undefined, model: undefined, script: undefined })))
 * ```
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Prompt from "effect/cli/Prompt"
import * as ConfigData from "../domain/tool/Config.ts"
import * as ConfigFile from "../layers/ConfigFile.ts"
import * as ExecutorLive from "../layers/executor/ExecutorLive.ts"
import * as LlmInquiryBackend from "../layers/LlmInquiryBackend.ts"
import * as PendingAnswersLive from "../layers/PendingAnswersLive.ts"
import * as ProcessOutput from "../layers/ProcessOutput.ts"
import * as RunEventsLive from "../layers/RunEventsLive.ts"
import * as NotifierLive from "../layers/notify/NotifierLive.ts"
import * as NotifyHooks from "./NotifyHooks.ts"
import * as TerminalPromptBackend from "../layers/prompt/TerminalPromptBackend.ts"
import * as TerminalPrompts from "../layers/prompt/TerminalPrompts.ts"
import * as ProviderLive from "../layers/provider/ProviderLive.ts"
import * as StorageStore from "../layers/store/StorageStore.ts"
import { Config } from "../services/Config.ts"
import type { ConversationStore } from "../services/ConversationStore.ts"
import type { Executor } from "../services/Executor.ts"
import type { InquiryBackend } from "../services/InquiryBackend.ts"
import type { PendingAnswers } from "../services/PendingAnswers.ts"
import { PromptBackend } from "../services/PromptBackend.ts"
import type { Provider } from "../services/Provider.ts"
import { RunEvents } from "../services/RunEvents.ts"
import { CliFailure } from "./CliFailure.ts"
import * as Cursor from "../layers/prompt/Cursor.ts"
import * as DetachedRun from "../layers/host/DetachedRun.ts"
import * as Hint from "./Hint.ts"
import * as ModelChoice from "./ModelChoice.ts"
import * as PersonTerminal from "../layers/prompt/PersonTerminal.ts"
import * as ProviderOptions from "../layers/provider/ProviderOptions.ts"
import { VERSION } from "./Version.ts"
import * as Status from "./Status.ts"
import * as Style from "./Style.ts"

/** What a run is told from outside (flags and environment). */
export interface Settings {
  /** The resolved storage directory. */
  readonly storage: string
  /** The storage directory as given (`--storage` or `$PARLEY_STORAGE`); `undefined` when found by looking up from here. */
  readonly storageGiven: string | undefined
  /** `--model` as given. */
  readonly model: string | undefined
  /** The scripted model's steps (`--script` or `$PARLEY_SCRIPT`). */
  readonly script: string | undefined
  /** `--config FILE` as given (absolute); the config is that, else `$PARLEY_CONFIG`, else the storage's (`StorageStore.configFileOf`). */
  readonly config?: string | undefined
  /** `--detached-policy` for this run (overrides `[conversation.inquiry] detached`). */
  readonly detachedPolicy?: ConfigData.DetachedPolicy | undefined
}

/** What the CLI needs for a run, beside the programs' services. */
export class Run extends Context.Service<
  Run,
  {
    readonly settings: Settings
    readonly config: ConfigData.Config
    /** Where tools run: the storage directory's parent. */
    readonly root: string
    /** The person's terminal (prompts, the resume menu); `undefined` when nobody can be asked. */
    readonly person: Context.Context<Prompt.Environment> | undefined
    readonly status: Status.Status
    /** How far the terminal's view of the run has got (prompts wait for it). */
    readonly cursor: Cursor.Cursor
    /** Why the last edit of the pending query was abandoned, when it was. */
    readonly editKept: { why: string | undefined }
    /** Chooses the run's model from the one the conversation remembers, and checks it (its key, its script). */
    readonly chooseModel: (remembered: string | undefined) => Effect.Effect<string, CliFailure>
    /** What a printed command must repeat to work when pasted. */
    readonly hint: Hint.Context
    /** Whether the person chose "abort" in the Ctrl-C menu (`InterruptMenu`): the interrupted turn is discarded. */
    readonly aborted: Ref.Ref<boolean>
    /** Somebody means to watch this run from elsewhere (`--detach`, `serve`): its questions wait when no policy is set. */
    readonly watched: boolean
  }
>()("parley/cli/Run") {}

/** The services a query run is given. */
export type Services =
  | Run
  | Config
  | Executor
  | Provider
  | InquiryBackend
  | PromptBackend
  | ConversationStore
  | RunEvents
  | PendingAnswers

/** Everything a `parley query` run needs, live. */
export const layer = (settings: Settings): Layer.Layer<Services, CliFailure, Prompt.Environment> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const configFile = StorageStore.configFileOf(settings.storage, settings.config)
      // Config first: a broken config.toml stops us before any conversation is touched.
      const loaded = yield* ConfigFile.load(configFile).pipe(
        Effect.mapError((e) => new CliFailure({ code: 1, message: Hint.withInstall(e) }))
      )
      const config =
        settings.detachedPolicy !== undefined ? ConfigData.withDetachedPolicy(loaded, settings.detachedPolicy) : loaded
      const watched = DetachedRun.announcing()
      const providerOptions = ProviderOptions.providerOptions(config, settings.script)
      const chosen = yield* Deferred.make<string>()
      // The terminal lives as long as the run (its key reader and raw mode are scoped).
      const person = PersonTerminal.isInteractive() ? yield* PersonTerminal.context : undefined
      const choose = ModelChoice.make({
        flag: settings.model,
        script: settings.script,
        // A watched run's questions wait (unless config says otherwise): no inquiry model is needed for them.
        config:
          watched && ConfigData.configuredDetachedPolicy(config) === undefined
            ? ConfigData.withDetachedPolicy(config, "wait")
            : config,
        configFile,
        providers: providerOptions,
        personReachable: person !== undefined
      })
      // Status needs only a screen: the person's terminal, else stderr when it is one
      // (`cat notes.md | parley query` cannot prompt, but still shows what its tools do).
      const screen = PersonTerminal.reach() ?? (ProcessOutput.isTerminal("stderr") ? process.stderr : undefined)
      const status = yield* Status.make(screen, Style.colorAllowed())
      const configLayer = Layer.succeed(Config, Config.of({ file: configFile, data: config }))
      // Built here, in the run's scope, so a config problem it finds is one clear line.
      // MCP servers start with the executor (the first model request needs their tools) and stop with the run.
      // MCP sign-ins are kept with the storage (a database's: this user's directory for it), not beside a --config file.
      const mcp = {
        root: StorageStore.toolRoot(settings.storage),
        storage: StorageStore.stateDirOf(settings.storage),
        interactive: person !== undefined,
        clientInfo: { name: "parley", version: VERSION }
      }
      const executorLayer = Layer.succeedContext(
        yield* Layer.build(ExecutorLive.layerWith({ mcp }).pipe(Layer.provide(configLayer))).pipe(
          Effect.mapError((e) => new CliFailure({ code: 1, message: Hint.withInstall(e) }))
        )
      )
      const providerLayer = ProviderLive.layer(providerOptions)
      const cursor = Cursor.make()
      const editKept = { why: undefined as string | undefined }
      // One hub for the run: the programs publish to it, the view and the prompts follow it.
      const events = Layer.succeed(RunEvents, yield* RunEventsLive.make)
      const notified = NotifierLive.attachRun.pipe(
        Layer.provide(
          Layer.merge(
            events,
            NotifierLive.layer({
              ...NotifyHooks.settings({
                storage: settings.storage,
                root: StorageStore.toolRoot(settings.storage),
                data: config,
                storageGiven: settings.storageGiven,
                config: settings.config
              }),
              // The command ends with its run: its last notifications get their first try first.
              firstTriesBeforeEnd: true
            })
          )
        )
      )
      const run = Run.of({
        settings,
        config,
        root: StorageStore.toolRoot(settings.storage),
        person,
        status,
        cursor,
        editKept,
        chooseModel: (remembered) => Effect.tap(choose(remembered), (model) => Deferred.succeed(chosen, model)),
        hint: {
          storage: settings.storageGiven,
          model: settings.model,
          script: settings.script,
          config: settings.config,
          detachedPolicy: settings.detachedPolicy
        },
        aborted: yield* Ref.make(false),
        watched
      })
      return Layer.mergeAll(
        Layer.succeed(Run, run),
        Layer.catchTag(
          // The command exits once its session is closed: the close's file calls block (`FileCalls.ts`).
          StorageStore.storeLayer(settings.storage, { blockingClose: true }),
          ["StoreIoError", "MissingPackage"],
          (e): Layer.Layer<ConversationStore, CliFailure> =>
            Layer.unwrap(Effect.fail(new CliFailure({ code: 1, message: Hint.withInstall(e) })))
        ),
        configLayer,
        executorLayer,
        providerLayer,
        LlmInquiryBackend.layerOnChosen(config, Deferred.await(chosen)).pipe(
          Layer.provide(Layer.merge(providerLayer, executorLayer))
        ),
        PendingAnswersLive.layer,
        events,
        notified,
        person !== undefined
          ? Layer.effect(PromptBackend, TerminalPrompts.make({ person, paused: status.paused, cursor, editKept })).pipe(
              Layer.provide(events)
            )
          : Layer.succeed(PromptBackend, TerminalPromptBackend.headless(watched))
      )
    })
  )

/** {@link layer} for settings computed by an effect (the command's flags and the root's `--storage`). */
export const layerFrom = <E, R>(
  settings: Effect.Effect<Settings, E, R>
): Layer.Layer<Services, CliFailure | E, Prompt.Environment | R> => Layer.unwrap(Effect.map(settings, layer))
