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
import * as Effect from "effect/Effect"
import * as Notification from "../domain/notify/Notification.ts"
import type * as ConfigData from "../domain/tool/Config.ts"
import * as ConfigFile from "../layers/ConfigFile.ts"
import type * as NotifierLive from "../layers/notify/NotifierLive.ts"
import type * as Scope from "effect/Scope"
import { RunEvents } from "../services/RunEvents.ts"
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

/** The notifier's settings for a process of `inputs.storage`. */
export const settings = (inputs: Inputs): NotifierLive.Settings => ({
  storage: inputs.storage,
  notify: inputs.data.notify,
  cwd: inputs.root,
  answerCommand: (id, inquiryId, answerType, kind) => {
    const placeholder = Hint.placeholderOf(answerType, kind)
    const context = { storage: inputs.storageGiven, config: inputs.config }
    return Hint.answer(id, inquiryId, placeholder === undefined ? undefined : { placeholder }, context)
  },
  url: Notification.pageUrl(inputs.data.server?.web)
})

/** Where an asker's storage and config are (as `Root.storage` reads them). */
export interface AskAt {
  readonly dir: string
  readonly given: string | undefined
  readonly config: string
  readonly configGiven: string | undefined
}

/**
 * The notifier settings of the storage at `at`, when its config's `[notify]`
 * names someone (an unreadable config: none); the command runs in `root`.
 */
const settingsAt = (at: AskAt, root: string) =>
  Effect.gen(function* () {
    const data = yield* Effect.orElseSucceed(ConfigFile.load(at.config), (): ConfigData.Config => ({}))
    if (data.notify?.command === undefined && data.notify?.webhook === undefined) return undefined
    return settings({ storage: at.dir, root, data, storageGiven: at.given, config: at.configGiven })
  })

/** The notifier of the storage at `at` for the caller's scope (loaded only when `[notify]` names someone). */
const notifierAt = (at: AskAt, root: string) =>
  Effect.gen(function* () {
    const found = yield* settingsAt(at, root)
    if (found === undefined) return undefined
    const NotifierLive = yield* Effect.promise(() => import("../layers/notify/NotifierLive.ts"))
    return yield* NotifierLive.make(found)
  })

/**
 * Tells `[notify]` of an asker's question for the caller's scope: `parley
 * ask` publishes its steps on the process's run-event hub as a run does. A
 * config that cannot be read tells nobody (the question is still asked and
 * listed); the notifier is loaded only when `[notify]` names someone.
 */
export const attachAsk = (at: AskAt) =>
  Effect.gen(function* () {
    // An asker's hook runs where the asker runs.
    const notifier = yield* notifierAt(at, process.cwd())
    if (notifier !== undefined) yield* notifier.attach((yield* RunEvents).events)
  })

/**
 * Delivers, for the caller's scope (`parley serve`'s lifetime), what earlier
 * processes of the storage left in the spool, and what later ones leave
 * there while it runs (a delivery fiber polls the spool).
 */
export const deliverLeftovers = (at: AskAt): Effect.Effect<void, never, Scope.Scope> =>
  Effect.asVoid(notifierAt(at, StorageStore.toolRoot(at.dir)))

/**
 * Delivers what earlier processes of the storage left in the spool, for at
 * most `boundMs` (`parley inbox`: it runs no turn, so nothing of its own is
 * spooled). An empty spool costs a directory listing: the config is not read.
 */
export const flushLeftovers = (at: AskAt, boundMs: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    const Spool = yield* Effect.promise(() => import("../layers/notify/Spool.ts"))
    if (!Spool.pending(Spool.dirOf(at.dir))) return
    const found = yield* settingsAt(at, StorageStore.toolRoot(at.dir))
    if (found === undefined) return
    const NotifierLive = yield* Effect.promise(() => import("../layers/notify/NotifierLive.ts"))
    yield* NotifierLive.flush(found, boundMs)
  })
