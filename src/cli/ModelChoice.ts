/**
 * Which model a `parley query` run calls (issue 14 item 2), in this order:
 * `--model`, then the model the conversation remembers, then
 * `assistant.model` in config, then `scripted` when a script is given. The
 * choice is checked before anything is written: a model parley can call,
 * its key (or base URL), and for `scripted` its script; a configured
 * inquiry model is checked too.
 *
 * @example
 * ```ts
 * import * as ModelChoice from "./ModelChoice.ts"
 * const choose = ModelChoice.make({ flag: "openai/gpt-5", script: undefined, config, configFile, providers: {} })
 * yield* choose(undefined) // "openai/gpt-5", or a CliFailure that says what to set
 * ```
 */
import * as Effect from "effect/Effect"
import type * as ConfigData from "../domain/tool/Config.ts"
import * as ProviderLive from "../layers/provider/ProviderLive.ts"
import { CliFailure } from "./CliFailure.ts"
import * as Usage from "./Usage.ts"

/** The command a --model usage error points to. */
const USAGE = ["parley", "query"]

export interface Inputs {
  /** `--model` as given. */
  readonly flag: string | undefined
  /** The scripted model's steps (`--script` or `$PARLEY_SCRIPT`). */
  readonly script: string | undefined
  readonly config: ConfigData.Config
  readonly configFile: string
  readonly providers: ProviderLive.ProviderLiveOptions
  /** The command a `--model` usage error points to (default `parley query`). */
  readonly command?: ReadonlyArray<string>
  /** Check `conversation.inquiry.assistant.model` too (default: yes; a run may ask it). */
  readonly checkInquiryModel?: boolean
}

const KINDS = "anthropic/<model>, openai/<model>, or scripted with --script FILE"

/** Picks the model (no checks): flag, remembered, config, scripted-with-a-script. */
export const pick = (inputs: Inputs, remembered: string | undefined) => {
  if (inputs.flag !== undefined) return { model: inputs.flag, from: "flag" as const }
  if (remembered !== undefined) return { model: remembered, from: "conversation" as const }
  const configured = inputs.config.assistant?.model
  if (configured !== undefined) return { model: configured, from: "config" as const }
  return inputs.script !== undefined ? { model: "scripted", from: "script" as const } : undefined
}

/** Chooses and checks the model of a run, offered the one the conversation remembers. */
export const make = (inputs: Inputs) => (remembered: string | undefined): Effect.Effect<string, CliFailure> =>
  Effect.gen(function*() {
    const picked = pick(inputs, remembered)
    if (picked === undefined) {
      return yield* new CliFailure({ code: 1, message: `No model chosen. Pass --model (${KINDS}), or set assistant.model in ${inputs.configFile}.` })
    }
    const { model, from } = picked
    const bad = ProviderLive.checkModel(model)
    if (bad !== undefined) {
      return yield* from === "flag"
        ? Usage.failure(inputs.command ?? USAGE, `--model: ${bad.message}`)
        : from === "conversation"
        ? new CliFailure({ code: 1, message: `This conversation's model is ${model}, which parley cannot call (${KINDS}). Pass --model to continue it on another model.` })
        : new CliFailure({ code: 1, message: `assistant.model in ${inputs.configFile}: ${bad.message}` })
    }
    if (model === "scripted" && inputs.script === undefined) {
      const steps = "The scripted model needs steps: pass --script FILE (or set $PARLEY_SCRIPT)."
      return yield* from === "flag"
        ? Usage.failure(inputs.command ?? USAGE, steps)
        : new CliFailure({
          code: 1,
          message: from === "conversation"
            ? "This conversation runs on the scripted model, which needs its steps: pass --script FILE (or set $PARLEY_SCRIPT), or --model to switch models."
            : steps
        })
    }
    yield* ProviderLive.checkReady(model, inputs.providers).pipe(Effect.mapError((e) => new CliFailure({ code: 1, message: e.message })))
    const inquiryModel = inputs.config.conversation?.inquiry?.assistant?.model
    if (inquiryModel !== undefined && inputs.checkInquiryModel !== false) {
      yield* ProviderLive.checkReady(inquiryModel, inputs.providers).pipe(
        Effect.mapError((e) => new CliFailure({ code: 1, message: `conversation.inquiry.assistant.model: ${e.message}` }))
      )
    }
    return model
  })
