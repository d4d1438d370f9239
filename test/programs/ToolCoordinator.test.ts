import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as EntryCodec from "../../src/domain/storage/EntryCodec.ts"
import { InquirySource } from "../../src/domain/event/InquirySource.ts"
import { sanitize } from "../../src/domain/stream/Sanitize.ts"
import { intoParts } from "../../src/domain/stream/Thread.ts"
import * as TurnState from "../../src/domain/stream/TurnState.ts"
import * as IncompleteTurn from "../../src/domain/stream/IncompleteTurn.ts"
import * as Option from "effect/Option"
import { askThen } from "../../src/layers/executor/ExecutorScripted.ts"
import { Question } from "../../src/domain/tool/Question.ts"
import { Executor, NeedsInput, ok } from "../../src/services/Executor.ts"
import { Texts } from "../../src/programs/ToolCoordinator.ts"
import {
  InquiryBackend,
  AnswerExtraction,
  InquiryCancelledError,
  InquiryProviderError,
  MissingStructuredData
} from "../../src/services/InquiryBackend.ts"
import * as Events from "../../src/domain/event/Events.ts"
import { tempDir } from "../support/Fixtures.ts"
import { until } from "../support/Until.ts"
import { persisted as persistedRaw } from "../support/Project.ts"
import { call, clock, digest, setup, turnWith } from "./CoordinatorHarness.ts"

const boolQ = (id: string, text: string, extra: Record<string, Schema.Json> = {}) => ({
  id,
  text,
  answer_type: { type: "boolean" },
  ...extra
})
const secretQ = (id: string, text: string) => ({ id, text, answer_type: { type: "secret" } })
const succeed = (content: string) => ({ type: "success", content })

/** A tool that asks `question` then reports the answer it got. */
const asking = (question: Record<string, Schema.Json> & { id: string }, extra: Record<string, unknown> = {}) => ({
  respond: askThen(question as never, (answer) => succeed(`${question.id}=${JSON.stringify(answer)}`)),
  ...extra
})

/** A tool that reports only the length of a secret (never the secret). */
const secretTool = {
  respond: askThen(secretQ("token", "API token?") as never, (answer) =>
    succeed(`token length ${String(answer).length}`)
  )
}

const runOnce = (s: Parameters<typeof setup>[0], calls: ReturnType<typeof call>[]) =>
  Effect.gen(function* () {
    const h = yield* setup(s, calls)
    const result = yield* Effect.gen(function* () {
      const responses = yield* h.run(calls)
      const persisted = yield* h.persisted
      return { responses, persisted }
    }).pipe(Effect.provide(h.layer))
    return { ...result, h, log: digest(result.persisted) }
  })

