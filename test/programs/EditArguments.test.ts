// JP's `run = "edit"` and `e` at the permission prompt (docs/tools.md#editing-a-calls-arguments):
// the call's arguments open in the editor before it runs; a JSON object saved runs the call with it,
// recorded as a `true` permission pair whose response carries the arguments (`parley_arguments`);
// invalid JSON opens the editor again; an emptied edit goes back to the prompt. The tool, the run's
// events and a resumed turn see the edited call. Also the answer `{"edit": {…}}` of an approval.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as PermissionInquiry from "../../src/domain/event/PermissionInquiry.ts"
import * as IncompleteTurn from "../../src/domain/stream/IncompleteTurn.ts"
import { decidePermission, Permission } from "../../src/domain/tool/Route.ts"
import * as Option from "effect/Option"
import { Texts } from "../../src/programs/ToolCoordinator.ts"
import { call, digest, setup } from "./CoordinatorHarness.ts"

const succeed = (content: string) => ({ type: "success", content })
const pretty = (args: object) => JSON.stringify(args, null, 2)

/** The response metadata of the permission decision recorded for call `id`. */
const decisionMetadata = (entries: ReadonlyArray<{ type: string }>, id: string) =>
  entries.flatMap((e) =>
    e.type === "inquiry_response" && "id" in e && e.id === `${id}.__permission__.1` && "metadata" in e
      ? [e.metadata]
      : []
  )

