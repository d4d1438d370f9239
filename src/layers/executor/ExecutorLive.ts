/**
 * The live `Executor`: the built-in registry, the local tools of
 * `conversation.tools` in config, and the tools of the MCP servers of
 * `[mcp.servers]` (docs/mcp.md#when-servers-run; `../mcp/McpTools.ts` starts them with the layer
 * and stops them when its scope closes).
 *
 * Arguments are validated (ajv, parameter defaults applied) before any tool
 * runs, so an invalid call never starts a process. The `InquirySource` of a
 * question is resolved here and only here: a built-in's declared source, or
 * `tool{name}` for a local or MCP tool. Config can enable/disable tools, describe
 * them and set run modes, never the source.
 *
 * @example
 * ```ts
 * import * as Layer from "effect/Layer"
 * import * as ExecutorLive from "parley/layers/executor/ExecutorLive"
 * import * as ConfigFile from "parley/layers/ConfigFile"
 * const executor = ExecutorLive.layer.pipe(Layer.provide(ConfigFile.layer(".parley")))
 * ```
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import type { Ajv, ValidateFunction } from "ajv"
import * as ArgumentErrors from "./ArgumentErrors.ts"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as AnswerFit from "../../domain/tool/AnswerFit.ts"
import * as ConfigData from "../../domain/tool/Config.ts"
import { noParameters, type RunMode, type ToolDefinition, type ToolKind } from "../../domain/tool/ToolDefinition.ts"
import * as DeepArguments from "../../domain/tool/DeepArguments.ts"
import { Config, ConfigError } from "../../services/Config.ts"
import { type DuplicateTool, error, Executor, fromOutcome, notAvailable } from "../../services/Executor.ts"
import type { Answers, ExecutionContext, ExecutorResult, ToolCall } from "../../services/Executor.ts"
import * as McpOAuth from "../mcp/McpOAuth.ts"
import * as McpTools from "../mcp/McpTools.ts"
import type { MissingPackage } from "../../domain/package/MissingPackage.ts"
import * as LoadPackage from "../LoadPackage.ts"
import * as BuiltinTools from "./BuiltinTools.ts"
import * as Combine from "./Combine.ts"
import * as LocalTool from "./LocalTool.ts"

/** Options of the live executor: which built-ins to offer, and the config file named in errors. */
export interface Options {
  /** The built-in registry (default {@link BuiltinTools.standard}). */
  readonly builtins?: ReadonlyArray<BuiltinTools.BuiltinTool>
  /** For messages about config problems. */
  readonly file?: string
  /** The run's MCP servers (their tools are offered beside the others). */
  readonly mcp?: McpTools.Runtime
  /**
   * Tool names other executors combined with this one define (docs/library.md#effectai-tools-as-parleys-executor-asking-questions-mid-run): a
   * config table for one of them is theirs, not a missing built-in.
   */
  readonly others?: ReadonlySet<string>
}

interface Entry {
  readonly definition: ToolDefinition
  readonly kind: ToolKind
  /** The MCP server of an MCP tool. */
  readonly server?: string
  /** The compiled argument check (compiled on first use for built-in and MCP tools: see {@link loadAjv}). */
  readonly validate: Effect.Effect<ValidateFunction>
  readonly run: (
    args: BuiltinTools.Arguments,
    answers: Answers,
    context: ExecutionContext,
    call: ToolCall
  ) => Effect.Effect<ExecutorResult>
}

const defaultRunMode: Record<ToolKind, RunMode> = { builtin: "unattended", local: "ask", mcp: "ask" }

let ajvClass: Promise<typeof Ajv> | undefined

/** The class from ajv's `default`, typed as the class or as `module.exports` (with `Ajv` on it) by module resolution. */
const ajvOf = (exported: typeof Ajv | { readonly Ajv: typeof Ajv }): typeof Ajv =>
  "Ajv" in exported ? exported.Ajv : exported

/**
 * ajv, loaded on first use: evaluating it and compiling the built-ins' schemas was
 * ≈ a fifth of a scripted query's start-up, and a turn that calls no tool needs neither
 * (docs/startup.md#start-up-of-a-query).
 */
const loadAjv: Effect.Effect<typeof Ajv> = Effect.promise(() => {
  ajvClass ??= import("ajv").then(
    // ajv is CommonJS: Node's import gives its named exports and `default` (module.exports), esbuild's
    // bundle only `default`; module.exports.Ajv is the class under both, and the typings of
    // `default` differ by module resolution (the class, or module.exports).
    (m) => ajvOf(m.default)
  )
  return ajvClass
})

