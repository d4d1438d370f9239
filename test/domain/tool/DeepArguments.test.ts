/**
 * Arguments nested too deeply (docs/decisions.md#deep-tool-arguments): the fold of a reply
 * replaces them by a marker, the codec reads and writes any depth, and the
 * Markdown print names what it cannot show.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import type { JsonObject } from "effect/Schema"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import { EntryTooDeep, renderJson, renderMarkdown } from "../../../src/domain/render/Render.ts"
import * as EntryCodec from "../../../src/domain/storage/EntryCodec.ts"
import * as EventsFile from "../../../src/domain/storage/EventsFile.ts"
import * as JsonText from "../../../src/domain/storage/JsonText.ts"
import * as DeepArguments from "../../../src/domain/tool/DeepArguments.ts"
import { ProviderDelta, ReplyBuilder } from "../../../src/domain/model/Reply.ts"

const nested = (depth: number): JsonObject =>
  JSON.parse(`{"x":${"[".repeat(depth - 1)}"leaf"${"]".repeat(depth - 1)}}`) as JsonObject

describe("DeepArguments", () => {
  it("keeps arguments up to 100 levels and replaces deeper ones by a marker saying how deep", () => {
    const ok = nested(100)
    expect(DeepArguments.bounded(ok)).toBe(ok)
    expect(DeepArguments.bounded(nested(101))).toStrictEqual({
      parley_arguments_replaced: "nested 101 levels deep; the limit is 100"
    })
    expect(DeepArguments.replaced(DeepArguments.bounded(nested(10_001)))).toBe(
      "nested 10001 levels deep; the limit is 100"
    )
    expect(DeepArguments.replaced({ parley_arguments_replaced: "x", other: 1 })).toBe(undefined)
    expect(DeepArguments.replaced(ok)).toBe(undefined)
  })

  it("the fold of a reply records the marker for a call 10,000 deep", () => {
    const builder = new ReplyBuilder(() => Timestamp.now())
    builder.add(ProviderDelta.ToolCall({ id: "call_1", name: "read_file", arguments: nested(10_000), metadata: {} }))
    builder.add(ProviderDelta.Finish({ reason: "tool_use" }))
    const [call] = builder.finish().events
    expect(call).toMatchObject({
      type: "tool_call_request",
      arguments: { parley_arguments_replaced: "nested 10000 levels deep; the limit is 100" }
    })
  })
})

describe("the codec and the prints at depth", () => {
  const call = (args: JsonObject) =>
    new ToolCallRequest({
      timestamp: "2026-01-01 00:00:00.0" as Timestamp.Timestamp,
      id: "call_1",
      name: "t",
      arguments: args
    })

  it("encodes and decodes tool-call arguments 100,000 deep (storage base64 on every string leaf)", () => {
    const entry = call(nested(100_000))
    const raw = EntryCodec.encodeEntry(entry)
    const decoded = EntryCodec.decodeEntry(raw) as ToolCallRequest
    let leaf: unknown = decoded.arguments["x"]
    for (let i = 1; i < 100_000; i++) leaf = (leaf as Array<unknown>)[0]
    expect(leaf).toBe("leaf")
    // Written back indented (JP's layout), which grows with the square of the depth: 3,000 levels here.
    const written = EventsFile.render([call(nested(3_000))])
    const back = (EventsFile.parse(written, "events.json")[0] as ToolCallRequest).arguments
    expect(JsonText.stringify(back)).toBe(JsonText.stringify(nested(3_000))) // (a deep toStrictEqual recurses)
  })

  it("Markdown names arguments too deep to show; JSON names the entry it cannot print", () => {
    const entries = [call({ a: 1 }), call(nested(100_000))]
    expect(renderMarkdown({ id: "1", title: "t", entries })).toContain("(nested 100000 levels deep: too deep to show)")
    expect(renderJson(entries)).toStrictEqual(Result.fail(new EntryTooDeep({ entry: 1, depth: 100_001 })))
    expect(JSON.parse(Result.getOrThrow(renderJson([call(nested(300))])))[0].arguments).toStrictEqual(nested(300))
  })
})
