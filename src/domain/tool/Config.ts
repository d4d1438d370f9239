/**
 * parley's configuration (`<storage>/config.toml`, contract §5), as validated
 * data plus the lookups the executor and the coordinator need.
 *
 * Keys parley does not know are ignored (a JP `.jp/config.toml` carries many),
 * but known keys are checked strictly, and `inquiry_source` is rejected
 * outright: who asked a question is decided by the tool kind, never by config
 * (RFD 082 "Source attribution"). `source` on a tool is the tool kind:
 * `local`, `builtin`, or `mcp.NAME` (docs/mcp.md: pins the tool to the MCP
 * server `[mcp.servers.NAME]`).
 *
 * @example
 * ```ts
 * import * as Config from "parley/domain/tool/Config"
 * const result = Config.decode({ conversation: { tools: { note: { command: "./note.sh", run: "ask" } } } })
 * // Result.succeed({ conversation: { tools: { note: { command: "./note.sh", run: "ask" } } } })
 * ```
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as EnvReference from "./EnvReference.ts"
import { DetachedPolicy } from "./DetachedPolicy.ts"
import { questionIdProblem } from "./Question.ts"
import { ResultMode, RunMode, type ToolKind } from "./ToolDefinition.ts"
import * as ToolEnv from "./ToolEnv.ts"

// JP writes `[assistant.model] id = "p/m"` or `id = { provider, name }`;
// parley's own form is the string `provider/model`.
const JpModel = Schema.Struct({
  id: Schema.Union([Schema.String, Schema.Struct({ provider: Schema.String, name: Schema.String })])
}).pipe(
  Schema.decodeTo(Schema.String, {
    decode: SchemaGetter.transform((m) => (typeof m.id === "string" ? m.id : `${m.id.provider}/${m.id.name}`)),
    encode: SchemaGetter.transform((id: string) => ({ id }))
  })
)
/** `provider/model` (e.g. `anthropic/claude-sonnet-4-5`) or `scripted`. */
export const ModelName = Schema.Union([Schema.String, JpModel]).annotate({
  expected: 'a model name such as "anthropic/claude-sonnet-4-5"'
})

/**
 * A prompt cache policy (RFD 034 `CachePolicy`): `true`/`"short"` (the
 * provider's short cache, the default), `false`/`"off"`, `"long"` (about an
 * hour), or a duration (`"10m"`: the nearest the provider offers).
 */
// One string member with one message: as a union of the three words and a
// pattern, a wrong string was told only `expected "off" | "short" | "long"`.
const CACHE_EXPECTED = 'true, false, "off", "short", "long" or a duration such as "10m"'
const CACHE_STRING = /^(off|short|long|[0-9]+(\.[0-9]+)?(ms|s|m|h))$/
export const CachePolicy = Schema.Union([
  Schema.Boolean,
  Schema.String.check(Schema.makeFilter((s: string) => CACHE_STRING.test(s) || `expected ${CACHE_EXPECTED}`))
]).annotate({ expected: CACHE_EXPECTED })
export type CachePolicy = typeof CachePolicy.Type

/** An instruction for the inquiry model: a line of text, or JP's `{ title, description, items }`. */
export const Instruction = Schema.Union([
  Schema.String,
  Schema.Struct({
    title: Schema.optionalKey(Schema.String),
    description: Schema.optionalKey(Schema.String),
    items: Schema.optionalKey(Schema.Array(Schema.String))
  })
])
export type Instruction = typeof Instruction.Type

/**
 * The part of JP's `PartialAssistantConfig` parley reads for inquiry side
 * calls (RFD 034): `conversation.inquiry.assistant`, and a question's
 * `target` table. Other keys of JP's assistant config are warned about and
 * ignored ({@link warnings}).
 */
export const InquiryAssistant = Schema.Struct({
  /** `provider/model`, or JP's `model.id = "…"`. */
  model: Schema.optionalKey(ModelName),
  system_prompt: Schema.optionalKey(Schema.String),
  /** Added to the system prompt of the side call, in order. */
  instructions: Schema.optionalKey(Schema.Array(Instruction)),
  request: Schema.optionalKey(
    Schema.Struct({
      /** The side call's reply may not be longer than this (bytes); longer is a backend error. */
      max_response_bytes: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
      cache: Schema.optionalKey(CachePolicy)
    })
  )
})
export type InquiryAssistant = typeof InquiryAssistant.Type

/** The keys of {@link InquiryAssistant} parley reads (the rest are warned about). */
const INQUIRY_ASSISTANT_KEYS: Readonly<Record<string, ReadonlyArray<string> | true>> = {
  model: ["id"],
  system_prompt: true,
  instructions: true,
  request: ["max_response_bytes", "cache"]
}

/**
 * Who answers a question when no static answer applies: the person
 * (`user`), the model (`assistant`), or the model with per-question
 * overrides (a table, RFD 034: `target = { model.id = "openai/small" }`,
 * merged over `conversation.inquiry.assistant`, then the main assistant).
 */
export const QuestionTarget = Schema.Union([Schema.Literals(["user", "assistant"]), InquiryAssistant])
export type QuestionTarget = typeof QuestionTarget.Type

/** Who a target routes to: a table is the assistant. */
export type TargetKind = "user" | "assistant"

/** What a question meant for a person does when nobody can be asked (its own module: `DetachedPolicy.ts`). */
export { DetachedPolicy } from "./DetachedPolicy.ts"

