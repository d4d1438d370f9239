/**
 * The live providers' settings from `config.toml` and the flags (one home
 * for `query` and `conversation compact --summary`): each provider's
 * `base_url`, and the scripted model's script.
 *
 * @internal
 * @example
 * ```ts
 * import { providerOptions } from "parley/layers/provider/ProviderOptions"
 * providerOptions({ providers: { openai: { base_url: "http://127.0.0.1:11434/v1" } } }, undefined)
 * // { anthropic: {}, openai: { baseUrl: "http://127.0.0.1:11434/v1" } }
 * ```
 */
import type * as ConfigData from "../../domain/tool/Config.ts"
import type * as ProviderLive from "./ProviderLive.ts"

export const providerOptions = (
  config: ConfigData.Config,
  script: string | undefined
): ProviderLive.ProviderLiveOptions => {
  const providers = config.providers ?? {}
  return {
    ...(script !== undefined ? { scriptPath: script } : {}),
    anthropic: providers["anthropic"]?.base_url !== undefined ? { baseUrl: providers["anthropic"].base_url } : {},
    openai: providers["openai"]?.base_url !== undefined ? { baseUrl: providers["openai"].base_url } : {}
  }
}
