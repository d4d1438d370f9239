/**
 * Which model a `parley query` run calls (docs/models.md), in this order:
 * `--model`, then the model the conversation remembers, then
 * `assistant.model` in config, then `scripted` when a script is given. The
 * choice is checked before anything is written: a model parley can call,
 * its key (or base URL), and for `scripted` its script. An inquiry
 * side-call model (`conversation.inquiry.assistant.model`, a question's
 * `target.model`) is checked only when this run could send it a question
 * (`SideCalls.models`: nobody at a terminal under `detached = "assistant"`,
 * or a question targeted at the assistant); the message names the key, what
 * to export, and how to keep the questions with a person (docs/models.md).
 * Such a model must also give structured replies (RFD 034,
 * `StructuredOutput.supports`): one known not to is an error before the turn.
 *
 * @example
 * ```ts
 * import * as ModelChoice from "./ModelChoice.ts"
 * const choose = ModelChoice.make({ flag: "openai/gpt-5", script: undefined, config, configFile, providers: {} })
 * yield* choose(undefined) // "openai/gpt-5", or a CliFailure that says what to set
 * ```
 */
import * as Effect from "effect/Effect"
import * as StructuredOutput from "../domain/model/StructuredOutput.ts"
import * as ConfigData from "../domain/tool/Config.ts"
import * as SideCalls from "../domain/tool/SideCalls.ts"
import * as ProviderLive from "../layers/provider/ProviderLive.ts"
import { parseModel, type ProviderError } from "../services/Provider.ts"
import { CliFailure } from "./CliFailure.ts"
import * as ErrorLine from "./ErrorLine.ts"
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
  /** Check the inquiry side-call models too (default: yes; a run may ask them). */
  readonly checkInquiryModel?: boolean
  /** A person can be asked in this run (a terminal): then only questions targeted at the assistant reach a side call (default: no). */
  readonly personReachable?: boolean
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
export const make =
  (inputs: Inputs) =>
  (remembered: string | undefined): Effect.Effect<string, CliFailure> =>
    Effect.gen(function* () {
      const picked = pick(inputs, remembered)
      if (picked === undefined) {
        return yield* new CliFailure({
          code: 1,
          message: `No model chosen. Pass --model (${KINDS}), or set assistant.model in ${inputs.configFile}.`
        })
      }
      const { model, from } = picked
      const bad = ProviderLive.checkModel(model)
      if (bad !== undefined) {
        return yield* from === "flag"
          ? Usage.failure(inputs.command ?? USAGE, `--model: ${bad.message}`)
          : from === "conversation"
            ? new CliFailure({
                code: 1,
                message: `This conversation's model is ${model}, which parley cannot call (${KINDS}). Pass --model to continue it on another model.`
              })
            : new CliFailure({ code: 1, message: `assistant.model in ${inputs.configFile}: ${bad.message}` })
      }
      if (model === "scripted" && inputs.script === undefined) {
        const steps = "The scripted model needs steps: pass --script FILE (or set $PARLEY_SCRIPT)."
        return yield* from === "flag"
          ? Usage.failure(inputs.command ?? USAGE, steps)
          : new CliFailure({
              code: 1,
              message:
                from === "conversation"
                  ? "This conversation runs on the scripted model, which needs its steps: pass --script FILE (or set $PARLEY_SCRIPT), or --model to switch models."
                  : steps
            })
      }
      yield* ProviderLive.checkReady(model, inputs.providers).pipe(
        Effect.mapError((e) => new CliFailure({ code: 1, message: ErrorLine.line(e, {}) }))
      )
      if (inputs.checkInquiryModel !== false) {
        for (const need of SideCalls.models(inputs.config, { personReachable: inputs.personReachable === true })) {
          yield* ProviderLive.checkReady(need.model, inputs.providers).pipe(
            Effect.mapError((e) => new CliFailure({ code: 1, message: sideCallProblem(need, inputs.configFile, e) }))
          )
          if (StructuredOutput.supports(need.model, inputs.config) === false)
            return yield* new CliFailure({ code: 1, message: notStructured(need, inputs.configFile) })
        }
      }
      return model
    })

/**
 * One line: the inquiry model that cannot answer as JSON (RFD 034), which key
 * names it, and the ways out (another model, the override if it can, a person).
 */
const notStructured = (need: SideCalls.SideCallModel, configFile: string): string => {
  const key = ConfigData.formatPath(need.key)
  return (
    `${key} in ${configFile} is ${need.model}, which does not give structured (JSON Schema) replies, and an inquiry side call needs one. ` +
    `To go on: set ${key} to a model that does (e.g. anthropic/claude-haiku-4-5 or openai/gpt-5-mini), ` +
    `or, if this one does, set ${ConfigData.formatPath(StructuredOutput.configKey(need.model))} = true, ${toPersonRemedy(need)}.`
  )
}

/** How to keep the questions with a person instead. */
const toPersonRemedy = (need: SideCalls.SideCallModel): string =>
  need.why._tag === "Detached"
    ? "or keep the questions for a person: run it at a terminal, or pass --detached-policy defer (or wait, deny)"
    : `or ask a person instead: ${ConfigData.formatPath(need.why.target)} = "user"`

/** What is missing for `model`, and what to do about it (never "--model", which does not change a side call's model). */
const missing = (model: string, error: ProviderError): { readonly what: string; readonly fix: string } => {
  if (error.missing === "api_key") {
    return parseModel(model).provider === "openai"
      ? {
          what: "OPENAI_API_KEY is not set (nor providers.openai.base_url)",
          fix: "export OPENAI_API_KEY (or set providers.openai.base_url)"
        }
      : { what: "ANTHROPIC_API_KEY is not set", fix: "export ANTHROPIC_API_KEY" }
  }
  const problem = ErrorLine.line(error, {})
  if (ProviderLive.checkModel(model) !== undefined) return { what: problem, fix: "write a model parley can call there" }
  return { what: problem, fix: "pass --script FILE (or set $PARLEY_SCRIPT)" }
}

/** One line: which key names which model, what is missing, why this run may call it, and the ways out. */
const sideCallProblem = (need: SideCalls.SideCallModel, configFile: string, error: ProviderError): string => {
  const key = ConfigData.formatPath(need.key)
  const { what, fix } = missing(need.model, error)
  const why =
    need.why._tag === "Detached"
      ? 'nobody is at a terminal to answer this run\'s questions and [conversation.inquiry] detached is "assistant"'
      : `${ConfigData.formatPath(need.why.target)} sends a question to it`
  return `${key} in ${configFile} is ${need.model}, and ${what.replace(/\.$/, "")}; ${why}. To go on: ${fix}, set ${key} to a model you can call, ${toPersonRemedy(need)}.`
}