/**
 * Who may fill in an MCP server's elicitation forms (docs/decisions.md#mcp-forms-are-the-persons): `person` —
 * the default; the questions are `exclusive` (RFD 083), so with nobody to
 * ask the `detached` policy applies, never the model — or `assistant`.
 */
export const FormsTo = Schema.Literals(["person", "assistant"])
export type FormsTo = typeof FormsTo.Type

/** A duration: `500ms`, `30s`, `10m`, `2h`, or a number of seconds. */
export const Duration = Schema.Union([
  Schema.Number.check(Schema.isGreaterThan(0)),
  // Not zero: a wait that never waits is `defer`.
  Schema.String.check(Schema.isPattern(/^(?!0+(\.0+)?(ms|s|m|h)$)[0-9]+(\.[0-9]+)?(ms|s|m|h)$/))
]).annotate({ expected: 'a duration such as "30s", "10m" or "2h" (or a number of seconds)' })

/** `[conversation.tools.<tool>.questions.<id>]`: target and static answer. */
export const QuestionConfig = Schema.Struct({
  /** Who answers when no static answer applies (default `user`). */
  target: Schema.optionalKey(QuestionTarget),
  /** A fixed answer: the question is answered without asking anyone. */
  answer: Schema.optionalKey(Schema.Json),
  /** How often one call may ask this question before the call ends in an error (default {@link DEFAULT_MAX_ATTEMPTS}). */
  max_attempts: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  /** "Who's asking", shown above the question at the prompt (RFD 083; display only, never recorded). */
  prompt_label: Schema.optionalKey(Schema.String)
})
export type QuestionConfig = typeof QuestionConfig.Type

/**
 * A tool's `source`: its kind (`local`, `builtin`), or `mcp.NAME` — the tool
 * comes from the MCP server `[mcp.servers.NAME]` (docs/mcp.md).
 */
export type ToolSource = Exclude<ToolKind, "mcp"> | `mcp.${string}`
export const ToolSource = Schema.String.pipe(
  Schema.refine((s: string): s is ToolSource => s === "local" || s === "builtin" || /^mcp\..+$/.test(s), {
    expected: `"local", "builtin" or "mcp.NAME" (NAME a server under [mcp.servers])`
  })
)

/** An environment variable name (`env_keep`): letters, digits and `_`, not starting with a digit. */
const EnvName = Schema.String.check(
  Schema.makeFilter(
    (s: string) =>
      ToolEnv.NAME.test(s) ||
      `expected a variable name (letters, digits and _, not starting with a digit), got ${JSON.stringify(s)}`
  )
)

/** `[conversation.tools.<tool>]`: kind, command, description, parameters, run mode, limits, questions. */
export const ToolConfig = Schema.Struct({
  /**
   * The tool kind; defaults to `local` when `command` is set, else `builtin`
   * (or the MCP server that offers a tool of that name).
   */
  source: Schema.optionalKey(ToolSource),
  /** Shell command of a local tool (run with `sh -c`; `{{tool}}`/`{{context}}` substituted). */
  command: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  /** JSON Schema of the arguments; checked before the tool runs. */
  parameters: Schema.optionalKey(Schema.JsonObject),
  run: Schema.optionalKey(RunMode),
  /** JP's result review: `unattended` (default), `ask`, `edit` or `skip` the result before the model sees it. */
  result: Schema.optionalKey(ResultMode),
  /** Stop a local tool (its whole process group) after this many milliseconds (default {@link DEFAULT_TIMEOUT_MS}); for an MCP tool, cancel the call after this long. */
  timeout_ms: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  /** Stop a local tool once stdout and stderr together pass this many bytes (default {@link DEFAULT_MAX_OUTPUT_BYTES}). */
  max_output_bytes: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  /** How often one call may ask any one question before the call ends in an error (default {@link DEFAULT_MAX_ATTEMPTS}). */
  max_attempts: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  /** `false` hides the tool from the model (it is then "not available"). */
  enable: Schema.optionalKey(Schema.Boolean),
  /** A local tool's environment: `inherit` (default: parley's, less `PARLEY_*`) or `clear` (only `env_keep`); see `ToolEnv`. */
  env: Schema.optionalKey(Schema.Literals(["inherit", "clear"])),
  /** With `env = "clear"`, the variables of parley's environment the tool still gets (never `PARLEY_*`). */
  env_keep: Schema.optionalKey(Schema.Array(EnvName)),
  /** Variables set for a local tool, over the rest; values may name parley's variables as `${env:NAME}` (never `PARLEY_*`). */
  env_set: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  /** An MCP tool's forms: `person` or `assistant`, over its server's `forms` (docs/decisions.md#mcp-forms-are-the-persons). */
  forms: Schema.optionalKey(FormsTo),
  questions: Schema.optionalKey(Schema.Record(Schema.String, QuestionConfig))
})
export type ToolConfig = typeof ToolConfig.Type

/**
 * One MCP server (docs/mcp.md): `command` (+ `args`, `env`, `cwd`) starts it
 * over stdio; `url` (+ `headers`) connects over streamable HTTP.
 */