describe("RFD 082 Phase 3: recording lifecycle", () => {
  it.effect("single inquiry answered by the backend: request (tool source), answered, tool output (§7.7 single)", () =>
    Effect.gen(function* () {
      const c = call("call_1", "inquiry_tool")
      const { log, responses, h } = yield* runOnce(
        {
          tools: { inquiry_tool: asking(boolQ("backup", "Create backup?")) },
          inquiries: { "call_1.backup.1": true }
        },
        [c]
      )
      expect(log).toStrictEqual([
        "call call_1 inquiry_tool",
        "ask call_1.backup.1 (tool inquiry_tool) boolean: Create backup?",
        "answered call_1.backup.1: true",
        "result call_1: backup=true"
      ])
      expect(responses.map((r) => r.content)).toStrictEqual(["backup=true"])
      // The backend saw the stream just in time: the request is already in it.
      expect(h.inquiries[0]!.entries.at(-1)!.type).toBe("inquiry_request")
      expect(h.inquiries[0]!.inquiryId).toBe("call_1.backup.1")
    })
  )

  it.effect("several sequential questions from one tool each get a pair (§7.7 multiple)", () =>
    Effect.gen(function* () {
      const tool = {
        respond: (_c: unknown, answers: Record<string, Schema.Json>) =>
          answers["first"] === undefined
            ? { type: "needs_input", question: boolQ("first", "First?") }
            : answers["second"] === undefined
              ? { type: "needs_input", question: { id: "second", text: "Name?", answer_type: { type: "text" } } }
              : succeed(`${answers["first"]} ${answers["second"]}`)
      }
      const { log } = yield* runOnce(
        { tools: { t: tool as never }, inquiries: { "c.first.1": false, "c.second.1": "ann" } },
        [call("c", "t")]
      )
      expect(log.slice(1)).toStrictEqual([
        "ask c.first.1 (tool t) boolean: First?",
        "answered c.first.1: false",
        "ask c.second.1 (tool t) text: Name?",
        'answered c.second.1: "ann"',
        "result c: false ann"
      ])
    })
  )

  it.effect("attempt counter: a re-asked question gets attempt 2; answers reach the tool by bare id, latest wins", () =>
    Effect.gen(function* () {
      let asked = 0
      const tool = {
        respond: (_c: unknown, answers: Record<string, Schema.Json>) => {
          if (answers["pick"] === undefined || (answers["pick"] === "bad" && asked < 2)) {
            asked++
            return {
              type: "needs_input",
              question: { id: "pick", text: "Pick", answer_type: { type: "select", options: ["bad", "good"] } }
            }
          }
          return succeed(`picked ${answers["pick"]}`)
        }
      }
      const { log, h } = yield* runOnce(
        { tools: { t: tool as never }, inquiries: { "c.pick.1": "bad", "c.pick.2": "good" } },
        [call("c", "t")]
      )
      expect(log.slice(1)).toStrictEqual([
        "ask c.pick.1 (tool t) select: Pick",
        'answered c.pick.1: "bad"',
        "ask c.pick.2 (tool t) select: Pick",
        'answered c.pick.2: "good"',
        "result c: picked good"
      ])
      expect(h.scripted.calls.map((x) => x.answers)).toStrictEqual([{}, { pick: "bad" }, { pick: "good" }])
    })
  )

  it.effect(
    "loop guard: a tool re-asking a statically answered question stops after max_attempts (default 5), no 6th request",
    () =>
      Effect.gen(function* () {
        // Never satisfied: asks again whatever the answer.
        const stubborn = { respond: () => ({ type: "needs_input", question: boolQ("ok", "Really OK?") }) }
        const config = { conversation: { tools: { t: { questions: { ok: { answer: true } } } } } }
        const { log, responses } = yield* runOnce({ tools: { t: stubborn as never }, config }, [call("c", "t")])
        expect(log.filter((l) => l.startsWith("ask"))).toStrictEqual(
          [1, 2, 3, 4, 5].map((n) => `ask c.ok.${n} (tool t) boolean: Really OK?`)
        )
        expect(log.filter((l) => l.startsWith("answered")).length).toBe(5)
        expect(responses[0]!.is_error).toBe(true)
        expect(responses[0]!.content).toBe(
          "The tool 't' asked \"Really OK?\" (question 'ok') more than 5 times in one call, so the call was stopped: the answers it got did not satisfy it. Raise max_attempts under [conversation.tools.t.questions.ok] to allow more."
        )
      })
  )

  it.effect("loop guard: max_attempts per question, then per tool", () =>
    Effect.gen(function* () {
      const stubborn = { respond: () => ({ type: "needs_input", question: boolQ("ok", "OK?") }) }
      const count = (config: unknown) =>
        Effect.map(
          runOnce({ tools: { t: stubborn as never }, config }, [call("c", "t")]),
          ({ log }) => log.filter((l) => l.startsWith("ask")).length
        )
      expect(
        yield* count({
          conversation: { tools: { t: { max_attempts: 2, questions: { ok: { answer: true, max_attempts: 3 } } } } }
        })
      ).toBe(3)
      expect(
        yield* count({ conversation: { tools: { t: { max_attempts: 2, questions: { ok: { answer: true } } } } } })
      ).toBe(2)
      expect(
        yield* count({
          conversation: { tools: { "*": { max_attempts: 1 }, t: { questions: { ok: { answer: true } } } } }
        })
      ).toBe(1)
    })
  )

  it.effect("cross-cycle uniqueness within a turn, and a fresh count in the next turn", () =>
    Effect.gen(function* () {
      const first = call("call_1", "t")
      const h = yield* setup(
        { tools: { t: asking(boolQ("ok", "OK?")) }, inquiries: { "call_1.ok.1": true, "call_1.ok.2": true } },
        [first]
      )
      const log = yield* Effect.gen(function* () {
        yield* h.run([first])
        // A provider (Gemini) reuses the call id in a later cycle of the same turn.
        const again = call("call_1", "t")
        yield* h.append([again])
        yield* h.run([again])
        return digest(yield* h.persisted)
      }).pipe(Effect.provide(h.layer))
      expect(log.filter((l) => l.startsWith("ask"))).toStrictEqual([
        "ask call_1.ok.1 (tool t) boolean: OK?",
        "ask call_1.ok.2 (tool t) boolean: OK?"
      ])
      // Per-turn reset: a new turn's state starts again at 1.
      const fresh = TurnState.make()
      expect(TurnState.nextInquiryId(fresh, "call_1", "ok")[0]).toBe("call_1.ok.1")
      expect(h.state.inquiryAttempts.get("call_1\u0000ok")).toBe(2)
    })
  )

  it.live("parallel tools: one asks, the other is not blocked (§7.7)", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const slowBackend = InquiryBackend.of({
        inquire: () => Deferred.await(gate).pipe(Effect.as(true))
      })
      const h = yield* setup(
        {
          tools: { asker: asking(boolQ("go", "Go?")), quick: { outcomes: [succeed("quick done")] } },
          backend: slowBackend
        },
        [call("a", "asker"), call("b", "quick")]
      )
      const log = yield* Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(h.run([call("a", "asker"), call("b", "quick")]))
        // While the question is open, the other tool finishes and is persisted.
        yield* Effect.sleep("50 millis")
        const mid = digest(yield* h.persisted)
        expect(mid).toContain("result b: quick done")
        expect(mid).not.toContain("result a: go=true")
        yield* Deferred.succeed(gate, undefined)
        const responses = yield* Fiber.join(fiber)
        expect(responses.map((r) => r.id)).toStrictEqual(["a", "b"]) // call order
        return digest(yield* h.persisted)
      }).pipe(Effect.provide(h.layer))
      expect(log).toContain("answered a.go.1: true")
    })
  )

  it.effect("parallel tools: both ask; each pair carries its own id (§7.7)", () =>
    Effect.gen(function* () {
      const { log } = yield* runOnce(
        {
          tools: { x: asking(boolQ("q", "X?")), y: asking(boolQ("q", "Y?")) },
          inquiries: { "a.q.1": true, "b.q.1": false }
        },
        [call("a", "x"), call("b", "y")]
      )
      expect(log.filter((l) => !l.startsWith("call")).sort()).toStrictEqual([
        "answered a.q.1: true",
        "answered b.q.1: false",
        "ask a.q.1 (tool x) boolean: X?",
        "ask b.q.1 (tool y) boolean: Y?",
        "result a: q=true",
        "result b: q=false"
      ])
    })
  )

  it.effect(
    "reason mapping (RFD 082): backend Cancelled → user; provider / missing structured data / AnswerExtraction (answer extraction) / other failures → backend_error, tool error text",
    () =>
      Effect.gen(function* () {
        const cases = [
          [new InquiryCancelledError(), "user"],
          [new InquiryProviderError({ provider: "openai", detail: "boom", attempts: 3 }), "backend_error"],
          [new MissingStructuredData(), "backend_error"],
          [new AnswerExtraction({ reason: "the answer is null" }), "backend_error"]
        ] as const
        for (const [failure, reason] of cases) {
          const { log } = yield* runOnce(
            {
              tools: { t: asking(boolQ("q", "Apply?")) },
              backend: InquiryBackend.of({ inquire: () => Effect.fail(failure) })
            },
            [call("c", "t")]
          )
          expect(log.slice(1)).toStrictEqual([
            "ask c.q.1 (tool t) boolean: Apply?",
            `cancelled c.q.1: ${reason}`,
            `result c ERROR: ${Texts.inquiryFailed("t", "Apply?", failure.message)}`
          ])
        }
        // The mock backend's catch-all (unknown inquiry) is a backend error too (§7.7 backend failure).
        const other = yield* runOnce({ tools: { t: asking(boolQ("q", "Apply?")) } }, [call("c", "t")])
        expect(other.log[2]).toBe("cancelled c.q.1: backend_error")
        expect(other.log[3]).toContain(
          "secondary assistant failed to provide a valid answer. Error: No mock answer for inquiry c.q.1."
        )
      })
  )

  it.effect(
    "prompter: answered; Ctrl-C → Cancelled{user} + 'Tool input cancelled by user.'; prompter failure → backend_error",
    () =>
      Effect.gen(function* () {
        const ok = yield* runOnce(
          {
            tools: { t: asking(boolQ("q", "Apply?")) },
            interactive: true,
            prompts: [{ _tag: "Answer", answer: true }]
          },
          [call("c", "t")]
        )
        expect(ok.log.slice(1)).toStrictEqual([
          "ask c.q.1 (tool t) boolean: Apply?",
          "answered c.q.1: true",
          "result c: q=true"
        ])
        // The inquiry id round-trips through the prompt: the response carries the request's id.
        const cancel = yield* runOnce(
          { tools: { t: asking(boolQ("q", "Apply?")) }, interactive: true, prompts: [{ _tag: "Cancel" }] },
          [call("c", "t")]
        )
        expect(cancel.log.slice(1)).toStrictEqual([
          "ask c.q.1 (tool t) boolean: Apply?",
          "cancelled c.q.1: user",
          `result c: ${Texts.inputCancelled}`
        ])
        // Turn-cache split: a cancelled inquiry enters neither cache.
        expect(cancel.h.state.rememberedToolAnswers.size).toBe(0)
        expect(cancel.h.state.rememberedPermissionDecisions.size).toBe(0)
        const fail = yield* runOnce(
          {
            tools: { t: asking(boolQ("q", "Apply?")) },
            interactive: true,
            prompts: [{ _tag: "Fail", reason: "tty gone" }]
          },
          [call("c", "t")]
        )
        expect(fail.log.slice(1)).toStrictEqual([
          "ask c.q.1 (tool t) boolean: Apply?",
          "cancelled c.q.1: backend_error",
          `result c ERROR: ${Texts.promptFailed}`
        ])
      })
  )

  it.effect(
    "static answer: no prompt, no backend, recorded as answered (§7.7, pre-seed removed: the tool asks first)",
    () =>
      Effect.gen(function* () {
        const { log, h } = yield* runOnce(
          {
            tools: { t: asking(boolQ("overwrite", "Overwrite?")) },
            interactive: true,
            config: { conversation: { tools: { t: { questions: { overwrite: { target: "user", answer: true } } } } } }
          },
          [call("c", "t")]
        )
        expect(log.slice(1)).toStrictEqual([
          "ask c.overwrite.1 (tool t) boolean: Overwrite?",
          "answered c.overwrite.1: true",
          "result c: overwrite=true"
        ])
        expect(h.shown).toStrictEqual([])
        expect(h.scripted.calls.map((x) => x.answers)).toStrictEqual([{}, { overwrite: true }])
      })
  )

  it.effect(
    "remembered answer (Y) is reused for a second call in the turn and recorded per call (§7.7); n is not remembered",
    () =>
      Effect.gen(function* () {
        const remembered = yield* runOnce(
          {
            tools: { t: asking(boolQ("q", "Apply?")) },
            interactive: true,
            prompts: [{ _tag: "Answer", answer: true, remember: true }]
          },
          [call("a", "t"), call("b", "t")]
        )
        expect(remembered.log.filter((l) => l.startsWith("answered")).sort()).toStrictEqual([
          "answered a.q.1: true",
          "answered b.q.1: true"
        ])
        expect(remembered.h.shown.length).toBe(1)
        expect(remembered.h.state.rememberedToolAnswers.get("t.q")).toBe(true)
        expect(remembered.h.state.rememberedPermissionDecisions.size).toBe(0) // the caches stay apart
        const once = yield* runOnce(
          {
            tools: { t: asking(boolQ("q", "Apply?")) },
            interactive: true,
            prompts: [
              { _tag: "Answer", answer: false },
              { _tag: "Answer", answer: true }
            ]
          },
          [call("a", "t"), call("b", "t")]
        )
        expect(once.h.shown.length).toBe(2)
        expect(once.h.state.rememberedToolAnswers.size).toBe(0)
      })
  )

  it.effect("permission: Y remembered for the turn in its own cache; N skips later calls; skip mode never runs", () =>
    Effect.gen(function* () {
      const yes = yield* runOnce(
        {
          tools: { t: { run: "ask", kind: "local", outcomes: [succeed("1"), succeed("2")] } },
          interactive: true,
          prompts: [{ _tag: "Permission", decision: "Y" }]
        },
        [call("a", "t"), call("b", "t")]
      )
      expect(yes.h.shown.map((s) => s._tag)).toStrictEqual(["Permission"])
      expect(yes.h.state.rememberedPermissionDecisions.get("t.__permission__")).toBe("y")
      expect(yes.h.state.rememberedToolAnswers.size).toBe(0)
      const no = yield* runOnce(
        {
          tools: { t: { run: "ask", kind: "local", outcomes: [succeed("1")] } },
          interactive: true,
          prompts: [{ _tag: "Permission", decision: "N" }]
        },
        [call("a", "t"), call("b", "t")]
      )
      expect(no.log.filter((l) => l.startsWith("result")).sort()).toStrictEqual([
        `result a: ${Texts.skippedByUser}`,
        `result b: ${Texts.skippedRemembered}`
      ])
      expect(no.h.scripted.calls.length).toBe(0)
      // Without a TTY an "ask" tool runs (nobody to ask), as in JP.
      const headless = yield* runOnce({ tools: { t: { run: "ask", kind: "local", outcomes: [succeed("ran")] } } }, [
        call("a", "t")
      ])
      expect(headless.log).toContain("result a: ran")
    })
  )

  it.effect("unknown tools get JP's 'not available' error without prompting", () =>
    Effect.gen(function* () {
      const { log } = yield* runOnce({ tools: {}, interactive: true }, [call("a", "gone_tool")])
      expect(log[1]).toMatch(/^result a ERROR: Tool 'gone_tool' is not available\./)
    })
  )

  it.effect("source is recorded as the executor resolved it (a built-in declaring assistant)", () =>
    Effect.gen(function* () {
      const { log } = yield* runOnce(
        {
          tools: {
            ask_user: asking(
              { id: "q", text: "Favourite colour?", answer_type: { type: "text" } },
              { source: InquirySource.assistant }
            )
          },
          inquiries: { "c.q.1": "blue" }
        },
        [call("c", "ask_user")]
      )
      expect(log[1]).toBe("ask c.q.1 (assistant) text: Favourite colour?")
    })
  )
})

