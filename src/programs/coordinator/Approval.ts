/**
 * An approval with nobody at the prompt (docs/decisions.md#person-only-questions): a tool whose author
 * requires a person's yes (effect/ai `needsApproval`) follows the `detached`
 * policy, with `assistant` read as `deny`. Under `defer` and `wait` the
 * approval is asked as a question — the permission prompt's question (`Run
 * MCP echo tool?`, boolean), recorded as a permission inquiry (its request
 * carries `parley_permission`) — so it waits for any answerer (`wait`) or is
 * left open on disk (`defer`) for `parley conversation answer`; the resumed
 * turn then runs the call (`true`) or skips it (`false`), as for a decision
 * typed at the prompt (IncompleteTurn's `permissionDecisions`). A turn
 * resumed while it is still open asks it again under its recorded id.
 *
 * @example
 * ```ts
 * import * as Approval from "parley/programs/coordinator/Approval"
 *
 * const question = Approval.question("deploy", "local") // Run local deploy tool? (boolean)
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Schema from "effect/Schema"
import * as PermissionInquiry from "../../domain/event/PermissionInquiry.ts"
import type { InquiryId } from "../../domain/event/InquiryId.ts"
import type { InquiryRequest } from "../../domain/event/InquiryRequest.ts"
import { InquirySource } from "../../domain/event/InquirySource.ts"
import type { ToolCallRequest } from "../../domain/event/ToolCallRequest.ts"
import * as TurnState from "../../domain/stream/TurnState.ts"
import { fromInquiryQuestion, type Question } from "../../domain/tool/Question.ts"
import type { SkipCause } from "../../domain/tool/Route.ts"
import type { ToolResponse } from "../../services/Executor.ts"
import * as Inquiry from "./Inquiry.ts"

/**
 * The approval's question: what the permission prompt asks, as a boolean question.
 *
 * @since 0.1.0
 */
export const question = (toolName: string, kind: PermissionInquiry.ToolKindText): Question =>
  fromInquiryQuestion(PermissionInquiry.questionId, {
    text: PermissionInquiry.text(kind, toolName),
    answer_type: { type: "boolean" }
  })

/**
 * How a call's permission ended: run it (with `arguments` a person edited
 * it to, when they did), skip it (`cause`), skip it with the
 * response its approval question closed with (`Ended`: refused or cancelled;
 * that response says why), skip it because the prompt failed, or stop at
 * an approval left open (`Deferred`: no response yet).
 *
 * @since 0.1.0
 */
export type Decided =
  | { readonly _tag: "Run"; readonly arguments?: Schema.JsonObject }
  | { readonly _tag: "Skip"; readonly cause: SkipCause }
  | { readonly _tag: "Ended"; readonly response: ToolResponse }
  | { readonly _tag: "PromptFailed"; readonly reason: string }
  | { readonly _tag: "Deferred"; readonly inquiryId: InquiryId }

/**
 * Asks `call`'s approval as a question under the `detached` policy; `recorded`:
 * the request an earlier run left open (asked again under its id).
 *
 * @since 0.1.0
 */
export const ask = (
  env: Inquiry.Env,
  call: ToolCallRequest,
  kind: PermissionInquiry.ToolKindText,
  recorded?: InquiryRequest
): Effect.Effect<Decided, Inquiry.RecordError> =>
  Effect.gen(function* () {
    const opening =
      recorded !== undefined
        ? Inquiry.Opening.Recorded({ id: recorded.id, source: recorded.source, approval: true })
        : Inquiry.Opening.Record({
            id: yield* Ref.modify(env.state, (s) => TurnState.nextInquiryId(s, call.id, PermissionInquiry.questionId)),
            source: InquirySource.tool(call.name),
            metadata: PermissionInquiry.metadata,
            approval: true
          })
    const routed = yield* Inquiry.ask(env, call, question(call.name, kind), opening)
    switch (routed._tag) {
      case "Deferred":
        return { _tag: "Deferred", inquiryId: routed.inquiryId } as const
      case "End":
        return { _tag: "Ended", response: routed.response } as const
      case "Answer": {
        // `{"edit": {…}}`: a yes, with the arguments the call runs with (recorded with the answer).
        const edit = PermissionInquiry.editOf(routed.answer)
        if (edit !== undefined && "arguments" in edit) return { _tag: "Run", arguments: edit.arguments } as const
        return routed.answer === true ? ({ _tag: "Run" } as const) : ({ _tag: "Skip", cause: "declined" } as const)
      }
    }
  })
