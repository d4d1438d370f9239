/**
 * The scripted model (`scripted`): the offline default used by `parley demo`,
 * tests and users without an API key (contract §4).
 *
 * Every request (main turn or inquiry side call) consumes the next step of
 * the script. A structured request (a schema) answered by a step without
 * `structured`, a `structured` step given to a plain request, a tool-calling
 * step given to a request with `toolChoice: "none"`, an `error` step and
 * running out of steps are all `ProviderError`s (not retryable). Text and
 * reasoning stream word by word so streaming code paths run offline too.
 *
 * @example
 * ```ts
 * import * as Scripted from "parley/layers/provider/Scripted"
 * const layer = Scripted.layerFromFile("script.json")
 * ```
 *
 * @since 0.1.0
 */
import { readFile } from "node:fs/promises"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as ScriptedModel from "../../domain/model/ScriptedModel.ts"
import {
  Provider,
  type ProviderDelta,
  ProviderDelta as Delta,
  ProviderError,
  type ProviderRequest,
  requestedSchema
} from "../../services/Provider.ts"

/** Every scripted failure is local (nothing goes over the network): its message is the detail alone. */
const fail = (detail: string) =>
  new ProviderError({ provider: "scripted", failure: "config", detail, retryable: false, attempts: 1 })

/** Words with their trailing whitespace: the chunks text streams in. */
export const chunks = (text: string): ReadonlyArray<string> => text.match(/\s*\S+\s*|\s+/g) ?? []

/** The deltas one step streams. */
export const deltasOf = (step: ScriptedModel.Step): ReadonlyArray<ProviderDelta> => {
  const out: Array<ProviderDelta> = []
  if (step.reasoning !== undefined) {
    for (const text of chunks(step.reasoning)) out.push(Delta.ReasoningDelta({ text }))
    out.push(Delta.ReasoningDone({ metadata: {} }))
  }
  if (step.message !== undefined) for (const text of chunks(step.message)) out.push(Delta.TextDelta({ text }))
  for (const call of step.toolCalls) {
    out.push(Delta.ToolCallStart({ id: call.id, name: call.name }))
    out.push(Delta.ToolCall({ id: call.id, name: call.name, arguments: call.arguments, metadata: {} }))
  }
  if (step.structured !== undefined) out.push(Delta.Structured({ data: step.structured.value }))
  out.push(Delta.Finish({ reason: step.toolCalls.length > 0 ? "tool_use" : "end_turn" }))
  return out
}

/** Why a step cannot answer a request, or `undefined`. */
const mismatch = (step: ScriptedModel.Step, n: number, request: ProviderRequest): string | undefined => {
  if (step.error !== undefined) return undefined
  const structured = requestedSchema(request) !== undefined
  if (structured && step.structured === undefined) {
    return `Script step ${n} has no \`structured\` answer, but request ${n} asks for structured output (an inquiry side call). Add a step like {"structured":{"answer":true}} at that position.`
  }
  if (!structured && step.structured !== undefined) {
    return `Script step ${n} is a \`structured\` answer, but request ${n} is a plain request (no schema). Reorder the script steps.`
  }
  if (request.toolChoice === "none" && step.toolCalls.length > 0) {
    return `Script step ${n} calls tools, but request ${n} does not allow tool calls.`
  }
  return undefined
}

/**
 * A scripted provider over validated steps; its position is shared by every
 * request made through this instance.
 */
export const make = (steps: ReadonlyArray<ScriptedModel.Step>): Effect.Effect<Provider["Service"]> =>
  Effect.gen(function* () {
    const position = yield* Ref.make(0)
    return Provider.of({
      stream: (request) =>
        Stream.unwrap(
          Effect.gen(function* () {
            const index = yield* Ref.getAndUpdate(position, (n) => n + 1)
            const step = steps[index]
            const n = index + 1
            if (step === undefined) {
              return yield* fail(
                `The script has no step left for request ${n} (it has ${steps.length} step${steps.length === 1 ? "" : "s"}). Add steps to the script.`
              )
            }
            if (step.delayMs > 0) yield* Effect.sleep(step.delayMs)
            if (step.error !== undefined) return yield* fail(step.error)
            const problem = mismatch(step, n, request)
            if (problem !== undefined) return yield* fail(problem)
            // A yield between deltas lets a consumer (and an interrupt) interleave, as with a network stream.
            return Stream.fromIterable(deltasOf(step)).pipe(Stream.tap(() => Effect.yieldNow))
          })
        )
    })
  })

/** What a script looks like, for the error that finds a file is not one. */
const SHAPE = `A script is {"steps": [{"message": "…"}, …]} (README, "Models and providers").`

/** Reads and validates a script file. */
export const loadScript = (path: string): Effect.Effect<ReadonlyArray<ScriptedModel.Step>, ProviderError> =>
  Effect.gen(function* () {
    const text = yield* Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (e) => fail(`Cannot read the model script ${path}: ${e instanceof Error ? e.message : String(e)}`)
    })
    const parsed = ScriptedModel.parse(text)
    if (Result.isFailure(parsed)) return yield* fail(`Invalid model script ${path}: ${parsed.failure}. ${SHAPE}`)
    return parsed.success
  })

/** The scripted provider from steps already in memory (tests). */
export const layer = (steps: ReadonlyArray<ScriptedModel.Step>): Layer.Layer<Provider> =>
  Layer.effect(Provider, make(steps))

/** The scripted provider from a script as the JSON value of a file (tests, demo). */
export const layerFromScript = (script: unknown): Layer.Layer<Provider, ProviderError> =>
  Layer.effect(
    Provider,
    Effect.gen(function* () {
      const steps = ScriptedModel.decode(script)
      if (Result.isFailure(steps)) return yield* fail(`Invalid model script: ${steps.failure}`)
      return yield* make(steps.success)
    })
  )

/** The scripted provider from a script file (`--script FILE` / `$PARLEY_SCRIPT`). */
export const layerFromFile = (path: string): Layer.Layer<Provider, ProviderError> =>
  Layer.effect(Provider, Effect.flatMap(loadScript(path), make))
