// JP's result review (docs/tools.md#reviewing-a-result): `result = "ask" | "edit" | "skip"` on a tool.
// At a terminal the result is delivered (y), skipped (n) or edited (e; `edit` starts in the editor)
// before the model sees it; what the model gets is the recorded `tool_call_response`, whose metadata
// says how the review went (`parley_result_review`). With nobody at the terminal it is delivered.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import type * as Schema from "effect/Schema"
import * as Events from "../../src/domain/event/Events.ts"
import * as InquiryId from "../../src/domain/event/InquiryId.ts"
import * as IncompleteTurn from "../../src/domain/stream/IncompleteTurn.ts"
import * as TurnState from "../../src/domain/stream/TurnState.ts"
import { PendingAnswers } from "../../src/services/PendingAnswers.ts"
import { ReviewTexts } from "../../src/programs/coordinator/Review.ts"
import { call, clock, setup } from "./CoordinatorHarness.ts"
import type * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"

const succeed = (content: string) => ({ type: "success", content })

/** Runs one call of tool `t` (result mode `result`) with the scripted prompts; its recorded response and what was shown. */
const reviewed = (result: string, prompts: ReadonlyArray<MockPromptBackend.Scripted>, interactive = true) =>
  Effect.gen(function* () {
    const calls = [call("c", "t", { path: "a" })]
    const h = yield* setup(
      {
        tools: { t: { run: "unattended", kind: "local", outcomes: [succeed("3 files")] } },
        interactive,
        prompts,
        config: { conversation: { tools: { t: { result } } } }
      },
      calls
    )
    const persisted = yield* Effect.andThen(h.run(calls), h.persisted).pipe(Effect.provide(h.layer))
    const response = persisted.find((e) => e.type === "tool_call_response")!
    return { response, shown: h.shown }
  })

describe("JP result review: the result is reviewed before the model sees it", () => {
  it.effect("JP result = ask: y delivers it, n skips it, e edits it; each recorded with parley_result_review", () =>
    Effect.gen(function* () {
      const yes = yield* reviewed("ask", [{ _tag: "Review", key: "y" }])
      expect(yes.shown).toMatchObject([{ _tag: "Review", request: { toolName: "t", content: "3 files" } }])
      expect(yes.response).toMatchObject({ content: "3 files", metadata: { parley_result_review: "delivered" } })
      const no = yield* reviewed("ask", [{ _tag: "Review", key: "n" }])
      expect(no.response).toMatchObject({
        content: ReviewTexts.skippedByUser,
        is_error: false,
        metadata: { parley_result_review: "skipped" }
      })
      const edit = yield* reviewed("ask", [
        { _tag: "Review", key: "e" },
        { _tag: "Edit", text: "2 files" }
      ])
      expect(edit.shown.map((s) => s._tag)).toStrictEqual(["Review", "Edit"])
      expect(edit.response).toMatchObject({ content: "2 files", metadata: { parley_result_review: "edited" } })
      const cancelled = yield* reviewed("ask", [{ _tag: "Cancel" }])
      expect(cancelled.response).toMatchObject({
        content: ReviewTexts.cancelled,
        metadata: { parley_result_review: "cancelled" }
      })
    })
  )

  it.effect("JP result = edit: the editor opens on the result; an emptied edit delivers it as it was", () =>
    Effect.gen(function* () {
      const edited = yield* reviewed("edit", [{ _tag: "Edit", text: "trimmed" }])
      expect(edited.shown).toStrictEqual([{ _tag: "Edit", text: "3 files" }])
      expect(edited.response).toMatchObject({ content: "trimmed", metadata: { parley_result_review: "edited" } })
      const emptied = yield* reviewed("edit", [{ _tag: "Edit", text: undefined }])
      expect(emptied.response).toMatchObject({ content: "3 files", metadata: { parley_result_review: "delivered" } })
    })
  )

  it.effect("JP result = skip never delivers it; with nobody at the terminal ask and edit deliver it as it is", () =>
    Effect.gen(function* () {
      const skipped = yield* reviewed("skip", [])
      expect(skipped.response).toMatchObject({
        content: ReviewTexts.skippedByConfig,
        metadata: { parley_result_review: "skipped" }
      })
      for (const mode of ["ask", "edit"]) {
        const headless = yield* reviewed(mode, [], false)
        expect(headless.shown, mode).toStrictEqual([])
        expect(headless.response, mode).toMatchObject({ content: "3 files", metadata: {} })
      }
    })
  )
})

