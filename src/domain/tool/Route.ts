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
import type { RunMode } from "./ToolDefinition.ts"
import * as AnswerFit from "./AnswerFit.ts"
import type { Question } from "./Question.ts"

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
  const secret = question.answer_type.type === "secret"
  if (!secret && Option.isSome(input.remembered) && question.persistence !== "none")
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
  // Only a person may answer a secret or an exclusive question.
  const personOnly = secret || question.exclusive === true
  if (input.target === "assistant")
    return personOnly ? Route.Denied({ reason: "assistant_routing_denied" }) : Route.Backend()
  if (input.reachable) return Route.Person()
  switch (input.detached) {
    case "assistant":
      return personOnly ? Route.Denied({ reason: "no_prompt_backend" }) : Route.Backend()
    case "deny":
      return Route.Denied({ reason: "no_prompt_backend" })
    case "defer":
      return Route.Defer()
    case "wait":
      return Route.Wait()
  }
}

/** Whether a call runs before any tool code does. */
export type Permission = Data.TaggedEnum<{
  /** Run it. */
  Run: {}
  /** Do not run it; this is its response. */
  Skip: { readonly content: string; readonly is_error: boolean }
  /** Ask the person at the prompt. */
  Ask: {}
  /**
   * An approval with nobody to ask now, under `detached = "defer"` or
   * `"wait"` (docs/decisions.md#person-only-questions): ask it as a question that follows that policy —
   * recorded open for `parley conversation answer`, or kept open for any
   * answerer first.
   */
  Detached: {}
}>

const PermissionEnum = Data.taggedEnum<Permission>()
/** Constructors and matchers of {@link Permission} (variants built as literals, as {@link Route}'s). */
export const Permission: Data.TaggedEnum.Constructor<Permission> = {
  Run: () => ({ _tag: "Run" }),
  Skip: ({ content, is_error }) => ({ _tag: "Skip", content, is_error }),
  Ask: () => ({ _tag: "Ask" }),
  Detached: () => ({ _tag: "Detached" }),
  $is: PermissionEnum.$is,
  $match: PermissionEnum.$match
}

/**
 * Whether a call with run mode `mode` may run. `undefined` mode: the tool is
 * unknown, and the executor answers "not available". What the person
 * decided wins over asking: the decision recorded for this very call (a
 * resumed turn, docs/decisions.md#remembered-answers-recorded: `y` approved it, `n` skipped it), then the one
 * remembered for the tool this turn (`Y`/`N`) — with or without a terminal
 * now, since the person already answered. Otherwise `ask` without a person
 * runs the tool (JP: nobody to ask) — unless the tool's author requires
 * approval (`approval`, docs/decisions.md#person-only-questions: effect/ai `needsApproval`): then nobody to
 * ask follows the `detached` policy with `assistant` read as `deny` (an
 * approval never goes to the assistant): `deny`/`assistant` skip it with
 * `skippedNoApproval`, `defer`/`wait` give `Detached` (asked as a question
 * that waits or is deferred).
 */
export const decidePermission = (input: {
  readonly mode: RunMode | undefined
  readonly interactive: boolean
  readonly remembered: Option.Option<"y" | "n">
  /** The decision recorded for this call by an earlier run of the turn. */
  readonly decided?: "y" | "n" | undefined
  readonly skippedByConfig: string
  readonly skippedRemembered: string
  /** The response of a call skipped by a recorded `n` (default: `skippedRemembered`). */
  readonly skippedByUser?: string
  /** The tool's author requires a person's yes for this call. */
  readonly approval?: boolean
  /** The response of an approval nobody could give. */
  readonly skippedNoApproval?: string
  /** The `detached` policy (default `assistant`, read as `deny` for an approval). */
  readonly detached?: DetachedPolicy
}): Permission => {
  if (input.mode === undefined || input.mode === "unattended") return Permission.Run()
  if (input.mode === "skip") return Permission.Skip({ content: input.skippedByConfig, is_error: false })
  if (input.decided !== undefined) {
    return input.decided === "y"
      ? Permission.Run()
      : Permission.Skip({ content: input.skippedByUser ?? input.skippedRemembered, is_error: false })
  }
  if (Option.isSome(input.remembered)) {
    return input.remembered.value === "y"
      ? Permission.Run()
      : Permission.Skip({ content: input.skippedRemembered, is_error: false })
  }
  if (!input.interactive && input.approval === true) {
    return input.detached === "defer" || input.detached === "wait"
      ? Permission.Detached()
      : Permission.Skip({ content: input.skippedNoApproval ?? input.skippedByConfig, is_error: false })
  }
  return input.interactive ? Permission.Ask() : Permission.Run()
}
