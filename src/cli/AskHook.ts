/**
 * `parley ask --claude-code-hook` (docs/ask.md#claude-code): placeholder until the hook lands.
 *
 * @example
 * ```ts
 * import * as AskHook from "./AskHook.ts"
 * ```
 */
import * as Effect from "effect/Effect"
import type { AskFlags } from "./Ask.ts"
import type { StorageAt } from "./AskRun.ts"

export const run = (_flags: AskFlags, _at: StorageAt) => Effect.void
