/**
 * Which inquiry side-call models a run could call, and why (RFD 034, issue
 * 27): what `parley query` checks before anything is written, so a model it
 * cannot call stops the run only when a question could actually go to it.
 *
 * A question goes to the assistant (`Route.decideRoute`) when its config
 * targets it (`target = "assistant"` or a table) and has no static answer —
 * a table's own `model` first, else `conversation.inquiry.assistant.model` —
 * or when nobody can be asked and `[conversation.inquiry] detached` is
 * `"assistant"` (`conversation.inquiry.assistant.model`). Without an inquiry
 * model the main model answers, and that one is checked anyway.
 *
 * @example
 * ```ts
 * import * as SideCalls from "parley/domain/tool/SideCalls"
 * import type { Config } from "parley/domain/tool/Config"
 * declare const config: Config
 * SideCalls.models(config, { personReachable: false })
 * // [{ key: ["conversation", "inquiry", "assistant", "model"], model: "openai/gpt-5-mini", why: { _tag: "Detached" } }]
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import { type Config, detachedPolicy } from "./Config.ts"

/** Why a side call may happen: nobody to ask under `detached = "assistant"`, or a question targeted at the assistant. */
export type Why = { readonly _tag: "Detached" } | { readonly _tag: "Target"; readonly target: ReadonlyArray<string> }

/** A model the run may call for a side call: the config key that names it, the model, and why. */
export interface SideCallModel {
  readonly key: ReadonlyArray<string>
  readonly model: string
  readonly why: Why
}

const INQUIRY_MODEL = ["conversation", "inquiry", "assistant", "model"] as const

/** The side-call models this run could call (one entry per config key, the first reason found). */
export const models = (config: Config, run: { readonly personReachable: boolean }): ReadonlyArray<SideCallModel> => {
  const inquiryModel = config.conversation?.inquiry?.assistant?.model
  const found = new Map<string, SideCallModel>()
  const add = (m: SideCallModel) => {
    const k = m.key.join("\u0000")
    if (!found.has(k)) found.set(k, m)
  }
  // First, as its remedy is the broader one.
  if (!run.personReachable && detachedPolicy(config) === "assistant" && inquiryModel !== undefined) {
    add({ key: INQUIRY_MODEL, model: inquiryModel, why: { _tag: "Detached" } })
  }
  for (const [tool, toolConfig] of Object.entries(config.conversation?.tools ?? {})) {
    for (const [id, question] of Object.entries(toolConfig?.questions ?? {})) {
      const target = question.target
      // A static answer wins over any target: that question never reaches a model.
      if (target === undefined || target === "user" || question.answer !== undefined) continue
      const at = ["conversation", "tools", tool, "questions", id, "target"]
      if (typeof target === "object" && target.model !== undefined)
        add({ key: [...at, "model"], model: target.model, why: { _tag: "Target", target: at } })
      else if (inquiryModel !== undefined)
        add({ key: INQUIRY_MODEL, model: inquiryModel, why: { _tag: "Target", target: at } })
    }
  }
  return [...found.values()]
}
