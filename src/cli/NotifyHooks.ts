/**
 * The edge's part of `[notify]` (docs/questions-and-approvals.md#notifications): what a
 * notification needs that only the edge knows — the command that answers a
 * question, repeating what this invocation was told (`Hint`), and the page of
 * the configured server — for `parley query` runs and cluster runners alike.
 *
 * @example
 * ```ts
 * import * as NotifyHooks from "./NotifyHooks.ts"
 * NotifyHooks.settings({ storage: "/p/.parley", root: "/p", data: {}, storageGiven: undefined, config: undefined })
 * // { storage: "/p/.parley", notify: undefined, cwd: "/p", answerCommand, url }
 * ```
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as AnswerFit from "../domain/tool/AnswerFit.ts"
import type * as ConfigData from "../domain/tool/Config.ts"
import type * as NotifierLive from "../layers/notify/NotifierLive.ts"
import * as StorageNotifier from "../layers/notify/StorageNotifier.ts"
import type { RunEvents } from "../services/RunEvents.ts"
import * as Hint from "./Hint.ts"
import * as StorageStore from "../layers/store/StorageStore.ts"

/** What the settings are made of. */
export interface Inputs {
  /** The resolved storage. */
  readonly storage: string
  /** Where tools (and the hook command) run. */
  readonly root: string
  readonly data: ConfigData.Config
  /** The storage as given (`--storage`, `$PARLEY_STORAGE`), which a pasted command must repeat. */
  readonly storageGiven: string | undefined
  /** `--config FILE` when given. */
  readonly config: string | undefined
}

/** The command a notification gives to answer a question, repeating `--storage` and `--config` as given. */
const answerCommand =
  (storageGiven: string | undefined, config: string | undefined) =>
  (
    id: string,
    inquiryId: string,
    answerType: Parameters<typeof AnswerFit.placeholder>[0],
    kind: string,
    rememberable: boolean
  ) => {
    const placeholder = AnswerFit.placeholder(answerType, kind, rememberable)
    const context = { storage: storageGiven, config }
    return Hint.answer(id, inquiryId, placeholder === undefined ? undefined : { placeholder }, context)
  }

/** The notifier's settings for a process of `inputs.storage`. */
export const settings = (inputs: Inputs): NotifierLive.Settings =>
  StorageNotifier.settings(inputs.storage, inputs.root, inputs.data, answerCommand(inputs.storageGiven, inputs.config))

/** Where an asker's storage and config are (as `Root.storage` reads them). */
export interface AskAt {
  readonly dir: string
  readonly given: string | undefined
  readonly config: string
  readonly configGiven: string | undefined
}

/** The storage at `at`, with the answer command its notifications give. */
const storageAt = (at: AskAt): StorageNotifier.At => ({
  dir: at.dir,
  config: at.config,
  answerCommand: answerCommand(at.given, at.configGiven)
})

/**
 * Tells `[notify]` of an asker's question for the caller's scope: `parley
 * ask` publishes its steps on the process's run-event hub as a run does; its
 * hook runs where the asker runs.
 */
export const attachAsk = (at: AskAt): Effect.Effect<void, never, Scope.Scope | RunEvents> =>
  StorageNotifier.attach(storageAt(at), process.cwd())

/** Delivers the storage's spool for the caller's scope (`parley serve`'s lifetime). */
export const deliverLeftovers = (at: AskAt): Effect.Effect<void, never, Scope.Scope> =>
  StorageNotifier.deliverLeftovers(storageAt(at), StorageStore.toolRoot(at.dir))

/** Delivers what earlier processes left in the spool, for at most `boundMs` (`parley inbox`: it runs no turn). */
export const flushLeftovers = (at: AskAt, boundMs: number): Effect.Effect<void> =>
  StorageNotifier.flushLeftovers(storageAt(at), StorageStore.toolRoot(at.dir), boundMs)
