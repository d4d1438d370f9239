// Where event ids draw their randomness (issue 50, start-up): the CLI reads /dev/urandom instead
// of loading Node's Web Crypto stack; a source that fails hands over to Web Crypto.
import { describe, expect, it } from "@effect/vitest"
import * as EventId from "../../../src/domain/storage/EventId.ts"
import * as Urandom from "../../../src/layers/file/Urandom.ts"

/** Enough draws to use up the 4 KiB pool at least once (7 bytes an id, at most). */
const drain = (): string => {
  let id = ""
  for (let i = 0; i < 1300; i++) id = EventId.random()
  return id
}

describe("EventId's random source", () => {
  it("draws from the installed source once the pool is refilled", () => {
    EventId.useRandomSource((buffer) => buffer.fill(37)) // 37 % 36 = 1
    expect(drain()).toBe("1111111")
  })

  it("goes back to Web Crypto when the source throws", () => {
    EventId.useRandomSource(() => {
      throw new Error("no /dev/urandom here")
    })
    drain() // what was left of the constant pool, then Web Crypto's
    const ids = new Set(Array.from({ length: 500 }, () => EventId.random()))
    expect(ids.size).toBeGreaterThan(490)
    for (const id of ids) expect(id).toMatch(/^[0-9a-z]{7}$/)
  })

  it("reads /dev/urandom whole", () => {
    const buffer = new Uint8Array(4096)
    Urandom.fill(buffer)
    expect(new Set(buffer).size).toBeGreaterThan(200)
    EventId.useRandomSource(Urandom.fill)
    drain()
    expect(EventId.random()).toMatch(/^[0-9a-z]{7}$/)
  })
})
