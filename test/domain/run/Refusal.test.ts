import { describe, expect, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as Refusal from "../../../src/domain/run/Refusal.ts"

describe("Refusal", () => {
  it("a lock's refusal goes as one JSON line and comes back, with or without its holder", () => {
    const held = Refusal.ConversationLocked.make({ holder: 4242 })
    expect(Refusal.encode(held)).toBe('{"_tag":"ConversationLocked","holder":4242}\n')
    expect(Refusal.decode(Refusal.encode(held))).toStrictEqual(Option.some(held))
    const unknown = Refusal.ConversationLocked.make({})
    expect(Refusal.decode(Refusal.encode(unknown))).toStrictEqual(Option.some(unknown))
  })

  it("anything else is no refusal: nothing written, prose, another tag, a wrong field", () => {
    for (const text of [
      "",
      "\n",
      "Conversation 1 is being written by another parley process (pid 7).",
      '{"_tag":"Other"}',
      '{"_tag":"ConversationLocked","holder":"7"}'
    ])
      expect(Refusal.decode(text)).toStrictEqual(Option.none())
  })
})
