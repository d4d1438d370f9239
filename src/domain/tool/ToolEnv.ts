/**
 * The environment a local tool runs with (contract §8: "local tools never
 * receive `PARLEY_*` variables or tokens").
 *
 * A tool is a program the model chose to run with arguments the model wrote:
 * whatever it can read, a prompt injection can make it print. parley's own
 * variables are parley's business — `$PARLEY_TOKEN` authenticates a runner
 * of a cluster, `$PARLEY_ANNOUNCE` tells a background run where to say it
 * started — so none of them reaches a tool, and neither does any variable
 * that carries the token's value under another name. Everything else follows
 * the tool's config (`[conversation.tools.NAME]`):
 *
 * - `env = "inherit"` (default, JP's behaviour): parley's environment, less
 *   the above. Provider API keys stay, as in JP.
 * - `env = "clear"`: only the variables named in `env_keep` (those that are
 *   set), nothing else — not even `PATH`.
 * - `env_set = { NAME = "value" }`: set last, over either; a value may name
 *   one of parley's variables as `${env:NAME}` (see {@link EnvReference}).
 *
 * `PARLEY_*` in `env_keep` or `env_set`, and `${env:PARLEY_…}`, are config
 * errors (`Config.ts`); {@link forTool} drops them as well, so no config
 * that slipped past the check can bring one back.
 *
 * @example
 * ```ts
 * import * as ToolEnv from "parley/domain/tool/ToolEnv"
 * const parent = { PATH: "/usr/bin", HOME: "/home/me", PARLEY_TOKEN: "t".repeat(40), GH: "ghp_1" }
 * ToolEnv.forTool(parent, { mode: "clear", keep: ["PATH"], set: { GITHUB_TOKEN: "${env:GH}" } })
 * // Result.succeed({ PATH: "/usr/bin", GITHUB_TOKEN: "ghp_1" })
 * ToolEnv.forTool(parent, ToolEnv.inherit)
 * // Result.succeed({ PATH: "/usr/bin", HOME: "/home/me", GH: "ghp_1" })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Result from "effect/Result"
import * as EnvReference from "./EnvReference.ts"

/** The prefix of parley's own variables (`PARLEY_TOKEN`, `PARLEY_STORAGE`, …). */
export const PREFIX = "PARLEY_"

/** The variable whose value is a secret wherever it appears (the cluster's API token). */
export const TOKEN = "PARLEY_TOKEN"

/**
 * A token shorter than this is not searched for in other variables: a value
 * that short would match unrelated text (and a cluster refuses it anyway).
 */
export const TOKEN_SEARCH_MIN = 16

/** An environment variable name as a shell writes it: letters, digits and `_`, not starting with a digit. */
export const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Whether `name` is one of parley's own variables. */
export const isParleys = (name: string): boolean => name.startsWith(PREFIX)

/** How a local tool's environment is made. */
export interface Setting {
  /** `inherit`: parley's environment; `clear`: only `keep`. */
  readonly mode: "inherit" | "clear"
  /** With `clear`, the variables of parley's environment the tool still gets. */
  readonly keep: ReadonlyArray<string>
  /** Set last; values may name parley's variables as `${env:NAME}`. */
  readonly set: Readonly<Record<string, string>>
}

/** The default: parley's environment without parley's own variables. */
export const inherit: Setting = { mode: "inherit", keep: [], set: {} }

/** Why an environment could not be made: `env_set.<key>` names `${env:<name>}`, which is not set (or is parley's). */
export interface Unset {
  readonly key: string
  readonly name: string
}

/** `$PARLEY_TOKEN`'s value in `env` when it is long enough to search for ({@link TOKEN_SEARCH_MIN}), else `undefined`. */
export const searchableToken = (env: Readonly<Record<string, string | undefined>>): string | undefined => {
  const secret = env[TOKEN]
  return secret !== undefined && secret.length >= TOKEN_SEARCH_MIN ? secret : undefined
}

/** Whether `value` carries the token (from {@link searchableToken}), under whatever name it travels. */
export const carriesToken = (value: string, token: string | undefined): boolean =>
  token !== undefined && value.includes(token)

/**
 * `env` without `$PARLEY_TOKEN` and any variable carrying its value: for the
 * `parley query` runs `serve` starts, which need parley's other variables
 * (`PARLEY_STORAGE`, …) but never read the token, so a tool reading its
 * parent's `/proc/<pid>/environ` finds none there.
 */
export const withoutToken = (env: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const token = searchableToken(env)
  const kept = Object.entries(env).filter(
    (entry): entry is [string, string] => entry[1] !== undefined && entry[0] !== TOKEN && !carriesToken(entry[1], token)
  )
  return Object.fromEntries(kept)
}

/** Whether a variable may reach a tool: not parley's, and not carrying the token's value. */
const passes =
  (token: string | undefined) =>
  ([name, value]: readonly [string, string | undefined]): boolean =>
    value !== undefined && !isParleys(name) && !carriesToken(value, token)

/**
 * The environment of a tool under `setting`, from parley's environment
 * `parent`. Fails with the first `env_set` entry naming a variable that is
 * not set (or is one of parley's).
 */
export const forTool = (
  parent: Readonly<Record<string, string | undefined>>,
  setting: Setting
): Result.Result<Record<string, string>, Unset> => {
  const token = searchableToken(parent)
  const base =
    setting.mode === "inherit" ? Object.entries(parent) : setting.keep.map((name) => [name, parent[name]] as const)
  const lookup = (name: string) => (isParleys(name) ? undefined : parent[name])
  const set = EnvReference.expandAll(setting.set, lookup)
  if (Result.isFailure(set)) return Result.fail(set.failure)
  const all = [...base, ...Object.entries(set.success)].filter(passes(token))
  return Result.succeed(Object.fromEntries(all) as Record<string, string>)
}

/** `env` without parley's own variables or the token's value: for the other programs parley starts (the editor, the reaper). */
export const withoutParleys = (env: Readonly<Record<string, string | undefined>>): Record<string, string> =>
  Result.getOrThrow(forTool(env, inherit))
