/**
 * `parley ask TEXT` (docs/ask.md): any program's question, in the same inbox
 * as a run's. Only the flags live here: the command's work
 * (`AskRun.ts`) and Claude Code's hook (`AskHook.ts`) load when it runs, so
 * no other command pays for them at start-up.
 *
 * @example
 * ```sh
 * parley ask "Deploy to prod?" --timeout 10m && ./deploy.sh
 * parley ask "Which region?" --type select --option eu --option us --format json
 * ```
 */
import * as Effect from "effect/Effect"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { formatFlag } from "./Format.ts"
import { storage } from "./Root.ts"

const optionalString = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withDescription(description), Flag.optional)

/** The command's flags. */
export const askFlags = {
  text: Argument.String("text").pipe(Argument.withDescription("The question"), Argument.optional),
  type: Flag.Literals("type", ["boolean", "text", "select", "secret"]).pipe(
    Flag.withDescription("The answer's type (a secret is printed, never recorded)"),
    Flag.withDefault("boolean" as const)
  ),
  option: Flag.String("option").pipe(Flag.withDescription("An option of a select (repeat it)"), Flag.atLeast(0)),
  default: optionalString("default", "The suggested answer (and the answer after --timeout with --on-timeout default)"),
  context: optionalString("context", "Shown with the question"),
  key: optionalString("key", "Asking again with the same key while the question is open joins it"),
  conversation: optionalString("conversation", "Record it in this conversation"),
  new: Flag.Boolean("new").pipe(Flag.withDescription("Record it in a new conversation"), Flag.withDefault(false)),
  source: optionalString("source", "Who asks, as recorded (default: ask)"),
  timeout: optionalString("timeout", "Give up after this long (30s, 10m, 1h): exit 3"),
  onTimeout: Flag.Literals("on-timeout", ["default", "fail"]).pipe(
    Flag.withDescription("After --timeout: answer the --default, or fail with exit 3"),
    Flag.withDefault("fail" as const)
  ),
  format: formatFlag,
  claudeCodeHook: Flag.Boolean("claude-code-hook").pipe(
    Flag.withDescription("Answer Claude Code's PreToolUse / PermissionRequest hook JSON on stdin"),
    Flag.withDefault(false)
  )
}

export type { AskFlags } from "./AskFlags.ts"

export const ask = Command.make("ask", askFlags, (flags) =>
  Effect.gen(function* () {
    const at = yield* storage
    if (flags.claudeCodeHook) {
      const AskHook = yield* Effect.promise(() => import("./AskHook.ts"))
      return yield* AskHook.run(flags, at)
    }
    const AskRun = yield* Effect.promise(() => import("./AskRun.ts"))
    return yield* AskRun.run(flags, at)
  })
).pipe(
  Command.withDescription(
    "Ask a question from any program: it waits in the inbox, the page and the API (and at this terminal) for the first answer, and prints it"
  )
)