describe("defects stay inside their tool call", () => {
  it.effect("a tool that crashes is a failed call; a backend that crashes closes the inquiry as backend_error", () =>
    Effect.gen(function* () {
      const { log } = yield* runOnce(
        {
          tools: {
            crasher: { respond: () => Effect.die(new Error("kaboom")) },
            asker: asking(boolQ("q", "Go?")),
            fine: { outcomes: [succeed("fine")] }
          },
          backend: InquiryBackend.of({ inquire: () => Effect.die(new Error("backend bug")) })
        },
        [call("a", "crasher"), call("b", "asker"), call("c", "fine")]
      )
      expect(log).toContain("result a ERROR: Tool 'crasher' failed unexpectedly: kaboom")
      expect(log).toContain("cancelled b.q.1: backend_error")
      expect(log.find((l) => l.startsWith("result b ERROR:"))).toContain("Error: backend bug")
      expect(log).toContain("result c: fine")
    })
  )
})

describe("RFD 082 Phase 3: secrets", () => {
  it.effect("prompter: typed with no echo, delivered to the tool, recorded as redacted", () =>
    Effect.gen(function* () {
      const { log, h } = yield* runOnce(
        { tools: { t: secretTool }, interactive: true, prompts: [{ _tag: "Answer", answer: "hunter2-secret" }] },
        [call("c", "t")]
      )
      expect(log.slice(1)).toStrictEqual([
        "ask c.token.1 (tool t) secret: API token?",
        "redacted c.token.1",
        "result c: token length 14"
      ])
      expect(h.scripted.calls[1]!.answers).toStrictEqual({ token: "hunter2-secret" })
    })
  )

  it.effect("static secret answer: delivered, recorded as redacted", () =>
    Effect.gen(function* () {
      const { log } = yield* runOnce(
        {
          tools: { t: secretTool },
          config: { conversation: { tools: { t: { questions: { token: { answer: "static-secret" } } } } } }
        },
        [call("c", "t")]
      )
      expect(log.slice(1)).toStrictEqual([
        "ask c.token.1 (tool t) secret: API token?",
        "redacted c.token.1",
        "result c: token length 13"
      ])
    })
  )

  it.effect("cache bypass: a secret is never remembered, even when asked twice in a turn", () =>
    Effect.gen(function* () {
      const { h, log } = yield* runOnce(
        {
          tools: { t: secretTool },
          interactive: true,
          prompts: [
            { _tag: "Answer", answer: "one", remember: true },
            { _tag: "Answer", answer: "two", remember: true }
          ]
        },
        [call("a", "t"), call("b", "t")]
      )
      expect(h.shown.length).toBe(2)
      expect(h.state.rememberedToolAnswers.size).toBe(0)
      expect(log.filter((l) => l.startsWith("redacted")).sort()).toStrictEqual([
        "redacted a.token.1",
        "redacted b.token.1"
      ])
    })
  )

  it.effect(
    "routing guard: no TTY → tool error naming the secret value + Cancelled{no_prompt_backend}; backend never asked",
    () =>
      Effect.gen(function* () {
        const { log, h } = yield* runOnce({ tools: { t: secretTool }, inquiries: { "c.token.1": "leaked" } }, [
          call("c", "t")
        ])
        expect(log.slice(1)).toStrictEqual([
          "ask c.token.1 (tool t) secret: API token?",
          "cancelled c.token.1: no_prompt_backend",
          `result c ERROR: ${Texts.secretNoTty("t", "API token?")}`
        ])
        expect(log[3]).toContain("secret value")
        expect(h.inquiries.length).toBe(0)
      })
  )

  it.effect("routing guard: target assistant → tool error + Cancelled{assistant_routing_denied}, even on a TTY", () =>
    Effect.gen(function* () {
      const { log, h } = yield* runOnce(
        {
          tools: { t: secretTool },
          interactive: true,
          inquiries: { "c.token.1": "leaked" },
          config: { conversation: { tools: { t: { questions: { token: { target: "assistant" } } } } } }
        },
        [call("c", "t")]
      )
      expect(log.slice(1, 3)).toStrictEqual([
        "ask c.token.1 (tool t) secret: API token?",
        "cancelled c.token.1: assistant_routing_denied"
      ])
      expect(h.inquiries.length).toBe(0)
      expect(h.shown.length).toBe(0)
    })
  )

  it.effect("non-secret regression: a text answer is recorded verbatim", () =>
    Effect.gen(function* () {
      const { log } = yield* runOnce(
        {
          tools: { t: asking({ id: "name", text: "Name?", answer_type: { type: "text" } }) },
          interactive: true,
          prompts: [{ _tag: "Answer", answer: "visible" }]
        },
        [call("c", "t")]
      )
      expect(log).toContain('answered c.name.1: "visible"')
    })
  )

  it.live(
    "secret byte scan: for every secret path the secret's bytes appear in no file under the storage directory",
    () =>
      Effect.gen(function* () {
        const secret = "S3CRET-0123456789-abcdef"
        const paths: Array<Parameters<typeof setup>[0]> = [
          { tools: { t: secretTool }, interactive: true, prompts: [{ _tag: "Answer", answer: secret }] },
          {
            tools: { t: secretTool },
            config: { conversation: { tools: { t: { questions: { token: { answer: secret } } } } } }
          },
          { tools: { t: secretTool }, inquiries: { "c.token.1": secret } },
          {
            tools: { t: secretTool },
            interactive: true,
            inquiries: { "c.token.1": secret },
            config: { conversation: { tools: { t: { questions: { token: { target: "assistant" } } } } } }
          }
        ]
        for (const p of paths) {
          const storageDir = tempDir()
          const h = yield* setup({ ...p, storageDir }, [call("c", "t")])
          yield* h.run([call("c", "t")]).pipe(Effect.provide(h.layer))
          const entries = yield* h.persisted.pipe(Effect.provide(h.layer))
          expect(entries.some((e) => e.type === "inquiry_response")).toBe(true)
          const needles = [
            secret,
            Buffer.from(secret).toString("base64"),
            Buffer.from(secret).toString("base64").slice(0, 16)
          ]
          const walk = (dir: string): Array<string> =>
            fs
              .readdirSync(dir, { withFileTypes: true })
              .flatMap((d) => (d.isDirectory() ? walk(path.join(dir, d.name)) : [path.join(dir, d.name)]))
          const files = walk(storageDir)
          expect(files.length).toBeGreaterThan(2)
          for (const file of files) {
            const bytes = fs.readFileSync(file).toString("latin1")
            for (const needle of needles) expect(bytes.includes(needle), `${needle} in ${file}`).toBe(false)
          }
        }
      })
  )
})

