// The words of the CLI's output, as pure functions (docs/cli.md#status-lines): status lines,
// error summaries, paste-able commands and usage lines (the JSON report is
// test/domain/run/RunReport.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as CliError from "effect/cli/CliError"
import { ToolCallRequest } from "../../src/domain/event/ToolCallRequest.ts"
import * as Timestamp from "../../src/domain/event/Timestamp.ts"
import { Question } from "../../src/domain/tool/Question.ts"
import * as RunEvent from "../../src/domain/run/RunEvent.ts"
import * as Hint from "../../src/cli/Hint.ts"
import * as StatusText from "../../src/cli/StatusText.ts"
import * as Style from "../../src/cli/Style.ts"
import * as Usage from "../../src/cli/Usage.ts"

const at = Timestamp.make("2026-03-01 10:00:00.5")
const call = (id: string, name: string, args: Record<string, unknown> = {}) =>
  new ToolCallRequest({ timestamp: at, id, name, arguments: args as never })
const question = (text: string, type: "boolean" | "text" | "secret" = "boolean") =>
  new Question({ id: "q" as never, text, answer_type: { type } })
const closed = (
  text: string,
  by: RunEvent.Answerer,
  outcome: RunEvent.QuestionOutcome,
  type: "boolean" | "text" | "secret" = "boolean"
) =>
  RunEvent.make.QuestionClosed({
    kind: "question",
    call: RunEvent.toolCall(call("c1", "write_file")),
    inquiry_id: "c1.q.1",
    question: question(text, type),
    by,
    outcome
  })

