// The CLI's words (docs/cli.md#status-lines): the coordinator announces every call it runs and every
// question it closes — who answered, and what (a secret never) — and says
// which call each prompt belongs to.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Schema from "effect/Schema"
import { askThen } from "../../src/layers/executor/ExecutorScripted.ts"
import type * as RunEvent from "../../src/domain/run/RunEvent.ts"
import { Texts } from "../../src/programs/ToolCoordinator.ts"
import { call, setup } from "./CoordinatorHarness.ts"
import { until } from "../support/Until.ts"

const boolQ = (id: string, text: string) => ({ id, text, answer_type: { type: "boolean" } })
const secretQ = (id: string, text: string) => ({ id, text, answer_type: { type: "secret" } })
const succeed = (content: string) => ({ type: "success", content })
const asking = (question: Record<string, Schema.Json> & { id: string }) => ({
  respond: askThen(question as never, (answer) =>
    succeed(`${question.id}=${typeof answer === "string" ? `${answer.length} chars` : JSON.stringify(answer)}`)
  )
})

/** One line per event the status shows (opened questions and the rest are left out), in order. */
const line = (n: RunEvent.RunEvent): Array<string> => [lineOf(n)].filter((l) => l !== "")

const lineOf = (n: RunEvent.RunEvent): string => {
  switch (n._tag) {
    case "ToolStarted":
      return `started ${n.call.id}${n.resumed ? " (resumed)" : ""}`
    case "ToolFinished":
      return `finished ${n.call.id} ${n.ran ? "ran" : "skipped"}${n.response.is_error ? " ERROR" : ""}: ${n.response.content}`
    case "QuestionClosed": {
      const o = n.outcome
      const what =
        o._tag === "Answered"
          ? `answered ${JSON.stringify(o.answer)}`
          : o._tag === "Redacted"
            ? "redacted"
            : `cancelled ${o.reason}`
      return `closed ${n.inquiry_id} by ${n.by}: ${what}`
    }
    case "ReplyFinished":
      return `reply ${n.stop_reason}`
    case "Stopped":
      return `stopped ${JSON.stringify(n.incomplete)}`
    default:
      return ""
  }
}

const runWith = (s: Parameters<typeof setup>[0], calls: ReturnType<typeof call>[]) =>
  Effect.gen(function* () {
    const h = yield* setup(s, calls)
    yield* h.run(calls).pipe(Effect.provide(h.layer))
    return { h, notices: h.events.flatMap(line) }
  })