export const McpServerConfig = Schema.Struct({
  command: Schema.optionalKey(Schema.String),
  args: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Added to the few variables the SDK passes on (HOME, LOGNAME, PATH, SHELL, TERM, USER); values may name parley's variables, `${env:NAME}`. */
  env: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  /** Working directory of a stdio server, relative to the project root (default: the project root). */
  cwd: Schema.optionalKey(Schema.String),
  url: Schema.optionalKey(Schema.String),
  /** Sent with every request; values may name parley's variables, `${env:NAME}` (a token stays out of config.toml). */
  headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  /** `false` leaves the server (and its tools) out. */
  enable: Schema.optionalKey(Schema.Boolean),
  /** How long starting the server and listing its tools may take (default 10000). */
  startup_timeout_ms: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  /**
   * The MCP protocol version (docs/mcp.md#protocol-version): `auto` (default) asks the server
   * and speaks the stateless 2026-07-28 protocol where it is offered,
   * 2025-11-25 otherwise; `"2025-11-25"` skips asking, `"2026-07-28"` insists.
   */
  protocol: Schema.optionalKey(Schema.Literals(["auto", "2025-11-25", "2026-07-28"])),
  /** Who may fill in the server's forms (docs/decisions.md#mcp-forms-are-the-persons): `person` (default: only a person, as MCP means it) or `assistant` (the model too). */
  forms: Schema.optionalKey(FormsTo)
})
export type McpServerConfig = typeof McpServerConfig.Type

/** `[providers.<p>.models."<id>"]`: what parley must know about one model. */
export const ModelConfig = Schema.Struct({
  /** Input tokens the model reads at most; overrides parley's table (docs/models.md#long-conversations-compactions-and-context-windows-rfd-064). */
  context_window: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  /** Whether it gives structured replies, as an inquiry side call needs; overrides parley's table (RFD 034, docs/models.md). */
  structured_output: Schema.optionalKey(Schema.Boolean)
})

/** How `tool_calls` of a compaction rule is written in config (JP's `ToolCallsMode`). */
export const ToolCallsMode = Schema.Literals(["strip", "strip-requests", "strip-responses", "omit"])
export type ToolCallsMode = typeof ToolCallsMode.Type

/**
 * A rule's `summary` table (JP's `SummaryConfig`): the turns are replaced by a
 * summary that `model.id` writes (default: the conversation's model, then
 * `assistant.model`), told `instructions` instead of parley's summarising
 * prompt.
 */
export const SummaryRuleConfig = Schema.Struct({
  model: Schema.optionalKey(Schema.Struct({ id: Schema.optionalKey(ModelName) })),
  instructions: Schema.optionalKey(Schema.String)
})
export type SummaryRuleConfig = typeof SummaryRuleConfig.Type

/**
 * A compaction rule (JP's `CompactionRuleConfig`, RFD 064): one entry of
 * `[[conversation.compaction.rules]]`, or `[conversation.compaction.auto.rule]`.
 * `keep_first` / `keep_last` are turn counts (JP also takes a duration there).
 */
export const CompactionRuleConfig = Schema.Struct({
  /** Turns kept as they are at the start (default 1). */
  keep_first: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  /** Turns kept as they are at the end (default 3). */
  keep_last: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  reasoning: Schema.optionalKey(Schema.Literal("strip")),
  tool_calls: Schema.optionalKey(ToolCallsMode),
  /** Replace the turns with a summary; `reasoning` and `tool_calls` are then ignored. */
  summary: Schema.optionalKey(SummaryRuleConfig)
})
export type CompactionRuleConfig = typeof CompactionRuleConfig.Type

/**
 * `[conversation.compaction.auto]` (JP's draft D50): off by default; when on,
 * a request estimated above `trigger_ratio` of the model's window, in a
 * conversation of more than `min_turns` turns, first appends the `rule`'s
 * compaction (default: keep the first turn and the last 3, strip reasoning
 * and tool calls).
 */
export const AutoCompactionConfig = Schema.Struct({
  enabled: Schema.optionalKey(Schema.Boolean),
  trigger_ratio: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(1))),
  min_turns: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  rule: Schema.optionalKey(CompactionRuleConfig)
})
export type AutoCompactionConfig = typeof AutoCompactionConfig.Type

/**
 * `[server.web]` (draft D16): the address and port `parley serve` listens on
 * unless `--host`/`--port` say otherwise. A port of 0 is any free port, as
 * `--port 0` is.
 */
export const WebServerConfig = Schema.Struct({
  bind: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
  port: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(65535)).annotate({
      expected: "a port number from 0 to 65535"
    })
  )
})
export type WebServerConfig = typeof WebServerConfig.Type

/** The events a notification hook is told of (contract §8), by the names the payloads carry. */
export const NotifyEventName = Schema.Literals(["question_opened", "question_closed", "run_waiting", "run_ended"])
export type NotifyEventName = typeof NotifyEventName.Type

/** A webhook's secret: text, or `${env:NAME}` naming the variable that holds it (docs/questions-and-approvals.md#notifications). */
const NotifySecret = Schema.String.check(Schema.makeFilter((s: string) => EnvReference.problem(s) ?? true))

/** Where a URL's `user:password@` would be: after the scheme's `//`, before the host's end. */
const URL_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]*@/i

/** `text` with a URL's `user:password@` replaced, so an error that quotes the URL never prints a password. */
const withoutCredentials = (text: string): string => text.replace(URL_USERINFO, "$1…@")

/**
 * A webhook URL holds no `user:password@`: a config file is shared and copied
 * (and quoted by errors), and node:http would send them as Basic auth. A
 * receiver checks the signature made with `secret`, which can stay out of the
 * file (`${env:NAME}`).
 */
