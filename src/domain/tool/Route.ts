/**
 * Who answers a tool's question (RFD 082 "Recording lifecycle" steps 3–7,
 * RFD 028), decided purely from what is known when the question arrives:
 *
 * 1. an answer remembered this turn (`Y`/`N` at an earlier prompt; never for
 *    a secret, nor for a question with `persistence = "none"`, RFD 083) →
 *    `Remembered`;
 * 2. a static answer from config → `Static` (a secret is then recorded
 *    `redacted`) when it fits the question, else `InvalidStatic` (RFD 083
 *    `Cancelled{invalid_static_answer}`). A static answer wins even over
 *    `exclusive`: whoever pinned it opted out of routing;
 * 3. the person-only guard: target `assistant` for a secret or an
 *    `exclusive` question (RFD 083) → `Denied{assistant_routing_denied}`;
 * 4. target `user` and a person can be reached (a terminal now; any client
 *    in later steps) → `Person`;
 * 5. target `assistant` → `Backend` (the model's structured side call);
 * 6. nobody to ask (docs/decisions.md#detached-policy): the `detached` policy — `assistant` →
 *    `Backend` (JP's rule; a secret or an `exclusive` question is
 *    `Denied{no_prompt_backend}` instead), `deny` → `Denied{no_prompt_backend}`,
 *    `defer` → `Defer`, `wait` → `Wait`.
 *
 * And whether a call may run at all (`run = "ask" | "unattended" | "skip"`):
 * {@link decidePermission}.
 *
 * @example
 * ```ts
 * import * as Option from "effect/Option"
 * import * as Schema from "effect/Schema"
 * import { Question, Route } from "parley"
 *
 * const question = Schema.decodeUnknownSync(Question)({ id: "overwrite", text: "Overwrite a.txt?", answer_type: { type: "boolean" } })
 * Route.decideRoute({ question, target: "user", reachable: false, detached: "assistant", remembered: Option.none(), staticAnswer: undefined })
 * // Route.Route.Backend()
 * ```
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Option from "effect/Option"
import type { Json } from "effect/Schema"
import type { DetachedPolicy, TargetKind } from "./Config.ts"
import type { RunMode, ToolKind } from "./ToolDefinition.ts"
import * as AnswerFit from "./AnswerFit.ts"
import type { Question } from "./Question.ts"
import * as QuestionPolicy from "./QuestionPolicy.ts"

/** How a secret request is refused (its `Cancelled` reason). */
export type DenialReason = "assistant_routing_denied" | "no_prompt_backend"

/** Who answers a question. */
export type Route = Data.TaggedEnum<{
  Remembered: { readonly answer: Json }
  Static: { readonly answer: Json }
  /** The configured answer does not fit the question (`problem` says why). */
  InvalidStatic: { readonly problem: string }
  Denied: { readonly reason: DenialReason }
  /** A person answers: the terminal prompt, or any other answerer that offers first. */
  Person: {}
  Backend: {}
  /** Nobody to ask: record the question unanswered and end the run waiting for input. */
  Defer: {}
  /** Nobody to ask yet: keep the question open for any answerer, up to the wait timeout. */
  Wait: {}
}>

const RouteEnum = Data.taggedEnum<Route>()
/**
 * Constructors and matchers of {@link Route}. The constructors build each
 * variant as a literal: `Data.taggedEnum`'s are one shared function that
 * spreads its argument, which every enum of the program makes megamorphic
 * (about half a microsecond a value), and a route is decided for every
 * question.
 */
export const Route: Data.TaggedEnum.Constructor<Route> = {
  Remembered: ({ answer }) => ({ _tag: "Remembered", answer }),
  Static: ({ answer }) => ({ _tag: "Static", answer }),
  InvalidStatic: ({ problem }) => ({ _tag: "InvalidStatic", problem }),
  Denied: ({ reason }) => ({ _tag: "Denied", reason }),
  Person: () => ({ _tag: "Person" }),
  Backend: () => ({ _tag: "Backend" }),
  Defer: () => ({ _tag: "Defer" }),
  Wait: () => ({ _tag: "Wait" }),
  $is: RouteEnum.$is,
  $match: RouteEnum.$match
}

