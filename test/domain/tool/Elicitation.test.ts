// MCP servers (docs/mcp.md): an MCP elicitation read as questions, answers checked against the
// field's schema. The form is server-everything's `trigger-elicitation-request`
// (2026.8.31), copied so the mapping is pinned to what a real server sends.
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Elicitation from "../../../src/domain/tool/Elicitation.ts"
import { toInquiryQuestion } from "../../../src/domain/tool/Question.ts"

const everythingForm = {
  message: "Please provide inputs for the following fields:",
  requestedSchema: {
    type: "object",
    properties: {
      name: { title: "String", type: "string", description: "Your full, legal name" },
      check: { title: "Boolean", type: "boolean", description: "Agree to the terms and conditions" },
      firstLine: {
        title: "String with default",
        type: "string",
        description: "Favorite first line of a story",
        default: "It was a dark and stormy night."
      },
      email: {
        title: "String with email format",
        type: "string",
        format: "email",
        description: "Your email address (will be verified, and never shared with anyone else)"
      },
      homepage: {
        type: "string",
        format: "uri",
        title: "String with uri format",
        description: "Portfolio / personal website"
      },
      birthdate: {
        title: "String with date format",
        type: "string",
        format: "date",
        description: "Your date of birth"
      },
      integer: {
        title: "Integer",
        type: "integer",
        description: "Your favorite integer",
        minimum: 1,
        maximum: 100,
        default: 42
      },
      number: {
        title: "Number in range 1-1000",
        type: "number",
        description: "Favorite number",
        minimum: 0,
        maximum: 1000,
        default: 3.14
      },
      untitledSingleSelectEnum: {
        type: "string",
        title: "Untitled Single Select Enum",
        description: "Choose your favorite friend",
        enum: ["Monica", "Rachel", "Joey"],
        default: "Monica"
      },
      untitledMultipleSelectEnum: {
        type: "array",
        title: "Untitled Multiple Select Enum",
        description: "Choose your favorite instruments",
        minItems: 1,
        maxItems: 3,
        items: { type: "string", enum: ["Guitar", "Piano", "Violin", "Drums", "Bass"] },
        default: ["Guitar"]
      },
      titledSingleSelectEnum: {
        type: "string",
        title: "Titled Single Select Enum",
        description: "Choose your favorite hero",
        oneOf: [
          { const: "hero-1", title: "Superman" },
          { const: "hero-2", title: "Green Lantern" }
        ],
        default: "hero-1"
      },
      titledMultipleSelectEnum: {
        type: "array",
        title: "Titled Multiple Select Enum",
        description: "Choose your favorite types of fish",
        minItems: 1,
        maxItems: 3,
        items: {
          anyOf: [
            { const: "fish-1", title: "Tuna" },
            { const: "fish-2", title: "Salmon" }
          ]
        },
        default: ["fish-1"]
      },
      legacyTitledEnum: {
        type: "string",
        title: "Legacy Titled Single Select Enum",
        description: "Choose your favorite type of pet",
        enum: ["pet-1", "pet-2"],
        enumNames: ["Cats", "Dogs"],
        default: "pet-1"
      }
    },
    required: ["name"]
  }
}

const form = (params: unknown = everythingForm): Elicitation.Form => {
  const r = Elicitation.parse(params)
  if (Result.isFailure(r)) throw new Error(r.failure)
  if (r.success._tag !== "Form") throw new Error("not a form")
  return r.success
}
const field = (name: string) => form().fields.find((f) => f.name === name)!
const set = (value: unknown) => Result.succeed(Elicitation.Value.Set({ value: value as never }))

