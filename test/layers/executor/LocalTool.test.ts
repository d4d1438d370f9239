import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as fs from "node:fs"
import * as path from "node:path"
import * as LocalTool from "../../../src/layers/executor/LocalTool.ts"
import {
  completed,
  contextFor,
  executorFor,
  FIXTURES,
  isRunning,
  needsInput,
  tempRoot,
  waitForFile
} from "./helpers.ts"

const modes = {
  command: `python3 ${FIXTURES}/modes.py`,
  parameters: { type: "object", properties: { mode: { type: "string" } }, required: ["mode"] }
}
const call = (name: string, args: Record<string, unknown>) => ({
  id: "call_1",
  name,
  arguments: args as Record<string, never>
})
const invocations = (root: string) =>
  fs.existsSync(path.join(root, "invocations.log"))
    ? fs.readFileSync(path.join(root, "invocations.log"), "utf8").trimEnd().split("\n")
    : []

describe("local tools: the request and the outcome (Python fixture)", () => {
  it.live("asks first, then succeeds with tool.answers delivered on the second run", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({ modes })
      const first = needsInput(yield* executor.execute(call("modes", { mode: "ask" }), {}, contextFor(root)))
      expect({ ...first.question }).toStrictEqual({
        id: "confirm",
        text: "Proceed?",
        context: "About to proceed.",
        answer_type: { type: "boolean" },
        default: true
      })
      expect(first.source).toStrictEqual({ source: "tool", name: "modes" })
      expect(first.answers).toStrictEqual({})

      const second = completed(
        yield* executor.execute(call("modes", { mode: "ask" }), { confirm: true }, contextFor(root))
      )
      expect(second.is_error).toBe(false)
      const request = JSON.parse(second.content)
      expect(request).toStrictEqual({
        tool: { name: "modes", arguments: { mode: "ask" }, answers: { confirm: true } },
        context: { action: "run", root, conversation_id: "17738399468" }
      })
      expect(Object.keys(request)).toStrictEqual(["tool", "context"])
      expect(Object.keys(request.tool)).toStrictEqual(["name", "arguments", "answers"])
      expect(Object.keys(request.context)).toStrictEqual(["action", "root", "conversation_id"])
      expect(invocations(root)).toStrictEqual(["{}", `{"confirm": true}`])
    })
  )

  it.live("reads JP's legacy answer types from a tool", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({ modes })
      const run = (mode: string) =>
        Effect.map(executor.execute(call("modes", { mode }), {}, contextFor(root)), needsInput)
      expect((yield* run("legacy_boolean")).question.answer_type).toStrictEqual({ type: "boolean" })
      expect((yield* run("legacy_text")).question.answer_type).toStrictEqual({ type: "text" })
      const select = (yield* run("legacy_select")).question
      expect(select.answer_type).toStrictEqual({ type: "select", options: ["red", "green"] })
      expect(select.default).toBe("red")
      expect((yield* run("secret")).question.answer_type).toStrictEqual({ type: "secret" })
    })
  )

  it.live("an invalid question id is a tool-level error, not a question", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({ modes })
      expect(completed(yield* executor.execute(call("modes", { mode: "bad_id" }), {}, contextFor(root)))).toStrictEqual(
        {
          content: `Tool 'modes' asked a question with an invalid id "a.b": question ids must not contain '.'.`,
          is_error: true
        }
      )
      expect(
        completed(yield* executor.execute(call("modes", { mode: "empty_id" }), {}, contextFor(root)))
      ).toStrictEqual({
        content: `Tool 'modes' asked a question with an invalid id "": question ids must not be empty.`,
        is_error: true
      })
    })
  )

  it.live("error outcomes: the message, or {message, trace} JSON when transient", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({ modes })
      expect(completed(yield* executor.execute(call("modes", { mode: "error" }), {}, contextFor(root)))).toStrictEqual({
        content: "disk full",
        is_error: true
      })
      expect(
        completed(yield* executor.execute(call("modes", { mode: "transient" }), {}, contextFor(root)))
      ).toStrictEqual({
        content: `{"message":"rate limited","trace":["429 from upstream"]}`,
        is_error: true
      })
      // JP reads stdout first: a valid outcome wins over the exit code.
      expect(
        completed(yield* executor.execute(call("modes", { mode: "success_exit_1" }), {}, contextFor(root)))
      ).toStrictEqual({
        content: "printed an outcome",
        is_error: false
      })
    })
  )

  it.live("a tool cannot claim another inquiry source, whatever it prints or config says", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({
        modes: { ...modes, questions: { confirm: { target: "assistant" } } }
      })
      const result = needsInput(
        yield* executor.execute(call("modes", { mode: "claims_assistant" }), {}, contextFor(root))
      )
      expect(result.source).toStrictEqual({ source: "tool", name: "modes" })
      expect({ ...result.question }).toStrictEqual({
        id: "confirm",
        text: "Proceed?",
        answer_type: { type: "boolean" }
      })
    })
  )

  it.live("invalid arguments never start the process", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({ modes })
      expect(completed(yield* executor.execute(call("modes", { mode: 5 }), {}, contextFor(root)))).toStrictEqual({
        content: "Invalid arguments for modes: mode must be a string (got 5). Fix the arguments and call modes again.",
        is_error: true
      })
      expect(completed(yield* executor.execute(call("modes", {}), {}, contextFor(root)))).toStrictEqual({
        content: "Invalid arguments for modes: the argument mode is missing. Fix the arguments and call modes again.",
        is_error: true
      })
      expect(fs.existsSync(path.join(root, "invocations.log"))).toBe(false)
      // The same tool with valid arguments does run (so the marker is meaningful).
      completed(yield* executor.execute(call("modes", { mode: "error" }), {}, contextFor(root)))
      expect(invocations(root)).toStrictEqual(["{}"])
    })
  )
})

