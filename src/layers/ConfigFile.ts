/**
 * The `Config` service from `<storage>/config.toml` (contract §5).
 *
 * A missing file is an empty config. A TOML syntax error names the file, line
 * and column; a validation error names the file and the key path, e.g.
 * `.parley/config.toml: conversation.tools.write_note.run: expected "ask" | "edit" | "unattended" | "skip", got "sometimes"`.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as ConfigFile from "parley/layers/ConfigFile"
 * import { Config } from "parley/services/Config"
 * const model = Config.use(({ data }) => Effect.succeed(data.assistant?.model))
 *   .pipe(Effect.provide(ConfigFile.layer(".parley")))
 * ```
 *
 * @since 0.1.0
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { parse, TomlError } from "smol-toml"
import * as ConfigData from "../domain/tool/Config.ts"
import { Config, ConfigError, validate } from "../services/Config.ts"

/** The config file of a storage directory. */
export const fileOf = (storageDir: string): string => path.join(storageDir, "config.toml")

// smol-toml builds null-prototype tables; downstream code (ajv, providers,
// equality in tests) expects ordinary objects. Dates stay dates (and are then
// rejected where JSON is required, with a clear message).
const plain = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(plain)
  if (typeof value === "object" && value !== null && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]))
  }
  return value
}

/** Parses TOML text; syntax errors become a `ConfigError` with line and column. */
export const parseToml = (text: string, file: string): Effect.Effect<ConfigData.Config, ConfigError> =>
  Effect.suspend(() => {
    let document: unknown
    try {
      document = parse(text)
    } catch (e) {
      if (e instanceof TomlError) {
        // smol-toml prefixes a generic sentence and appends a code excerpt; keep the reason.
        const reason = e.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "")
        return Effect.fail(
          new ConfigError({ file, problems: [{ line: e.line, column: e.column, message: `invalid TOML: ${reason}` }] })
        )
      }
      return Effect.fail(new ConfigError({ file, problems: [{ message: `invalid TOML: ${String(e)}` }] }))
    }
    const values = plain(document)
    return Effect.tap(validate(values, file), () =>
      Effect.sync(() => {
        // Keys parley does not read in an assistant table (RFD 034): a JP config still loads, and says what is unused.
        for (const w of ConfigData.warnings(values))
          process.stderr.write(`parley: ${file}: ${ConfigData.formatPath(w.path)}: ${w.message}\n`)
      })
    )
  })

/** Reads and validates one config file; a missing file is an empty config. */
export const load = (file: string): Effect.Effect<ConfigData.Config, ConfigError> =>
  Effect.tryPromise({
    try: () =>
      fs
        .readFile(file, "utf8")
        .catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e))),
    catch: (e) =>
      new ConfigError({ file, problems: [{ message: `cannot read: ${e instanceof Error ? e.message : String(e)}` }] })
  }).pipe(Effect.flatMap((text) => (text === undefined ? Effect.succeed({}) : parseToml(text, file))))

/** `Config` from `<storageDir>/config.toml`. */
export const layer = (storageDir: string): Layer.Layer<Config, ConfigError> => layerFromFile(fileOf(storageDir))

/** `Config` from an explicit file path. */
export const layerFromFile = (file: string): Layer.Layer<Config, ConfigError> =>
  Layer.effect(
    Config,
    Effect.map(load(file), (data) => Config.of({ file, data }))
  )
