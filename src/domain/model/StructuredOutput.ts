/**
 * Whether a model can give a structured (JSON Schema) reply — what an
 * inquiry side call asks of it (RFD 034 "Structured output support"):
 * `[providers.<provider>.models."<id>"] structured_output` when set, else
 * what parley knows of the model, else `undefined` (unknown: a custom
 * deployment is trusted). `parley query` checks the inquiry models before
 * the turn, so a model known not to support it is one clear error, not a
 * failed side call mid-turn.
 *
 * @example
 * ```ts
 * import * as StructuredOutput from "parley/domain/model/StructuredOutput"
 * StructuredOutput.supports("anthropic/claude-3-5-haiku", {}) // false
 * StructuredOutput.supports("openai/gpt-5-mini", {}) // true
 * StructuredOutput.supports("openai/my-local-model", {}) // undefined
 * ```
 *
 * @since 0.1.0
 */
import type * as ConfigData from "../tool/Config.ts"

/**
 * What the providers publish: Anthropic's JSON outputs (`output_config.format`)
 * came with the 4.1/4.5 models; OpenAI's strict `json_schema` with gpt-4o.
 * Keys are `provider/model`; a dated snapshot reads as its model.
 */
export const KNOWN: Readonly<Record<string, boolean>> = {
  "anthropic/claude-opus-4-5": true,
  "anthropic/claude-opus-4-1": true,
  "anthropic/claude-sonnet-4-5": true,
  "anthropic/claude-haiku-4-5": true,
  "anthropic/claude-opus-4": false,
  "anthropic/claude-sonnet-4": false,
  "anthropic/claude-3-7-sonnet": false,
  "anthropic/claude-3-5-haiku": false,
  "anthropic/claude-3-5-sonnet": false,
  "anthropic/claude-3-opus": false,
  "anthropic/claude-3-haiku": false,
  "openai/gpt-5": true,
  "openai/gpt-5-mini": true,
  "openai/gpt-5-nano": true,
  "openai/gpt-4.1": true,
  "openai/gpt-4.1-mini": true,
  "openai/gpt-4.1-nano": true,
  "openai/gpt-4o": true,
  "openai/gpt-4o-mini": true,
  "openai/o3": true,
  "openai/o4-mini": true,
  "openai/gpt-4": false,
  "openai/gpt-4-turbo": false,
  "openai/gpt-3.5-turbo": false,
  scripted: true
}

/** `provider/model` split; `scripted` is its own provider and id. */
const split = (model: string): { readonly provider: string; readonly id: string } => {
  const slash = model.indexOf("/")
  return slash < 0 ? { provider: model, id: model } : { provider: model.slice(0, slash), id: model.slice(slash + 1) }
}

/** Whether `model` gives structured replies: configured, else known, else `undefined`. */
export const supports = (model: string, config: ConfigData.Config): boolean | undefined => {
  const { provider, id } = split(model)
  const configured = config.providers?.[provider]?.models?.[id]?.structured_output
  if (configured !== undefined) return configured
  return KNOWN[model] ?? KNOWN[`${provider}/${id.replace(/-\d{8}$/, "")}`]
}

/** The config key that tells parley a model does give structured replies (for the error's remedy). */
export const configKey = (model: string): ReadonlyArray<string> => {
  const { provider, id } = split(model)
  return ["providers", provider, "models", id, "structured_output"]
}
