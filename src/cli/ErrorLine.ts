/**
 * What the CLI prints for a failed command (docs/decisions.md#errors-carry-data): one clear line
 * per error, built from the error's data. An error says what happened (the
 * conversation, the file, the entry, the pid); when there is something to run
 * next, the command is rendered here through {@link Hint}, so it names parley
 * as it was started and repeats `--storage` when it was given. No message is
 * patched after the fact.
 *
 * @example
 * ```ts
 * import * as ErrorLine from "./ErrorLine.ts"
 * import { ConversationNotFound } from "../services/StoreErrors.ts"
 * ErrorLine.line(new ConversationNotFound({ id: "123" }), { storage: "/s" })
 * // "No conversation with id 123. Run `parley conversation ls --archived --storage /s` to see the ids."
 * ```
 */
import * as os from "node:os"
import * as Predicate from "effect/Predicate"
import type { NotPrivate } from "../domain/storage/NotPrivate.ts"
import type { ContextWindowExceeded } from "../programs/ContextWindow.ts"
import type { ProviderError } from "../services/Provider.ts"
import { CliFailure } from "./CliFailure.ts"
import * as Hint from "./Hint.ts"
import { ConversationCorrupt, ConversationNotFound } from "../services/StoreErrors.ts"

/** The errors whose line names a command to run next. */
export type WithNextStep = ConversationNotFound | ConversationCorrupt | ContextWindowExceeded | NotPrivate

/**
 * Told by its tag, not by its class: importing the class would load the
 * context-window program (and the whole tool configuration) into `ls` and
 * `print`, which only ever meet the store's errors (docs/decisions.md#fast-start, start-up).
 */
const isContextWindowExceeded = (error: unknown): error is ContextWindowExceeded =>
  Predicate.isTagged(error, "ContextWindowExceeded")

/** Told by its tag: the domain class is not loaded for this check. */
const isNotPrivate = (error: unknown): error is NotPrivate => Predicate.isTagged(error, "NotPrivate")

/** Told by its tag: the provider contract is not loaded for this check. */
const isProviderError = (error: unknown): error is ProviderError => Predicate.isTagged(error, "ProviderError")

/**
 * What to do about a setting a provider was not given (the error names it
 * as data: `missing`), in the CLI's words: its flags and variables.
 */
const missingSettingLine = (error: ProviderError): string | undefined => {
  if (error.missing === "script") return "The scripted model needs a script: pass --script FILE or set PARLEY_SCRIPT."
  if (error.missing !== "api_key") return undefined
  return error.provider === "openai"
    ? `${error.detail} Export it (or set providers.openai.base_url for a local server), or run with --model scripted --script FILE.`
    : `${error.detail} Export it, or run with --model scripted --script FILE to work offline.`
}

/** Whether `error` gets a command to run next (so its line depends on the invocation). */
export const hasNextStep = (error: unknown): error is WithNextStep =>
  error instanceof ConversationNotFound ||
  error instanceof ConversationCorrupt ||
  isContextWindowExceeded(error) ||
  isNotPrivate(error)

/**
 * What to do about a runtime path parley refused (it never changes one
 * itself): have another user's path removed, or make one's own private. In
 * the temp dir (no `$XDG_RUNTIME_DIR`), a runtime directory of one's own is
 * the way around a path one cannot remove.
 */
const notPrivateLine = (error: NotPrivate): string => {
  const elsewhere = error.path.startsWith(os.tmpdir())
    ? " (or set XDG_RUNTIME_DIR to a directory only you can use)"
    : ""
  const todo =
    error.problem === "owner"
      ? `Another user may be waiting there for what parley sends: have it removed (by uid ${error.owner} or root)${elsewhere}, then run again.`
      : error.problem === "open"
        ? `It is yours: make it private (\`chmod 700 ${error.path}\`), then run again.`
        : error.problem === "shared"
          ? "Anyone may replace what parley makes in it: set TMPDIR to a directory only you (or root) may write in, or XDG_RUNTIME_DIR to a private one of yours, then run again."
          : `Remove it${elsewhere}, then run again.`
  return `${error.message} ${todo}`
}

/** Told by its tag: an answer refused for its value (exit 2, as a usage error: what would fit is said). */
const isMisfit = (error: unknown): error is { readonly message: string } =>
  Predicate.isTagged(error, "AnswerDoesNotFit") || Predicate.isTagged(error, "AnswersDoNotFit")

/** Told by its tag: a secret for a turn that is not running (`services/Refusals.ts`). */
const isSecretNeedsRunningTurn = (error: unknown): error is { readonly id: string; readonly message: string } =>
  Predicate.isTagged(error, "SecretNeedsRunningTurn")

/**
 * A server that could not listen (effect's `ServeError`, its Node error as the cause: a port in use, an
 * address this machine does not have, a port below 1024). Its own message is empty, and a server that
 * stops with an empty line is a failure nobody sees.
 */
const isServeError = (error: unknown): error is { readonly cause: unknown } => Predicate.isTagged(error, "ServeError")

const listenLine = (cause: unknown): string => {
  const code = Predicate.hasProperty(cause, "code") ? String(cause.code) : undefined
  const what = cause instanceof Error && cause.message !== "" ? cause.message : String(cause)
  const next =
    code === "EADDRINUSE"
      ? " Another program listens there: stop it, or choose another --port (0: any free port)."
      : code === "EADDRNOTAVAIL"
        ? " This machine has no such address: choose another --host."
        : code === "EACCES"
          ? " Ports below 1024 need privileges: choose a --port above 1023."
          : ""
  return `Could not listen (${what}).${next}`
}

/** A line for an error whose own message is empty: its tag and data, never nothing. */
const described = (error: unknown): string => {
  const tag = Predicate.hasProperty(error, "_tag")
    ? String(error._tag)
    : error instanceof Error
      ? error.name
      : typeof error
  const cause = Predicate.hasProperty(error, "cause") && error.cause !== undefined ? `: ${line(error.cause, {})}` : ""
  return `Failed (${tag})${cause}`
}

/** The line for `error`: its message, and the command to run next when there is one. */
export const line = (error: unknown, context: Hint.Context): string => {
  if (isServeError(error)) return listenLine(error.cause)
  if (isMisfit(error))
    return error.message.endsWith("recorded.") ? error.message : `${error.message} Nothing was recorded.`
  if (isSecretNeedsRunningTurn(error)) return `${error.message}\n    ${Hint.resume(error.id, context)}`
  if (error instanceof ConversationNotFound)
    return `${error.message} Run \`${Hint.listArchived(context)}\` to see the ids.`
  if (error instanceof ConversationCorrupt)
    return `${error.message}. Run \`${Hint.check(error.id, context)}\` for details.`
  if (isContextWindowExceeded(error))
    return `${error.message}\nCompact it with: ${Hint.compact(error.conversationId, context)}`
  if (isNotPrivate(error)) return notPrivateLine(error)
  const setting = isProviderError(error) ? missingSettingLine(error) : undefined
  if (setting !== undefined) return setting
  if (error instanceof Error) return error.message.trim() === "" ? described(error) : Hint.withInstall(error)
  const text = String(error)
  return text.trim() === "" ? described(error) : text
}

/** `error` as the CLI failure that prints its line (exit 1); a `CliFailure` is kept as it is. */
export const failure = (error: unknown, context: Hint.Context): CliFailure =>
  error instanceof CliFailure ? error : new CliFailure({ code: isMisfit(error) ? 2 : 1, message: line(error, context) })
