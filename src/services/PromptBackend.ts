/**
 * Asking the person at the terminal: tool permission and tool questions
 * (boolean, select, text, and secret with no echo).
 *
 * Permission: `y` run · `Y` run and remember for the turn · `n` skip ·
 * `N` skip and remember. Boolean questions: the same keys, capitals
 * remember the answer for the turn. Select and text answers are never
 * remembered; secret answers never leave memory.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { PromptBackend } from "parley/services/PromptBackend"
 * const decision = PromptBackend.use((p) => p.permission({ toolName: "write_note", kind: "local", arguments: {} })) // Effect<"y" | "Y" | "n" | "N", PromptError, PromptBackend>
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ConversationId } from "../domain/storage/ConversationId.ts"
import type { IncompleteSummary, TurnAnalysis } from "../domain/stream/IncompleteTurn.ts"
import type { DetachedPolicy } from "../domain/tool/Config.ts"
import type { Question } from "../domain/tool/Question.ts"

/** A permission answer: `y` run, `Y` run and remember for the turn, `n` skip, `N` skip and remember. */
export type PermissionDecision = "y" | "Y" | "n" | "N"

/** A key typed at the permission prompt: a decision, or `e` (edit the arguments first; offered when the request is `editable`). */
export type PermissionKey = PermissionDecision | "e"

/** Which call a prompt belongs to, among the calls run together (docs/cli.md#status-lines: parallel prompts say whose they are). */
export interface CallPosition {
  readonly callId: string
  /** 1-based. */
  readonly index: number
  readonly total: number
}

/** What the permission prompt shows: which tool, how it runs, its arguments. */
export interface PermissionRequest {
  readonly toolName: string
  /** How the tool runs, for the prompt text ("Run local write_note tool?"). */
  readonly kind: "built-in" | "local" | "MCP"
  /** The call's arguments, shown with the prompt. */
  readonly arguments: Schema.JsonObject
  readonly position?: CallPosition
  /** Offer `e`: edit the arguments in the editor before the call runs (docs/tools.md#editing-a-calls-arguments). */
  readonly editable?: boolean
}

/** The result review's keys: `y` deliver the result, `n` skip it, `e` edit it first. */
export type ReviewKey = "y" | "n" | "e"

/** What the result review shows: whose result, and the result. */
export interface ReviewRequest {
  readonly toolName: string
  /** The tool's result, shown above the prompt. */
  readonly content: string
  readonly position?: CallPosition
}

/** A tool question to put to the person (a `secret` one is read without echo). */
export interface QuestionRequest {
  readonly toolName: string
  readonly question: Question
  /** The asking call's arguments (which file, which branch…). */
  readonly arguments?: Schema.JsonObject
  readonly position?: CallPosition
  /** Who is asking, shown above the question (RFD 083 `prompt_label`; `ask_user`: "Assistant"). */
  readonly label?: string
  /** An approval (may the call run?, contract §8): asked as the permission prompt asks, arguments shown, `y/Y/n/N`. */
  readonly approval?: boolean
}

/** What the person typed, and whether to reuse it for the rest of the turn. */
export interface QuestionAnswer {
  readonly answer: Schema.Json
  /** `Y`/`N` on a boolean question: reuse this answer for the rest of the turn. */
  readonly remember: boolean
}

/** What to do with an incomplete turn when no flag said (the TTY menu's keys). */
export type ResumeChoice = "resume" | "discard" | "quit" | "edit"

/** What the person is shown about an incomplete turn before choosing what to do with it. */
export interface IncompleteInfo {
  readonly conversationId: ConversationId
  readonly summary: IncompleteSummary
  readonly analysis: TurnAnalysis
}

/** The person cancelled (Ctrl-C, Escape or end of input at the prompt). */
export class PromptCancelled extends Schema.TaggedError<PromptCancelled>()("PromptCancelled", {}) {
  override get message() {
    return "Prompt cancelled by the user"
  }
}

/** The prompt itself failed (terminal I/O error). */
export class PromptFailed extends Schema.TaggedError<PromptFailed>()("PromptFailed", {
  reason: Schema.String
}) {
  override get message() {
    return `Prompt failed: ${this.reason}`
  }
}

/** Why a prompt gave no answer: the person cancelled, or the terminal failed. */
export type PromptError = PromptCancelled | PromptFailed

/**
 * The person at the terminal, as a service: permission prompts and tool
 * questions. Live: `TerminalPromptBackend.layer`; tests and embedding:
 * `MockPromptBackend.layer([...answers])`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { MockPromptBackend, PromptBackend } from "parley"
 *
 * const ask = PromptBackend.use((p) => p.permission({ toolName: "write_note", kind: "local", arguments: {} }))
 * const decision = ask.pipe(Effect.provide(MockPromptBackend.layer([{ _tag: "Permission", decision: "y" }]))) // Effect<"y" | …>
 * ```
 */
export class PromptBackend extends Context.Service<
  PromptBackend,
  {
    /** Whether prompting is possible at all (stdin and stdout are TTYs). */
    readonly interactive: boolean
    /**
     * The `detached` policy of this run when config and `--detached-policy`
     * set none and nobody can be asked here: `wait` for a run meant to be
     * watched — started with `--detach` or by `serve`, on a cluster runner,
     * or left with Ctrl-Z (read each time: a run can leave its terminal while
     * it runs). Absent: `assistant`, JP's rule for a run without a terminal.
     */
    readonly detachedDefault?: DetachedPolicy | undefined
    permission(request: PermissionRequest): Effect.Effect<PermissionKey, PromptError>
    /** JP's result review: `Deliver <tool> result to assistant?` — deliver, skip, or edit it first. */
    review(request: ReviewRequest): Effect.Effect<ReviewKey, PromptError>
    /** Asks a tool question; a secret question reads without echo. */
    question(request: QuestionRequest): Effect.Effect<QuestionAnswer, PromptError>
    /** RFD 023's menu for an incomplete turn: resume, discard, quit or edit the pending query. */
    resumeChoice(info: IncompleteInfo): Effect.Effect<ResumeChoice, PromptError>
    /**
     * Lets the person edit `text` (the pending query; a call's arguments,
     * `file` naming the editor's file, e.g. `ARGUMENTS.json`); `undefined`
     * keeps it as it is (the editor failed, or left nothing).
     */
    edit(text: string, file?: string): Effect.Effect<string | undefined, PromptError>
  }
>()("parley/PromptBackend") {}