describe("Elicitation.parse and the questions", () => {
  it("keeps schema order and maps each field to one question with the field name as id", () => {
    const f = form()
    expect(f.fields.map((x) => x.name)).toStrictEqual(Object.keys(everythingForm.requestedSchema.properties))
    expect(f.fields.map((x) => toInquiryQuestion(Elicitation.fieldQuestion(x)))).toStrictEqual([
      { text: "String: Your full, legal name", answer_type: { type: "text" } },
      { text: "Boolean: Agree to the terms and conditions", answer_type: { type: "boolean" } },
      {
        text: "String with default: Favorite first line of a story (optional: leave empty to skip)",
        answer_type: { type: "text" },
        default: "It was a dark and stormy night."
      },
      {
        text: "String with email format: Your email address (will be verified, and never shared with anyone else) (an email address; optional: leave empty to skip)",
        answer_type: { type: "text" }
      },
      {
        text: "String with uri format: Portfolio / personal website (a URI; optional: leave empty to skip)",
        answer_type: { type: "text" }
      },
      {
        text: "String with date format: Your date of birth (a date, YYYY-MM-DD; optional: leave empty to skip)",
        answer_type: { type: "text" }
      },
      {
        text: "Integer: Your favorite integer (a whole number from 1 to 100; optional: leave empty to skip)",
        answer_type: { type: "text" },
        default: "42"
      },
      {
        text: "Number in range 1-1000: Favorite number (a number from 0 to 1000; optional: leave empty to skip)",
        answer_type: { type: "text" },
        default: "3.14"
      },
      {
        text: "Untitled Single Select Enum: Choose your favorite friend",
        answer_type: { type: "select", options: [{ value: "Monica" }, { value: "Rachel" }, { value: "Joey" }] },
        default: "Monica"
      },
      {
        text: "Untitled Multiple Select Enum: Choose your favorite instruments (one or more of: Guitar, Piano, Violin, Drums, Bass; separate them with commas; from 1 to 3 items; optional: leave empty to skip)",
        answer_type: { type: "text" },
        default: "Guitar"
      },
      {
        text: "Titled Single Select Enum: Choose your favorite hero (hero-1 = Superman, hero-2 = Green Lantern)",
        answer_type: { type: "select", options: [{ value: "hero-1" }, { value: "hero-2" }] },
        default: "hero-1"
      },
      {
        text: "Titled Multiple Select Enum: Choose your favorite types of fish (one or more of: fish-1 = Tuna, fish-2 = Salmon; separate them with commas; from 1 to 3 items; optional: leave empty to skip)",
        answer_type: { type: "text" },
        default: "fish-1"
      },
      {
        text: "Legacy Titled Single Select Enum: Choose your favorite type of pet (pet-1 = Cats, pet-2 = Dogs)",
        answer_type: { type: "select", options: [{ value: "pet-1" }, { value: "pet-2" }] },
        default: "pet-1"
      }
    ])
  })

  it("asks first whether to fill the form in, naming the server; no declines", () => {
    const q = Elicitation.formQuestion("everything", form())
    expect(q.id).toBe("elicitation")
    expect(toInquiryQuestion(q)).toStrictEqual({
      text: 'MCP server "everything" asks: Please provide inputs for the following fields:\nFill in its form (13 fields)? No declines it.',
      answer_type: { type: "boolean" },
      default: true
    })
  })

  it("the form question's id never collides with a field", () => {
    const f = form({
      message: "",
      requestedSchema: {
        type: "object",
        properties: { elicitation: { type: "boolean" }, elicitation_: { type: "boolean" } }
      }
    })
    expect(Elicitation.formQuestionId(f)).toBe("elicitation__")
    expect(Elicitation.formQuestion("s", f).text).toBe(
      'MCP server "s" asks.\nFill in its form (2 fields)? No declines it.'
    )
  })

  it("a rejected answer is asked again with the reason on the line before", () => {
    expect(
      Elicitation.fieldQuestion(field("integer"), '"500" is rejected: the number must be from 1 to 100').text
    ).toBe(
      'The previous answer was rejected: "500" is rejected: the number must be from 1 to 100.\nInteger: Your favorite integer (a whole number from 1 to 100; optional: leave empty to skip)'
    )
  })

  it("reads URL mode and shows the host", () => {
    const r = Elicitation.parse({
      mode: "url",
      message: "Sign in.",
      url: "https://auth.example.com/x?y=1",
      elicitationId: "e1"
    })
    expect(r).toStrictEqual(
      Result.succeed(
        Elicitation.Request.Url({ message: "Sign in.", url: "https://auth.example.com/x?y=1", elicitationId: "e1" })
      )
    )
    if (Result.isFailure(r) || r.success._tag !== "Url") throw new Error("not url")
    expect(toInquiryQuestion(Elicitation.urlQuestion("remote", r.success))).toStrictEqual({
      text: 'MCP server "remote" asks you to open a page on auth.example.com: Sign in.\n  https://auth.example.com/x?y=1\nDone there? No declines.',
      answer_type: { type: "boolean" },
      exclusive: true
    })
  })

  it("refuses what cannot be asked: nested objects, ids with '.', no properties", () => {
    expect(
      Elicitation.parse({ message: "", requestedSchema: { type: "object", properties: { a: { type: "object" } } } })
    ).toStrictEqual(Result.fail('field "a": parley cannot ask for a value of "object" ({"type":"object"})'))
    expect(
      Elicitation.parse({ message: "", requestedSchema: { type: "object", properties: { "a.b": { type: "string" } } } })
    ).toStrictEqual(Result.fail("field \"a.b\": question ids must not contain '.'"))
    expect(Elicitation.parse({ message: "" })).toStrictEqual(Result.fail("requestedSchema has no properties"))
  })
})