describe("local tools: commands and plain output (shell fixtures)", () => {
  it.live("a JP-style {{context}} {{tool}} command gets the shell-quoted JSON of each part", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({
        echo_args: { command: `sh ${FIXTURES}/echo_args.sh {{context}} {{ tool }}` }
      })
      const args = { text: `it's a "note" with $HOME, \`ticks\` and \\ backslash` }
      const result = completed(yield* executor.execute(call("echo_args", args), { q: ["a", 1] }, contextFor(root)))
      const tool = { name: "echo_args", arguments: args, answers: { q: ["a", 1] } }
      const context = { action: "run", root, conversation_id: "17738399468" }
      // Not JSON (three lines) and exit 0: stdout is the content, verbatim.
      expect(result).toStrictEqual({
        content: `${JSON.stringify(context)}\n${JSON.stringify(tool)}\n${JSON.stringify({ tool, context })}\n`,
        is_error: false
      })
    })
  )

  it.live("non-JSON stdout with exit 1 is an error carrying stdout and stderr", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({ fail: { command: `sh ${FIXTURES}/fail.sh` } })
      const result = completed(yield* executor.execute(call("fail", {}), {}, contextFor(root)))
      expect(result).toStrictEqual({
        content: `{"message":"Tool 'fail' execution failed.","stderr":"something broke\\n","stdout":"partial output\\n"}`,
        is_error: true
      })
    })
  )

  it.live("runs in the project root and survives a tool that never reads stdin", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({ where: { command: "pwd" } })
      const big = "x".repeat(2 * 1024 * 1024)
      expect(completed(yield* executor.execute(call("where", { big }), {}, contextFor(root)))).toStrictEqual({
        content: `${root}\n`,
        is_error: false
      })
    })
  )

  it.live("a root that does not exist is a tool error, not a crash", () =>
    Effect.gen(function* () {
      const executor = yield* executorFor({ where: { command: "pwd" } })
      const result = completed(yield* executor.execute(call("where", {}), {}, contextFor("/nonexistent/parley-root")))
      expect(result.is_error).toBe(true)
      expect(result.content).toMatch(/^Tool 'where' could not be started: .*ENOENT/)
    })
  )

  it("shellQuote survives single quotes", () => {
    expect(LocalTool.shellQuote(`it's`)).toBe(`'it'\\''s'`)
  })
})

