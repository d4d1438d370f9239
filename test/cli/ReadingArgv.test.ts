// Start-up (docs/decisions.md#fast-start): which command lines the reading commands' fast path
// takes, and that it declines everything effect/cli must answer itself.
import { describe, expect, it } from "@effect/vitest"
import * as ConversationId from "../../src/domain/storage/ConversationId.ts"
import { parse } from "../../src/cli/ReadingArgv.ts"

const id = ConversationId.parse("17738399468")!

describe("ReadingArgv.parse", () => {
  it("ls and print with every flag, --storage before or after, both value forms", () => {
    expect(parse(["conversation", "ls"])).toStrictEqual({
      _tag: "Ls",
      storage: undefined,
      archived: false,
      format: "text"
    })
    expect(parse(["--storage", "s", "conversation", "ls", "--archived", "--format", "json"])).toStrictEqual({
      _tag: "Ls",
      storage: "s",
      archived: true,
      format: "json"
    })
    expect(parse(["conversation", "ls", "--format=json", "--storage=t"])).toStrictEqual({
      _tag: "Ls",
      storage: "t",
      archived: false,
      format: "json"
    })
    expect(parse(["conversation", "print", "jp-c17738399468"])).toStrictEqual({
      _tag: "Print",
      storage: undefined,
      id,
      format: "markdown",
      output: undefined
    })
    expect(
      parse(["--storage=s", "conversation", "print", "--format", "html", "17738399468", "--output", "p.html"])
    ).toStrictEqual({
      _tag: "Print",
      storage: "s",
      id,
      format: "html",
      output: "p.html"
    })
  })

  it("declines what effect/cli must answer: help, unknown or repeated flags, missing values, bad values, bad ids, other commands", () => {
    for (const argv of [
      [],
      ["conversation"],
      ["conversation", "ls", "--help"],
      ["conversation", "ls", "-h"],
      ["conversation", "ls", "--neww"],
      ["conversation", "ls", "--archived", "--archived"],
      ["conversation", "ls", "--format"],
      ["conversation", "ls", "--format", "yaml"],
      ["conversation", "ls", "extra"],
      ["--storage", "a", "conversation", "ls", "--storage", "b"],
      ["--storage"],
      ["--storage", "conversation", "ls"],
      ["conversation", "print"],
      ["conversation", "print", "nope"],
      ["conversation", "print", "1", "2"],
      ["conversation", "print", "17738399468", "--archived"],
      ["conversation", "print", "17738399468", "--output", "--format"],
      ["conversation", "print", "17738399468", "--", "x"],
      ["conversation", "check"],
      ["query", "conversation", "ls"],
      ["--version"]
    ])
      expect(parse(argv), argv.join(" ")).toBeUndefined()
  })
})