describe("Elicitation.check", () => {
  it("text fields: required, formats, blank optional fields", () => {
    expect(Elicitation.check(field("name"), "Ada")).toStrictEqual(set("Ada"))
    expect(Elicitation.check(field("name"), "")).toStrictEqual(Result.fail("an answer is required"))
    expect(Elicitation.check(field("name"), 5)).toStrictEqual(Result.fail("5 is not text"))
    expect(Elicitation.check(field("email"), "")).toStrictEqual(Result.succeed(Elicitation.Value.Blank()))
    expect(Elicitation.check(field("email"), "ada@example.com")).toStrictEqual(set("ada@example.com"))
    expect(Elicitation.check(field("email"), "ada")).toStrictEqual(Result.fail('"ada" is not an email address'))
    expect(Elicitation.check(field("homepage"), "https://ada.dev")).toStrictEqual(set("https://ada.dev"))
    expect(Elicitation.check(field("homepage"), "ada.dev")).toStrictEqual(
      Result.fail('"ada.dev" is not a URI (such as https://example.com)')
    )
    expect(Elicitation.check(field("birthdate"), "1815-12-10")).toStrictEqual(set("1815-12-10"))
    expect(Elicitation.check(field("birthdate"), "1815-02-30")).toStrictEqual(
      Result.fail('"1815-02-30" is not a date (YYYY-MM-DD)')
    )
  })

  it("numbers typed as text become numbers, within range", () => {
    expect(Elicitation.check(field("integer"), "42")).toStrictEqual(set(42))
    expect(Elicitation.check(field("integer"), 7)).toStrictEqual(set(7))
    expect(Elicitation.check(field("integer"), "4.5")).toStrictEqual(Result.fail('"4.5" is not a whole number'))
    expect(Elicitation.check(field("integer"), "500")).toStrictEqual(
      Result.fail('"500" is rejected: the number must be from 1 to 100')
    )
    expect(Elicitation.check(field("integer"), "forty")).toStrictEqual(Result.fail('"forty" is not a number'))
    expect(Elicitation.check(field("number"), " 3.14 ")).toStrictEqual(set(3.14))
    expect(Elicitation.check(field("number"), "")).toStrictEqual(Result.succeed(Elicitation.Value.Blank()))
  })

  it("selects take a value or a title; multi-selects a comma list or a JSON array", () => {
    expect(Elicitation.check(field("titledSingleSelectEnum"), "hero-2")).toStrictEqual(set("hero-2"))
    expect(Elicitation.check(field("titledSingleSelectEnum"), "superman")).toStrictEqual(set("hero-1"))
    expect(Elicitation.check(field("untitledSingleSelectEnum"), "Ross")).toStrictEqual(
      Result.fail('"Ross" is not one of: Monica, Rachel, Joey')
    )
    expect(Elicitation.check(field("untitledMultipleSelectEnum"), "Piano, Drums,Piano")).toStrictEqual(
      set(["Piano", "Drums"])
    )
    expect(Elicitation.check(field("untitledMultipleSelectEnum"), ["Bass"])).toStrictEqual(set(["Bass"]))
    expect(Elicitation.check(field("titledMultipleSelectEnum"), '["fish-2", "Tuna"]')).toStrictEqual(
      set(["fish-2", "fish-1"])
    )
    expect(Elicitation.check(field("untitledMultipleSelectEnum"), "Guitar, Piano, Violin, Drums")).toStrictEqual(
      Result.fail('"Guitar, Piano, Violin, Drums" is rejected: the number of choices must be from 1 to 3')
    )
    expect(Elicitation.check(field("untitledMultipleSelectEnum"), "Kazoo")).toStrictEqual(
      Result.fail('"Kazoo" is not one of: Guitar, Piano, Violin, Drums, Bass')
    )
  })

  it("booleans take true/false or yes/no", () => {
    expect(Elicitation.check(field("check"), true)).toStrictEqual(set(true))
    expect(Elicitation.check(field("check"), "no")).toStrictEqual(set(false))
    expect(Elicitation.check(field("check"), "maybe")).toStrictEqual(Result.fail('"maybe" is not yes or no'))
  })

  it("content keeps set values in schema order and leaves blanks out", () => {
    const f = form()
    expect(
      Elicitation.content(f, {
        integer: Elicitation.Value.Set({ value: 7 }),
        email: Elicitation.Value.Blank(),
        name: Elicitation.Value.Set({ value: "Ada" })
      })
    ).toStrictEqual({ name: "Ada", integer: 7 })
  })
})

