// Who answers a question (RFD 082 routing, docs/decisions.md#detached-policy), and
// whether an answer fits its question.
import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as AnswerFit from "../../../src/domain/tool/AnswerFit.ts"
import * as Config from "../../../src/domain/tool/Config.ts"
import { Question } from "../../../src/domain/tool/Question.ts"
import * as PermissionInquiry from "../../../src/domain/event/PermissionInquiry.ts"
import { decidePermission, decideRoute, type PermissionInput, type RouteInput } from "../../../src/domain/tool/Route.ts"

const q = (type: "boolean" | "secret") => new Question({ id: "q" as never, text: "Go?", answer_type: { type } })
const input = (over: Partial<RouteInput>): RouteInput => ({
  question: q("boolean"),
  target: "user",
  reachable: false,
  detached: "assistant",
  remembered: Option.none(),
  staticAnswer: undefined,
  ...over
})
const tag = (over: Partial<RouteInput>) => {
  const r = decideRoute(input(over))
  return r._tag === "Denied" ? `Denied:${r.reason}` : r._tag
}

describe("decideRoute", () => {
  it("remembered, then static, then the secret guard, then a reachable person, then the target", () => {
    expect(tag({ remembered: Option.some(true), staticAnswer: false })).toBe("Remembered")
    expect(tag({ question: q("secret"), remembered: Option.some("x") })).toBe("Denied:no_prompt_backend")
    expect(tag({ staticAnswer: false, reachable: true })).toBe("Static")
    expect(tag({ question: q("secret"), target: "assistant", reachable: true })).toBe("Denied:assistant_routing_denied")
    expect(tag({ reachable: true })).toBe("Person")
    expect(tag({ reachable: true, target: "assistant" })).toBe("Backend")
    expect(tag({ question: q("secret"), reachable: true })).toBe("Person")
  })

  it("a static answer: form-field leniency (a number or a list for text, yes/no words for a boolean), none for a question the model asks", () => {
    const text = new Question({ id: "q" as never, text: "Path?", answer_type: { type: "text" } })
    expect(tag({ question: text, staticAnswer: 5 })).toBe("Static")
    expect(tag({ question: text, staticAnswer: ["a", "b"] })).toBe("Static")
    expect(tag({ staticAnswer: "yes" })).toBe("Static")
    expect(tag({ question: text, staticAnswer: 5, strictStatic: true })).toBe("InvalidStatic")
    expect(tag({ question: text, staticAnswer: ["a", "b"], strictStatic: true })).toBe("InvalidStatic")
    expect(tag({ staticAnswer: "yes", strictStatic: true })).toBe("InvalidStatic")
    expect(tag({ question: text, staticAnswer: "src/a.ts", strictStatic: true })).toBe("Static")
  })

  it("nobody to ask: the detached policy decides, and a secret never goes to the assistant", () => {
    const table = (["assistant", "deny", "defer", "wait"] as const).map((detached) => [
      detached,
      tag({ detached }),
      tag({ detached, question: q("secret") }),
      tag({ detached, target: "assistant" })
    ])
    expect(table).toStrictEqual([
      ["assistant", "Backend", "Denied:no_prompt_backend", "Backend"],
      ["deny", "Denied:no_prompt_backend", "Denied:no_prompt_backend", "Backend"],
      ["defer", "Defer", "Defer", "Backend"],
      ["wait", "Wait", "Wait", "Backend"]
    ])
  })
})

describe("the detached policy in config", () => {
  it("defaults to assistant and a 10 minute wait; a duration reads in ms, s, m, h or seconds; a bad one names the key", () => {
    expect(Config.detachedPolicy(Config.empty)).toBe("assistant")
    expect(Config.waitTimeoutMs(Config.empty)).toBe(600_000)
    const at = (d: unknown) =>
      Result.getOrThrow(Config.decode({ conversation: { inquiry: { detached: "wait", wait_timeout: d } } }))
    expect([
      Config.waitTimeoutMs(at("500ms")),
      Config.waitTimeoutMs(at("30s")),
      Config.waitTimeoutMs(at("2m")),
      Config.waitTimeoutMs(at("1h")),
      Config.waitTimeoutMs(at(5))
    ]).toStrictEqual([500, 30_000, 120_000, 3_600_000, 5000])
    const bad = Config.decode({ conversation: { inquiry: { detached: "later", wait_timeout: "soon" } } })
    expect(Result.isFailure(bad) && bad.failure.map((i) => Config.formatPath(i.path))).toStrictEqual([
      "conversation.inquiry.detached",
      "conversation.inquiry.wait_timeout"
    ])
    expect(Config.detachedPolicy(Config.withDetachedPolicy(at("1s"), "defer"))).toBe("defer")
  })
})

