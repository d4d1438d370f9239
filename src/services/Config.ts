/**
 * The parsed `config.toml` as a service. The file layer lives in
 * `src/layers/ConfigFile.ts`; tests use {@link Config.layerLiteral}.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import { Config } from "parley/services/Config"
 * const program = Effect.gen(function*() {
 *   const { data } = yield* Config
 *   return data.assistant?.model ?? "scripted"
 * })
 * Effect.runSync(program.pipe(Effect.provide(Config.layerLiteral({ assistant: { model: "scripted" } }))))
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as ConfigData from "../domain/tool/Config.ts"

/** One problem in a config document: where (key path or line/column) and what. */
export const ConfigProblem = Schema.Struct({
  /** Dotted key path (`conversation.tools.write_note.run`), when the problem is at a key. */
  path: Schema.optionalKey(Schema.String),
  /** 1-based position, for syntax errors. */
  line: Schema.optionalKey(Schema.Number),
  column: Schema.optionalKey(Schema.Number),
  message: Schema.String
})
export type ConfigProblem = typeof ConfigProblem.Type

/** The config file could not be read, parsed or validated; one line per problem. */
export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  file: Schema.String,
  problems: Schema.Array(ConfigProblem)
}) {
  override get message() {
    return this.problems
      .map(
        (p) =>
          `${this.file}${p.line === undefined ? "" : `:${p.line}${p.column === undefined ? "" : `:${p.column}`}`}: ${
            p.path === undefined ? "" : `${p.path}: `
          }${p.message}`
      )
      .join("\n")
  }
}

/** Validates plain config values (parsed TOML, or a literal in tests). */
export const validate = (input: unknown, file: string): Effect.Effect<ConfigData.Config, ConfigError> => {
  const result = ConfigData.decode(input)
  return Result.isSuccess(result)
    ? Effect.succeed(result.success)
    : Effect.fail(
        new ConfigError({
          file,
          problems: result.failure.map((issue) => ({ path: ConfigData.formatPath(issue.path), message: issue.message }))
        })
      )
}

/**
 * The parsed `config.toml`, as a service. Live: `ConfigFile.layer` (reads
 * `<storage>/config.toml`); tests: `Config.layerLiteral({...})`,
 * `Config.layerEmpty`.
 */
export class Config extends Context.Service<
  Config,
  {
    /** Where the config came from (for messages); `config.toml` for literals. */
    readonly file: string
    readonly data: ConfigData.Config
  }
>()("parley/Config") {
  /** A config given as values, validated like a file (an invalid literal fails the layer). */
  static layerLiteral(input: unknown, file = "config.toml"): Layer.Layer<Config, ConfigError> {
    return Layer.effect(
      Config,
      Effect.map(validate(input, file), (data) => Config.of({ file, data }))
    )
  }

  /** No config at all (what a missing file means). */
  static readonly layerEmpty: Layer.Layer<Config> = Layer.succeed(
    Config,
    Config.of({ file: "config.toml", data: ConfigData.empty })
  )
}