describe("with nobody at the terminal: the URL request and the review as approvals", () => {
  it("the URL approval is the URL question asked each time; it approves the page and the message", () => {
    const request = Elicitation.Request.Url({
      message: "Sign in.",
      url: "https://auth.example.com/x",
      elicitationId: "e1"
    })
    expect(toInquiryQuestion(Elicitation.urlApproval("remote", request))).toStrictEqual({
      text: 'MCP server "remote" asks you to open a page on auth.example.com: Sign in.\n  https://auth.example.com/x\nDone there? No declines.',
      answer_type: { type: "boolean" },
      exclusive: true,
      persistence: "none"
    })
    expect(Elicitation.urlApproves(request)).toStrictEqual({ url: "https://auth.example.com/x", message: "Sign in." })
  })

  it("the review approval is yes/no under the review's id; yes reads as accept, no as decline", () => {
    const f = form({
      message: "Who?",
      requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name" } } }
    })
    const q = Elicitation.reviewApproval("remote", f, { name: Elicitation.Value.Set({ value: "Ada" }) })
    expect(q.id).toBe(Elicitation.reviewQuestionId(f))
    expect(toInquiryQuestion(q)).toStrictEqual({
      text: 'Send the form for MCP server "remote"? Yes sends it, no declines it.\n  Name: Ada',
      answer_type: { type: "boolean" },
      exclusive: true,
      persistence: "none"
    })
    expect([true, false, "accept", "edit", "cancel", "maybe"].map(Elicitation.reviewChoice)).toStrictEqual([
      "accept",
      "decline",
      "accept",
      "edit",
      "cancel",
      undefined
    ])
  })
})