describe("interruption", () => {
  it.live(
    "interrupting while a prompt is open: Cancelled{user} persisted, unfinished tools left without responses, finished ones on disk",
    () =>
      Effect.gen(function* () {
        const storageDir = tempDir()
        const calls = [call("fast", "quick"), call("ask", "asker"), call("slow", "sleeper")]
        const h = yield* setup(
          {
            tools: {
              quick: { outcomes: [succeed("quick done")] },
              asker: asking(boolQ("q", "Proceed?")),
              sleeper: { respond: () => Effect.never }
            },
            interactive: true,
            prompts: [{ _tag: "Hang" }],
            storageDir
          },
          calls
        )
        const entries = yield* Effect.gen(function* () {
          const fiber = yield* Effect.forkChild(h.run(calls))
          // Interrupted once the quick tool finished and the question is open (a fixed sleep lost that race under load).
          yield* until(
            "the quick tool finishing and the question opening",
            Effect.sync(() => ["ToolFinished", "QuestionOpened"].every((tag) => h.events.some((e) => e._tag === tag)))
          )
          yield* Fiber.interrupt(fiber)
          return yield* h.persisted
        }).pipe(Effect.provide(h.layer))
        const log = digest(entries)
        expect(log.filter((l) => !l.startsWith("call"))).toStrictEqual([
          "result fast: quick done",
          "ask ask.q.1 (tool asker) boolean: Proceed?",
          "cancelled ask.q.1: user"
        ])
        // No unpaired inquiry request; the unfinished calls keep the turn resumable.
        const sanitizedView = intoParts({ events: sanitize(entries) }).events.map((e) => e.type)
        expect(sanitizedView).not.toContain("inquiry_request")
        expect(entries.filter((e) => e.type === "tool_call_response").length).toBe(1)
      })
  )

  it.live("interrupting while a backend inquiry is in flight: Cancelled{user}, the backend call is interrupted", () =>
    Effect.gen(function* () {
      const storageDir = tempDir()
      let backendInterrupted = false
      let backendCalled = false
      const backend = InquiryBackend.of({
        inquire: () =>
          Effect.sync(() => (backendCalled = true)).pipe(
            Effect.andThen(Effect.never),
            Effect.onInterrupt(() => Effect.sync(() => (backendInterrupted = true)))
          )
      })
      const calls = [call("a", "asker")]
      const h = yield* setup({ tools: { asker: asking(boolQ("q", "Proceed?")) }, backend, storageDir }, calls)
      const entries = yield* Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(h.run(calls))
        yield* until(
          "the backend call",
          Effect.sync(() => backendCalled)
        )
        yield* Fiber.interrupt(fiber)
        return yield* h.persisted
      }).pipe(Effect.provide(h.layer))
      expect(digest(entries).slice(1)).toStrictEqual([
        "ask a.q.1 (tool asker) boolean: Proceed?",
        "cancelled a.q.1: user"
      ])
      expect(backendInterrupted).toBe(true)
      // On disk, in the file store, exactly as recorded.
      const again = yield* setup({ tools: {}, storageDir: tempDir() }, [])
      void again
      expect(EntryCodec.encodeEntry(entries.at(-1)!)).toMatchObject({
        type: "inquiry_response",
        outcome: "cancelled",
        id: "a.q.1",
        reason: "user"
      })
    })
  )
})