describe('JP run = "edit": the arguments are edited before the call runs', () => {
  it("JP run = edit (domain): the mode is read as ask, and at a terminal its prompt starts in the editor", () => {
    const base = { interactive: true, remembered: Option.none() } as const
    expect(decidePermission({ ...base, tool: { mode: "edit", kind: "local" } })).toStrictEqual(
      Permission.Ask({ kind: "local", edit: true })
    )
    expect(decidePermission({ ...base, tool: { mode: "ask", kind: "local" } })).toStrictEqual({
      _tag: "Ask",
      kind: "local"
    })
    // Nobody to ask: as ask (JP: runs under assistant; an approval under wait/defer).
    expect(
      decidePermission({ ...base, interactive: false, tool: { mode: "edit", kind: "local" }, detached: "defer" })
    ).toStrictEqual(Permission.Approve({ kind: "local" }))
    expect(decidePermission({ ...base, interactive: false, tool: { mode: "edit", kind: "local" } })).toStrictEqual(
      Permission.Run()
    )
  })

  it("JP run = edit (answers): {edit: {…}} is a yes with arguments; a non-object or empty edit does not fit, saying why", () => {
    expect(PermissionInquiry.approvalAnswer({ edit: { path: "b" } })).toStrictEqual({
      answer: true,
      remember: false,
      arguments: { path: "b" }
    })
    expect(PermissionInquiry.approvalAnswer('{"edit": {"path": "b"}}')).toMatchObject({ arguments: { path: "b" } })
    expect(PermissionInquiry.approvalAnswer({ edit: '{"path": "b"}' })).toMatchObject({ arguments: { path: "b" } })
    for (const bad of [{ edit: [1] }, { edit: "{nope" }, { edit: "" }, { edit: null }])
      expect(PermissionInquiry.approvalAnswer(bad), JSON.stringify(bad)).toBeUndefined()
    expect(PermissionInquiry.notAnApproval({ edit: [1] })).toBe("the edited arguments are not a JSON object")
    expect(PermissionInquiry.notAnApproval({ edit: "" })).toBe("an empty edit answers nothing: the approval stays open")
    expect(PermissionInquiry.notAnApproval({ edit: "{nope" })).toMatch(/^the edited arguments are not valid JSON \(/)
    expect(PermissionInquiry.notAnApproval("maybe")).toBe(`"maybe" is not an approval's answer`)
    expect(PermissionInquiry.readEdited("  \n")).toBeUndefined()
  })

  it.effect(
    "JP run = edit: the editor opens on the arguments; the tool and ToolStarted get the edited ones, recorded as a true pair with parley_arguments",
    () =>
      Effect.gen(function* () {
        const h = yield* setup(
          {
            tools: { t: { run: "edit", kind: "local", outcomes: [succeed("ran")] } },
            interactive: true,
            prompts: [{ _tag: "Edit", text: '{"path": "b"}' }]
          },
          [call("c", "t", { path: "a" })]
        )
        const { responses, persisted } = yield* Effect.all({
          responses: h.run([call("c", "t", { path: "a" })]),
          persisted: h.persisted
        }).pipe(Effect.provide(h.layer))
        expect(responses.map((r) => r.content)).toStrictEqual(["ran"])
        expect(h.shown).toStrictEqual([{ _tag: "Edit", text: pretty({ path: "a" }) }])
        expect(h.scripted.calls.map((c) => c.call.arguments)).toStrictEqual([{ path: "b" }])
        const started = h.events.find((e) => e._tag === "ToolStarted")
        expect(started).toMatchObject({ call: { id: "c", arguments: { path: "b" } } })
        expect(digest(persisted)).toStrictEqual([
          "call c t",
          "ask c.__permission__.1 (tool t) boolean: Run local t tool?",
          "answered c.__permission__.1: true",
          "result c: ran"
        ])
        expect(decisionMetadata(persisted, "c")).toStrictEqual([{ parley_arguments: { path: "b" } }])
        // The request keeps what the model asked for.
        expect(persisted.find((e) => e.type === "tool_call_request")).toMatchObject({ arguments: { path: "a" } })
      })
  )

  it.effect(
    "JP run = edit: invalid JSON opens the editor again as it was left (a warning says why); an emptied edit goes back to the prompt, whose e edits again",
    () =>
      Effect.gen(function* () {
        const h = yield* setup(
          {
            tools: { t: { run: "edit", kind: "local", outcomes: [succeed("ran")] } },
            interactive: true,
            prompts: [
              { _tag: "Edit", text: "{not json" },
              { _tag: "Edit", text: "[1]" },
              { _tag: "Edit", text: undefined },
              { _tag: "Permission", decision: "e" },
              { _tag: "Edit", text: '{"path": "c"}' }
            ]
          },
          [call("c", "t", { path: "a" })]
        )
        yield* h.run([call("c", "t", { path: "a" })]).pipe(Effect.provide(h.layer))
        expect(h.shown.map((s) => (s._tag === "Edit" ? s.text : s._tag))).toStrictEqual([
          pretty({ path: "a" }),
          "{not json",
          "[1]",
          "Permission",
          pretty({ path: "a" })
        ])
        // The prompt offers e.
        expect(h.shown[3]).toMatchObject({ _tag: "Permission", request: { editable: true } })
        expect(
          h.events.flatMap((e) => (e._tag === "Warning" ? [e.text.replace(/valid JSON \(.*\)/, "valid JSON (…)")] : []))
        ).toStrictEqual([
          "The edited arguments of t (c): the edited arguments are not valid JSON (…); edit them again.",
          "The edited arguments of t (c): the edited arguments are not a JSON object; edit them again."
        ])
        expect(h.scripted.calls.map((c) => c.call.arguments)).toStrictEqual([{ path: "c" }])
      })
  )

  it.effect(
    "JP run = ask: e at the permission prompt edits too; an edit left unchanged, or y after an emptied edit, runs the call as asked (no parley_arguments)",
    () =>
      Effect.gen(function* () {
        const calls = [call("a", "t", { path: "a" }), call("b", "t", { path: "b" }), call("c", "t", { path: "c" })]
        const h = yield* setup(
          {
            tools: { t: { run: "ask", kind: "local", outcomes: [succeed("1"), succeed("2"), succeed("3")] } },
            interactive: true,
            prompts: [
              { _tag: "Permission", decision: "e" },
              { _tag: "Edit", text: '{"path": "z"}' },
              { _tag: "Permission", decision: "e" },
              { _tag: "Edit", text: pretty({ path: "b" }) },
              { _tag: "Permission", decision: "e" },
              { _tag: "Edit", text: undefined },
              { _tag: "Permission", decision: "n" }
            ]
          },
          calls
        )
        const { responses, persisted } = yield* Effect.all({ responses: h.run(calls), persisted: h.persisted }).pipe(
          Effect.provide(h.layer)
        )
        expect(Object.fromEntries(responses.map((r) => [r.id, r.content]))).toStrictEqual({
          a: "1",
          b: "2",
          c: Texts.skippedByUser
        })
        expect(h.scripted.calls.map((c) => c.call.arguments)).toStrictEqual([{ path: "z" }, { path: "b" }])
        expect(decisionMetadata(persisted, "a")).toStrictEqual([{ parley_arguments: { path: "z" } }])
        expect(decisionMetadata(persisted, "b")).toStrictEqual([{}])
        expect(decisionMetadata(persisted, "c")).toStrictEqual([{}])
      })
  )

  it.effect(
    "JP run = edit (resume): a call approved with edited arguments before a crash runs with them, not asked again",
    () =>
      Effect.gen(function* () {
        const first = yield* setup(
          {
            tools: { t: { run: "edit", kind: "local", outcomes: [succeed("1")] } },
            interactive: true,
            prompts: [{ _tag: "Edit", text: '{"path": "b"}' }]
          },
          [call("c", "t", { path: "a" })]
        )
        const all = yield* Effect.andThen(first.run([call("c", "t", { path: "a" })]), first.persisted).pipe(
          Effect.provide(first.layer)
        )
        // What a run killed while the tool ran leaves: the call and its decision, no response.
        const left = all.filter((e) => e.type !== "tool_call_response")
        const analysis = IncompleteTurn.analyze({ entries: left })
        expect(analysis.permissionArguments).toStrictEqual(new Map([["c", { path: "b" }]]))
        for (const interactive of [true, false]) {
          const h = yield* setup(
            {
              tools: { t: { run: "edit", kind: "local", outcomes: [succeed("again")] } },
              interactive,
              entries: left
            },
            []
          )
          const { responses } = yield* h.runAll(analysis.pendingToolCalls, analysis).pipe(Effect.provide(h.layer))
          expect(responses.map((r) => r.content)).toStrictEqual(["again"])
          expect(h.shown).toStrictEqual([])
          expect(h.scripted.calls.map((c) => c.call.arguments)).toStrictEqual([{ path: "b" }])
        }
      })
  )
})
