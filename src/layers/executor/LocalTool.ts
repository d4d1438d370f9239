/**
 * Runs a local (shell-command) tool per contract §6 / JP `run_tool_command`.
 *
 * The command runs as `sh -c <command>` in its own process group with the
 * project root as working directory. It gets one JSON request on stdin:
 * `{"tool":{"name","arguments","answers"},"context":{"action":"run","root","conversation_id"}}`;
 * `{{tool}}` / `{{context}}` in the command become the shell-quoted JSON of
 * that part. stdout is read as one `Outcome`; anything else is judged by the
 * exit code. Interruption (and `timeout_ms`) sends SIGTERM to the whole group,
 * then SIGKILL after a grace period, and returns once no member is running.
 *
 * @example
 * ```ts
 * import * as LocalTool from "./LocalTool.ts"
 * const context = { action: "run", root: "/p", conversation_id: "17738399468" } as const
 * LocalTool.renderCommand("tools/x {{context}} {{tool}}", { name: "x", arguments: {}, answers: {} }, context)
 * // `tools/x '{"action":"run","root":"/p","conversation_id":"17738399468"}' '{"name":"x","arguments":{},"answers":{}}'`
 * ```
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import * as InquirySource from "../../domain/event/InquirySource.ts"
import * as Outcome from "../../domain/tool/Outcome.ts"
import type { Answers, ExecutionContext, ExecutorResult } from "../../services/Executor.ts"
import { error, fromOutcome, ok } from "../../services/Executor.ts"

/** A configured local tool: its name, shell command and limits. */
export interface LocalToolSpec {
  readonly name: string
  readonly command: string
  /** Kill the tool after this long; no limit when absent. */
  readonly timeoutMs?: number
}

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 1000

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
    shellQuote(JSON.stringify(part === "tool" ? tool : context)))

/** The JSON written to the tool's stdin. */
export const requestJson = (tool: ToolPart, context: ContextPart): string => JSON.stringify({ tool, context })

// A zombie (exited, not yet reaped) is not running. This matters where PID 1
// does not reap orphans (some containers): an orphaned, killed child stays a
// zombie in the group forever and `kill(-pgid, 0)` keeps succeeding.
const liveMembers = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch {
    return false
  }
  if (!fs.existsSync("/proc/self/stat")) return true
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      // Fields after the parenthesised command: state ppid pgrp …
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") return true
    } catch {
      // The process went away while we looked.
    }
  }
  return false
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const waitUntilGone = async (pgid: number, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  for (;;) {
    if (!liveMembers(pgid)) return true
    if (Date.now() >= deadline) return false
    await sleep(10)
  }
}

/** SIGTERM to the group, SIGKILL after {@link KILL_GRACE_MS}; resolves when nothing in it runs. */
export const killProcessGroup = async (pgid: number, graceMs: number = KILL_GRACE_MS): Promise<void> => {
  try {
    process.kill(-pgid, "SIGTERM")
  } catch {
    return // ESRCH: the group is already gone
  }
  if (await waitUntilGone(pgid, graceMs)) return
  try {
    process.kill(-pgid, "SIGKILL")
  } catch {
    return
  }
  await waitUntilGone(pgid, graceMs)
}

/** What the process did. */
export interface ProcessResult {
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Spawns `sh -c command` detached (its own process group), writes `stdin`,
 * and collects output until every stdio stream closes. Interrupting the
 * effect kills the whole group. A failure to start is a `string` error.
 */
export const runProcess = (command: string, cwd: string, stdin: string): Effect.Effect<ProcessResult, string> =>
  Effect.callback<ProcessResult, string>((resume) => {
    let settled = false
    const settle = (effect: Effect.Effect<ProcessResult, string>) => {
      if (!settled) {
        settled = true
        resume(effect)
      }
    }
    const child = spawn("sh", ["-c", command], { cwd, detached: true, stdio: ["pipe", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.on("error", (e) => settle(Effect.fail(e.message)))
    child.on("close", (exitCode, signal) =>
      settle(Effect.succeed({
        exitCode,
        signal,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8")
      })))
    // A tool that never reads stdin closes the pipe early (EPIPE): not an error.
    child.stdin.on("error", () => {})
    child.stdin.end(stdin)
    return Effect.promise(async () => {
      if (child.pid !== undefined) await killProcessGroup(child.pid)
    })
  })

/** Interprets a finished process (JP `run_tool_command`). */
export const interpret = (name: string, result: ProcessResult, answers: Answers): ExecutorResult => {
  const decoded = Outcome.parseJson(result.stdout)
  if (decoded._tag !== "NotAnOutcome") return fromOutcome(name, decoded, answers, InquirySource.InquirySource.tool(name))
  if (result.exitCode === 0) return ok(result.stdout)
  return error(JSON.stringify({ message: `Tool '${name}' execution failed.`, stderr: result.stderr, stdout: result.stdout }))
}

/**
 * Runs a local tool once. `arguments` must already be validated. The source
 * of any question is `tool{name}`: nothing the command prints can change it.
 */
export const run = (
  spec: LocalToolSpec,
  args: Readonly<Record<string, Schema.Json>>,
  answers: Answers,
  context: ExecutionContext
): Effect.Effect<ExecutorResult> => {
  const tool: ToolPart = { name: spec.name, arguments: args, answers }
  const ctx = contextPart(context)
  const once = runProcess(renderCommand(spec.command, tool, ctx), context.root, requestJson(tool, ctx)).pipe(
    Effect.map((result) => interpret(spec.name, result, answers)),
    Effect.catch((reason) => Effect.succeed(error(`Tool '${spec.name}' could not be started: ${reason}`)))
  )
  if (spec.timeoutMs === undefined) return once
  const timeoutMs = spec.timeoutMs
  return once.pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () => Effect.succeed(error(`Tool '${spec.name}' timed out after ${timeoutMs} ms and was stopped.`))
    })
  )
}