const NoCredentials = Schema.makeFilter((url: string) =>
  URL_USERINFO.test(url)
    ? "must not hold credentials (user:password@): sign deliveries with secret (it may be ${env:NAME}) and check X-Parley-Signature"
    : true
)

/**
 * `[notify]` (docs/questions-and-approvals.md#notifications): a command run once per event with the
 * event's JSON on stdin, and/or a webhook POSTed the same JSON, signed with
 * `secret` (`X-Parley-Signature: sha256=…`), for the `events` listed (default
 * all), retried with backoff for `retry_for` (default 10 minutes), each try
 * given `timeout` (default 10 s).
 */
export const NotifyConfig = Schema.Struct({
  command: Schema.optionalKey(
    Schema.Array(Schema.String)
      .check(Schema.isMinLength(1))
      .annotate({ expected: 'a command as a list of words, such as ["/path/to/script", "arg"]' })
  ),
  webhook: Schema.optionalKey(
    Schema.Struct({
      url: Schema.String.check(Schema.isPattern(/^https?:\/\/\S+$/))
        .annotate({ expected: "an http:// or https:// URL" })
        .check(NoCredentials),
      secret: Schema.optionalKey(NotifySecret),
      events: Schema.optionalKey(Schema.Array(NotifyEventName)),
      retry_for: Schema.optionalKey(Duration),
      timeout: Schema.optionalKey(Duration)
    })
  )
})
export type NotifyConfig = typeof NotifyConfig.Type

/**
 * parley's configuration (`<storage>/config.toml`, contract §5), as validated
 * data plus the lookups the executor and the coordinator need.
 *
 * @example
 * ```ts
 * import * as Config from "parley/domain/tool/Config"
 * const result = Config.decode({ conversation: { tools: { note: { command: "./note.sh", run: "ask" } } } })
 * // Result.succeed({ conversation: { tools: { note: { command: "./note.sh", run: "ask" } } } })
 * ```
 */
export const Config = Schema.Struct({
  assistant: Schema.optionalKey(
    Schema.Struct({
      model: Schema.optionalKey(ModelName),
      system_prompt: Schema.optionalKey(Schema.String)
    })
  ),
  providers: Schema.optionalKey(
    Schema.Record(
      Schema.String,
      Schema.Struct({
        base_url: Schema.optionalKey(Schema.String),
        /** Per model id (`[providers.anthropic.models."claude-sonnet-4-5"]`): overrides parley's table of context windows. */
        models: Schema.optionalKey(Schema.Record(Schema.String, ModelConfig))
      })
    )
  ),
  conversation: Schema.optionalKey(
    Schema.Struct({
      inquiry: Schema.optionalKey(
        Schema.Struct({
          /** RFD 034: the side call's model, system prompt, instructions and request settings (unset: the main assistant's). */
          assistant: Schema.optionalKey(InquiryAssistant),
          /** What a person's question does with nobody to ask (default `assistant`). */
          detached: Schema.optionalKey(DetachedPolicy),
          /** How long `detached = "wait"` keeps a question open before deferring it (default 10 minutes). */
          wait_timeout: Schema.optionalKey(Duration)
        })
      ),
      /** RFD 064 / D50: `[[conversation.compaction.rules]]` (`conversation compact`, `query --compact`) and `[conversation.compaction.auto]`. */
      compaction: Schema.optionalKey(
        Schema.Struct({
          rules: Schema.optionalKey(Schema.Array(CompactionRuleConfig)),
          auto: Schema.optionalKey(AutoCompactionConfig)
        })
      ),
      /** Per-tool settings; the key `*` holds defaults for every tool (JP). */
      tools: Schema.optionalKey(Schema.Record(Schema.String, ToolConfig))
    })
  ),
  mcp: Schema.optionalKey(
    Schema.Struct({
      servers: Schema.optionalKey(Schema.Record(Schema.String, McpServerConfig))
    })
  ),
  /** `[ask.claude_code] tools`: which of Claude Code's tools `parley ask --claude-code-hook` asks about (docs/ask.md). */
  ask: Schema.optionalKey(
    Schema.Struct({
      claude_code: Schema.optionalKey(Schema.Struct({ tools: Schema.optionalKey(Schema.Array(Schema.String)) }))
    })
  ),
  /** `[notify]`: who is told when a question waits, closes, or a run ends (contract §8). */
  notify: Schema.optionalKey(NotifyConfig),
  /** Draft D16: `[server.web]`, where `parley serve` listens when `--host`/`--port` are not given. */
  server: Schema.optionalKey(
    Schema.Struct({
      web: Schema.optionalKey(WebServerConfig)
    })
  )
})
export type Config = typeof Config.Type

/** No configuration (what a missing file means). */
export const empty: Config = {}

