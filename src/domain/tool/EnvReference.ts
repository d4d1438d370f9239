/**
 * `${env:NAME}` in MCP `env` and `headers` values (docs/mcp.md#secrets-out-of-config, "secrets out of
 * config"): a token stays in the environment parley runs in, and
 * `config.toml` only names it — `Authorization = "Bearer ${env:GITHUB_TOKEN}"`.
 *
 * NAME is a shell variable name (`[A-Za-z_][A-Za-z0-9_]*`). Anything else
 * that starts `${env:` is a config error ({@link problem}), so a typo is not
 * sent to a server as text. Other `$` signs are plain text.
 *
 * @example
 * ```ts
 * import * as EnvReference from "parley/domain/tool/EnvReference"
 * EnvReference.expand("Bearer ${env:TOKEN}", (name) => (name === "TOKEN" ? "t0k" : undefined))
 * // Result.succeed("Bearer t0k")
 * EnvReference.expand("${env:MISSING}", () => undefined) // Result.fail("MISSING")
 * EnvReference.problem("${env:1X}") // "${env:…} must name a variable: letters, digits and _ (not starting with a digit), got \"${env:1X}\""
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Result from "effect/Result"

const REFERENCE = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g
const OPENING = "${env:"

/** Why `value` holds a malformed `${env:…}`, or `undefined` when every one is well formed. */
export const problem = (value: string): string | undefined => {
  const rest = value.replace(REFERENCE, "")
  const at = rest.indexOf(OPENING)
  if (at < 0) return undefined
  const end = rest.indexOf("}", at)
  const shown = end < 0 ? rest.slice(at) : rest.slice(at, end + 1)
  return `\${env:…} must name a variable: letters, digits and _ (not starting with a digit), got ${JSON.stringify(shown)}`
}

/** The variables `value` names, in order. */
export const names = (value: string): ReadonlyArray<string> => [...value.matchAll(REFERENCE)].map((m) => m[1]!)

/** `value` with every `${env:NAME}` replaced by the variable's value; fails with the first NAME that is not set. */
export const expand = (value: string, lookup: (name: string) => string | undefined): Result.Result<string, string> => {
  const missing = names(value).find((name) => lookup(name) === undefined)
  if (missing !== undefined) return Result.fail(missing)
  return Result.succeed(value.replace(REFERENCE, (_, name: string) => lookup(name)!))
}

/** Every value of a table expanded; fails with the key and the variable of the first one that cannot be. */
export const expandAll = (
  table: Readonly<Record<string, string>>,
  lookup: (name: string) => string | undefined
): Result.Result<Record<string, string>, { readonly key: string; readonly name: string }> => {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(table)) {
    const expanded = expand(value, lookup)
    if (Result.isFailure(expanded)) return Result.fail({ key, name: expanded.failure })
    out[key] = expanded.success
  }
  return Result.succeed(out)
}
