/**
 * `parley ask`'s flags as the command reads them: a module of its own, so the
 * command (`Ask.ts`), its fast path (`AskArgv.ts`) and its runs (`AskRun.ts`,
 * `AskHook.ts`) share the type without importing each other in a circle.
 *
 * @example
 * ```ts
 * import type { AskFlags } from "./AskFlags.ts"
 * const plain = (flags: AskFlags) => flags.claudeCodeHook === false
 * ```
 */
import type * as Option from "effect/Option"

/** The flags as the command reads them. */
export interface AskFlags {
  readonly text: Option.Option<string>
  readonly type: "boolean" | "text" | "select" | "secret"
  readonly option: ReadonlyArray<string>
  readonly default: Option.Option<string>
  readonly context: Option.Option<string>
  readonly key: Option.Option<string>
  readonly conversation: Option.Option<string>
  readonly new: boolean
  readonly source: Option.Option<string>
  readonly timeout: Option.Option<string>
  readonly onTimeout: "default" | "fail"
  readonly format: "text" | "json"
  readonly claudeCodeHook: boolean
}