describe("status lines", () => {
  it("a failed tool's line is the last line of its stderr, else its message, else its first line", () => {
    expect(
      StatusText.errorLine(
        JSON.stringify({ message: "Tool 'x' execution failed.", stderr: "sh: 1: nope: not found\n", stdout: "" })
      )
    ).toBe("sh: 1: nope: not found")
    const traceback =
      'Traceback (most recent call last):\n  File "t.py", line 3, in <module>\n    boom()\nValueError: boom\n'
    expect(
      StatusText.errorLine(JSON.stringify({ message: "Tool 't' execution failed.", stderr: traceback, stdout: "" }))
    ).toBe("ValueError: boom")
    expect(
      StatusText.errorLine(JSON.stringify({ message: "Tool 't' execution failed.", stderr: "", stdout: "x" }))
    ).toBe("Tool 't' execution failed.")
    expect(StatusText.errorLine("Tool 'x' timed out after 100 ms and was stopped.")).toBe(
      "Tool 'x' timed out after 100 ms and was stopped."
    )
    expect(StatusText.errorLine("\n\nTool input prompt failed.\nmore")).toBe("Tool input prompt failed.")
  })

  it("a tool stopped for printing too much reads as that, not as the start of its cut stderr", () => {
    const limit =
      "Tool 'big' printed more than 1048576 bytes (max_output_bytes) and was stopped; below is the start of its stdout and stderr (at most 1024 characters each)."
    expect(StatusText.errorLine(JSON.stringify({ message: limit, stderr: `${"x".repeat(1024)}…`, stdout: "" }))).toBe(
      limit
    )
  })

  it("finished, skipped and failed calls; arguments cut to the width", () => {
    const ok = RunEvent.make.ToolFinished({
      call: RunEvent.toolCall(call("c1", "write_file", { path: "a.txt" })),
      ran: true,
      response: { content: "ok", is_error: false }
    })
    expect(StatusText.finishedLine(ok, 80, Style.plain)).toBe(`✓ write_file {"path":"a.txt"}`)
    expect(StatusText.finishedLine(ok, 80, Style.make(true))).toBe(
      `\x1b[32m✓\x1b[39m write_file \x1b[2m{"path":"a.txt"}\x1b[22m`
    )
    const failed = RunEvent.make.ToolFinished({
      call: RunEvent.toolCall(call("c1", "deploy")),
      ran: true,
      response: { content: "boom\ntrace", is_error: true }
    })
    expect(StatusText.finishedLine(failed, 80, Style.plain)).toBe("✗ deploy: boom")
    const skipped = RunEvent.make.ToolFinished({
      call: RunEvent.toolCall(call("c1", "ping")),
      ran: false,
      response: { content: "Tool skipped by configuration.", is_error: false }
    })
    expect(StatusText.finishedLine(skipped, 80, Style.plain)).toBe("– ping: Tool skipped by configuration.")
    const long = RunEvent.make.ToolStarted({
      call: RunEvent.toolCall(call("c1", "write_file", { path: "x".repeat(200) })),
      resumed: true
    })
    const row = StatusText.runningRow(long, 40)
    expect(Style.width(row)).toBeLessThanOrEqual(38)
    expect(row.startsWith("write_file (resumed) {")).toBe(true)
    expect(row.endsWith("…")).toBe(true)
  })

  it("widths are terminal columns: wide characters take two, combining marks none; cuts never exceed the width", () => {
    expect(Style.width("日本語")).toBe(6)
    expect(Style.width("e\u0301")).toBe(1)
    expect(Style.width("\x1b[2mok\x1b[22m ✅")).toBe(5)
    expect(Style.truncate("日本語のファイル", 7)).toBe("日本語…")
    expect(Style.truncate("日本語", 6)).toBe("日本語")
    expect(Style.truncate("abcdef", 4)).toBe("abc…")
    const wide = RunEvent.make.ToolStarted({
      call: RunEvent.toolCall(call("c1", "slow", { name: "日本語のファイル名".repeat(12) })),
      resumed: false
    })
    expect(Style.width(StatusText.runningRow(wide, 40))).toBeLessThanOrEqual(38)
  })

  it("who answered and what: yes/no, text, •••• for a secret, cancellations with their reason", () => {
    expect(
      StatusText.questionLine(
        closed("Overwrite a.txt?", "assistant", { _tag: "Answered" as const, answer: false }),
        80,
        Style.plain
      )
    ).toBe("↳ Overwrite a.txt? → no (assistant)")
    expect(
      StatusText.questionLine(
        closed("Branch?", "config", { _tag: "Answered" as const, answer: "main" }, "text"),
        80,
        Style.plain
      )
    ).toBe("↳ Branch? → main (config)")
    expect(
      StatusText.questionLine(closed("Token?", "you", { _tag: "Redacted" as const }, "secret"), 80, Style.plain)
    ).toBe("↳ Token? → •••• (you)")
    expect(
      StatusText.questionLine(
        closed("Token?", "parley", { _tag: "Cancelled" as const, reason: "no_prompt_backend" }, "secret"),
        80,
        Style.plain
      )
    ).toBe("↳ Token? → cancelled: no_prompt_backend")
    expect(
      StatusText.questionLine(
        closed("Apply?", "remembered", { _tag: "Answered" as const, answer: true }),
        80,
        Style.plain
      )
    ).toBe("↳ Apply? → yes (remembered)")
    expect(StatusText.answerText({ _tag: "Answered" as const, answer: { a: 1 } })).toBe(`{"a":1}`)
  })
})

describe("hostile text in status lines (a model, a tool or a server chose it)", () => {
  it("escape sequences in names, arguments, errors, questions and answers are shown, never sent to the terminal", () => {
    const name = "evil\x1b]0;pwned\x07"
    const failed = RunEvent.make.ToolFinished({
      call: RunEvent.toolCall(call("c1", name)),
      ran: true,
      response: {
        content: JSON.stringify({ message: "Tool 'evil' execution failed.", stderr: "boom\x1b[2J\n", stdout: "" }),
        is_error: true
      }
    })
    expect(StatusText.finishedLine(failed, 80, Style.plain)).toBe("✗ evil␛]0;pwned␇: boom␛[2J")
    const ok = RunEvent.make.ToolFinished({
      call: RunEvent.toolCall(call("c1", name, { p: "\x9b2J\u202e" })),
      ran: true,
      response: { content: "ok", is_error: false }
    })
    expect(StatusText.finishedLine(ok, 80, Style.plain)).toBe(`✓ evil␛]0;pwned␇ {"p":"<U+009B>2J<U+202E>"}`)
    const skipped = RunEvent.make.ToolFinished({
      call: RunEvent.toolCall(call("c1", name)),
      ran: false,
      response: { content: "skipped\x1b[H", is_error: false }
    })
    expect(StatusText.finishedLine(skipped, 80, Style.plain)).toBe("– evil␛]0;pwned␇: skipped␛[H")
    const running = RunEvent.make.ToolStarted({
      call: RunEvent.toolCall(call("c1", name, { p: "\x9b" })),
      resumed: false
    })
    expect(StatusText.runningRow(running, 80)).toBe(`evil␛]0;pwned␇ {"p":"<U+009B>"}`)
    const answered = closed(
      "Which\x1b[31m one?",
      "assistant",
      { _tag: "Answered" as const, answer: "x\x1b[2J" },
      "text"
    )
    expect(StatusText.questionLine(answered, 80, Style.plain)).toBe("↳ Which␛[31m one? → x␛[2J (assistant)")
  })
})

