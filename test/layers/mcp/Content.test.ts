// MCP servers (docs/mcp.md): an MCP tool result as parley's tool response.
import { describe, expect, it } from "@effect/vitest"
import { toolResponse } from "../../../src/layers/mcp/Content.ts"

describe("Content.toolResponse", () => {
  it("joins text; summarises images, audio, links and resources in one line each; isError → is_error", () => {
    expect(
      toolResponse({
        content: [
          { type: "text", text: "Here:" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          { type: "resource_link", uri: "file:///a.txt", name: "a.txt", description: "The notes" },
          { type: "resource", resource: { uri: "mem://t", mimeType: "text/plain", text: "inline text" } },
          { type: "resource", resource: { uri: "mem://b", blob: "AAAAAA==" } },
          { type: "hologram" }
        ],
        isError: true
      })
    ).toStrictEqual({
      content:
        'Here:\n[image: image/png, 8 bytes]\n[audio: audio/wav, 3 bytes]\n[resource link: a.txt file:///a.txt — The notes]\n[resource mem://t (text/plain)]\ninline text\n[resource mem://b: binary, 4 bytes]\n["hologram" content]',
      is_error: true
    })
  })

  it("structured content without blocks, and the pre-2025 toolResult, become JSON text", () => {
    expect(toolResponse({ content: [], structuredContent: { sum: 5 } })).toStrictEqual({
      content: '{"sum":5}',
      is_error: false
    })
    expect(toolResponse({ toolResult: { ok: true } })).toStrictEqual({ content: '{"ok":true}', is_error: false })
    expect(toolResponse({ content: [] })).toStrictEqual({ content: "", is_error: false })
  })
})