describe("local tools: stopping the process group", () => {
  const readPids = (file: string) => fs.readFileSync(file, "utf8").trim().split(" ").map(Number)

  it.live("interrupting a running tool kills every process it started and returns promptly", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const pidFile = path.join(root, "pids")
      const executor = yield* executorFor({ sleeper: { command: `sh ${FIXTURES}/sleeper.sh ${pidFile}` } })
      const fiber = yield* Effect.forkChild(executor.execute(call("sleeper", {}), {}, contextFor(root)))
      yield* waitForFile(pidFile)
      const pids = readPids(pidFile)
      expect(pids).toHaveLength(3)
      expect(pids.every(isRunning)).toBe(true)

      const started = Date.now()
      yield* Fiber.interrupt(fiber)
      const elapsed = Date.now() - started
      expect(elapsed).toBeLessThan(LocalTool.KILL_GRACE_MS)
      expect(pids.filter(isRunning)).toStrictEqual([])
    })
  )

  it.live("a group that ignores SIGTERM is killed with SIGKILL after the grace period", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const pidFile = path.join(root, "pids")
      const executor = yield* executorFor({ stubborn: { command: `sh ${FIXTURES}/sleeper.sh ${pidFile} ignore-term` } })
      const fiber = yield* Effect.forkChild(executor.execute(call("stubborn", {}), {}, contextFor(root)))
      yield* waitForFile(pidFile)
      const pids = readPids(pidFile)

      const started = Date.now()
      yield* Fiber.interrupt(fiber)
      const elapsed = Date.now() - started
      expect(elapsed).toBeGreaterThanOrEqual(LocalTool.KILL_GRACE_MS)
      expect(elapsed).toBeLessThan(LocalTool.KILL_GRACE_MS + 1500)
      expect(pids.filter(isRunning)).toStrictEqual([])
    })
  )

  it.live("timeout_ms stops the tool and reports it", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const pidFile = path.join(root, "pids")
      const executor = yield* executorFor({
        sleeper: { command: `sh ${FIXTURES}/sleeper.sh ${pidFile}`, timeout_ms: 500 }
      })
      const started = Date.now()
      const result = completed(yield* executor.execute(call("sleeper", {}), {}, contextFor(root)))
      const elapsed = Date.now() - started
      expect(result).toStrictEqual({
        content: "Tool 'sleeper' timed out after 500 ms (timeout_ms) and was stopped.",
        is_error: true
      })
      expect(elapsed).toBeGreaterThanOrEqual(500)
      expect(elapsed).toBeLessThan(500 + LocalTool.KILL_GRACE_MS)
      expect(readPids(pidFile).filter(isRunning)).toStrictEqual([])
    })
  )
})