/** One problem in a config document, at a key path. */
export interface ConfigIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** `conversation.tools."a.b".run`: dotted, with odd keys quoted as TOML would. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((k) =>
      typeof k === "string" && /^[A-Za-z0-9_-]+$/.test(k)
        ? k
        : typeof k === "number"
          ? `[${k}]`
          : JSON.stringify(String(k))
    )
    .join(".")
    .replace(/\.\[/g, "[")

const decodeSchema = Schema.decodeUnknownResult(Config, { errors: "all" })
const standardIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const valueAt = (
  input: unknown,
  path: ReadonlyArray<PropertyKey>
): { readonly found: boolean; readonly value?: unknown } => {
  let current: unknown = input
  for (const key of path) {
    if (Array.isArray(current) && typeof key === "number" && key in current) current = current[key]
    else if (Predicate.isObject(current) && key in current) current = current[key]
    else return { found: false }
  }
  return { found: true, value: current }
}

const describeValue = (value: unknown): string =>
  value instanceof Date
    ? `a date (${value.toISOString()})`
    : Array.isArray(value)
      ? JSON.stringify(value)
      : typeof value === "object" && value !== null
        ? "a table"
        : typeof value === "string"
          ? JSON.stringify(withoutCredentials(value))
          : JSON.stringify(value)

// Schema messages read "Expected object"; a TOML user thinks in tables.
const reword = (message: string, input: unknown, path: ReadonlyArray<PropertyKey>): string => {
  if (message === "Missing key") return "missing"
  const text = message.replace(/\bobject\b/g, "a table").replace(/^Expected/, "expected")
  const at = valueAt(input, path)
  return at.found && text.startsWith("expected") && !/, got /.test(text)
    ? `${text}, got ${describeValue(at.value)}`
    : text
}

const isTable = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const rawMcpServers = (input: unknown): Record<string, unknown> => {
  const mcp = isTable(input) ? input["mcp"] : undefined
  return isTable(mcp) && isTable(mcp["servers"]) ? mcp["servers"] : {}
}

// `[mcp.servers.NAME]`: exactly one way to reach the server, and only its own keys.
const mcpIssues = (input: unknown): Array<ConfigIssue> => {
  const issues: Array<ConfigIssue> = []
  for (const [name, raw] of Object.entries(rawMcpServers(input))) {
    if (!isTable(raw)) continue
    const base = ["mcp", "servers", name]
    if (!/^[A-Za-z0-9_-]+$/.test(name)) {
      issues.push({
        path: base,
        message: "a server name may only hold letters, digits, '_' and '-' (it is written source = \"mcp.NAME\")"
      })
    }
    const stdio = "command" in raw
    const http = "url" in raw
    if (stdio === http) {
      issues.push({
        path: base,
        message: stdio
          ? "set either command (a stdio server parley starts) or url (a streamable HTTP server), not both"
          : "missing command (a stdio server parley starts) or url (a streamable HTTP server)"
      })
      continue
    }
    for (const key of stdio ? ["headers"] : ["args", "env", "cwd"]) {
      if (key in raw)
        issues.push({
          path: [...base, key],
          message: stdio ? "only an HTTP server (url) has headers" : "only a stdio server (command) has " + key
        })
    }
    for (const key of ["env", "headers"]) {
      const table = raw[key]
      if (!isTable(table)) continue
      for (const [name, value] of Object.entries(table)) {
        const problem = typeof value === "string" ? EnvReference.problem(value) : undefined
        if (problem !== undefined) issues.push({ path: [...base, key, name], message: problem })
      }
    }
    if (http && typeof raw["url"] === "string" && !/^https?:\/\/[^\s]+$/.test(raw["url"])) {
      issues.push({
        path: [...base, "url"],
        message: `expected an http:// or https:// URL, got ${describeValue(raw["url"])}`
      })
    }
  }
  return issues
}

// A tool pinned to an MCP server must name a configured server and has no command or parameters.
const mcpToolIssues = (
  input: unknown,
  base: ReadonlyArray<string>,
  raw: Record<string, unknown>
): Array<ConfigIssue> => {
  const source = raw["source"]
  if (typeof source !== "string" || !source.startsWith("mcp.")) return []
  const issues: Array<ConfigIssue> = []
  const server = source.slice("mcp.".length)
  const servers = Object.keys(rawMcpServers(input))
  if (!servers.includes(server)) {
    issues.push({
      path: [...base, "source"],
      message: `there is no MCP server named "${server}" (configure it under [mcp.servers.${server}]${
        servers.length > 0 ? `; configured: ${servers.join(", ")}` : ""
      })`
    })
  }
  for (const key of ["command", "parameters"]) {
    if (key in raw)
      issues.push({ path: [...base, key], message: `an MCP tool has no ${key} of its own: its server provides it` })
  }
  return issues
}

const PARLEYS = "is parley's own variable: local tools never receive PARLEY_* variables (see docs/security.md)"
const ENV_KEYS = ["env", "env_keep", "env_set"] as const

// Whether a raw tool table is a local tool (as `toolKind` decides on the decoded one).
const isLocal = (raw: Record<string, unknown>): boolean =>
  raw["source"] === "local" || (raw["source"] === undefined && "command" in raw)

// Why a tool without a command has no environment setting: a built-in runs inside parley, an MCP tool in its server.
const notLocal = (raw: Record<string, unknown>): string => {
  const source = raw["source"]
  if (typeof source === "string" && source.startsWith("mcp."))
    return "an MCP tool runs with its server's environment ([mcp.servers.NAME] env)"
  if (source === "builtin") return "a built-in tool runs inside parley and starts no process"
  return "without one this is a built-in tool, which runs inside parley and starts no process, or an MCP server's, which runs with its server's environment ([mcp.servers.NAME] env)"
}

// Whether `*`'s env_keep reaches any tool: `*` clears, or a local tool clears and keeps nothing of its own (`toolEnv`).
const defaultKeepUsed = (all: Record<string, unknown>, tools: Record<string, unknown>): boolean =>
  all["env"] === "clear" ||
  Object.entries(tools).some(
    ([name, raw]) => name !== "*" && isTable(raw) && isLocal(raw) && raw["env"] === "clear" && !("env_keep" in raw)
  )

// `env`, `env_keep`, `env_set` of one tool (or of `*`): local tools only, real names, never parley's own.
const envIssues = (
  name: string,
  raw: Record<string, unknown>,
  tools: Record<string, unknown>,
  base: ReadonlyArray<string>
): Array<ConfigIssue> => {
  const all = isTable(tools["*"]) ? tools["*"] : {}
  const issues: Array<ConfigIssue> = []
  if (name !== "*" && !isLocal(raw)) {
    for (const key of ENV_KEYS)
      if (key in raw)
        issues.push({
          path: [...base, key],
          message: `only a local tool (one with a command) has ${key}; ${notLocal(raw)}`
        })
    return issues
  }
  const keep = raw["env_keep"]
  if (Array.isArray(keep)) {
    keep.forEach((entry, i) => {
      if (typeof entry === "string" && ToolEnv.isParleys(entry))
        issues.push({ path: [...base, "env_keep", i], message: `${entry} ${PARLEYS}` })
    })
    if (name === "*" ? !defaultKeepUsed(raw, tools) : (raw["env"] ?? all["env"] ?? "inherit") === "inherit")
      issues.push({
        path: [...base, "env_keep"],
        message:
          name === "*"
            ? 'needs env = "clear" here or in a local tool without its own env_keep (with env = "inherit" a tool already gets every variable but parley\'s own)'
            : 'needs env = "clear" (with env = "inherit" a tool already gets every variable but parley\'s own)'
      })
  }
  const set = raw["env_set"]
  if (isTable(set)) {
    for (const [key, value] of Object.entries(set)) {
      const path = [...base, "env_set", key]
      if (!ToolEnv.NAME.test(key))
        issues.push({ path, message: "expected a variable name (letters, digits and _, not starting with a digit)" })
      else if (ToolEnv.isParleys(key)) issues.push({ path, message: `${key} ${PARLEYS}` })
      const problem = typeof value === "string" ? EnvReference.problem(value) : undefined
      if (problem !== undefined) issues.push({ path, message: problem })
    }
  }
  return issues
}

// `${env:PARLEY_…}` anywhere in the document: parley's variables are never handed to a tool or a server.
const parleyReferences = (value: unknown, path: ReadonlyArray<PropertyKey>): Array<ConfigIssue> => {
  if (typeof value === "string")
    return EnvReference.names(value)
      .filter(ToolEnv.isParleys)
      .map((variable) => ({
        path,
        message: `\${env:${variable}} names parley's own variable: parley never passes PARLEY_* variables to a tool or an MCP server (see docs/security.md)`
      }))
  if (Array.isArray(value)) return value.flatMap((item, i) => parleyReferences(item, [...path, i]))
  if (isTable(value)) return Object.entries(value).flatMap(([key, item]) => parleyReferences(item, [...path, key]))
  return []
}

// Rules a Schema struct cannot say: forbidden keys and cross-field requirements.
// They read the raw document so they are reported alongside schema issues.
const semanticIssues = (input: unknown): Array<ConfigIssue> => {
  const issues: Array<ConfigIssue> = [...mcpIssues(input), ...parleyReferences(input, [])]
  const conversation = isTable(input) ? input["conversation"] : undefined
  const rawTools = isTable(conversation) && isTable(conversation["tools"]) ? conversation["tools"] : {}
  const sourceIsFixed =
    "the inquiry source cannot be configured: it is decided by the tool kind (local tools always ask as tool{name})"
  for (const [name, raw] of Object.entries(rawTools)) {
    if (!isTable(raw)) continue
    const base = ["conversation", "tools", name]
    if ("inquiry_source" in raw) issues.push({ path: [...base, "inquiry_source"], message: sourceIsFixed })
    issues.push(...envIssues(name, raw, rawTools, base))
    if (name !== "*") {
      if (raw["source"] === "local" && !("command" in raw)) {
        issues.push({ path: [...base, "command"], message: 'missing (required for source = "local")' })
      }
      if (raw["source"] === "builtin" && "command" in raw) {
        issues.push({ path: [...base, "command"], message: 'only a local tool has a command (source is "builtin")' })
      }
      issues.push(...mcpToolIssues(input, base, raw))
    }
    if (isTable(raw["questions"])) {
      for (const [qid, q] of Object.entries(raw["questions"])) {
        const problem = questionIdProblem(qid)
        if (problem !== undefined) issues.push({ path: [...base, "questions", qid], message: problem })
        if (isTable(q) && "inquiry_source" in q) {
          issues.push({ path: [...base, "questions", qid, "inquiry_source"], message: sourceIsFixed })
        }
      }
    }
  }
  return issues
}

/** Validates a parsed config document (e.g. TOML parsed to plain values). */
export const decode = (input: unknown): Result.Result<Config, ReadonlyArray<ConfigIssue>> => {
  const result = decodeSchema(input)
  const semantic = semanticIssues(input)
  if (Result.isFailure(result)) {
    // A union reports one issue per member at the same path; keep the first.
    const seen = new Set<string>()
    const issues: Array<ConfigIssue> = []
    for (const issue of standardIssues(result.failure.issue).issues) {
      const path: ReadonlyArray<PropertyKey> = (issue.path ?? []).map((p) =>
        typeof p === "object" && p !== null && "key" in p ? p.key : p
      )
      const key = formatPath(path)
      if (seen.has(key)) continue
      seen.add(key)
      issues.push({ path, message: reword(issue.message, input, path) })
    }
    return Result.fail([...issues, ...semantic])
  }
  return semantic.length > 0 ? Result.fail(semantic) : Result.succeed(result.success)
}

/** The settings of one tool (the `*` defaults are not a tool). */
export const toolConfig = (config: Config, name: string): ToolConfig | undefined =>
  name === "*" ? undefined : config.conversation?.tools?.[name]

/** Configured tools (name and settings), without the `*` defaults, in file order. */
export const configuredTools = (config: Config): ReadonlyArray<readonly [string, ToolConfig]> =>
  Object.entries(config.conversation?.tools ?? {}).filter(([name]) => name !== "*")

/**
 * The tool kind of a configured tool: `source` (`mcp` for `mcp.NAME`), else
 * `local` if it has a command, else `builtin` (which an MCP server offering
 * the name may claim instead; see `layers/mcp/McpTools.ts`).
 */
export const toolKind = (tool: ToolConfig): ToolKind | "mcp" =>
  tool.source === undefined
    ? tool.command === undefined
      ? "builtin"
      : "local"
    : tool.source.startsWith("mcp.")
      ? "mcp"
      : tool.source === "local" || tool.source === "builtin"
        ? tool.source
        : "local"

/** The MCP server a tool is pinned to (`source = "mcp.NAME"` → `NAME`), if any. */
export const pinnedServer = (tool: ToolConfig | undefined): string | undefined =>
  tool?.source?.startsWith("mcp.") ? tool.source.slice("mcp.".length) : undefined

/** The enabled MCP servers, in file order. */
export const mcpServers = (config: Config): ReadonlyArray<readonly [string, McpServerConfig]> =>
  Object.entries(config.mcp?.servers ?? {}).filter(([, server]) => server.enable !== false)

/** The run mode: the tool's `run`, else the `*` default, else the kind's default. */
export const runMode = (config: Config, name: string, fallback: RunMode): RunMode =>
  toolConfig(config, name)?.run ?? config.conversation?.tools?.["*"]?.run ?? fallback

/** The result mode (JP's `result`): the tool's, else the `*` default, else `unattended`. */
export const resultMode = (config: Config, name: string): ResultMode =>
  toolConfig(config, name)?.result ?? config.conversation?.tools?.["*"]?.result ?? "unattended"

/**
 * A local tool's `timeout_ms` when config gives none: 10 minutes. Long
 * enough for a build or a test run, short enough that a hung tool does not
 * hold a turn (and its conversation lock) indefinitely.
 */
export const DEFAULT_TIMEOUT_MS = 600_000

/**
 * A local tool's `max_output_bytes` when config gives none: 1 MiB (contract
 * §5). The output goes to the model, where a megabyte is already far more
 * than useful.
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 1_048_576

/** How far a local tool may go before it is stopped. */
export interface ToolLimits {
  readonly timeoutMs: number
  readonly maxOutputBytes: number
}

/** A tool's limits: its own setting, else the `*` default, else the built-in default. */
export const toolLimits = (config: Config, name: string): ToolLimits => {
  const own = toolConfig(config, name)
  const all = config.conversation?.tools?.["*"]
  return {
    timeoutMs: own?.timeout_ms ?? all?.timeout_ms ?? DEFAULT_TIMEOUT_MS,
    maxOutputBytes: own?.max_output_bytes ?? all?.max_output_bytes ?? DEFAULT_MAX_OUTPUT_BYTES
  }
}

/** A local tool's environment setting: each of `env`, `env_keep`, `env_set` its own, else the `*` default, else inherit. */
export const toolEnv = (config: Config, name: string): ToolEnv.Setting => {
  const own = toolConfig(config, name)
  const all = config.conversation?.tools?.["*"]
  return {
    mode: own?.env ?? all?.env ?? "inherit",
    keep: own?.env_keep ?? all?.env_keep ?? [],
    set: own?.env_set ?? all?.env_set ?? {}
  }
}

/**
 * A tool that asks the same question again and again (its answers never
 * satisfy it, or it ignores them) would loop forever: after this many asks
 * in one call, the call ends in an error naming the question.
 */
export const DEFAULT_MAX_ATTEMPTS = 5

/** How often one call may ask `questionId`: the question's setting, the tool's, `"*"`'s, else the default. */
export const maxAttempts = (config: Config, tool: string, questionId: string): number =>
  questionConfig(config, tool, questionId)?.max_attempts ??
  toolConfig(config, tool)?.max_attempts ??
  config.conversation?.tools?.["*"]?.max_attempts ??
  DEFAULT_MAX_ATTEMPTS

/**
 * How many `input_required` rounds one call of an MCP tool may take
 * (docs/mcp.md#rounds-2026-07-28): the loop guard's `max_attempts` of the tool, else `"*"`'s, else the
 * default. A server that asks again and again ends the call like a question
 * asked too often.
 */
export const maxRounds = (config: Config, tool: string): number =>
  toolConfig(config, tool)?.max_attempts ?? config.conversation?.tools?.["*"]?.max_attempts ?? DEFAULT_MAX_ATTEMPTS

/** Who may fill in an MCP tool's forms: the tool's `forms`, else its server's, else `person`. */
export const formsTo = (config: Config, tool: string, server: string): FormsTo =>
  toolConfig(config, tool)?.forms ?? config.mcp?.servers?.[server]?.forms ?? "person"

/** `conversation.tools.<tool>.questions.<id>`, if configured. */
export const questionConfig = (config: Config, tool: string, questionId: string): QuestionConfig | undefined =>
  toolConfig(config, tool)?.questions?.[questionId]

/** Who answers a question: configured `target` (a table is the assistant), default `user` (JP). */
export const questionTarget = (config: Config, tool: string, questionId: string): TargetKind => {
  const target = questionConfig(config, tool, questionId)?.target
  return target === undefined ? "user" : typeof target === "string" ? target : "assistant"
}

/** A question's own side-call settings (its `target` table), if any. */
export const questionAssistant = (config: Config, tool: string, questionId: string): InquiryAssistant | undefined => {
  const target = questionConfig(config, tool, questionId)?.target
  return typeof target === "object" ? target : undefined
}

/**
 * RFD 034's merge of two layers of side-call settings: each key of `over`
 * wins, `request` key by key. The third layer (the main assistant) is the
 * backend's own default.
 */
export const mergeAssistant = (
  over: InquiryAssistant | undefined,
  under: InquiryAssistant | undefined
): InquiryAssistant | undefined => {
  if (over === undefined) return under
  if (under === undefined) return over
  const request =
    over.request === undefined
      ? under.request
      : under.request === undefined
        ? over.request
        : { ...under.request, ...over.request }
  return { ...under, ...over, ...(request !== undefined ? { request } : {}) }
}

/**
 * Keys of `table` (an {@link InquiryAssistant} at `base`) parley does not
 * read: a JP config carries more of the assistant config than parley uses;
 * it still loads, and each key left unused is named.
 */
const unknownAssistantKeys = (table: unknown, base: ReadonlyArray<PropertyKey>): Array<ConfigIssue> => {
  if (!isTable(table)) return []
  const issues: Array<ConfigIssue> = []
  for (const [key, value] of Object.entries(table)) {
    const known = INQUIRY_ASSISTANT_KEYS[key]
    if (known === undefined) {
      issues.push({
        path: [...base, key],
        message: "parley does not read this key of an assistant config; it is ignored"
      })
    } else if (known !== true && isTable(value)) {
      for (const inner of Object.keys(value)) {
        if (!known.includes(inner))
          issues.push({
            path: [...base, key, inner],
            message: "parley does not read this key of an assistant config; it is ignored"
          })
      }
    }
  }
  return issues
}

/**
 * What a config loads with but should be told about (RFD 034): keys of
 * `conversation.inquiry.assistant` and of question `target` tables that
 * parley does not read.
 */
export const warnings = (input: unknown): ReadonlyArray<ConfigIssue> => {
  const conversation = isTable(input) ? input["conversation"] : undefined
  if (!isTable(conversation)) return []
  const issues: Array<ConfigIssue> = []
  const inquiry = conversation["inquiry"]
  if (isTable(inquiry))
    issues.push(...unknownAssistantKeys(inquiry["assistant"], ["conversation", "inquiry", "assistant"]))
  const tools = isTable(conversation["tools"]) ? conversation["tools"] : {}
  for (const [name, tool] of Object.entries(tools)) {
    if (!isTable(tool) || !isTable(tool["questions"])) continue
    for (const [qid, q] of Object.entries(tool["questions"])) {
      if (isTable(q))
        issues.push(...unknownAssistantKeys(q["target"], ["conversation", "tools", name, "questions", qid, "target"]))
    }
  }
  return issues
}

/** The configured static answer, or `undefined`. */
export const staticAnswer = (config: Config, tool: string, questionId: string): Schema.Json | undefined =>
  questionConfig(config, tool, questionId)?.answer

/**
 * The `detached` policy: configured (or `--detached-policy`), else the run's
 * default — `wait` for a run meant to be watched (`--detach`, Ctrl-Z,
 * `serve`, a cluster runner), else `assistant` (JP's behaviour: no surprise
 * for scripts).
 */
export const detachedPolicy = (config: Config, runDefault: DetachedPolicy = "assistant"): DetachedPolicy =>
  config.conversation?.inquiry?.detached ?? runDefault

/** The `detached` policy config (or `--detached-policy`) sets, if it sets one. */
export const configuredDetachedPolicy = (config: Config): DetachedPolicy | undefined =>
  config.conversation?.inquiry?.detached

/** `wait_timeout` when config gives none: 10 minutes. */
export const DEFAULT_WAIT_TIMEOUT_MS = 600_000

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** A {@link Duration} in milliseconds. */
export const durationMs = (d: typeof Duration.Type): number => {
  if (typeof d === "number") return d * 1000
  const m = /^([0-9.]+)(ms|s|m|h)$/.exec(d)!
  return Number(m[1]) * (UNIT_MS[m[2]!] ?? 1000)
}

/** How long `wait` keeps a question open, in milliseconds. */
export const waitTimeoutMs = (config: Config): number => {
  const d = config.conversation?.inquiry?.wait_timeout
  return d === undefined ? DEFAULT_WAIT_TIMEOUT_MS : durationMs(d)
}

/** `config` with the `detached` policy set (`query --detached-policy` for one run). */
export const withDetachedPolicy = (config: Config, policy: DetachedPolicy): Config => ({
  ...config,
  conversation: {
    ...config.conversation,
    inquiry: { ...config.conversation?.inquiry, detached: policy }
  }
})
