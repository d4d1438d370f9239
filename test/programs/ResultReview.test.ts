// JP's result review (docs/tools.md#reviewing-a-result): `result = "ask" | "edit" | "skip"` on a tool.
// At a terminal the result is delivered (y), skipped (n) or edited (e; `edit` starts in the editor)
// before the model sees it; what the model gets is the recorded `tool_call_response`, whose metadata
// says how the review went (`parley_result_review`). With nobody at the terminal it is delivered.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ReviewTexts } from "../../src/programs/coordinator/Review.ts"
import { call, setup } from "./CoordinatorHarness.ts"
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
