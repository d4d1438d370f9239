/**
 * Which model a run calls, and whether it can (docs/models.md): `--model`,
 * then the model the conversation remembers, then `assistant.model` in
 * config, then `scripted` when a script is given. The choice is checked
 * before anything is written: a model parley can call, its key (or base
 * URL), and for `scripted` its script. An inquiry side-call model is checked
 * only when this run could send it a question (`SideCalls.models`), and must
 * give structured replies (RFD 034, `StructuredOutput.supports`). A refusal
 * is data ({@link ModelRefused}): the edge words it (`cli/ModelChoice.ts`).
 *
 * @internal
 * @example
 * ```ts
 * import * as ModelCheck from "parley/layers/provider/ModelCheck"
 * const model = ModelCheck.choose({ flag: "openai/gpt-5", script: undefined, config: {}, providers: {} }, undefined)
 * // "openai/gpt-5", or a ModelRefused saying what is missing (here: OPENAI_API_KEY, unless set)
 * ```
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as StructuredOutput from "../../domain/model/StructuredOutput.ts"
import type * as ConfigData from "../../domain/tool/Config.ts"
import * as SideCalls from "../../domain/tool/SideCalls.ts"
import type { ProviderError } from "../../services/Provider.ts"
import * as ProviderLive from "./ProviderLive.ts"

/** What the choice is made from. */
export interface Inputs {
  /** `--model` as given. */
  readonly flag: string | undefined
  /** The scripted model's steps (`--script` or `$PARLEY_SCRIPT`). */
  readonly script: string | undefined
  readonly config: ConfigData.Config
  readonly providers: ProviderLive.ProviderLiveOptions
  /** Check the inquiry side-call models too (default: yes; a run may ask them). */
  readonly checkInquiryModel?: boolean
  /** A person can be asked in this run (a terminal): then only questions targeted at the assistant reach a side call (default: no). */
  readonly personReachable?: boolean
}

/** Where the chosen model came from. */
export type From = "flag" | "conversation" | "config" | "script"

/** Why the choice was refused. */
export type Refusal =
  | { readonly _tag: "NoModel" }
  | { readonly _tag: "CannotCall"; readonly from: From; readonly model: string; readonly error: ProviderError }
  | { readonly _tag: "NoScript"; readonly from: From }
  | { readonly _tag: "NotReady"; readonly error: ProviderError }
  | { readonly _tag: "SideCallNotReady"; readonly need: SideCalls.SideCallModel; readonly error: ProviderError }
  | { readonly _tag: "NotStructured"; readonly need: SideCalls.SideCallModel }

/** A model choice refused, with why. */
export class ModelRefused extends Data.TaggedError("ModelRefused")<{ readonly refusal: Refusal }> {}

const refused = (refusal: Refusal) => new ModelRefused({ refusal })

/** Picks the model (no checks): flag, remembered, config, scripted-with-a-script. */
export const pick = (
  inputs: Inputs,
  remembered: string | undefined
): { readonly model: string; readonly from: From } | undefined => {
  if (inputs.flag !== undefined) return { model: inputs.flag, from: "flag" }
  if (remembered !== undefined) return { model: remembered, from: "conversation" }
  const configured = inputs.config.assistant?.model
  if (configured !== undefined) return { model: configured, from: "config" }
  return inputs.script !== undefined ? { model: "scripted", from: "script" } : undefined
}

/** Chooses and checks the model of a run, offered the one the conversation remembers. */
export const choose = (inputs: Inputs, remembered: string | undefined): Effect.Effect<string, ModelRefused> =>
  Effect.gen(function* () {
    const picked = pick(inputs, remembered)
    if (picked === undefined) return yield* refused({ _tag: "NoModel" })
    const { model, from } = picked
    const bad = ProviderLive.checkModel(model)
    if (bad !== undefined) return yield* refused({ _tag: "CannotCall", from, model, error: bad })
    if (model === "scripted" && inputs.script === undefined) return yield* refused({ _tag: "NoScript", from })
    yield* ProviderLive.checkReady(model, inputs.providers).pipe(
      Effect.mapError((error) => refused({ _tag: "NotReady", error }))
    )
    if (inputs.checkInquiryModel === false) return model
    for (const need of SideCalls.models(inputs.config, { personReachable: inputs.personReachable === true })) {
      yield* ProviderLive.checkReady(need.model, inputs.providers).pipe(
        Effect.mapError((error) => refused({ _tag: "SideCallNotReady", need, error }))
      )
      if (StructuredOutput.supports(need.model, inputs.config) === false)
        return yield* refused({ _tag: "NotStructured", need })
    }
    return model
  })
