/**
 * `parley ask --claude-code-hook` (docs/ask.md#claude-code): Claude Code's
 * PreToolUse / PermissionRequest hook. Reads the hook's JSON on stdin
 * (`domain/tool/ClaudeCodeHook.ts`), asks "Run <tool>?" as an approval
 * (`programs/Ask.ts`, `kind: "approval"`, the call's input as its
 * arguments) in the conversation that keeps the session's approvals, and
 * prints the decision. An approval answered `always`/`never` is remembered
 * there: the tool's next call in the session is decided at once.
 *
 * Never a crash, never an allow by mistake: bad input, and any failure, is
 * a `deny` with the reason (exit 0); a tool the config does not name, or a
 * `--timeout` that passed, prints nothing (no decision: Claude Code asks as
 * it would without the hook).
 *
 * @example
 * ```sh
 * echo '{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' | parley ask --claude-code-hook
 * ```
 */
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Stdin from "../layers/file/Stdin.ts"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ClaudeCodeHook from "../domain/tool/ClaudeCodeHook.ts"
import * as HostTurns from "../layers/host/HostTurns.ts"
import * as ConfigFile from "../layers/ConfigFile.ts"
import * as RunLive from "../layers/RunLive.ts"
import * as Ask from "../programs/Ask.ts"
import type { AskFlags } from "./AskFlags.ts"
import { hostWhenKnown, type StorageAt } from "./AskRun.ts"
import * as NotifyHooks from "./NotifyHooks.ts"
import { withStoreAt } from "./conversation/Store.ts"
import * as ErrorLine from "./ErrorLine.ts"
import { parseDuration } from "../domain/stream/Compact.ts"

/** At most this much of stdin is read (a hook's input is a few kilobytes; a larger one is not a hook's). */
const MAX_INPUT = 4 * 1024 * 1024

const print = (event: ClaudeCodeHook.HookEvent, behavior: "allow" | "deny", reason: string) =>
  Console.log(JSON.stringify(ClaudeCodeHook.decision(event, behavior, reason)))

/** Who answered, as the reason Claude Code shows. */
const reasonOf = (answered: Ask.Answered, allow: boolean): string =>
  `${allow ? "Approved" : "Denied"} in parley by ${answered.by}${answered.via !== undefined ? ` via ${answered.via}` : ""}${answered.remember === true ? ` (${allow ? "always" : "never"} for this session)` : ""}.`

/** Asks, and prints the decision. */
const decide = (hook: ClaudeCodeHook.HookInput, flags: AskFlags, at: StorageAt) =>
  Effect.gen(function* () {
    const known = yield* Ask.rememberedIn(ClaudeCodeHook.titleOf(hook.sessionId), hook.tool)
    if (Option.isSome(known))
      return yield* print(
        hook.event,
        known.value === "y" ? "allow" : "deny",
        `Remembered in parley (${known.value === "y" ? "always" : "never"} for ${hook.tool} in this session).`
      )
    const cancel = yield* Deferred.make<void>()
    yield* NotifyHooks.attachAsk(at)
    yield* Effect.forkScoped(hostWhenKnown(at.dir, cancel))
    const timeout = Option.flatMap(flags.timeout, (t) => Option.fromNullishOr(parseDuration(t)))
    const answered = yield* Ask.ask(`Run ${hook.tool}?`, {
      type: "boolean",
      target: Ask.titled(ClaudeCodeHook.titleOf(hook.sessionId)),
      approval: { tool: hook.tool, arguments: hook.input },
      ...(hook.cwd !== undefined ? { context: `Claude Code in ${hook.cwd}` } : {}),
      source: Option.getOrUndefined(flags.source),
      timeout: Option.isSome(timeout) ? `${timeout.value} millis` : undefined,
      cancelled: Deferred.await(cancel)
    })
    const allow = answered.answer === true
    yield* print(hook.event, allow ? "allow" : "deny", reasonOf(answered, allow))
  })

/** The tools the config says ask (all when it names none). */
const configuredTools = (at: StorageAt) =>
  Effect.map(
    Effect.orElseSucceed(ConfigFile.load(at.config), () => ({})),
    (config): ReadonlyArray<string> | undefined =>
      "ask" in config ? (config.ask?.claude_code?.tools ?? undefined) : undefined
  )

/** Runs the hook: reads stdin, decides, prints. Always exits 0 unless interrupted. */
export const run = (flags: AskFlags, at: StorageAt) =>
  Effect.gen(function* () {
    const hook = ClaudeCodeHook.read(yield* Stdin.bounded(MAX_INPUT))
    if (ClaudeCodeHook.isMalformed(hook)) return yield* print(hook.event, "deny", `parley: ${hook.reason}.`)
    if (!ClaudeCodeHook.asks(yield* configuredTools(at), hook.tool)) return
    yield* withStoreAt(at, Effect.scoped(decide(hook, flags, at))).pipe(
      Effect.provide(Layer.merge(RunLive.layer, HostTurns.layer(at.dir))),
      Effect.catch((e) =>
        e instanceof Ask.AskTimedOut
          ? // No decision: Claude Code asks at its own prompt.
            Effect.void
          : print(hook.event, "deny", `parley: ${ErrorLine.line(e, { storage: at.given, config: at.configGiven })}`)
      )
    )
  })