/** A validator compiled the first time a call needs it, then kept. */
const lazily = (compile: (ajv: typeof Ajv) => ValidateFunction): Effect.Effect<ValidateFunction> => {
  let compiled: ValidateFunction | undefined
  return Effect.suspend(() =>
    compiled !== undefined
      ? Effect.succeed(compiled)
      : Effect.map(loadAjv, (m) => {
          compiled ??= compile(m)
          return compiled
        })
  )
}

/**
 * Adds the MCP tools (`McpTools.resolve`). A server's input schema that ajv
 * cannot compile is not checked here: the server checks its own arguments.
 */
const addMcpTools = (
  config: ConfigData.Config,
  mcp: McpTools.Runtime,
  entries: Map<string, Entry>,
  problems: Array<{ path: string; message: string }>
): void => {
  const builtinNames = new Set([...entries].filter(([, e]) => e.kind === "builtin").map(([name]) => name))
  const resolved = McpTools.resolve(config, mcp, builtinNames)
  problems.push(...resolved.problems)
  // Servers use formats ajv does not know ("uri"): check the rest, say nothing.
  let ajv: Ajv | undefined
  for (const tool of resolved.tools) {
    // Compiled on the first call: a server may offer dozens of tools, and ajv compiles slowly.
    const validate = lazily((m) => {
      ajv ??= new m({ allErrors: true, useDefaults: true, strict: false, validateFormats: false, logger: false })
      try {
        return ajv.compile(tool.definition.parameters)
      } catch {
        return ajv.compile({})
      }
    })
    entries.set(tool.definition.name, {
      definition: tool.definition,
      // Another process's (or service's) code: `ask` by default, like a local tool.
      kind: "mcp",
      server: tool.serverName,
      validate,
      run: (args, answers, context, call) => mcp.execute(tool, call, args, answers, context)
    })
  }
}

/**
 * Static answers configured for a built-in's questions whose answer type is
 * known before they are asked (RFD 083: checked when config loads, naming
 * the key; the rest are checked when asked).
 */
const staticAnswerProblems = (
  config: ConfigData.Config,
  tool: BuiltinTools.BuiltinTool
): Array<{ path: string; message: string }> => {
  const problems: Array<{ path: string; message: string }> = []
  for (const [id, known] of Object.entries(tool.questions ?? {})) {
    const answer = ConfigData.staticAnswer(config, tool.name, id)
    if (answer === undefined || known.answerType === undefined) continue
    const fits = AnswerFit.fitStatic(known.answerType, answer)
    if (fits._tag === "Failure") {
      problems.push({
        path: ConfigData.formatPath(["conversation", "tools", tool.name, "questions", id, "answer"]),
        message: `${fits.failure}: the question wants ${AnswerFit.expected(known.answerType)}`
      })
    }
  }
  return problems
}

/** Builds the executor from validated config; config that names a missing built-in or an unusable schema fails. */
export const make = (
  config: ConfigData.Config,
  options: Options = {}
): Effect.Effect<Executor["Service"], ConfigError> =>
  // Schemas from config (local tools) or from the caller (a registry of built-ins) are compiled
  // now, so a bad one is a config error at start; the standard built-ins' schemas are parley's
  // own (test/layers/executor compiles them) and wait for their first call, ajv with them.
  Effect.flatMap(
    options.builtins !== undefined ||
      ConfigData.configuredTools(config).some(([, t]) => ConfigData.toolKind(t) === "local")
      ? Effect.map(loadAjv, (m) => new m({ allErrors: true, useDefaults: true, strict: false }))
      : Effect.succeed(undefined),
    (eager) => build(config, options, eager)
  )

