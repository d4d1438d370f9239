/**
 * `parley/ai`: the bridge between parley and Effect's `effect/ai` (docs/library.md#bridges-to-effectai-parleyai).
 *
 * - {@link providerLayer}: parley's `Provider` from any `LanguageModel`, so
 *   the turn loop, the tool coordinator and the LLM inquiry backend run on
 *   every `@effect/ai-*` provider;
 * - {@link executorFromToolkit}: a parley `Executor` from an effect/ai
 *   `Toolkit`, whose handlers can ask questions with {@link Inquiry}`.ask`.
 *
 * @example
 * ```ts
 * import * as Layer from "effect/Layer"
 * import type { LanguageModel } from "effect/ai"
 * import { providerLayer } from "parley/ai"
 *
 * declare const model: Layer.Layer<LanguageModel.LanguageModel>
 * const provider = providerLayer().pipe(Layer.provide(model))
 * ```
 *
 * @since 0.1.0
 */
export * from "./Namespaces.ts"
/** @since 0.1.0 */
export {
  fromAiError,
  make as makeProvider,
  metadataKey,
  providerLayer,
  type ProviderLayerOptions,
  toPrompt,
  toToolkit
} from "./ProviderBridge.ts"
/** @since 0.1.0 */
export {
  definitionOf,
  executorFromToolkit,
  type InquiryHandlers,
  type ToolkitExecutorOptions,
  type ToolkitServices
} from "./ToolkitExecutor.ts"
