// Approvals' answers and what an approval approves (docs/questions-and-approvals.md#approvals,
// docs/mcp.md#approvals-with-nobody-at-the-terminal): an approval asked each time (an MCP server's
// page or form) takes yes/no only and says why always/never do not fit; a waiting approval shows the
// call's arguments, or what the tool asked about.
import { describe, expect, it } from "@effect/vitest"
import * as Events from "../../../src/domain/event/Events.ts"
import { InquirySource } from "../../../src/domain/event/InquirySource.ts"
import * as InquiryId from "../../../src/domain/event/InquiryId.ts"
import * as PermissionInquiry from "../../../src/domain/event/PermissionInquiry.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"

const at = Timestamp.make("2026-11-29 07:00:00.1")
const boolean = { text: "Done there?", answer_type: { type: "boolean" as const } }

describe("PermissionInquiry.readApproval", () => {
  it("a rememberable approval takes yes/no/always/never; one asked each time refuses always/never", () => {
    expect(PermissionInquiry.readApproval("always", true)).toStrictEqual({ _tag: "Read", answer: true, remember: true })
    expect(PermissionInquiry.readApproval("no", false)).toStrictEqual({ _tag: "Read", answer: false, remember: false })
    expect(PermissionInquiry.readApproval("never", false)).toStrictEqual({
      _tag: "Misfit",
      reason: '"never" would answer later approvals too, and this one is asked each time'
    })
    expect(PermissionInquiry.readApproval("perhaps", true)).toStrictEqual({
      _tag: "Misfit",
      reason: `"perhaps" is not an approval's answer`
    })
    expect(PermissionInquiry.expectedOf(false)).toBe("yes or no")
    expect(PermissionInquiry.expectedOf(true)).toBe("yes, no, always or never")
  })
})

describe("PermissionInquiry.approves", () => {
  it("the run permission approves the call's arguments; a tool's approval what it recorded; a question nothing", () => {
    const args = { target: "prod" }
    const id = (q: string) => InquiryId.forToolQuestion("call_1", q, 1)
    const [permission] = PermissionInquiry.record(at, id("__permission__"), { toolName: "deploy", kind: "MCP" }, "y")
    expect(PermissionInquiry.approves(permission, args)).toStrictEqual(args)
    const page = { url: "https://auth.example.com/start", message: "Sign in." }
    const asked = Events.inquiryRequest(
      at,
      id("url"),
      InquirySource.tool("deploy"),
      boolean,
      PermissionInquiry.approvalMetadata(page)
    )
    expect(PermissionInquiry.approves(asked, args)).toStrictEqual(page)
    expect(PermissionInquiry.isPermission(asked)).toBe(false)
    const question = Events.inquiryRequest(at, id("confirm"), InquirySource.tool("deploy"), boolean)
    expect(PermissionInquiry.approves(question, args)).toBeUndefined()
  })
})