describe("legacy streams", () => {
  it.effect(
    "new three-segment ids never collide with legacy two-segment ones in the same turn; sanitize keeps every pair",
    () =>
      Effect.gen(function* () {
        const c = call("c", "t")
        const legacy = [
          EntryCodec.decodeEntry({
            timestamp: clock(),
            type: "inquiry_request",
            id: "c.q",
            source: { source: "tool", name: "t" },
            question: { text: "Old?", answer_type: { type: "boolean" } }
          }),
          EntryCodec.decodeEntry({ timestamp: clock(), type: "inquiry_response", id: "c.q", answer: false })
        ]
        const { log, persisted } = yield* runOnce(
          {
            tools: { t: asking(boolQ("q", "Again?")) },
            inquiries: { "c.q.1": true },
            entries: [...turnWith([c]), ...legacy]
          },
          [c]
        )
        expect(log.filter((l) => l.startsWith("ask"))).toStrictEqual([
          "ask c.q (tool t) boolean: Old?",
          "ask c.q.1 (tool t) boolean: Again?"
        ])
        const kept = sanitize(persisted).filter((e) => e.type === "inquiry_request" || e.type === "inquiry_response")
        expect(kept.length).toBe(4)
      })
  )
})

describe("RFD 083: exclusive questions, persistence, static answers that do not fit", () => {
  const exclusiveQ = (extra: Record<string, Schema.Json> = {}) =>
    boolQ("answer", "Proceed?", { exclusive: true, persistence: "none", ...extra })

  it.effect(
    "exclusive, nobody to ask, detached = assistant: Cancelled{no_prompt_backend}, RFD 083's text, no side call",
    () =>
      Effect.gen(function* () {
        const { log, h } = yield* runOnce({ tools: { ask: asking(exclusiveQ()) }, inquiries: { "c.answer.1": true } }, [
          call("c", "ask")
        ])
        expect(log.slice(1)).toStrictEqual([
          "ask c.answer.1 (tool ask) boolean: Proceed?",
          "cancelled c.answer.1: no_prompt_backend",
          "result c ERROR: ask cannot run because no interactive terminal is available. Do not retry this tool call in this turn; continue without user input or explain what information is missing."
        ])
        expect(h.inquiries).toStrictEqual([])
      })
  )

  it.effect("exclusive follows the other detached policies (deny, defer) but never goes to the assistant", () =>
    Effect.gen(function* () {
      const deny = yield* runOnce(
        { tools: { ask: asking(exclusiveQ()) }, config: { conversation: { inquiry: { detached: "deny" } } } },
        [call("c", "ask")]
      )
      expect(deny.log).toContain("cancelled c.answer.1: no_prompt_backend")
      const defer = yield* runOnce(
        { tools: { ask: asking(exclusiveQ()) }, config: { conversation: { inquiry: { detached: "defer" } } } },
        [call("c", "ask")]
      )
      expect(defer.log.slice(1)).toStrictEqual(["ask c.answer.1 (tool ask) boolean: Proceed?"])
      expect(defer.h.inquiries).toStrictEqual([])
    })
  )

  it.effect("exclusive with target = assistant: Cancelled{assistant_routing_denied}; a static answer still wins", () =>
    Effect.gen(function* () {
      const config = (q: Record<string, unknown>) => ({
        conversation: { tools: { ask: { questions: { answer: q } } } }
      })
      const denied = yield* runOnce(
        { tools: { ask: asking(exclusiveQ()) }, interactive: true, config: config({ target: "assistant" }) },
        [call("c", "ask")]
      )
      expect(denied.log.slice(2)).toStrictEqual([
        "cancelled c.answer.1: assistant_routing_denied",
        "result c ERROR: ask requires a human answer and cannot be routed to the assistant. Do not retry this tool call in this turn."
      ])
      expect(denied.h.shown).toStrictEqual([])
      const pinned = yield* runOnce(
        { tools: { ask: asking(exclusiveQ()) }, config: config({ target: "assistant", answer: false }) },
        [call("c", "ask")]
      )
      expect(pinned.log.slice(2)).toStrictEqual(["answered c.answer.1: false", "result c: answer=false"])
    })
  )

  it.effect(
    "a static answer that does not fit: Cancelled{invalid_static_answer}, the tool error names the config key",
    () =>
      Effect.gen(function* () {
        const config = { conversation: { tools: { pick: { questions: { color: { answer: "purple" } } } } } }
        const selectQ = { id: "color", text: "Colour?", answer_type: { type: "select", options: ["red", "blue"] } }
        const { log, h } = yield* runOnce({ tools: { pick: asking(selectQ) }, config }, [call("c", "pick")])
        expect(log.slice(2)).toStrictEqual([
          "cancelled c.color.1: invalid_static_answer",
          'result c ERROR: pick: the configured conversation.tools.pick.questions.color.answer value does not match the question\'s answer_type ("purple" is not one of the options (red, blue)). Update the configuration; do not retry.'
        ])
        expect(h.inquiries).toStrictEqual([])
        const typed = yield* runOnce(
          {
            tools: { t: asking(boolQ("go", "Go?")) },
            config: { conversation: { tools: { t: { questions: { go: { answer: "maybe" } } } } } }
          },
          [call("c", "t")]
        )
        expect(typed.log).toContain("cancelled c.go.1: invalid_static_answer")
        // Yes/no words are a boolean's static answer too, given to the tool as true/false.
        const worded = yield* runOnce(
          {
            tools: { t: asking(boolQ("go", "Go?")) },
            config: { conversation: { tools: { t: { questions: { go: { answer: "yes" } } } } } }
          },
          [call("c", "t")]
        )
        expect(worded.log.slice(2)).toStrictEqual(["answered c.go.1: true", "result c: go=true"])
      })
  )

  it.effect(
    "a static answer the tool rejects (asks the same question again, as an MCP form field does): invalid_static_answer at once, not five identical retries",
    () =>
      Effect.gen(function* () {
        // Like an MCP form field: a text question whose answer must be a whole number; a rejected answer is asked again, saying why.
        const question = (problem: string | undefined) =>
          Schema.decodeUnknownSync(Question)({
            id: "age",
            text: `${problem === undefined ? "" : `The previous answer was rejected: ${problem}.\n`}age (a whole number)`,
            answer_type: { type: "text" }
          })
        const form = Executor.of({
          definitions: [{ name: "form", description: "A form.", parameters: { type: "object" } }],
          execute: (_call, answers) => {
            const given = answers["age"]
            if (typeof given === "string" && /^\d+$/.test(given)) return Effect.succeed(ok(`age=${given}`))
            const problem = given === undefined ? undefined : `${JSON.stringify(given)} is not a whole number`
            return Effect.succeed(
              new NeedsInput({
                question: question(problem),
                source: InquirySource.tool("form"),
                answers: { ...answers },
                ...(problem !== undefined ? { rejected: problem } : {})
              })
            )
          },
          permission: () => "unattended",
          kind: (name) => (name === "form" ? "builtin" : undefined)
        })
        const rejecting = { executor: form, tools: {} }
        const config = { conversation: { tools: { form: { questions: { age: { answer: "forty" } } } } } }
        const { log, h } = yield* runOnce({ ...rejecting, config }, [call("c", "form")])
        expect(log.slice(1)).toStrictEqual([
          "ask c.age.1 (tool form) text: age (a whole number)",
          'answered c.age.1: "forty"',
          'ask c.age.2 (tool form) text: The previous answer was rejected: "forty" is not a whole number.\nage (a whole number)',
          "cancelled c.age.2: invalid_static_answer",
          'result c ERROR: form: the configured conversation.tools.form.questions.age.answer value does not match the question\'s answer_type (the tool rejected it and asked again: "forty" is not a whole number). Update the configuration; do not retry.'
        ])
        expect(h.inquiries).toStrictEqual([])
        // An answer it accepts is given once.
        const fine = yield* runOnce(
          { ...rejecting, config: { conversation: { tools: { form: { questions: { age: { answer: "40" } } } } } } },
          [call("c", "form")]
        )
        expect(fine.log.slice(1)).toStrictEqual([
          "ask c.age.1 (tool form) text: age (a whole number)",
          'answered c.age.1: "40"',
          "result c: age=40"
        ])
      })
  )

  it.effect(
    "persistence = none: Y at the prompt is not remembered and the next call is asked again; the prompt gets the label",
    () =>
      Effect.gen(function* () {
        const once = boolQ("go", "Go?", { persistence: "none" })
        const { log, h } = yield* runOnce(
          {
            tools: { t: asking(once) },
            interactive: true,
            prompts: [
              { _tag: "Answer", answer: true, remember: true },
              { _tag: "Answer", answer: false }
            ],
            config: { conversation: { tools: { t: { questions: { go: { prompt_label: "Deployer" } } } } } }
          },
          [call("a", "t"), call("b", "t")]
        )
        expect(log.filter((l) => l.startsWith("answered"))).toStrictEqual([
          "answered a.go.1: true",
          "answered b.go.1: false"
        ])
        expect(h.state.rememberedToolAnswers.size).toBe(0)
        expect(h.shown.map((s) => (s._tag === "Question" ? s.request.label : undefined))).toStrictEqual([
          "Deployer",
          "Deployer"
        ])
      })
  )

  it.effect("persistence = none also ignores an answer remembered earlier in the turn", () =>
    Effect.gen(function* () {
      const state = TurnState.rememberAnswer(TurnState.make(), "t", "go", true)
      const { log } = yield* runOnce(
        { tools: { t: asking(boolQ("go", "Go?", { persistence: "none" })) }, state, inquiries: { "c.go.1": false } },
        [call("c", "t")]
      )
      expect(log).toContain("answered c.go.1: false")
    })
  )
})