/** Runs one call of tool `t` (`result = mode`) with nobody at the terminal under `detached`, answering its review with `answer` once it is open. */
const fromAnywhere = (mode: string, detached: string, answer?: Schema.Json) =>
  Effect.gen(function* () {
    const calls = [call("c", "t", { path: "a" })]
    const h = yield* setup(
      {
        tools: { t: { run: "unattended", kind: "local", outcomes: [succeed("3 files")] } },
        config: { conversation: { tools: { t: { result: mode } }, inquiry: { detached } } }
      },
      calls
    )
    const result = yield* Effect.gen(function* () {
      const running = yield* Effect.forkChild(h.runAll(calls))
      if (answer !== undefined) {
        const answers = yield* PendingAnswers
        // Bounded: the review opens once the tool has run.
        const open = yield* answers.list.pipe(
          Effect.filterOrFail((qs) => qs.length > 0),
          Effect.retry(Schedule.spaced("5 millis")),
          Effect.timeout("5 seconds")
        )
        expect(open.map((q) => [q.inquiryId, q.kind, q.call.arguments])).toStrictEqual([
          ["c.__result__.1", "approval", { result: "3 files", is_error: false }]
        ])
        // always/never would remember; a review is each result's own.
        const misfit = yield* Effect.flip(answers.offer("c.__result__.1", "always", "other"))
        expect(misfit._tag).toBe("AnswerDoesNotFit")
        yield* answers.offer("c.__result__.1", answer, "other", { via: "api" })
      }
      return { result: yield* Fiber.join(running), persisted: yield* h.persisted }
    }).pipe(Effect.provide(h.layer))
    return { h, ...result }
  })

describe("JP result review from anywhere: nobody at the run's terminal, asked as an approval", () => {
  it.live(
    "JP result = ask from anywhere (wait): listed as c.__result__.1 with the result; skip, deliver and an edit each end it as recorded",
    () =>
      Effect.gen(function* () {
        const edited = yield* fromAnywhere("ask", "wait", { edit: { result: "2 files" } })
        expect(edited.result.responses[0]).toMatchObject({
          content: "2 files",
          metadata: { parley_result_review: "edited" }
        })
        const closed = edited.persisted.find((e) => e.type === "inquiry_response")
        expect(closed).toMatchObject({
          id: "c.__result__.1",
          answer: true,
          metadata: { parley_arguments: { result: "2 files" } }
        })
        const skipped = yield* fromAnywhere("edit", "wait", "skip")
        expect(skipped.result.responses[0]).toMatchObject({
          content: ReviewTexts.skippedByUser,
          metadata: { parley_result_review: "skipped" }
        })
        const delivered = yield* fromAnywhere("ask", "wait", "deliver")
        expect(delivered.result.responses[0]).toMatchObject({
          content: "3 files",
          metadata: { parley_result_review: "delivered" }
        })
      })
  )

  it.live("JP result = ask under deny: nobody reviews it, so it is not delivered, and says why", () =>
    Effect.gen(function* () {
      const denied = yield* fromAnywhere("ask", "deny")
      expect(denied.result.responses[0]).toMatchObject({
        content: ReviewTexts.nobody("deny"),
        metadata: { parley_result_review: "skipped" }
      })
    })
  )

  it.live(
    "JP result = ask under defer: the turn waits with the result on the review's request; answered on disk, the resumed turn delivers the edit without running the tool again",
    () =>
      Effect.gen(function* () {
        const deferred = yield* fromAnywhere("ask", "defer")
        expect(deferred.result).toMatchObject({ responses: [], deferred: ["c.__result__.1"] })
        const request = deferred.persisted.find((e) => e.type === "inquiry_request")
        expect(request).toMatchObject({ metadata: { parley_approval: { result: "3 files", is_error: false } } })
        // What `conversation answer` records, read back as a resumed turn does.
        const entries = [
          ...deferred.persisted,
          Events.answered(clock(), InquiryId.make("c.__result__.1"), true, { parley_arguments: { result: "1 file" } })
        ]
        const analysis = IncompleteTurn.analyze({ entries })
        const h = yield* setup(
          {
            tools: { t: { run: "unattended", kind: "local", outcomes: [succeed("ran again")] } },
            config: { conversation: { tools: { t: { result: "ask" } }, inquiry: { detached: "defer" } } },
            entries,
            state: TurnState.resumed(analysis)
          },
          []
        )
        const resumed = yield* h.runAll(analysis.pendingToolCalls, analysis).pipe(Effect.provide(h.layer))
        expect(resumed.responses[0]).toMatchObject({ content: "1 file", metadata: { parley_result_review: "edited" } })
        expect(h.scripted.calls).toStrictEqual([])
      })
  )
})
