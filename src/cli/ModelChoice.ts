/**
 * The model of a run in the CLI's words (docs/models.md): the choice and its
 * checks are `layers/provider/ModelCheck.ts`'s; a refusal becomes one line
 * saying what to pass, set or export — for an inquiry side-call model, which
 * key names it, what to export, and how to keep the questions with a person
 * (never "--model", which does not change a side call's model).
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
import * as ModelCheck from "../layers/provider/ModelCheck.ts"
import * as ConfigData from "../domain/tool/Config.ts"
import type * as SideCalls from "../domain/tool/SideCalls.ts"
import * as ProviderLive from "../layers/provider/ProviderLive.ts"
import { parseModel, type ProviderError } from "../services/Provider.ts"
import { CliFailure } from "./CliFailure.ts"
import * as ErrorLine from "./ErrorLine.ts"
import * as Usage from "./Usage.ts"

/** The command a --model usage error points to. */
const USAGE = ["parley", "query"]

export interface Inputs extends ModelCheck.Inputs {
  /** The config file the messages name. */
  readonly configFile: string
  /** The command a `--model` usage error points to (default `parley query`). */
  readonly command?: ReadonlyArray<string>
}

const KINDS = "anthropic/<model>, openai/<model>, or scripted with --script FILE"

/** Chooses and checks the model of a run, offered the one the conversation remembers. */
export const make =
  (inputs: Inputs) =>
  (remembered: string | undefined): Effect.Effect<string, CliFailure> =>
    Effect.mapError(ModelCheck.choose(inputs, remembered), (e) => failure(inputs, e.refusal))

/** A refusal in the CLI's words: what to set, pass or export. */
const failure = (inputs: Inputs, refusal: ModelCheck.Refusal): CliFailure => {
  const usage = (message: string) => Usage.failure(inputs.command ?? USAGE, message)
  const fail = (message: string) => new CliFailure({ code: 1, message })
  switch (refusal._tag) {
    case "NoModel":
      return fail(`No model chosen. Pass --model (${KINDS}), or set assistant.model in ${inputs.configFile}.`)
    case "CannotCall":
      return refusal.from === "flag"
        ? usage(`--model: ${refusal.error.message}`)
        : refusal.from === "conversation"
          ? fail(
              `This conversation's model is ${refusal.model}, which parley cannot call (${KINDS}). Pass --model to continue it on another model.`
            )
          : fail(`assistant.model in ${inputs.configFile}: ${refusal.error.message}`)
    case "NoScript": {
      const steps = "The scripted model needs steps: pass --script FILE (or set $PARLEY_SCRIPT)."
      return refusal.from === "flag"
        ? usage(steps)
        : fail(
            refusal.from === "conversation"
              ? "This conversation runs on the scripted model, which needs its steps: pass --script FILE (or set $PARLEY_SCRIPT), or --model to switch models."
              : steps
          )
    }
    case "NotReady":
      return fail(ErrorLine.line(refusal.error, {}))
    case "SideCallNotReady":
      return fail(sideCallProblem(refusal.need, inputs.configFile, refusal.error))
    case "NotStructured":
      return fail(notStructured(refusal.need, inputs.configFile))
  }
}

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
