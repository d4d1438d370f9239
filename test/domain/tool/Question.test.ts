import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { AnswerType } from "../../../src/domain/tool/AnswerType.ts"
import { InquiryQuestion } from "../../../src/domain/event/InquiryQuestion.ts"
import {
  fromInquiryQuestion,
  isQuestionId,
  Question,
  QuestionId,
  toInquiryQuestion
} from "../../../src/domain/tool/Question.ts"

const decodeAnswerType = Schema.decodeUnknownSync(AnswerType)
const encodeAnswerType = Schema.encodeSync(AnswerType)

describe("QuestionId", () => {
  it("accepts plain ids and rejects empty ids and ids with '.'", () => {
    expect(isQuestionId("overwrite")).toBe(true)
    expect(isQuestionId("apply_changes-2")).toBe(true)
    expect(isQuestionId("")).toBe(false)
    expect(isQuestionId("a.b")).toBe(false)
    expect(() => Schema.decodeUnknownSync(QuestionId)("a.b")).toThrow(
      `Invalid question id "a.b": question ids must not contain '.'`
    )
    expect(() => Schema.decodeUnknownSync(QuestionId)("")).toThrow("question ids must not be empty")
  })

  it("the Question constructor validates the id", () => {
    expect(() => new Question({ id: "x.y" as QuestionId, text: "?", answer_type: AnswerType.boolean })).toThrow()
    expect(() => new Question({ id: "" as QuestionId, text: "?", answer_type: AnswerType.boolean })).toThrow()
    expect(new Question({ id: "ok" as QuestionId, text: "?", answer_type: AnswerType.boolean }).id).toBe("ok")
  })
})

describe("AnswerType", () => {
  it("decodes the current tagged shapes unchanged", () => {
    for (const t of [
      { type: "boolean" },
      { type: "text" },
      { type: "secret" },
      { type: "select", options: ["a", "b"] }
    ]) {
      expect(decodeAnswerType(t)).toStrictEqual(t)
    }
  })

  it("reads JP's legacy Rust-style shapes and writes them back in the current shape", () => {
    expect(decodeAnswerType("Boolean")).toStrictEqual({ type: "boolean" })
    expect(decodeAnswerType("Text")).toStrictEqual({ type: "text" })
    expect(decodeAnswerType({ Select: { options: ["x", "y"] } })).toStrictEqual({ type: "select", options: ["x", "y"] })
    expect(encodeAnswerType(decodeAnswerType("Boolean"))).toStrictEqual({ type: "boolean" })
    expect(encodeAnswerType(decodeAnswerType({ Select: { options: ["x"] } }))).toStrictEqual({
      type: "select",
      options: ["x"]
    })
  })

  it("rejects unknown shapes", () => {
    expect(() => decodeAnswerType({ type: "number" })).toThrow()
    expect(() => decodeAnswerType("Secret")).toThrow()
    expect(() => decodeAnswerType({ Select: {} })).toThrow()
    expect(() => decodeAnswerType({ type: "select" })).toThrow()
  })
})

describe("toInquiryQuestion", () => {
  it("keeps text, answer type and default; drops id; RFD 083's fields only when set", () => {
    const q = new Question({
      id: "overwrite" as QuestionId,
      text: "Overwrite a.txt?",
      answer_type: AnswerType.boolean,
      default: false
    })
    const persisted = toInquiryQuestion(q)
    expect(persisted).toStrictEqual({ text: "Overwrite a.txt?", answer_type: { type: "boolean" }, default: false })
    // It is a valid persisted question, byte-compatible with JP's shape.
    expect(JSON.stringify(Schema.encodeSync(InquiryQuestion)(persisted))).toBe(
      `{"text":"Overwrite a.txt?","answer_type":{"type":"boolean"},"default":false}`
    )
    // Defaults are left out: exclusive false and persistence turn write nothing.
    expect(
      toInquiryQuestion(
        new Question({
          id: "x" as QuestionId,
          text: "T",
          answer_type: AnswerType.text,
          exclusive: false,
          persistence: "turn"
        })
      )
    ).toStrictEqual({ text: "T", answer_type: { type: "text" } })
    const full = toInquiryQuestion(
      new Question({
        id: "answer" as QuestionId,
        text: "Proceed?",
        context: "It rewrites config.",
        answer_type: AnswerType.boolean,
        default: true,
        exclusive: true,
        persistence: "none"
      })
    )
    expect(JSON.stringify(full)).toBe(
      `{"text":"Proceed?","answer_type":{"type":"boolean"},"default":true,"context":"It rewrites config.","exclusive":true,"persistence":"none"}`
    )
    expect({ ...fromInquiryQuestion("answer", full) }).toStrictEqual({
      id: "answer",
      text: "Proceed?",
      answer_type: { type: "boolean" },
      default: true,
      context: "It rewrites config.",
      exclusive: true,
      persistence: "none"
    })
  })

  it("turns select strings into options without description", () => {
    const q = new Question({
      id: "color" as QuestionId,
      text: "Color?",
      answer_type: AnswerType.select(["red", "green"])
    })
    expect(toInquiryQuestion(q)).toStrictEqual({
      text: "Color?",
      answer_type: { type: "select", options: [{ value: "red" }, { value: "green" }] }
    })
  })

  it("omits an absent default and keeps a secret's type", () => {
    const q = new Question({ id: "token" as QuestionId, text: "Token?", answer_type: AnswerType.secret })
    expect(toInquiryQuestion(q)).toStrictEqual({ text: "Token?", answer_type: { type: "secret" } })
    expect("default" in toInquiryQuestion(q)).toBe(false)
  })
})
