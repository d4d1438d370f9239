/**
 * Approvals an effect/ai tool needs (docs/library.md#effectai-tools-as-parleys-executor-asking-questions-mid-run): an effect/ai tool marked `needsApproval` (a boolean or a
 * function of its parameters) never runs unprompted through
 * `executorFromToolkit`. Its permission is `ask`; the person is asked as for
 * `run = "ask"`; with nobody to ask it follows the `detached` policy with
 * `assistant` read as `deny` (an approval never goes to the assistant):
 * skipped under `deny`, deferred under `defer` and `wait` (answered later
 * with `conversation answer`, the resumed turn runs or skips the call);
 * config can still override the run mode per tool.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Tool, Toolkit } from "effect/ai"
import { executorFromToolkit } from "../../src/ai/index.ts"
import * as Conversation from "../../src/domain/storage/Conversation.ts"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import type { StreamEntry } from "../../src/domain/event/ConversationEvent.ts"
import * as IncompleteTurn from "../../src/domain/stream/IncompleteTurn.ts"
import * as TurnState from "../../src/domain/stream/TurnState.ts"
import * as Answer from "../../src/programs/Answer.ts"
import * as MockInquiryBackend from "../../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../../src/layers/prompt/MockPromptBackend.ts"
import * as RunLive from "../../src/layers/RunLive.ts"
import * as MemoryConversationStore from "../../src/layers/store/MemoryConversationStore.ts"
import * as ToolCoordinator from "../../src/programs/ToolCoordinator.ts"
import { Config } from "../../src/services/Config.ts"
import { ConversationStore } from "../../src/services/ConversationStore.ts"
import { Executor } from "../../src/services/Executor.ts"
import { PromptBackend } from "../../src/services/PromptBackend.ts"
import { call as callRequest, turnWith } from "../programs/CoordinatorHarness.ts"

const id = ConversationId.parse("17000000951")!

const Params = Schema.Struct({ env: Schema.String })
const Deploy = Tool.make("deploy", { parameters: Params, success: Schema.String, needsApproval: true })
const Promote = Tool.make("promote", {
  parameters: Params,
  success: Schema.String,
  needsApproval: (params: { readonly env: string }) => Effect.succeed(params.env === "production")
})
const Status = Tool.make("status", { parameters: Params, success: Schema.String })
const toolkit = Toolkit.make(Deploy, Promote, Status)

const call = (name: string, env: string, n = 1) => callRequest(`call_${name}_${n}`, name, { env })

/** Runs `calls` through the coordinator; returns the recorded responses, the handlers' runs and the prompts shown. */
const runCalls = (options: {
  readonly calls: ReadonlyArray<ReturnType<typeof call>>
  readonly script?: ReadonlyArray<MockPromptBackend.Scripted>
  readonly interactive: boolean
  readonly config?: unknown
  /** The conversation as an earlier run left it (its turn resumed, as `query --continue-turn` does). */
  readonly entries?: ReadonlyArray<StreamEntry>
  /** Answered with `conversation answer` before resuming. */
  readonly answer?: { readonly inquiryId: string; readonly text: string }
}) =>
  Effect.gen(function* () {
    const ran: Array<string> = []
    const handlers = {
      deploy: ({ env }: { readonly env: string }) =>
        Effect.sync(() => (ran.push(`deploy ${env}`), `deployed to ${env}`)),
      promote: ({ env }: { readonly env: string }) =>
        Effect.sync(() => (ran.push(`promote ${env}`), `promoted to ${env}`)),
      status: ({ env }: { readonly env: string }) => Effect.sync(() => (ran.push(`status ${env}`), `${env} is up`))
    }
    const prompts = yield* MockPromptBackend.make(options.script ?? [], { interactive: options.interactive })
    const config = Config.layerLiteral(options.config ?? {})
    const result = yield* Effect.scoped(
      Effect.gen(function* () {
        const session = yield* ConversationStore.use((s) => s.open(id))
        if (options.answer !== undefined)
          yield* Answer.record(session, options.answer.inquiryId, { text: options.answer.text })
        const incomplete = options.entries === undefined ? null : yield* session.incompleteTurn
        const analysis = incomplete === null ? undefined : IncompleteTurn.analyze(incomplete)
        const state = yield* Ref.make(analysis === undefined ? TurnState.make() : TurnState.resumed(analysis))
        const ran = yield* ToolCoordinator.runTools({
          session,
          calls: analysis?.pendingToolCalls ?? options.calls,
          state,
          root: "/tmp",
          ...(analysis !== undefined ? { resume: analysis } : {})
        })
        return { ...ran, entries: (yield* session.snapshot).entries }
      })
    ).pipe(
      Effect.provide(
        Layer.mergeAll(
          RunLive.layer,
          executorFromToolkit(toolkit, handlers),
          MockInquiryBackend.layer({}),
          MemoryConversationStore.layer([
            { ...Conversation.make({ id, now: Timestamp.now() }), entries: options.entries ?? turnWith(options.calls) }
          ])
        ).pipe(Layer.provideMerge(config))
      ),
      Effect.provideService(PromptBackend, prompts.service)
    )
    return {
      responses: result.responses.map((r) => [r.id, r.content]),
      deferred: result.deferred,
      entries: result.entries,
      ran,
      shown: prompts.prompts.shown.map((s) => (s._tag === "Permission" ? `permission ${s.request.toolName}` : s._tag))
    }
  })