describe("AnswerFit", () => {
  it("parses yes/no words, exact options and text; says what fits", () => {
    const bool = { type: "boolean" } as const
    const sel = { type: "select", options: ["red", "green"] } as const
    expect(
      ["yes", "Y", "true", "no", "N", "false"].map((w) => Result.getOrThrow(AnswerFit.parse(bool, w)))
    ).toStrictEqual([true, true, true, false, false, false])
    expect(Result.isFailure(AnswerFit.parse(bool, "maybe"))).toBe(true)
    expect(Result.getOrThrow(AnswerFit.parse(sel, "green"))).toBe("green")
    expect(AnswerFit.parse(sel, "Green")).toStrictEqual(Result.fail(`"Green" is not one of the options (red, green)`))
    expect(Result.getOrThrow(AnswerFit.parse(sel, `"red"`, { json: true }))).toBe("red")
    expect(AnswerFit.parse(bool, "yes", { json: true })).toStrictEqual(Result.fail(`"yes" is not JSON`))
    expect(AnswerFit.fit({ type: "text" }, 3)).toStrictEqual(Result.fail("3 is not text"))
    expect([AnswerFit.expected(bool), AnswerFit.expected(sel), AnswerFit.expected({ type: "text" })]).toStrictEqual([
      "yes or no",
      "one of: red, green",
      "any text"
    ])
  })

  it("names the placeholder a printed command shows for a value: none for a secret, never put on a command line", () => {
    expect([
      AnswerFit.placeholder({ type: "boolean" }, "question"),
      AnswerFit.placeholder({ type: "boolean" }, "approval"),
      AnswerFit.placeholder({ type: "select", options: ["red", "green"] }, "question"),
      AnswerFit.placeholder({ type: "text" }, "question"),
      AnswerFit.placeholder({ type: "secret" }, "question")
    ]).toStrictEqual(["yes|no", "yes|no|always|never", "red|green", "text", undefined])
  })
})

describe("decidePermission: a call that needs a yes", () => {
  const ask = { mode: "ask", kind: "local" } as const
  const decided = (over: Partial<PermissionInput>) => {
    const p = decidePermission({ tool: ask, interactive: false, remembered: Option.none(), ...over })
    return p._tag === "Skip" ? `Skip:${p.cause}` : p._tag
  }

  it('with nobody at the prompt, run = "ask" follows the detached policy: wait/defer open an approval, deny skips, assistant runs (JP)', () => {
    expect(decided({ detached: "wait" })).toBe("Approve")
    expect(decided({ detached: "defer" })).toBe("Approve")
    expect(decided({ detached: "deny" })).toBe("Skip:no_approval")
    expect(decided({ detached: "assistant" })).toBe("Run")
    expect(decided({})).toBe("Run")
  })

  it("an author's needsApproval reads assistant as deny; a person attached elsewhere is asked the approval; the terminal asks at its prompt", () => {
    expect(decided({ approval: true, detached: "assistant" })).toBe("Skip:no_approval")
    expect(decided({ approval: true, detached: "wait" })).toBe("Approve")
    expect(decided({ attended: true, detached: "deny" })).toBe("Approve")
    expect(decided({ attended: true, interactive: true })).toBe("Ask")
  })

  it("what the person decided wins under every policy: the recorded decision, then the remembered Y/N; unattended and skip never ask", () => {
    for (const detached of ["wait", "defer", "deny", "assistant"] as const) {
      expect(decided({ detached, decided: "y" })).toBe("Run")
      expect(decided({ detached, decided: "n" })).toBe("Skip:declined")
      expect(decided({ detached, remembered: Option.some("y") })).toBe("Run")
      expect(decided({ detached, remembered: Option.some("n") })).toBe("Skip:remembered")
      expect(decided({ detached, remembered: Option.some("y"), reopened: true })).toBe("Approve")
      expect(decided({ detached, tool: { mode: "unattended", kind: "local" } })).toBe("Run")
      expect(decided({ detached, tool: { mode: "skip", kind: "local" } })).toBe("Skip:config")
      expect(decided({ detached, reopened: true })).toBe("Approve")
    }
  })

  it("an approval's answers: yes/no decide the call, always/never (and Y/N) the tool's later calls too", () => {
    expect(
      ["yes", "no", "always", "never", "Y", "N", "y", true, false, "maybe", 1].map((v) =>
        PermissionInquiry.approvalAnswer(v)
      )
    ).toStrictEqual([
      { answer: true, remember: false },
      { answer: false, remember: false },
      { answer: true, remember: true },
      { answer: false, remember: true },
      { answer: true, remember: true },
      { answer: false, remember: true },
      { answer: true, remember: false },
      { answer: true, remember: false },
      { answer: false, remember: false },
      undefined,
      undefined
    ])
  })
})