/** What {@link decideRoute} needs to know. */
export interface RouteInput {
  readonly question: Question
  readonly target: TargetKind
  /** A person can be asked now (a terminal). */
  readonly reachable: boolean
  /** What a person's question does when nobody can be asked. */
  readonly detached: DetachedPolicy
  /** The answer remembered this turn for this tool and question. */
  readonly remembered: Option.Option<Json>
  /** The answer configured for this tool and question. */
  readonly staticAnswer: Json | undefined
  /**
   * The static answer must fit the question as asked (`AnswerFit.fit`), with
   * none of the leniency MCP form fields get: a question the model asks
   * (`ask_user`, source `assistant`) is typed by the model itself.
   */
  readonly strictStatic?: boolean
  /**
   * The tool asked this question again right after the static answer was
   * given (docs/decisions.md#static-answer-rejected: an MCP form field rejected it): why, in the tool's
   * words. The same answer would only be rejected again, so it is invalid.
   */
  readonly staticRejected?: string
}

/** Decides who answers `question` (steps 1–6 above). */
export const decideRoute = (input: RouteInput): Route => {
  const question = input.question
  const policy = QuestionPolicy.of(question)
  if (policy.rememberable && Option.isSome(input.remembered))
    return Route.Remembered({ answer: input.remembered.value })
  if (input.staticAnswer !== undefined) {
    if (input.staticRejected !== undefined)
      return Route.InvalidStatic({ problem: `the tool rejected it and asked again: ${input.staticRejected}` })
    const fits = (input.strictStatic === true ? AnswerFit.fit : AnswerFit.fitStatic)(
      question.answer_type,
      input.staticAnswer
    )
    return fits._tag === "Success"
      ? Route.Static({ answer: fits.success })
      : Route.InvalidStatic({ problem: fits.failure })
  }
  if (input.target === "assistant")
    return policy.personOnly ? Route.Denied({ reason: "assistant_routing_denied" }) : Route.Backend()
  if (input.reachable) return Route.Person()
  switch (input.detached) {
    case "assistant":
      return policy.personOnly ? Route.Denied({ reason: "no_prompt_backend" }) : Route.Backend()
    case "deny":
      return Route.Denied({ reason: "no_prompt_backend" })
    case "defer":
      return Route.Defer()
    case "wait":
      return Route.Wait()
  }
}

/**
 * Why a call was not run, as data: the tool response's text is chosen
 * where the response is written.
 * - `config`: `run = "skip"`;
 * - `remembered`: the person said `N` earlier in the turn;
 * - `declined`: the person said no to this call (`n`, a recorded `n`, a
 *   cancelled prompt, an approval answered `false`);
 * - `no_approval`: the call needs a person's yes and nobody could be asked
 *   (`detached` is `deny`; or `assistant` read as `deny` for a call whose
 *   author requires approval).
 */
export type SkipCause = "config" | "remembered" | "declined" | "no_approval"

/** Whether a call runs before any tool code does. */
export type Permission = Data.TaggedEnum<{
  /** Run it. */
  Run: {}
  /** Do not run it, because of `cause`. */
  Skip: { readonly cause: SkipCause }
  /**
   * Ask the person at this terminal's prompt (`kind`: how the prompt names
   * the tool; `edit`: `run = "edit"`, the prompt starts in the editor).
   */
  Ask: { readonly kind: ToolKind; readonly edit?: true }
  /**
   * A person's approval with nobody to ask now, under `detached = "defer"`
   * or `"wait"`, or an approval an earlier run of the turn left open
   * (docs/decisions.md#person-only-questions): asked as a question (`Run
   * <kind> <tool> tool?`, boolean) that follows the policy — recorded open
   * for `parley conversation answer`, or kept open for any answerer first.
   */
  Approve: { readonly kind: ToolKind }
}>