const build = (
  config: ConfigData.Config,
  options: Options,
  eager: Ajv | undefined
): Effect.Effect<Executor["Service"], ConfigError> =>
  Effect.suspend(() => {
    const file = options.file ?? "config.toml"
    const builtins = new Map((options.builtins ?? BuiltinTools.standard).map((t) => [t.name, t] as const))
    const problems: Array<{ path: string; message: string }> = []
    const entries = new Map<string, Entry>()
    let later: Ajv | undefined

    const compile = (name: string, parameters: Schema.JsonObject): Effect.Effect<ValidateFunction> | undefined => {
      if (eager === undefined)
        return lazily((m) => {
          later ??= new m({ allErrors: true, useDefaults: true, strict: false })
          return later.compile(parameters)
        })
      try {
        return Effect.succeed(eager.compile(parameters))
      } catch (e) {
        problems.push({
          path: ConfigData.formatPath(["conversation", "tools", name, "parameters"]),
          message: `not a usable JSON Schema: ${e instanceof Error ? e.message : String(e)}`
        })
        return undefined
      }
    }

    for (const tool of builtins.values()) {
      const configured = ConfigData.toolConfig(config, tool.name)
      // A table pinned to an MCP server gives the name to that server's tool.
      if (configured?.enable === false || ConfigData.pinnedServer(configured) !== undefined) continue
      const validate = compile(tool.name, tool.parameters)
      if (validate === undefined) continue
      problems.push(...staticAnswerProblems(config, tool))
      const source = BuiltinTools.inquirySourceOf(tool)
      entries.set(tool.name, {
        definition: {
          name: tool.name,
          description: ConfigData.toolConfig(config, tool.name)?.description ?? tool.description,
          parameters: tool.parameters
        },
        kind: "builtin",
        validate,
        run: (args, answers, context) =>
          tool
            .run(args, answers, context)
            .pipe(Effect.map((outcome) => fromOutcome(tool.name, { _tag: "Valid", outcome }, answers, source)))
      })
    }

    for (const [name, tool] of ConfigData.configuredTools(config)) {
      const at = (key?: string) =>
        ConfigData.formatPath(["conversation", "tools", name, ...(key === undefined ? [] : [key])])
      const kind = ConfigData.toolKind(tool)
      if (kind === "mcp") continue
      if (kind === "builtin") {
        if (!builtins.has(name) && (McpTools.mayOffer(options.mcp, name) || options.others?.has(name) === true))
          continue
        if (!builtins.has(name)) {
          problems.push({
            path: at(),
            message: `there is no built-in tool named "${name}" (built-ins: ${[...builtins.keys()].join(", ")}); a local tool needs source = "local" and a command`
          })
        } else if (tool.parameters !== undefined) {
          problems.push({ path: at("parameters"), message: "the parameters of a built-in tool cannot be changed" })
        }
        continue
      }
      if (tool.enable === false || tool.command === undefined) continue
      const parameters = tool.parameters ?? noParameters
      const validate = compile(name, parameters)
      if (validate === undefined) continue
      const spec: LocalTool.LocalToolSpec = {
        name,
        command: tool.command,
        ...ConfigData.toolLimits(config, name),
        env: ConfigData.toolEnv(config, name)
      }
      entries.set(name, {
        definition: { name, description: tool.description ?? "", parameters },
        kind: "local",
        validate,
        run: (args, answers, context) => LocalTool.run(spec, args, answers, context)
      })
    }

    if (options.mcp !== undefined) addMcpTools(config, options.mcp, entries, problems)

    if (problems.length > 0) return Effect.fail(new ConfigError({ file, problems }))

    const definitions = [...entries.values()]
      .map((e) => e.definition)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))

    const execute = (call: ToolCall, answers: Answers, context: ExecutionContext) =>
      Effect.suspend(() => {
        const entry = entries.get(call.name)
        if (entry === undefined) return Effect.succeed<ExecutorResult>(notAvailable(call.name))
        const tooDeep = DeepArguments.replaced(call.arguments)
        if (tooDeep !== undefined)
          return Effect.succeed<ExecutorResult>(error(DeepArguments.toolError(call.name, tooDeep)))
        // ajv applies parameter defaults in place: validate a copy and pass that on.
        const args = structuredClone(call.arguments) as Record<string, Schema.Json>
        return Effect.flatMap(entry.validate, (validate) =>
          validate(args)
            ? entry.run(args, answers, context, call)
            : Effect.succeed<ExecutorResult>(
                error(
                  ArgumentErrors.describe(call.name, entry.definition.parameters, validate.errors ?? [], call.arguments)
                )
              )
        )
      })

    const promptLabel = (name: string, questionId: string) =>
      entries.get(name)?.kind === "builtin" ? builtins.get(name)?.questions?.[questionId]?.promptLabel : undefined

    const source = (name: string): string | undefined => {
      const entry = entries.get(name)
      if (entry === undefined) return undefined
      if (entry.kind === "builtin") return "the built-in tools"
      if (entry.kind === "local")
        return `the local tool of ${ConfigData.formatPath(["conversation", "tools", name])} in ${file}`
      return `MCP server "${entry.server ?? ""}"`
    }

    return Effect.succeed(
      Executor.of({
        definitions,
        execute,
        promptLabel,
        source,
        permission: (name) => ConfigData.runMode(config, name, defaultRunMode[entries.get(name)?.kind ?? "builtin"]),
        kind: (name) => entries.get(name)?.kind
      })
    )
  })