describe("remembered answers recorded (docs/decisions.md#remembered-answers-recorded): Y/N is recorded, so a resumed turn remembers it", () => {
  it.effect(
    "a remembered answer carries parley's metadata; a permission decision is recorded as a marked inquiry pair; analyze + TurnState.resumed rebuild both",
    () =>
      Effect.gen(function* () {
        const { persisted, log } = yield* runOnce(
          {
            tools: { t: asking(boolQ("go", "Go?"), { run: "ask", kind: "local" }) },
            interactive: true,
            prompts: [
              { _tag: "Permission", decision: "Y" },
              { _tag: "Answer", answer: true, remember: true }
            ]
          },
          [call("c", "t")]
        )
        expect(log).toStrictEqual([
          "call c t",
          "ask c.__permission__.1 (tool t) boolean: Run local t tool?",
          "answered c.__permission__.1: true",
          "ask c.go.1 (tool t) boolean: Go?",
          "answered c.go.1: true",
          "result c: go=true"
        ])
        const inquiries = persisted.filter((e) => e.type === "inquiry_request" || e.type === "inquiry_response")
        expect(inquiries.map((e) => e.metadata)).toStrictEqual([
          { parley_permission: true },
          { parley_remembered: true },
          {},
          { parley_remembered: true }
        ])
        expect(persisted.find((e) => e.type === "tool_call_response")!.metadata).toStrictEqual({})
        // The turn as an incomplete one (its response dropped), analysed and rebuilt.
        const analysis = IncompleteTurn.analyze({
          entries: persisted.filter((e) => e.type !== "tool_call_response" || e.id !== "c").concat([call("d", "t")])
        })
        expect(analysis.rememberedAnswers).toStrictEqual([{ tool: "t", questionId: "go", answer: true }])
        expect(analysis.rememberedPermissions).toStrictEqual([{ tool: "t", decision: "y" }])
        // The permission is neither an answer the tool gets nor a question to reopen; it is the call's decision.
        expect(analysis.answeredInquiries.get("c")).toStrictEqual({ go: true })
        expect(analysis.pendingInquiries).toStrictEqual([])
        expect(analysis.permissionDecisions).toStrictEqual(new Map([["c", "y"]]))
        expect(analysis.attemptCounters.get(IncompleteTurn.attemptKey("c", "__permission__"))).toBe(1)
        const state = TurnState.resumed(analysis)
        expect(TurnState.rememberedAnswer(state, "t", "go")).toStrictEqual(Option.some(true))
        expect(TurnState.rememberedPermission(state, "t")).toStrictEqual(Option.some("y"))
      })
  )

  it.effect("the decision is on disk before the tool starts (a kill -9 while it runs keeps it)", () =>
    Effect.gen(function* () {
      const dir = tempDir("parley-perm-order-")
      const seen: Array<Array<string>> = []
      const tool = {
        run: "ask" as const,
        kind: "local" as const,
        respond: () => {
          seen.push(digest(persistedRaw({ root: dir, storage: dir }).map(EntryCodec.decodeEntry)))
          return succeed("ran")
        }
      }
      yield* runOnce(
        { tools: { t: tool }, interactive: true, prompts: [{ _tag: "Permission", decision: "y" }], storageDir: dir },
        [call("c", "t")]
      )
      expect(seen).toStrictEqual([
        ["call c t", "ask c.__permission__.1 (tool t) boolean: Run local t tool?", "answered c.__permission__.1: true"]
      ])
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  it.effect(
    "resumed: a call decided earlier is not asked again (y runs it, n skips it, with or without a terminal); an undecided call is asked",
    () =>
      Effect.gen(function* () {
        const [a, b, c] = [call("a", "t"), call("b", "t"), call("c", "t")]
        const decided = yield* runOnce(
          {
            tools: { t: { run: "ask", kind: "local", outcomes: [succeed("1"), succeed("2")] } },
            interactive: true,
            prompts: [
              { _tag: "Permission", decision: "y" },
              { _tag: "Permission", decision: "n" }
            ]
          },
          [a, b]
        )
        // What a run killed before either tool answered leaves: the calls and their decisions.
        const left = decided.persisted.filter((e) => e.type !== "tool_call_response")
        for (const interactive of [true, false]) {
          const h = yield* setup(
            {
              tools: { t: { run: "ask", kind: "local", outcomes: [succeed("again"), succeed("third")] } },
              interactive,
              prompts: interactive ? [{ _tag: "Permission", decision: "y" }] : [],
              entries: [...left, c]
            },
            []
          )
          const analysis = IncompleteTurn.analyze({ entries: [...left, c] })
          expect(analysis.pendingToolCalls.map((x) => x.id)).toStrictEqual(["a", "b", "c"])
          const { responses } = yield* h.runAll(analysis.pendingToolCalls, analysis).pipe(Effect.provide(h.layer))
          const asked = decided.log
            .find((l) => l.startsWith("answered") && l.endsWith("false"))!
            .slice("answered ".length, "answered x".length)
          const approved = asked === "a" ? "b" : "a"
          expect(Object.fromEntries(responses.map((r) => [r.id, r.content]))).toStrictEqual({
            [approved]: "again",
            [asked]: Texts.skippedByUser,
            c: "third"
          })
          // Only the undecided call is asked, and only where someone can be.
          expect(h.shown.map((x) => x._tag)).toStrictEqual(interactive ? ["Permission"] : [])
        }
      })
  )

  it.effect(
    "resumed: a remembered N from the earlier run skips the tool's other calls, even without a terminal; parley's older record on the response still counts",
    () =>
      Effect.gen(function* () {
        const [a, b] = [call("a", "t"), call("b", "t")]
        const legacy = [
          ...turnWith([a]),
          Events.toolCallResponse(
            clock(),
            "a",
            { content: Texts.skippedByUser, is_error: false },
            { parley_permission: "n" }
          ),
          b
        ]
        const analysis = IncompleteTurn.analyze({ entries: legacy })
        expect(analysis.rememberedPermissions).toStrictEqual([{ tool: "t", decision: "n" }])
        const state = TurnState.resumed(analysis)
        const h2 = yield* setup(
          { tools: { t: { run: "ask", kind: "local", outcomes: [succeed("ran")] } }, entries: legacy, state },
          []
        )
        const { responses } = yield* h2.runAll([b], analysis).pipe(Effect.provide(h2.layer))
        expect(responses.map((r) => r.content)).toStrictEqual([Texts.skippedRemembered])
        expect(h2.scripted.calls).toStrictEqual([])
      })
  )

  it.effect("an answer given once (y) records no metadata and is not remembered", () =>
    Effect.gen(function* () {
      const { persisted } = yield* runOnce(
        { tools: { t: asking(boolQ("go", "Go?")) }, interactive: true, prompts: [{ _tag: "Answer", answer: true }] },
        [call("c", "t")]
      )
      expect(persisted.find((e) => e.type === "inquiry_response")!.metadata).toStrictEqual({})
      expect(IncompleteTurn.analyze({ entries: [...persisted, call("d", "t")] }).rememberedAnswers).toStrictEqual([])
    })
  )

  it("a failed side call's error that ends a sentence is quoted with one period, not two (JP's words otherwise)", () => {
    const text = Texts.inquiryFailed("t", "Apply?", "Unexpected end of JSON input at position 3.")
    expect(text).toContain(
      "Error: Unexpected end of JSON input at position 3. You may retry the tool call or end the turn."
    )
    expect(text).not.toContain("..")
    expect(Texts.inquiryFailed("t", "Apply?", "no answer")).toContain("Error: no answer. You may retry")
  })
})
