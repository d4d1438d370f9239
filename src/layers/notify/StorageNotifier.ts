/**
 * The notifier of a storage, made from its config's `[notify]`
 * (docs/questions-and-approvals.md#notifications), for the processes that
 * run no turn of their own or only an asker's: `parley ask` tells `[notify]`
 * of its question, `parley serve` delivers what earlier processes of the
 * storage left in the spool, `parley inbox` flushes it for a moment. A
 * config that cannot be read tells nobody; the notifier is loaded only when
 * `[notify]` names someone.
 *
 * What only the caller knows — the command that answers a question,
 * repeating what its invocation was told — comes in as `answerCommand`.
 *
 * @internal
 * @example
 * ```ts
 * import * as StorageNotifier from "parley/layers/notify/StorageNotifier"
 * const at = {
 *   dir: "/p/.parley",
 *   config: "/p/.parley/config.toml",
 *   answerCommand: (id: string, inquiryId: string) => `parley conversation answer ${id} ${inquiryId}`
 * }
 * const flushed = StorageNotifier.flushLeftovers(at, "/p", 1000)
 * ```
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Notification from "../../domain/notify/Notification.ts"
import type * as ConfigData from "../../domain/tool/Config.ts"
import { RunEvents } from "../../services/RunEvents.ts"
import * as ConfigFile from "../ConfigFile.ts"
import type * as NotifierLive from "./NotifierLive.ts"

/** A storage, its config file, and how a notification names the command that answers. */
export interface At {
  /** The resolved storage. */
  readonly dir: string
  readonly config: string
  readonly answerCommand: Notification.Context["answerCommand"]
}

/** The notifier's settings for a process of `storage` whose config is `data`; its command runs in `root`. */
export const settings = (
  storage: string,
  root: string,
  data: ConfigData.Config,
  answerCommand: Notification.Context["answerCommand"]
): NotifierLive.Settings => ({
  storage,
  notify: data.notify,
  cwd: root,
  answerCommand,
  url: Notification.pageUrl(data.server?.web)
})

/**
 * The notifier settings of the storage at `at`, when its config's `[notify]`
 * names someone (an unreadable config: none); the command runs in `root`.
 */
const settingsAt = (at: At, root: string) =>
  Effect.gen(function* () {
    const data = yield* Effect.orElseSucceed(ConfigFile.load(at.config), (): ConfigData.Config => ({}))
    if (data.notify?.command === undefined && data.notify?.webhook === undefined) return undefined
    return settings(at.dir, root, data, at.answerCommand)
  })

/** The notifier of the storage at `at` for the caller's scope (loaded only when `[notify]` names someone). */
const notifierAt = (at: At, root: string) =>
  Effect.gen(function* () {
    const found = yield* settingsAt(at, root)
    if (found === undefined) return undefined
    const NotifierLive = yield* Effect.promise(() => import("./NotifierLive.ts"))
    // The callers of `attach` are commands that end with their run (`parley ask`).
    return yield* NotifierLive.make({ ...found, firstTriesBeforeEnd: true })
  })

/**
 * Tells `[notify]` of what the process's run-event hub carries (an asker
 * publishes its steps there as a run does), for the caller's scope; the
 * command runs in `root`.
 */
export const attach = (at: At, root: string): Effect.Effect<void, never, Scope.Scope | RunEvents> =>
  Effect.gen(function* () {
    const notifier = yield* notifierAt(at, root)
    if (notifier !== undefined) yield* notifier.attach((yield* RunEvents).events)
  })

/**
 * Delivers, for the caller's scope, what earlier processes of the storage
 * left in the spool, and what later ones leave there meanwhile (a delivery
 * fiber polls the spool); the command runs in `root`.
 */
export const deliverLeftovers = (at: At, root: string): Effect.Effect<void, never, Scope.Scope> =>
  Effect.asVoid(notifierAt(at, root))

/**
 * Delivers what earlier processes of the storage left in the spool, for at
 * most `boundMs`. An empty spool costs a directory listing: the config is
 * not read.
 */
export const flushLeftovers = (at: At, root: string, boundMs: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    const Spool = yield* Effect.promise(() => import("./Spool.ts"))
    if (!Spool.pending(Spool.dirOf(at.dir))) return
    const found = yield* settingsAt(at, root)
    if (found === undefined) return
    const NotifierLive = yield* Effect.promise(() => import("./NotifierLive.ts"))
    yield* NotifierLive.flush(found, boundMs)
  })