export interface LayerOptions<E = never, R = never> extends Omit<Options, "file" | "mcp" | "others"> {
  /**
   * How `[mcp.servers]` are started (defaults: the working directory as
   * root, nobody at a terminal, problems printed to stderr as `parley: …`).
   */
  readonly mcp?: Partial<McpTools.Options>
  /**
   * Other executors offered beside the live tools
   * (docs/library.md#effectai-tools-as-parleys-executor-asking-questions-mid-run): effect/ai
   * toolkits (`executorFromToolkit`), your own. One config file for all:
   * `[conversation.tools.<name>]` of their tools is theirs. A tool name
   * defined twice fails the layer with `DuplicateTool`, naming both.
   */
  readonly executors?: ReadonlyArray<Layer.Layer<Executor, E, R>>
}

/**
 * The live executor with a custom built-in registry (tests add
 * `BuiltinTools.askUser`) and other executors beside it. Building it
 * starts the configured MCP servers; they stop when the layer's scope
 * closes.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Layer from "effect/Layer"
 * import * as Schema from "effect/Schema"
 * import { Tool, Toolkit } from "effect/ai"
 * import { Config } from "parley"
 * import { executorFromToolkit } from "parley/ai"
 * import * as ExecutorLive from "parley/layers/executor/ExecutorLive"
 *
 * const Deploy = Tool.make("deploy", { parameters: Schema.Struct({ env: Schema.String }), success: Schema.String, needsApproval: true })
 * const deploy = executorFromToolkit(Toolkit.make(Deploy), { deploy: ({ env }) => Effect.succeed(`deployed to ${env}`) })
 * // Built-ins, local tools, MCP servers and the toolkit, under one config file.
 * const executor = ExecutorLive.layerWith({ executors: [deploy] }).pipe(Layer.provide(Config.layerEmpty))
 * ```
 */
export const layerWith = <E = never, R = never>(
  options: LayerOptions<E, R> = {}
): Layer.Layer<Executor, ConfigError | MissingPackage | DuplicateTool | E, Config | R> =>
  Layer.effect(
    Executor,
    Effect.gen(function* () {
      const { executors = [], ...rest } = options
      // Built first: their names tell their config tables from a missing built-in's.
      // Labelled as the option's entries (`executors[0]`), which is what a message about one must point at.
      const others = yield* Combine.build(executors, (i) => `executors[${i}]`)
      const live = yield* liveExecutor(
        rest,
        new Set(others.flatMap((p) => p.executor.names ?? p.executor.definitions.map((d) => d.name)))
      )
      return others.length === 0
        ? live
        : yield* Combine.combine([{ executor: live, label: "the live executor" }, ...others])
    })
  )

/** The live tools alone: the configured MCP servers started in the layer's scope, then {@link make}. */
const liveExecutor = (options: Omit<LayerOptions, "executors">, others: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const { data, file } = yield* Config
    const { mcp: mcpOptions, ...rest } = options
    const servers = ConfigData.mcpServers(data).length > 0
    // The MCP client is an optional package (docs/decisions.md#optional-peer-dependencies): without it, configured servers are an error naming it.
    if (servers) yield* LoadPackage.load("@modelcontextprotocol/client", () => import("@modelcontextprotocol/client"))
    const mcp = !servers
      ? undefined
      : yield* McpTools.start(data, {
          root: process.cwd(),
          interactive: false,
          onProblem: (message) => process.stderr.write(`parley: ${message}\n`),
          // OAuth state of HTTP servers is kept with the conversations, beside config.toml.
          storage: path.dirname(file),
          signIn: (server, url) =>
            process.stderr.write(
              `parley: MCP server "${server}" asks you to sign in. Open this page in a browser (parley waits up to ${McpOAuth.SIGN_IN_TIMEOUT_MS / 60_000} minutes; Ctrl-C stops):\n  ${url.href}\n`
            ),
          ...mcpOptions
        })
    return yield* make(data, { ...rest, file, others, ...(mcp !== undefined ? { mcp } : {}) })
  })

/** The live executor: standard built-ins, configured local tools and MCP servers. */
export const layer: Layer.Layer<Executor, ConfigError | MissingPackage, Config> = Layer.effect(
  Executor,
  liveExecutor({}, new Set())
)