describe("coordinator notices", () => {
  it.effect("each route says who answered: assistant, config, you, remembered", () =>
    Effect.gen(function* () {
      const backend = yield* runWith({ tools: { t: asking(boolQ("q", "Apply?")) }, inquiries: { "c.q.1": false } }, [
        call("c", "t")
      ])
      expect(backend.notices).toStrictEqual([
        "started c",
        "closed c.q.1 by assistant: answered false",
        "finished c ran: q=false"
      ])

      const config = yield* runWith(
        {
          tools: { t: asking(boolQ("q", "Apply?")) },
          interactive: true,
          config: { conversation: { tools: { t: { questions: { q: { answer: true } } } } } }
        },
        [call("c", "t")]
      )
      expect(config.notices).toStrictEqual([
        "started c",
        "closed c.q.1 by config: answered true",
        "finished c ran: q=true"
      ])

      const person = yield* runWith(
        {
          tools: { t: asking(boolQ("q", "Apply?")) },
          interactive: true,
          prompts: [{ _tag: "Answer", answer: true, remember: true }]
        },
        [call("a", "t"), call("b", "t")]
      )
      const closed = person.notices.filter((n) => n.startsWith("closed")).sort()
      // Whichever call asks first gets the prompt; the other reuses the remembered answer.
      expect(closed.map((n) => n.replace(/^closed [ab]/, "closed x")).sort()).toStrictEqual([
        "closed x.q.1 by remembered: answered true",
        "closed x.q.1 by you: answered true"
      ])
    })
  )

  it.effect(
    "a secret is announced as redacted, never its value; a refused one with its reason; cancellations with theirs",
    () =>
      Effect.gen(function* () {
        const typed = yield* runWith(
          {
            tools: { s: asking(secretQ("token", "Token?")) },
            interactive: true,
            prompts: [{ _tag: "Answer", answer: "hunter22" }]
          },
          [call("c", "s")]
        )
        expect(typed.notices).toStrictEqual([
          "started c",
          "closed c.token.1 by you: redacted",
          "finished c ran: token=8 chars"
        ])
        expect(typed.notices.join("\n")).not.toContain("hunter22")

        const refused = yield* runWith({ tools: { s: asking(secretQ("token", "Token?")) } }, [call("c", "s")])
        expect(refused.notices).toStrictEqual([
          "started c",
          "closed c.token.1 by parley: cancelled no_prompt_backend",
          `finished c ran ERROR: ${Texts.secretNoTty("s", "Token?")}`
        ])

        const cancelled = yield* runWith(
          { tools: { t: asking(boolQ("q", "Apply?")) }, interactive: true, prompts: [{ _tag: "Cancel" }] },
          [call("c", "t")]
        )
        expect(cancelled.notices).toStrictEqual([
          "started c",
          "closed c.q.1 by you: cancelled user",
          `finished c ran: ${Texts.inputCancelled}`
        ])
      })
  )

  it.effect("a call skipped before it runs is finished without being started", () =>
    Effect.gen(function* () {
      const { notices } = yield* runWith({ tools: { t: { run: "skip", outcomes: [succeed("never")] } } }, [
        call("c", "t")
      ])
      expect(notices).toStrictEqual([`finished c skipped: ${Texts.skippedByConfig}`])
    })
  )

  it.effect("prompts say which call asks: its id, its place among the calls, its arguments", () =>
    Effect.gen(function* () {
      const { h } = yield* runWith(
        {
          tools: { t: asking(boolQ("q", "Overwrite?")), p: { run: "ask", kind: "local", outcomes: [succeed("ran")] } },
          interactive: true,
          prompts: [
            { _tag: "Permission", decision: "y" },
            { _tag: "Answer", answer: true }
          ]
        },
        [call("c1", "p", { paths: ["/", "/home"] }), call("c2", "t", { path: "b.txt" })]
      )
      const byTag = Object.fromEntries(h.shown.map((s) => [s._tag, "request" in s ? s.request : undefined]))
      expect(byTag["Permission"]).toStrictEqual({
        toolName: "p",
        kind: "local",
        arguments: { paths: ["/", "/home"] },
        position: { callId: "c1", index: 1, total: 2 },
        // A local tool's permission prompt offers `e` (edit the arguments, then run), as JP's does.
        editable: true
      })
      expect(byTag["Question"]).toMatchObject({
        toolName: "t",
        arguments: { path: "b.txt" },
        position: { callId: "c2", index: 2, total: 2 }
      })
    })
  )

  it.effect("an MCP tool's permission prompt names it as MCP, not local", () =>
    Effect.gen(function* () {
      const { h } = yield* runWith(
        {
          tools: { m: { run: "ask", kind: "mcp", outcomes: [succeed("ran")] } },
          interactive: true,
          prompts: [{ _tag: "Permission", decision: "y" }]
        },
        [call("c1", "m", { a: 1 })]
      )
      expect(h.shown.map((s) => [s._tag, s._tag === "Permission" ? s.request.kind : undefined])).toStrictEqual([
        ["Permission", "MCP"]
      ])
    })
  )

  it.live("an interrupt closes the open question as cancelled by parley, and announces it", () =>
    Effect.gen(function* () {
      const calls = [call("c", "t")]
      const h = yield* setup(
        { tools: { t: asking(boolQ("q", "Proceed?")) }, interactive: true, prompts: [{ _tag: "Hang" }] },
        calls
      )
      yield* Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(h.run(calls))
        // At the open question, not after a guessed delay (which lost the race under load).
        yield* until(
          "the question opening",
          Effect.sync(() => h.events.some((e) => e._tag === "QuestionOpened"))
        )
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.provide(h.layer))
      expect(h.events.flatMap(line)).toStrictEqual(["started c", "closed c.q.1 by parley: cancelled user"])
    })
  )
})
