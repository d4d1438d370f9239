/**
 * A scripted `PromptBackend` for tests and for embedding: answers come from
 * a queue, in order; an entry can cancel (as Ctrl-C would) or fail. Every
 * prompt shown is recorded, so tests can assert what was asked.
 *
 * @example
 * ```ts
 * import * as MockPromptBackend from "parley/layers/prompt/MockPromptBackend"
 * const layer = MockPromptBackend.layer([{ _tag: "Answer", answer: true, remember: true }, { _tag: "Cancel" }])
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import {
  type PermissionKey,
  type PermissionRequest,
  PromptBackend,
  PromptCancelled,
  type IncompleteInfo,
  PromptFailed,
  type QuestionRequest,
  type ResumeChoice,
  type ReviewKey,
  type ReviewRequest
} from "../../services/PromptBackend.ts"

/** One scripted reply: an answer, a permission decision, a cancel (Ctrl-C), a failure, or a prompt that never answers. */
export type Scripted =
  | { readonly _tag: "Answer"; readonly answer: Schema.Json; readonly remember?: boolean }
  | { readonly _tag: "Permission"; readonly decision: PermissionKey }
  | { readonly _tag: "Cancel" }
  | { readonly _tag: "Fail"; readonly reason: string }
  /** Never answers: a prompt left open (for interruption tests). */
  | { readonly _tag: "Hang" }
  /** The incomplete-turn menu's choice. */
  | { readonly _tag: "Resume"; readonly choice: ResumeChoice }
  /** The edited pending query (`undefined`: the edit was abandoned). */
  | { readonly _tag: "Edit"; readonly text: string | undefined }
  /** The result review's key. */
  | { readonly _tag: "Review"; readonly key: ReviewKey }

/** A prompt the mock showed (for assertions). */
export type Shown =
  | { readonly _tag: "Permission"; readonly request: PermissionRequest }
  | { readonly _tag: "Question"; readonly request: QuestionRequest }
  | { readonly _tag: "Resume"; readonly request: IncompleteInfo }
  | { readonly _tag: "Edit"; readonly text: string }
  | { readonly _tag: "Review"; readonly request: ReviewRequest }

/** The mock's log, for assertions. */
export interface MockPrompts {
  /** Every prompt shown so far, in order. */
  readonly shown: Array<Shown>
}

/**
 * The mock and its log of prompts shown (`interactive` says whether a person is "at the terminal"; default true).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Schema from "effect/Schema"
 * import { MockPromptBackend, Question } from "parley"
 *
 * const question = Schema.decodeUnknownSync(Question)({ id: "q", text: "Sure?", answer_type: { type: "boolean" } })
 * const program = Effect.gen(function*() {
 *   const mock = yield* MockPromptBackend.make([{ _tag: "Answer", answer: true }])
 *   const answer = yield* mock.service.question({ toolName: "t", question })
 *   return [answer, mock.prompts.shown.length] // [{ answer: true, remember: false }, 1]
 * })
 * ```
 */
export const make = (script: ReadonlyArray<Scripted>, options: { interactive?: boolean } = {}) =>
  Effect.sync(() => {
    const queue = [...script]
    const shown: Array<Shown> = []
    type Reply = Extract<Scripted, { _tag: "Answer" | "Permission" | "Resume" | "Edit" | "Review" }>
    const next = (what: string): Effect.Effect<Reply, PromptCancelled | PromptFailed> =>
      Effect.suspend((): Effect.Effect<Reply, PromptCancelled | PromptFailed> => {
        const item = queue.shift()
        if (item === undefined) return Effect.fail(new PromptFailed({ reason: `no scripted answer left for ${what}` }))
        switch (item._tag) {
          case "Cancel":
            return Effect.fail(new PromptCancelled())
          case "Fail":
            return Effect.fail(new PromptFailed({ reason: item.reason }))
          case "Hang":
            return Effect.never
          default:
            return Effect.succeed(item)
        }
      })
    const service = PromptBackend.of({
      interactive: options.interactive ?? true,
      permission: (request) =>
        Effect.sync(() => shown.push({ _tag: "Permission", request })).pipe(
          Effect.andThen(next(`permission for ${request.toolName}`)),
          Effect.flatMap((item) =>
            item._tag === "Permission"
              ? Effect.succeed(item.decision)
              : Effect.fail(new PromptFailed({ reason: `expected a permission decision, the script has ${item._tag}` }))
          )
        ),
      question: (request) =>
        Effect.sync(() => shown.push({ _tag: "Question", request })).pipe(
          Effect.andThen(next(`question ${request.question.id}`)),
          Effect.flatMap((item) =>
            item._tag === "Answer"
              ? Effect.succeed({ answer: item.answer, remember: item.remember ?? false })
              : Effect.fail(new PromptFailed({ reason: `expected an answer, the script has ${item._tag}` }))
          )
        ),
      review: (request) =>
        Effect.sync(() => shown.push({ _tag: "Review", request })).pipe(
          Effect.andThen(next(`review of ${request.toolName}`)),
          Effect.flatMap((item) =>
            item._tag === "Review"
              ? Effect.succeed(item.key)
              : Effect.fail(new PromptFailed({ reason: `expected a review key, the script has ${item._tag}` }))
          )
        ),
      resumeChoice: (request) =>
        Effect.sync(() => shown.push({ _tag: "Resume", request })).pipe(
          Effect.andThen(next("the incomplete-turn menu")),
          Effect.flatMap((item) =>
            item._tag === "Resume"
              ? Effect.succeed(item.choice)
              : Effect.fail(new PromptFailed({ reason: `expected a resume choice, the script has ${item._tag}` }))
          )
        ),
      edit: (text) =>
        Effect.sync(() => shown.push({ _tag: "Edit", text })).pipe(
          Effect.andThen(next("the editor")),
          Effect.flatMap((item) =>
            item._tag === "Edit"
              ? Effect.succeed(item.text)
              : Effect.fail(new PromptFailed({ reason: `expected an edit, the script has ${item._tag}` }))
          )
        )
    })
    return { service, prompts: { shown } satisfies MockPrompts }
  })

/** The mock as a layer (its `shown` log is not reachable; use {@link make} when a test needs it). */
export const layer = (
  script: ReadonlyArray<Scripted>,
  options: { interactive?: boolean } = {}
): Layer.Layer<PromptBackend> =>
  Layer.effect(
    PromptBackend,
    Effect.map(make(script, options), (m) => m.service)
  )
