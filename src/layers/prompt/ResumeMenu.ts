/**
 * The inline incomplete-turn prompt (RFD 023), on the person's terminal:
 * the turn's tool calls with their state, then `r` resume · `d` discard ·
 * `q` exit · `?` help, plus `e` (edit the pending query) when the model
 * never answered it. Ctrl-C here stops the run (exit 130) and changes
 * nothing.
 *
 * @internal
 * @example
 * ```ts
 * import type * as Context from "effect/Context"
 * import type * as Prompt from "effect/cli/Prompt"
 * import * as ResumeMenu from "parley/layers/prompt/ResumeMenu"
 * import type * as Query from "parley/programs/Query"
 * declare const terminal: Context.Context<Prompt.Environment>
 * declare const info: Query.IncompleteInfo
 * const choice = ResumeMenu.ask(terminal)(info) // "resume", "discard", "edit" or "quit"
 * ```
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Prompt from "effect/cli/Prompt"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import { keyPrompt } from "./KeyPrompt.ts"
import * as TerminalPromptBackend from "./TerminalPromptBackend.ts"
import * as Query from "../../programs/Query.ts"
import * as PersonTerminal from "./PersonTerminal.ts"
import { printable } from "../../domain/render/TerminalText.ts"

/** The summary printed above the menu. */
export const summary = (info: Query.IncompleteInfo): string => {
  const lines = [`⚠ Conversation ${ConversationId.display(info.conversationId)} has an incomplete turn.`, ""]
  for (const call of info.analysis.toolCalls) {
    const mark =
      call.status === "completed"
        ? "✓"
        : call.status === "failed"
          ? "✗"
          : call.status === "waiting-for-input"
            ? "⏸"
            : "…"
    const question = call.inquiries.find((q) => q.response === null)?.request.question.text.split("\n")[0]
    // Names and questions come from the conversation on disk (a model, a tool, an MCP server chose them).
    lines.push(
      `  ${mark} ${printable(call.request.name)} — ${call.status.replaceAll("-", " ")}${question !== undefined ? `: "${printable(question)}"` : ""}`
    )
  }
  if (info.analysis.toolCalls.length === 0)
    lines.push(`  ${printable(Query.describeIncomplete(info.summary, info.analysis))}`)
  return lines.join("\n") + "\n\n"
}

/** Asks what to do with the incomplete turn, on the terminal of `context`. */
export const ask =
  (context: Context.Context<Prompt.Environment>) =>
  (info: Query.IncompleteInfo): Effect.Effect<Query.ResumeChoice> =>
    Effect.gen(function* () {
      PersonTerminal.write(summary(info))
      const keys = [
        { key: "r", label: "resume the incomplete turn" },
        { key: "d", label: "discard it and start fresh" },
        ...(info.summary.state === "pending-llm-response"
          ? [{ key: "e", label: "edit the pending query, then resume" }]
          : []),
        { key: "q", label: "exit" }
      ]
      const key = yield* Prompt.run(keyPrompt({ message: "What now?", keys })).pipe(
        Effect.provide(context),
        // A signal with the menu on screen: end its line before "interrupted" is printed.
        Effect.onInterrupt(() => Effect.sync(() => PersonTerminal.write(`${TerminalPromptBackend.CANCELLED}\n`))),
        // Ctrl-C here stops the run, as it does anywhere else (exit 130); end the prompt's line first.
        Effect.catch(() =>
          Effect.sync(() => PersonTerminal.write(`${TerminalPromptBackend.CANCELLED}\n`)).pipe(
            Effect.andThen(Effect.interrupt)
          )
        )
      )
      return ({ r: "resume", d: "discard", e: "edit" } as Record<string, Query.ResumeChoice>)[key] ?? "quit"
    })
