import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import { RunLost } from "../../src/services/Refusals.ts"

describe("Refusals", () => {
  it("RunLost says what the lost run was asked: an answer (when nothing says), a stop, a message", () => {
    expect(new RunLost({ id: "17700000000" }).message).toBe(
      "The run of 17700000000 stopped before it took the answer; nothing was recorded."
    )
    // A stop that timed out did not stop the turn: saying nothing was recorded, of an answer, misled.
    expect(new RunLost({ id: "17700000000", during: "stop" }).message).toBe(
      "The turn of 17700000000 may not have been stopped: the process that runs it could not be reached or did not answer. Ask again."
    )
    expect(new RunLost({ id: "17700000000", during: "message" }).message).toContain("may not be queued")
  })

  it("RunLost's body keeps its old shape when nothing says what was asked, and carries `during` when something does", () => {
    const encode = Schema.encodeSync(RunLost)
    expect(encode(new RunLost({ id: "1" }))).toStrictEqual({ _tag: "RunLost", id: "1" })
    expect(encode(new RunLost({ id: "1", during: "stop" }))).toStrictEqual({ _tag: "RunLost", id: "1", during: "stop" })
    expect(() => Schema.decodeUnknownSync(RunLost)({ _tag: "RunLost", id: "1", during: "lunch" })).toThrow()
  })
})
