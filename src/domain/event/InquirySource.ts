/**
 * Who asked an inquiry. On disk it is tagged by a nested `source` key:
 * `{"source":"tool","name":"fs_modify_file"}`, `{"source":"assistant"}`.
 *
 * @example
 * ```ts
 * import { InquirySource } from "parley/domain/event/InquirySource"
 * InquirySource.tool("write_note") // { source: "tool", name: "write_note" }
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** A question asked by a tool (`{"source":"tool","name":…}`). */
export const ToolSource = Schema.Struct({ source: Schema.tag("tool"), name: Schema.String })
/** A question asked by the assistant. */
export const AssistantSource = Schema.Struct({ source: Schema.tag("assistant") })
/** A question asked by the user. */
export const UserSource = Schema.Struct({ source: Schema.tag("user") })
/** A question asked by something else, named. */
export const OtherSource = Schema.Struct({ source: Schema.tag("other"), name: Schema.String })

const Union = Schema.Union([ToolSource, AssistantSource, UserSource, OtherSource])

/**
 * Who asked an inquiry. On disk it is tagged by a nested `source` key:
 * `{"source":"tool","name":"fs_modify_file"}`, `{"source":"assistant"}`.
 *
 * @example
 * ```ts
 * import { InquirySource } from "parley/domain/event/InquirySource"
 * InquirySource.tool("write_note") // { source: "tool", name: "write_note" }
 * ```
 */
export type InquirySource = typeof Union.Type

const assistant: InquirySource = { source: "assistant" }
const user: InquirySource = { source: "user" }

export const InquirySource = Object.assign(Union, {
  tool: (name: string): InquirySource => ({ source: "tool", name }),
  assistant,
  user,
  other: (name: string): InquirySource => ({ source: "other", name })
})

/** A short label for people: `tool write_note`, `assistant`. */
export const describe = (s: InquirySource): string =>
  s.source === "tool" || s.source === "other" ? `${s.source} ${s.name}` : s.source
