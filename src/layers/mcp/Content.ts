/**
 * An MCP tool result as parley's tool response (docs/mcp.md): text content
 * becomes the response text, `isError` becomes `is_error`, and every other
 * kind of content is summarised in one bracketed line (the model is told
 * what came back; bytes are not pasted into the conversation).
 *
 * @example
 * ```ts
 * import { toolResponse } from "parley/layers/mcp/Content"
 * toolResponse({ content: [{ type: "text", text: "3" }, { type: "image", data: "AAAA", mimeType: "image/png" }] })
 * // { content: "3\n[image: image/png, 3 bytes]", is_error: false }
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Predicate from "effect/Predicate"
import type { ToolResponse } from "../../services/Executor.ts"

/** The result shape parley reads (a subset of the SDK's `CallToolResult`, kept loose: servers vary). */
export interface ToolResult {
  readonly content?: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly structuredContent?: unknown
  readonly isError?: boolean | undefined
  /** The pre-2025 result form some servers still send. */
  readonly toolResult?: unknown
}

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/** Decoded size of base64 data. */
const bytes = (base64: unknown): number => {
  const s = str(base64) ?? ""
  const padding = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0
  return Math.max(0, Math.floor((s.length * 3) / 4) - padding)
}

const describeResource = (resource: Readonly<Record<string, unknown>>): string => {
  const uri = str(resource["uri"]) ?? "?"
  const mime = str(resource["mimeType"])
  const text = str(resource["text"])
  if (text !== undefined) return `[resource ${uri}${mime === undefined ? "" : ` (${mime})`}]\n${text}`
  return `[resource ${uri}: ${mime ?? "binary"}, ${bytes(resource["blob"])} bytes]`
}

/** One content block as text. */
export const blockText = (block: Readonly<Record<string, unknown>>): string => {
  switch (block["type"]) {
    case "text":
      return str(block["text"]) ?? ""
    case "image":
    case "audio":
      return `[${block["type"]}: ${str(block["mimeType"]) ?? "unknown type"}, ${bytes(block["data"])} bytes]`
    case "resource_link": {
      const description = str(block["description"])
      return `[resource link: ${str(block["name"]) ?? "?"} ${str(block["uri"]) ?? "?"}${description === undefined ? "" : ` — ${description}`}]`
    }
    case "resource": {
      const resource = block["resource"]
      return Predicate.isObject(resource) ? describeResource(resource) : "[resource]"
    }
    default:
      return `[${JSON.stringify(block["type"] ?? "unknown")} content]`
  }
}

/** The response parley records and sends to the model. */
export const toolResponse = (result: ToolResult): ToolResponse => {
  const blocks = result.content ?? []
  let content = blocks.map(blockText).join("\n")
  if (blocks.length === 0 && result.structuredContent !== undefined) content = JSON.stringify(result.structuredContent)
  if (blocks.length === 0 && result.structuredContent === undefined && result.toolResult !== undefined) {
    content = typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult)
  }
  return { content, is_error: result.isError === true }
}