const nobody = (tool: string, policy: string) =>
  `The tool '${tool}' needs a person's approval to run, and nobody could be asked (the detached policy is "${policy}"; an approval never goes to an assistant), so it did not run. Do not retry this tool call in this turn.`

describe("needsApproval through executorFromToolkit", () => {
  it.effect(
    "the permission is ask for a tool with needsApproval (boolean or function), unattended otherwise; config overrides it per tool",
    () =>
      Effect.gen(function* () {
        const handlers = {
          deploy: () => Effect.succeed(""),
          promote: () => Effect.succeed(""),
          status: () => Effect.succeed("")
        }
        const permissions = (config: unknown) =>
          Effect.gen(function* () {
            const e = yield* Executor
            return [e.permission("deploy"), e.permission("promote"), e.permission("status")]
          }).pipe(
            Effect.provide(executorFromToolkit(toolkit, handlers).pipe(Layer.provide(Config.layerLiteral(config))))
          )
        expect(yield* permissions({})).toStrictEqual(["ask", "ask", "unattended"])
        // The wildcard does not lift an author's approval; a tool's own table does.
        expect(
          yield* permissions({ conversation: { tools: { "*": { run: "unattended" }, promote: { run: "skip" } } } })
        ).toStrictEqual(["ask", "skip", "unattended"])
        expect(yield* permissions({ conversation: { tools: { deploy: { run: "unattended" } } } })).toStrictEqual([
          "unattended",
          "ask",
          "unattended"
        ])
      })
  )

  it.effect(
    "nobody to ask, detached = assistant (the default): the approval is not given, the call is skipped and recorded; others run",
    () =>
      Effect.gen(function* () {
        const out = yield* runCalls({
          calls: [call("deploy", "staging"), call("status", "staging")],
          interactive: false
        })
        expect(out.ran).toStrictEqual(["status staging"])
        expect(out.responses).toStrictEqual([
          ["call_deploy_1", nobody("deploy", "assistant")],
          ["call_status_1", "staging is up"]
        ])
        expect(out.shown).toStrictEqual([])
      })
  )

  it.effect("nobody to ask under detached = deny (and assistant, read as deny): skipped", () =>
    Effect.gen(function* () {
      for (const policy of ["assistant", "deny"]) {
        const out = yield* runCalls({
          calls: [call("deploy", "staging")],
          interactive: false,
          config: { conversation: { inquiry: { detached: policy } } }
        })
        expect(out.ran).toStrictEqual([])
        expect(out.responses).toStrictEqual([["call_deploy_1", nobody("deploy", policy)]])
        expect(out.deferred).toStrictEqual([])
      }
    })
  )

  it.live(
    "nobody to ask under detached = defer or wait (after wait_timeout, real time): the approval is recorded open and the call deferred, unrun; others run",
    () =>
      Effect.gen(function* () {
        for (const inquiry of [{ detached: "defer" }, { detached: "wait", wait_timeout: "50ms" }]) {
          const out = yield* runCalls({
            calls: [call("deploy", "staging"), call("status", "staging")],
            interactive: false,
            config: { conversation: { inquiry } }
          })
          expect(out.ran).toStrictEqual(["status staging"])
          expect(out.responses).toStrictEqual([["call_status_1", "staging is up"]])
          expect(out.deferred).toStrictEqual(["call_deploy_1.__permission__.1"])
          const request = out.entries.find((e) => e.type === "inquiry_request")
          expect(request).toMatchObject({
            id: "call_deploy_1.__permission__.1",
            source: { source: "tool", name: "deploy" },
            question: { text: "Run built-in deploy tool?", answer_type: { type: "boolean" } },
            metadata: { parley_permission: true }
          })
          expect(out.entries.filter((e) => e.type === "inquiry_response")).toStrictEqual([])
        }
      })
  )

  it.effect(
    "a deferred approval answered later (conversation answer): yes runs the call on resume, no skips it; still open, it is deferred again under its id",
    () =>
      Effect.gen(function* () {
        const config = { conversation: { inquiry: { detached: "defer" } } }
        for (const [answer, ran, response] of [
          ["yes", ["deploy staging"], "deployed to staging"],
          ["no", [], "Tool skipped by user."],
          [undefined, [], undefined]
        ] as const) {
          const first = yield* runCalls({ calls: [call("deploy", "staging")], interactive: false, config })
          expect(first.deferred).toStrictEqual(["call_deploy_1.__permission__.1"])
          const second = yield* runCalls({
            calls: [call("deploy", "staging")],
            interactive: false,
            config,
            entries: first.entries,
            ...(answer !== undefined ? { answer: { inquiryId: "call_deploy_1.__permission__.1", text: answer } } : {})
          })
          expect(second.ran).toStrictEqual(ran)
          if (response === undefined) {
            expect(second.deferred).toStrictEqual(["call_deploy_1.__permission__.1"])
            // Not a second request: the open one is the question.
            expect(second.entries.filter((e) => e.type === "inquiry_request").length).toBe(1)
          } else {
            expect(second.responses).toStrictEqual([["call_deploy_1", response]])
            expect(second.deferred).toStrictEqual([])
          }
        }
      })
  )

  it.effect("a function of the parameters: approval only where it says so", () =>
    Effect.gen(function* () {
      const out = yield* runCalls({
        calls: [call("promote", "staging"), call("promote", "production", 2)],
        interactive: false
      })
      expect(out.ran).toStrictEqual(["promote staging"])
      expect(out.responses).toStrictEqual([
        ["call_promote_1", "promoted to staging"],
        ["call_promote_2", nobody("promote", "assistant")]
      ])
    })
  )

  it.effect(
    "a person at the prompt: asked as for run = ask; n skips, y runs; a call that needs no approval is not asked",
    () =>
      Effect.gen(function* () {
        const out = yield* runCalls({
          calls: [call("deploy", "staging"), call("promote", "staging"), call("deploy", "production", 2)],
          script: [
            { _tag: "Permission", decision: "n" },
            { _tag: "Permission", decision: "y" }
          ],
          interactive: true
        })
        expect(out.shown).toStrictEqual(["permission deploy", "permission deploy"])
        expect(out.ran.sort()).toStrictEqual(["deploy production", "promote staging"])
        expect(out.responses).toStrictEqual([
          ["call_deploy_1", "Tool skipped by user."],
          ["call_promote_1", "promoted to staging"],
          ["call_deploy_2", "deployed to production"]
        ])
      })
  )

  it.effect("config run = unattended for the tool runs it without asking, even with nobody there", () =>
    Effect.gen(function* () {
      const out = yield* runCalls({
        calls: [call("deploy", "staging")],
        interactive: false,
        config: { conversation: { tools: { deploy: { run: "unattended" } } } }
      })
      expect(out.ran).toStrictEqual(["deploy staging"])
    })
  )
})
