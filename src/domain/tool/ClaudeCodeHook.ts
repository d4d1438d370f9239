/**
 * Claude Code's hook protocol as `parley ask --claude-code-hook` speaks it
 * (docs/ask.md#claude-code): the PreToolUse / PermissionRequest input read
 * from stdin (`session_id`, `cwd`, `hook_event_name`, `tool_name`,
 * `tool_input`, `tool_use_id`), which tools ask (`[ask.claude_code] tools`,
 * `*` a wildcard), and the decision printed on stdout. Pure: reading stdin
 * and asking are the edge's.
 *
 * Input that is not a hook's is never an allow: it reads as a
 * {@link Malformed}, answered `deny` with the reason.
 *
 * @example
 * ```ts
 * import * as ClaudeCodeHook from "parley/domain/tool/ClaudeCodeHook"
 * const read = ClaudeCodeHook.read('{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}')
 * ClaudeCodeHook.asks(["Bash", "mcp__*"], "mcp__github__create_issue") // true
 * ClaudeCodeHook.decision("PreToolUse", "allow", "Approved in parley") // {"hookSpecificOutput":{…"permissionDecision":"allow",…}}
 * ```
 *
 * @since 0.1.0
 */
import type * as Schema from "effect/Schema"
import * as JsonText from "../storage/JsonText.ts"

/** The hook events parley decides. */
export type HookEvent = "PreToolUse" | "PermissionRequest"

/** A hook's input, as parley reads it. */
export interface HookInput {
  readonly sessionId: string
  readonly cwd: string | undefined
  readonly event: HookEvent
  readonly tool: string
  readonly input: Schema.JsonObject
  readonly toolUseId: string | undefined
}

/** Input that is not a hook's (its event, when it said one parley knows: the decision is shaped for it). */
export interface Malformed {
  readonly _tag: "Malformed"
  readonly reason: string
  readonly event: HookEvent
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const isEvent = (u: unknown): u is HookEvent => u === "PreToolUse" || u === "PermissionRequest"

const optionalString = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/** The fields of a parsed hook input, or what is wrong with them. */
const fieldsOf = (raw: Record<string, unknown>, event: HookEvent): HookInput | Malformed => {
  const malformed = (reason: string): Malformed => ({ _tag: "Malformed", reason, event })
  if (typeof raw["session_id"] !== "string" || raw["session_id"] === "")
    return malformed("the hook input has no session_id")
  if (typeof raw["tool_name"] !== "string" || raw["tool_name"] === "")
    return malformed("the hook input has no tool_name")
  const input = raw["tool_input"]
  if (!isObject(input)) return malformed("the hook input's tool_input is not an object")
  return {
    sessionId: raw["session_id"],
    cwd: optionalString(raw["cwd"]),
    event,
    tool: raw["tool_name"],
    // Parsed from JSON text: every value in it is JSON.
    input: input as Schema.JsonObject,
    toolUseId: optionalString(raw["tool_use_id"])
  }
}

/** Reads the hook's stdin. */
export const read = (text: string): HookInput | Malformed => {
  let raw: unknown
  try {
    // As every JSON text parley reads: an object key with an escape is read right on every Node.
    raw = JsonText.parse(text)
  } catch {
    return { _tag: "Malformed", reason: "the hook input is not JSON", event: "PreToolUse" }
  }
  if (!isObject(raw)) return { _tag: "Malformed", reason: "the hook input is not a JSON object", event: "PreToolUse" }
  const event = raw["hook_event_name"]
  if (!isEvent(event))
    return {
      _tag: "Malformed",
      reason: `parley decides PreToolUse and PermissionRequest hooks, not ${JSON.stringify(event ?? null)}`,
      event: "PreToolUse"
    }
  return fieldsOf(raw, event)
}

/** Whether `read` says the input is malformed. */
export const isMalformed = (read: HookInput | Malformed): read is Malformed => "_tag" in read

const patternOf = (glob: string): RegExp =>
  new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*")}$`)

/** Whether `tool` asks, by the configured names (`*` any characters); every tool asks when none are configured. */
export const asks = (tools: ReadonlyArray<string> | undefined, tool: string): boolean =>
  tools === undefined || tools.some((glob) => patternOf(glob).test(tool))

/** The decision Claude Code reads on stdout, for `event`. */
export const decision = (event: HookEvent, behavior: "allow" | "deny", reason: string): Schema.JsonObject =>
  event === "PreToolUse"
    ? {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: behavior,
          permissionDecisionReason: reason
        }
      }
    : {
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: behavior === "deny" ? { behavior, message: reason } : { behavior }
        }
      }

/** The title of the conversation that keeps a Claude Code session's approvals. */
export const titleOf = (sessionId: string): string => `claude code session ${sessionId}`
