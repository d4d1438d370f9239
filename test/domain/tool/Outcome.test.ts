import { describe, expect, it } from "@effect/vitest"
import * as Outcome from "../../../src/domain/tool/Outcome.ts"
import { Question } from "../../../src/domain/tool/Question.ts"

const valid = (text: string) => {
  const decoded = Outcome.parseJson(text)
  if (decoded._tag !== "Valid") throw new Error(`expected a valid outcome, got ${JSON.stringify(decoded)}`)
  return decoded.outcome
}

describe("Outcome.parseJson", () => {
  it("reads success and error outcomes", () => {
    expect(valid(`{"type":"success","content":"ok"}`)).toStrictEqual({ type: "success", content: "ok" })
    expect(valid(` {"type":"error","message":"m","trace":["t"],"transient":true}\n`)).toStrictEqual({
      type: "error",
      message: "m",
      trace: ["t"],
      transient: true
    })
  })

  it("defaults a missing or null transient to false and drops a null trace", () => {
    expect(valid(`{"type":"error","message":"m"}`)).toStrictEqual({ type: "error", message: "m", transient: false })
    expect(valid(`{"type":"error","message":"m","trace":null,"transient":null}`)).toStrictEqual({
      type: "error",
      message: "m",
      transient: false
    })
  })

  it("reads needs_input with JP's nulls as absent fields", () => {
    const outcome = valid(
      `{"type":"needs_input","question":{"id":"overwrite","text":"Overwrite?","pre_amble":null,"answer_type":{"type":"boolean"},"default":null}}`
    )
    expect(outcome.type).toBe("needs_input")
    if (outcome.type !== "needs_input") return
    expect(outcome.question).toBeInstanceOf(Question)
    expect({ ...outcome.question }).toStrictEqual({
      id: "overwrite",
      text: "Overwrite?",
      answer_type: { type: "boolean" }
    })
  })

  it("reads legacy answer types inside a question", () => {
    const outcome = valid(
      `{"type":"needs_input","question":{"id":"c","text":"Color?","answer_type":{"Select":{"options":["red"]}},"default":"red","pre_amble":"pick"}}`
    )
    if (outcome.type !== "needs_input") throw new Error("not needs_input")
    expect({ ...outcome.question }).toStrictEqual({
      id: "c",
      text: "Color?",
      context: "pick",
      answer_type: { type: "select", options: ["red"] },
      default: "red"
    })
  })

  it("reports an invalid question id separately from 'not an outcome'", () => {
    expect(
      Outcome.parseJson(`{"type":"needs_input","question":{"id":"a.b","text":"?","answer_type":"Boolean"}}`)
    ).toStrictEqual({
      _tag: "InvalidQuestionId",
      id: "a.b",
      problem: "question ids must not contain '.'"
    })
    expect(
      Outcome.parseJson(`{"type":"needs_input","question":{"id":"","text":"?","answer_type":"Boolean"}}`)
    ).toStrictEqual({
      _tag: "InvalidQuestionId",
      id: "",
      problem: "question ids must not be empty"
    })
  })

  it("anything else is not an outcome", () => {
    for (const text of [
      "hello",
      "",
      `{"type":"success"}`,
      `{"type":"done","content":"x"}`,
      `[1]`,
      `{"type":"success","content":1}`
    ]) {
      expect(Outcome.parseJson(text)._tag).toBe("NotAnOutcome")
    }
  })
})
