/**
 * What a provider is told about a tool: its name, a description and the
 * JSON Schema of its arguments. Providers see nothing else (no run mode, no
 * source kind, no questions).
 *
 * @example
 * ```ts
 * import { ToolDefinition } from "parley/domain/tool/ToolDefinition"
 * const def: ToolDefinition = {
 *   name: "read_file",
 *   description: "Read a text file.",
 *   parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
 * }
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * What a provider is told about a tool: its name, a description and the
 * JSON Schema of its arguments. Providers see nothing else (no run mode, no
 * source kind, no questions).
 *
 * @example
 * ```ts
 * import { ToolDefinition } from "parley/domain/tool/ToolDefinition"
 * const def: ToolDefinition = {
 *   name: "read_file",
 *   description: "Read a text file.",
 *   parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] }
 * }
 * ```
 */
export const ToolDefinition = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  /** A JSON Schema object describing the `arguments` object. */
  parameters: Schema.JsonObject
})
export type ToolDefinition = typeof ToolDefinition.Type

/** The schema of a tool that takes no arguments. */
export const noParameters: ToolDefinition["parameters"] = { type: "object", properties: {} }

/**
 * How the coordinator may run a tool: ask first, edit the arguments first
 * (JP's `edit`: the person's editor opens on them; otherwise as `ask`), run
 * unattended, or skip it.
 */
export const RunMode = Schema.Literals(["ask", "edit", "unattended", "skip"])
export type RunMode = typeof RunMode.Type

/**
 * What happens to a tool's result before the model sees it (JP's
 * `result`): delivered as is, reviewed by a person first (`ask`: deliver,
 * skip or edit it; `edit`: the editor opens on it), or never delivered.
 */
export const ResultMode = Schema.Literals(["unattended", "ask", "edit", "skip"])
export type ResultMode = typeof ResultMode.Type

/**
 * Where a tool's implementation lives (`source` in config; not an inquiry
 * source): parley's own, a command of the user's, or an MCP server's tool
 * (`source = "mcp.NAME"`). The permission prompt names it.
 */
export const ToolKind = Schema.Literals(["local", "builtin", "mcp"])
export type ToolKind = typeof ToolKind.Type