const PermissionEnum = Data.taggedEnum<Permission>()
/** Constructors and matchers of {@link Permission} (variants built as literals, as {@link Route}'s). */
export const Permission: Data.TaggedEnum.Constructor<Permission> = {
  Run: () => ({ _tag: "Run" }),
  Skip: ({ cause }) => ({ _tag: "Skip", cause }),
  Ask: ({ edit, kind }) => (edit === true ? { _tag: "Ask", kind, edit } : { _tag: "Ask", kind }),
  Approve: ({ kind }) => ({ _tag: "Approve", kind }),
  $is: PermissionEnum.$is,
  $match: PermissionEnum.$match
}

/** What {@link decidePermission} needs to know. */
export interface PermissionInput {
  /** The tool's run mode and kind; `undefined`: the tool is unknown (the executor answers "not available"). */
  readonly tool: { readonly mode: RunMode; readonly kind: ToolKind } | undefined
  /** A person is at this terminal's prompt. */
  readonly interactive: boolean
  /** A person follows the run from elsewhere (an attached terminal): an approval waits for them. */
  readonly attended?: boolean
  /** The decision remembered for the tool this turn (`Y`/`N`). */
  readonly remembered: Option.Option<"y" | "n">
  /** The decision recorded for this call by an earlier run of the turn. */
  readonly decided?: "y" | "n" | undefined
  /** The tool's author requires a person's yes for this call. */
  readonly approval?: boolean
  /** An earlier run of the turn left this call's approval open (deferred): it is asked again. */
  readonly reopened?: boolean
  /** The `detached` policy (default `assistant`, read as `deny` for an approval). */
  readonly detached?: DetachedPolicy
}

/**
 * Whether a call may run. An unknown tool runs (the executor answers "not
 * available"). What the person decided wins over asking: the decision
 * recorded for this very call (a resumed turn,
 * docs/decisions.md#remembered-answers-recorded: `y` approved it, `n`
 * skipped it); an approval an earlier run left open is asked again
 * (`Approve`: a remembered `Y`/`N` answers it there); then the decision
 * remembered for the tool this turn (`Y`/`N`) — with or without a terminal
 * now, since the person already answered. A person at
 * this terminal is asked (`Ask`); one attached from elsewhere is asked the
 * approval question (`Approve`). With nobody to ask
 * (docs/questions-and-approvals.md#approvals), a call that needs a yes
 * follows the `detached` policy: `defer`/`wait` give `Approve` (an approval
 * question any answerer may answer), `deny` skips it (`no_approval`). Under
 * `assistant`, `run = "ask"` keeps JP's rule (nobody to ask: it runs), while
 * a call whose author requires approval (`approval`,
 * docs/decisions.md#person-only-questions: effect/ai `needsApproval`) reads
 * `assistant` as `deny` (an approval never goes to the assistant).
 * `run = "edit"` is read as `ask` throughout (JP's rule, nobody to ask
 * included); at this terminal its prompt starts in the editor.
 */
export const decidePermission = (input: PermissionInput): Permission => {
  const tool = input.tool
  if (tool === undefined || tool.mode === "unattended") return Permission.Run()
  if (tool.mode === "skip") return Permission.Skip({ cause: "config" })
  if (input.decided !== undefined)
    return input.decided === "y" ? Permission.Run() : Permission.Skip({ cause: "declined" })
  // Asked again under its recorded id even when the tool's Y/N is remembered: the question closes with it (a request gets its response).
  if (input.reopened === true) return Permission.Approve({ kind: tool.kind })
  if (Option.isSome(input.remembered))
    return input.remembered.value === "y" ? Permission.Run() : Permission.Skip({ cause: "remembered" })
  if (input.interactive) return Permission.Ask({ kind: tool.kind, ...(tool.mode === "edit" ? { edit: true } : {}) })
  if (input.attended === true) return Permission.Approve({ kind: tool.kind })
  switch (input.detached ?? "assistant") {
    case "defer":
    case "wait":
      return Permission.Approve({ kind: tool.kind })
    case "deny":
      return Permission.Skip({ cause: "no_approval" })
    case "assistant":
      return input.approval === true ? Permission.Skip({ cause: "no_approval" }) : Permission.Run()
  }
}
