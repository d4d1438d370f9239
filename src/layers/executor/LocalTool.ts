/**
 * Runs a local (shell-command) tool per contract §6 / JP `run_tool_command`.
 *
 * The command runs as `sh -c <command>` in its own process group with the
 * project root as working directory. It gets one JSON request on stdin:
 * `{"tool":{"name","arguments","answers"},"context":{"action":"run","root","conversation_id"}}`;
 * `{{tool}}` / `{{context}}` in the command become the shell-quoted JSON of
 * that part. stdout is read as one `Outcome`; anything else is judged by the
 * exit code. Its environment is parley's less `PARLEY_*`, or what the
 * tool's `env`, `env_keep` and `env_set` make of it ({@link ToolEnv}). The process itself (its group, the reaper, the limits) is
 * {@link ToolProcess}: interruption, `timeout_ms` and `max_output_bytes` stop
 * the whole group, and a group never outlives parley.
 *
 * @example
 * ```ts
 * import * as LocalTool from "parley/layers/executor/LocalTool"
 * const context = { action: "run", root: "/p", conversation_id: "17738399468" } as const
 * LocalTool.renderCommand("tools/x {{context}} {{tool}}", { name: "x", arguments: {}, answers: {} }, context)
 * // `tools/x '{"action":"run","root":"/p","conversation_id":"17738399468"}' '{"name":"x","arguments":{},"answers":{}}'`
 * ```
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import * as InquirySource from "../../domain/event/InquirySource.ts"
import * as Outcome from "../../domain/tool/Outcome.ts"
import * as ToolEnv from "../../domain/tool/ToolEnv.ts"
import type { Answers, ExecutionContext, ExecutorResult } from "../../services/Executor.ts"
import { error, fromOutcome, ok } from "../../services/Executor.ts"
import * as ToolProcess from "./ToolProcess.ts"

/** A configured local tool: its name, shell command and limits. */
export interface LocalToolSpec {
  readonly name: string
  readonly command: string
  /** Stop the tool (its whole process group) after this long. */
  readonly timeoutMs: number
  /** Stop the tool once stdout and stderr together pass this many bytes. */
  readonly maxOutputBytes: number
  /**
   * How its environment is made from parley's, as `Config.toolEnv` reads it
   * from `[conversation.tools.NAME]`. Absent: parley's environment less
   * `PARLEY_*` (`env = "inherit"`). Never with `PARLEY_*` either way.
   */
  readonly env?: ToolEnv.Setting
}

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = ToolProcess.KILL_GRACE_MS

/** The `tool` part of the request. */
export interface ToolPart {
  readonly name: string
  readonly arguments: Readonly<Record<string, Schema.Json>>
  readonly answers: Answers
}

/** The `context` part of the request. */
export interface ContextPart {
  readonly action: "run"
  readonly root: string
  readonly conversation_id: string
}

/** The `context` part of the JSON a local tool reads on stdin (contract §6). */
export const contextPart = (context: ExecutionContext): ContextPart => ({
  action: "run",
  root: context.root,
  conversation_id: context.conversationId
})

/** POSIX single-quoting: `it's` → `'it'\''s'`. */
export const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/** Substitutes `{{tool}}` / `{{context}}` (spaces inside the braces allowed, as in JP's templates). */
export const renderCommand = (command: string, tool: ToolPart, context: ContextPart): string =>
  command.replace(/\{\{\s*(tool|context)\s*\}\}/g, (_, part: string) =>
    shellQuote(JSON.stringify(part === "tool" ? tool : context))
  )

/** The JSON written to the tool's stdin. */
export const requestJson = (tool: ToolPart, context: ContextPart): string => JSON.stringify({ tool, context })

/** How much of each stream an output-limit error quotes. */
export const QUOTED_BYTES = 1024

const head = (text: string): string => (text.length > QUOTED_BYTES ? `${text.slice(0, QUOTED_BYTES)}…` : text)

/** The tool's error when it printed too much: says which limit, and quotes the start of its output. */
export const outputLimitError = (name: string, limit: number, stdout: string, stderr: string): ExecutorResult =>
  error(
    JSON.stringify({
      message: `Tool '${name}' printed more than ${limit} bytes (max_output_bytes) and was stopped; below is the start of its stdout and stderr (at most ${QUOTED_BYTES} characters each).`,
      stderr: head(stderr),
      stdout: head(stdout)
    })
  )

/** Interprets a finished process (JP `run_tool_command`). */
const interpret = (name: string, result: ToolProcess.ProcessOutcome, answers: Answers): ExecutorResult => {
  if (result._tag === "OutputLimitExceeded") return outputLimitError(name, result.limit, result.stdout, result.stderr)
  const decoded = Outcome.parseJson(result.stdout)
  if (decoded._tag !== "NotAnOutcome")
    return fromOutcome(name, decoded, answers, InquirySource.InquirySource.tool(name))
  if (result.exitCode === 0) return ok(result.stdout)
  return error(
    JSON.stringify({ message: `Tool '${name}' execution failed.`, stderr: result.stderr, stdout: result.stdout })
  )
}

/**
 * Runs a local tool once, within its time and output limits. `arguments`
 * must already be validated. The source of any question is `tool{name}`:
 * nothing the command prints can change it.
 */
export const run = (
  spec: LocalToolSpec,
  args: Readonly<Record<string, Schema.Json>>,
  answers: Answers,
  context: ExecutionContext
): Effect.Effect<ExecutorResult> => {
  const tool: ToolPart = { name: spec.name, arguments: args, answers }
  const ctx = contextPart(context)
  const env = ToolEnv.forTool(process.env, spec.env ?? ToolEnv.inherit)
  if (Result.isFailure(env)) {
    const { key, name } = env.failure
    return Effect.succeed(
      error(
        `Tool '${spec.name}' could not be started: env_set.${key} names \${env:${name}}, which is not set in parley's environment.`
      )
    )
  }
  return ToolProcess.run(
    renderCommand(spec.command, tool, ctx),
    context.root,
    requestJson(tool, ctx),
    spec.maxOutputBytes,
    env.success
  ).pipe(
    Effect.map((result) => interpret(spec.name, result, answers)),
    Effect.catch((reason) => Effect.succeed(error(`Tool '${spec.name}' could not be started: ${reason}`))),
    Effect.timeoutOrElse({
      duration: spec.timeoutMs,
      orElse: () =>
        Effect.succeed(error(`Tool '${spec.name}' timed out after ${spec.timeoutMs} ms (timeout_ms) and was stopped.`))
    })
  )
}
