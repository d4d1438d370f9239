import { assert, describe, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { InquiryAnswerType } from "../../../src/domain/event/InquiryAnswerType.ts"
import * as InquirySchema from "../../../src/domain/tool/InquirySchema.ts"

const extract = (data: unknown, type: InquirySchema.AnswerableType) => {
  const r = InquirySchema.extractAnswer(data as never, type)
  return Result.isSuccess(r) ? { ok: r.success } : { error: r.failure }
}

describe("InquirySchema", () => {
  it("create_inquiry_schema_boolean / _select / _text: JP's schemas, byte for byte", () => {
    assert.strictEqual(
      JSON.stringify(InquirySchema.schemaFor(InquiryAnswerType.boolean)),
      '{"type":"object","properties":{"answer":{"type":"boolean"}},"required":["answer"],"additionalProperties":false}'
    )
    assert.strictEqual(
      JSON.stringify(InquirySchema.schemaFor(InquiryAnswerType.select(["A", "B", "C"]))),
      '{"type":"object","properties":{"answer":{"type":"string","enum":["A","B","C"]}},"required":["answer"],"additionalProperties":false}'
    )
    assert.strictEqual(
      JSON.stringify(InquirySchema.schemaFor(InquiryAnswerType.text)),
      '{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":false}'
    )
  })

  it("create_inquiry_schema_stable_across_ids: identical output each time (ids are tested through the backend)", () => {
    const a = JSON.stringify(
      InquirySchema.schemaFor(InquiryAnswerType.select([{ value: "y", description: "Yes" }, "n"]))
    )
    const b = JSON.stringify(
      InquirySchema.schemaFor(InquiryAnswerType.select(["y", { value: "n", description: "No" }]))
    )
    assert.strictEqual(a, b, "descriptions do not change the schema")
    assert.strictEqual(
      JSON.stringify(InquirySchema.schemaFor(InquiryAnswerType.boolean)),
      JSON.stringify(InquirySchema.schemaFor(InquiryAnswerType.boolean))
    )
  })

  it("select options that are not all strings get an untyped enum", () => {
    assert.deepStrictEqual(InquirySchema.answerSchemaFor(InquiryAnswerType.select([{ value: 1 }, { value: "two" }])), {
      enum: [1, "two"]
    })
  })

  it("secret questions are not answerable", () => {
    assert.isFalse(InquirySchema.isAnswerable(InquiryAnswerType.secret))
    assert.isTrue(InquirySchema.isAnswerable(InquiryAnswerType.text))
  })

  it("promptFor is JP's text plus the inquiry id line", () => {
    assert.strictEqual(
      InquirySchema.promptFor("write_note", "Overwrite a.txt?", "call_1.overwrite.1"),
      "The tool `write_note` requires additional input.\n\nOverwrite a.txt?\n\nProvide your answer based on the conversation context.\n\nInquiry ID: call_1.overwrite.1"
    )
    assert.strictEqual(
      InquirySchema.pausedToolContent({ text: "Overwrite a.txt?", answer_type: InquiryAnswerType.boolean }),
      "Tool paused: Overwrite a.txt?"
    )
  })

  it("extractAnswer validates the answer against the answer type", () => {
    const select = InquiryAnswerType.select(["A", "B"])
    assert.deepStrictEqual(extract({ answer: true }, InquiryAnswerType.boolean), { ok: true })
    assert.deepStrictEqual(extract({ answer: false }, InquiryAnswerType.boolean), { ok: false })
    assert.deepStrictEqual(extract({ answer: "B" }, select), { ok: "B" })
    assert.deepStrictEqual(extract({ answer: "Because reasons" }, InquiryAnswerType.text), { ok: "Because reasons" })
    assert.deepStrictEqual(extract({ answer: 2 }, InquiryAnswerType.select([{ value: 1 }, { value: 2 }])), { ok: 2 })

    assert.deepStrictEqual(extract({ unrelated: true }, InquiryAnswerType.boolean), {
      error: 'no `answer` field in {"unrelated":true}'
    })
    assert.deepStrictEqual(extract({ answer: null }, InquiryAnswerType.text), { error: "the answer is null" })
    assert.deepStrictEqual(extract({ answer: "D" }, select), { error: '"D" is not one of the options "A", "B"' })
    assert.deepStrictEqual(extract({ answer: "yes" }, InquiryAnswerType.boolean), {
      error: 'expected a boolean answer, got "yes"'
    })
    assert.deepStrictEqual(extract({ answer: 42 }, InquiryAnswerType.text), { error: "expected a text answer, got 42" })
    assert.deepStrictEqual(extract([true], InquiryAnswerType.boolean), {
      error: "expected an object with an `answer` field, got [true]"
    })
  })
})