describe("local tools: leftovers and output limits (docs/tools.md#tool-processes-are-bounded)", () => {
  const success = `printf '{"type":"success","content":"done"}\\n'`

  it.live("the result is taken when the tool exits; a background job still holding stdout is stopped", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      // Without the fix parley waits for `sleep 1000` to close stdout, and the test times out.
      const executor = yield* executorFor({ bg: { command: `sleep 1000 & echo $! > bg.pid; ${success}` } })
      const result = completed(yield* executor.execute(call("bg", {}), {}, contextFor(root)))
      expect(result).toStrictEqual({ content: "done", is_error: false })
      const job = Number(fs.readFileSync(path.join(root, "bg.pid"), "utf8"))
      expect(isRunning(job)).toBe(false)
    })
  )

  it.live("a background job that ignores SIGTERM is killed too, and output printed before the exit is kept", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({
        bg: { command: `(trap '' TERM; sleep 1000) & echo $! > bg.pid; echo partial; echo oops >&2; exit 3` }
      })
      const result = completed(yield* executor.execute(call("bg", {}), {}, contextFor(root)))
      expect(result).toStrictEqual({
        content: `{"message":"Tool 'bg' execution failed.","stderr":"oops\\n","stdout":"partial\\n"}`,
        is_error: true
      })
      expect(isRunning(Number(fs.readFileSync(path.join(root, "bg.pid"), "utf8")))).toBe(false)
    })
  )

  const exactly = (n: number) => `head -c ${n} /dev/zero | tr '\\0' x`

  it.live("output up to max_output_bytes is the result; one byte more stops the tool with an error that says so", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({
        fits: { command: exactly(1000), max_output_bytes: 1000 },
        over: { command: `${exactly(1001)}; touch after`, max_output_bytes: 1000 }
      })
      expect(completed(yield* executor.execute(call("fits", {}), {}, contextFor(root)))).toStrictEqual({
        content: "x".repeat(1000),
        is_error: false
      })
      const over = completed(yield* executor.execute(call("over", {}), {}, contextFor(root)))
      expect(over.is_error).toBe(true)
      expect(JSON.parse(over.content)).toStrictEqual({
        message: `Tool 'over' printed more than 1000 bytes (max_output_bytes) and was stopped; below is the start of its stdout and stderr (at most ${LocalTool.QUOTED_BYTES} characters each).`,
        stderr: "",
        stdout: "x".repeat(1000)
      })
    })
  )

  it.live("stdout and stderr share the limit; `*` sets it for every tool", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({
        "*": { max_output_bytes: 1000 },
        both: { command: `${exactly(600)}; ${exactly(600)} >&2; ${success}` }
      })
      const result = completed(yield* executor.execute(call("both", {}), {}, contextFor(root)))
      expect(result.is_error).toBe(true)
      const content = JSON.parse(result.content) as { message: string; stdout: string; stderr: string }
      expect(content.message).toMatch(/^Tool 'both' printed more than 1000 bytes \(max_output_bytes\)/)
      // The two pipes are read independently, so which bytes came first depends on scheduling
      // (the success line may beat stderr's bytes); together they are exactly the budget.
      expect(content.stdout.startsWith("x".repeat(600))).toBe(true)
      expect(content.stderr).toMatch(/^x+$/)
      expect(content.stdout.length + content.stderr.length).toBe(1000)
    })
  )

  it.live("a tool printing forever is stopped at the limit, with every process it started", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({
        spew: { command: `sleep 1000 & echo $! > bg.pid; yes parley`, max_output_bytes: 100_000 }
      })
      const result = completed(yield* executor.execute(call("spew", {}), {}, contextFor(root)))
      expect(result.is_error).toBe(true)
      expect(JSON.parse(result.content).message).toContain("printed more than 100000 bytes (max_output_bytes)")
      expect(isRunning(Number(fs.readFileSync(path.join(root, "bg.pid"), "utf8")))).toBe(false)
      // Past the quoted length, the quote is cut and says so.
      expect(JSON.parse(result.content).stdout).toBe(`${"parley\n".repeat(146)}pa…`)
    })
  )
})

describe("LocalTool.run with a spec that says nothing of env (a library consumer's)", () => {
  it.live("inherits parley's environment less PARLEY_*", () =>
    Effect.gen(function* () {
      process.env["PARLEY_TOKEN"] = "cluster-token-0123456789abcdef0123456789abcdef"
      process.env["LOCAL_TOOL_TEST_KEPT"] = "kept"
      const spec: LocalTool.LocalToolSpec = { name: "envs", command: "env", timeoutMs: 10_000, maxOutputBytes: 1 << 20 }
      const response = completed(yield* LocalTool.run(spec, {}, {}, contextFor(tempRoot())))
      const names = response.content.split("\n").map((line) => line.split("=")[0])
      expect(names).toContain("LOCAL_TOOL_TEST_KEPT")
      expect(names.filter((name) => name?.startsWith("PARLEY_"))).toStrictEqual([])
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          delete process.env["PARLEY_TOKEN"]
          delete process.env["LOCAL_TOOL_TEST_KEPT"]
        })
      )
    )
  )
})
