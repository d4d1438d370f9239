// Claude Code's hook protocol (docs/ask.md#claude-code): the documented input read, anything else a Malformed
// (answered deny, never allow), the configured tool names with `*`, and the decision JSON of each event.
import { describe, expect, it } from "@effect/vitest"
import * as Ask from "../../../src/domain/tool/Ask.ts"
import * as ClaudeCodeHook from "../../../src/domain/tool/ClaudeCodeHook.ts"

describe("ClaudeCodeHook", () => {
  it("reads a PreToolUse input; a PermissionRequest keeps its event; anything else is malformed", () => {
    const input = {
      session_id: "s1",
      cwd: "/app",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
      tool_use_id: "toolu_1"
    }
    expect(ClaudeCodeHook.read(JSON.stringify(input))).toStrictEqual({
      sessionId: "s1",
      cwd: "/app",
      event: "PreToolUse",
      tool: "Bash",
      input: { command: "ls" },
      toolUseId: "toolu_1"
    })
    expect(
      ClaudeCodeHook.read(JSON.stringify({ ...input, hook_event_name: "PermissionRequest", tool_input: 3 }))
    ).toStrictEqual({
      _tag: "Malformed",
      reason: "the hook input's tool_input is not an object",
      event: "PermissionRequest"
    })
    for (const bad of ["", "null", "[1]", '{"hook_event_name":"Stop"}', '{"hook_event_name":"PreToolUse"}'])
      expect(ClaudeCodeHook.isMalformed(ClaudeCodeHook.read(bad))).toBe(true)
  })

  it("asks for the configured tools (* any characters), every tool when none are configured", () => {
    const tools = ["Bash", "Write", "mcp__*"]
    expect(
      ["Bash", "Write", "mcp__github__create_issue", "Read", "BashOutput"].map((t) => ClaudeCodeHook.asks(tools, t))
    ).toStrictEqual([true, true, true, false, false])
    expect(ClaudeCodeHook.asks(undefined, "Read")).toBe(true)
    expect(ClaudeCodeHook.asks(["a.b"], "aXb")).toBe(false)
  })

  it("prints each event's documented decision", () => {
    expect(ClaudeCodeHook.decision("PreToolUse", "deny", "No.")).toStrictEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "No." }
    })
    expect(ClaudeCodeHook.decision("PermissionRequest", "allow", "Yes.")).toStrictEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } }
    })
  })
})

describe("Ask", () => {
  it("prints a boolean as yes/no, a string as it is, anything else as JSON; a select question carries its options", () => {
    expect([Ask.answerText(true), Ask.answerText(false), Ask.answerText("eu"), Ask.answerText(3)]).toStrictEqual([
      "yes",
      "no",
      "eu",
      "3"
    ])
    const q = Ask.question("Region?", { type: "select", options: ["eu", "us"], default: "eu" })
    expect(Ask.callArguments(q, "k")).toStrictEqual({
      question: "Region?",
      type: "select",
      options: ["eu", "us"],
      default: "eu",
      key: "k"
    })
    expect(Ask.response({ _tag: "Redacted" }).content).not.toContain("eu")
  })
})
