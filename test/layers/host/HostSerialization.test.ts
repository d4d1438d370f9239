/**
 * The host protocol's framing (docs/decisions.md#json-read-around-a-v8-bug): newline-delimited JSON whose
 * lines are read with `JsonText.parse`, so an escaped object key in a run
 * event (metadata, arguments, an answer) reaches the other end as it was
 * sent, whatever V8 parsed before.
 */
import { describe, expect, it } from "@effect/vitest"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as HostSerialization from "../../../src/layers/host/HostSerialization.ts"

describe("HostSerialization.ndjson", () => {
  it("reads lines split anywhere, across chunks and inside a UTF-8 character, with CRLF and blank lines", () => {
    const messages = [
      { _tag: "Chunk", values: [{ "\t": "é😀", "\\t": 1, '"': [] }] },
      { _tag: "Exit", n: 2 }
    ]
    const text = "\r\n" + messages.map((m) => JSON.stringify(m)).join("\r\n\n") + "\n"
    const bytes = new TextEncoder().encode(text)
    for (let cut = 0; cut <= bytes.length; cut++) {
      const parser = HostSerialization.ndjson.makeUnsafe()
      const read = [...parser.decode(bytes.subarray(0, cut)), ...parser.decode(bytes.subarray(cut))]
      expect(read, `cut at byte ${cut}`).toStrictEqual(messages)
    }
  })

  it("reads escaped keys right after texts that make V8 misread them", () => {
    JSON.parse('{"h":[],"\\\\\\\\":0}')
    const parser = HostSerialization.ndjson.makeUnsafe()
    expect(parser.decode('{"h":1,"\\\\\\"":2}\n')).toStrictEqual([{ h: 1, '\\"': 2 }])
    JSON.parse('{"\\\\\\\\":0}')
    expect(Object.keys((parser.decode('{"\\\\t":2}\n') as Array<object>)[0]!)).toStrictEqual(["\\t"])
  })

  it("writes what Effect's ndjson writes", () => {
    const ours = HostSerialization.ndjson.makeUnsafe()
    const effects = RpcSerialization.ndjson.makeUnsafe()
    for (const m of [{ a: "\t" }, [{ b: 1 }, { c: [] }], []]) expect(ours.encode(m)).toStrictEqual(effects.encode(m))
    expect(HostSerialization.ndjson.contentType).toBe("application/x-ndjson")
    expect(HostSerialization.ndjson.includesFraming).toBe(true)
  })

  it("a line that is not JSON fails with NdjsonDecodeError and drops what was buffered; the next line reads", () => {
    const parser = HostSerialization.ndjson.makeUnsafe()
    expect(() => parser.decode('{"a":1}\n{"\\t": oops}\n{"b"')).toThrow(RpcSerialization.NdjsonDecodeError)
    expect(parser.decode('{"c":3}\n')).toStrictEqual([{ c: 3 }])
  })

  it("a line longer than 16 MiB fails with MaxBufferSizeExceeded", () => {
    const parser = HostSerialization.ndjson.makeUnsafe()
    expect(() => parser.decode(`"${"x".repeat(16 * 1024 * 1024)}`)).toThrow(RpcSerialization.MaxBufferSizeExceeded)
    expect(parser.decode("[]\n")).toStrictEqual([[]])
  })
})
