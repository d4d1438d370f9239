/**
 * Executors that compose
 * (docs/library.md#effectai-tools-as-parleys-executor-asking-questions-mid-run): one `Executor` from several —
 * the live one (built-ins, local tools, MCP servers) and any number of
 * effect/ai toolkits or hand-written executors — under one config file.
 *
 * Each call goes to the part that defines its tool; the model is offered
 * every part's definitions. A tool name two parts define is refused
 * (`DuplicateTool`, naming both parts), as the live executor refuses an MCP
 * tool that shadows a built-in. `ExecutorLive.layerWith({ executors })` is
 * the usual entry: it also accepts config tables for the other parts' tools.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import { Executor } from "parley"
 * import * as Combine from "parley/layers/executor/Combine"
 *
 * const echo = (name: string) =>
 *   Layer.succeed(Executor, Executor.of({
 *     definitions: [{ name, description: `Echo (${name}).`, parameters: { type: "object" } }],
 *     execute: (call) => Effect.succeed(Executor.ok(JSON.stringify(call.arguments))),
 *     permission: () => "unattended",
 *     kind: (tool) => (tool === name ? "builtin" : undefined)
 *   }))
 * const both = Combine.layer(echo("echo"), echo("shout")) // Layer<Executor, DuplicateTool>
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Context from "effect/Context"
import { type CallPermission, DuplicateTool, Executor, notAvailable } from "../../services/Executor.ts"

/** One executor of a combination, and what it is called in messages when it does not say. */
export interface Part {
  readonly executor: Executor["Service"]
  /** `executor 2` when the executor names no source of its own. */
  readonly label: string
}

/** Every name a part defines, enabled or not. */
const namesOf = (executor: Executor["Service"]): ReadonlyArray<string> =>
  executor.names ?? executor.definitions.map((d) => d.name)

const sourceOf = (part: Part, name: string): string => part.executor.source?.(name) ?? part.label

/** Two parts that define `name`; two that call themselves the same (two unnamed toolkits) are told apart by position. */
const duplicate = (name: string, first: Part, second: Part): DuplicateTool => {
  const a = sourceOf(first, name)
  const b = sourceOf(second, name)
  return new DuplicateTool({ name, sources: a === b ? [`${a} (${first.label})`, `${b} (${second.label})`] : [a, b] })
}

/**
 * One executor from `parts`, in order. Fails with `DuplicateTool` when two
 * parts offer the same tool (a tool one part has disabled is not offered).
 */
export const combine = (parts: ReadonlyArray<Part>): Effect.Effect<Executor["Service"], DuplicateTool> =>
  Effect.suspend(() => {
    const owner = new Map<string, Part>()
    for (const part of parts) {
      for (const definition of part.executor.definitions) {
        const first = owner.get(definition.name)
        if (first !== undefined) return Effect.fail(duplicate(definition.name, first, part))
        owner.set(definition.name, part)
      }
    }
    const of = (name: string) => owner.get(name)?.executor
    const perCall = parts.some((p) => p.executor.callPermission !== undefined)
    return Effect.succeed(
      Executor.of({
        definitions: parts
          .flatMap((p) => p.executor.definitions)
          .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
        names: [...new Set(parts.flatMap((p) => namesOf(p.executor)))],
        execute: (call, answers, context) =>
          of(call.name)?.execute(call, answers, context) ?? Effect.succeed(notAvailable(call.name)),
        // An unknown tool is never run ("not available"); its mode does not matter.
        permission: (name) => of(name)?.permission(name) ?? "unattended",
        ...(perCall
          ? {
              callPermission: (call) => {
                const executor = of(call.name)
                if (executor?.callPermission !== undefined) return executor.callPermission(call)
                return Effect.succeed<CallPermission>({
                  mode: executor?.permission(call.name) ?? "unattended",
                  approval: false
                })
              }
            }
          : {}),
        kind: (name) => of(name)?.kind(name),
        source: (name) => {
          const part = owner.get(name)
          return part === undefined ? undefined : sourceOf(part, name)
        },
        promptLabel: (name, questionId) => of(name)?.promptLabel?.(name, questionId)
      })
    )
  })

/** Builds each layer in the combination's scope: the executors, labelled by position (`executor 1`, `executor 2`, … by default). */
export const build = <E, R>(
  layers: ReadonlyArray<Layer.Layer<Executor, E, R>>,
  labelOf: (index: number) => string = (i) => `executor ${i + 1}`
) =>
  Effect.forEach(layers, (layer, i) =>
    Effect.map(Layer.build(layer), (context): Part => ({ executor: Context.get(context, Executor), label: labelOf(i) }))
  )

/**
 * One executor from several layers
 * (docs/library.md#effectai-tools-as-parleys-executor-asking-questions-mid-run):
 * each call goes to the layer that defines its tool; a name two of them define fails the layer with
 * `DuplicateTool`. For built-ins, local tools and MCP servers beside them,
 * use `ExecutorLive.layerWith({ executors })`, which also takes their config.
 */
export const layer = <E, R>(
  ...layers: ReadonlyArray<Layer.Layer<Executor, E, R>>
): Layer.Layer<Executor, E | DuplicateTool, R> => Layer.effect(Executor, Effect.flatMap(build(layers), combine))