describe("paste-able commands", () => {
  // As an installed parley runs: through its bin link (see Hint.invokedAs).
  const argv1 = process.argv[1]
  beforeAll(() => {
    process.argv[1] = "/usr/local/bin/parley"
  })
  afterAll(() => {
    process.argv[1] = argv1!
  })

  it("repeat --model, --script and --storage when given, each quoted for the shell", () => {
    expect(Hint.resume("17000000001", {})).toBe("parley query --continue-turn --id 17000000001")
    expect(
      Hint.resume("17000000001", { storage: "/tmp/my dir/.parley", model: "openai/gpt-5", script: "/tmp/it's.json" })
    ).toBe(
      "parley query --continue-turn --id 17000000001 --model openai/gpt-5 --script '/tmp/it'\\''s.json' --storage '/tmp/my dir/.parley'"
    )
    // Discarding calls no model: only the storage is repeated.
    expect(Hint.discard("17000000001", { storage: "/s", model: "openai/gpt-5", script: "/x.json" })).toBe(
      "parley query --discard-turn --id 17000000001 --storage /s"
    )
    // Store commands repeat only the storage: they call no model.
    expect(Hint.check("17000000001", { storage: "/tmp/my dir", model: "openai/gpt-5", script: "/x.json" })).toBe(
      "parley conversation check 17000000001 --storage '/tmp/my dir'"
    )
    expect(Hint.listArchived({})).toBe("parley conversation ls --archived")
    expect(Hint.help(["parley", "conversation", "print"])).toBe("parley conversation print --help")
  })

  it("name parley as it was started: the bin link by name, the script (npm start) through node", () => {
    expect(Hint.invokedAs("/usr/local/bin/parley")).toBe("parley")
    expect(Hint.invokedAs("/work/app/node_modules/.bin/parley")).toBe("npx parley")
    expect(Hint.invokedAs("/home/me/my parley/dist/parley.mjs")).toBe("node '/home/me/my parley/dist/parley.mjs'")
  })
})

describe("usage lines", () => {
  it("say what is wrong in one line, with effect/cli's suggestions", () => {
    const path = ["parley", "query"]
    expect(Usage.describe(new CliError.UnrecognizedOption({ option: "--neww", suggestions: ["--new"] }), path)).toBe(
      "unrecognized flag --neww for `parley query` (did you mean --new?)"
    )
    expect(Usage.describe(new CliError.MissingArgument({ argument: "id" }), ["parley", "conversation", "print"])).toBe(
      "`parley conversation print` needs <id>"
    )
    expect(
      Usage.describe(
        new CliError.InvalidValue({ option: "format", value: "yaml", expected: "text | json", kind: "flag" }),
        path
      )
    ).toMatch(/^invalid value for flag --format/)
    // The help command is built by Hint like every command parley prints: parley as it was started.
    const argv1 = process.argv[1]
    try {
      process.argv[1] = "/usr/local/bin/parley"
      expect(Usage.helpHint(path)).toBe("Run `parley query --help` for usage.")
      process.argv[1] = "/home/me/my parley/dist/parley.mjs"
      expect(Usage.helpHint(path)).toBe("Run `node '/home/me/my parley/dist/parley.mjs' query --help` for usage.")
    } finally {
      process.argv[1] = argv1!
    }
  })
})
