// The terminal (docs/cli.md#status-lines), fault-injected on a real terminal (tmux): what a
// reviewer found by running the built binary. Live status rows are always
// erased (wide characters, more running calls than the screen has rows);
// escape sequences in what a model, a tool or a server says are shown, never
// obeyed.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import * as Tmux from "../support/Tmux.ts"
import {
  makeProject as makeProjectIn,
  onDisk,
  parleyPid,
  type Project,
  removeProjects,
  writeScript
} from "../support/TtyProject.ts"
import { waitFor } from "../support/Project.ts"

const makeProject = (files: Readonly<Record<string, string>> = {}) => makeProjectIn("parley-tty-review-", files)

if (Tmux.skipReason !== undefined) console.warn(`TtyReview.test.ts skipped: ${Tmux.skipReason}`)

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

/** A tool that marks itself started, then runs until `hold` is removed. */
const HOLD = `mktemp started.XXXXXX >/dev/null\nwhile [ -f hold ]; do sleep 0.05; done\nprintf '{"type":"success","content":"done"}\\n'\n`

const tool = (name: string, script: string, run: string) => `
[conversation.tools.${name}]
source = "local"
command = "sh ${script}"
description = "A test tool."
parameters = { type = "object", properties = { name = { type = "string" } } }
run = "${run}"
`

const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/g

const start = (
  p: Project,
  args: ReadonlyArray<string>,
  options: { height?: number; env?: Record<string, string> } = {}
) =>
  Tmux.start({
    command: [process.execPath, binary, "--storage", p.storage, ...args],
    cwd: p.root,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.height !== undefined ? { height: options.height } : {})
  })

/** The pane's title: what an OSC 0/2 sequence sets. */
const title = (s: Tmux.Session): string =>
  execFileSync(Tmux.tmuxBinary!, ["-L", s.name, "display-message", "-p", "-t", s.name, "#{pane_title}"], {
    encoding: "utf8"
  }).trim()

/** A tool that asks a question holding escape sequences, fails with them in a multi-line message, or fails with 1 MB of stderr. */
const HOSTILE = `python3 -c '
import json, sys
req = json.load(sys.stdin)
mode = req["tool"]["arguments"]["name"]
if mode == "ask":
    if "q" not in req["tool"]["answers"]:
        print(json.dumps({"type": "needs_input", "question": {"id": "q", "text": "Which\\x1b]0;TITLE-BY-QUESTION\\x07 one?", "answer_type": {"type": "text"}}}))
    else:
        print(json.dumps({"type": "success", "content": "ok"}))
elif mode == "multi":
    print(json.dumps({"type": "error", "message": "first\\x1b[31m line\\nsecond line", "transient": False}))
'
`

/** A tool that asks the person to pick an option; its question and first option hold escape sequences. */
const PICK = `python3 -c '
import json, sys
req = json.load(sys.stdin)
if "pick" not in req["tool"]["answers"]:
    print(json.dumps({"type": "needs_input", "question": {"id": "pick", "text": "Pick\\x1b]0;TITLE-BY-PROMPT\\x07 one?", "answer_type": {"type": "select", "options": ["a\\x1b[2Jb", "plain"]}}}))
else:
    print(json.dumps({"type": "success", "content": "picked " + json.dumps(req["tool"]["answers"]["pick"])}))
'
`

const started = (p: Project) => fs.readdirSync(p.root).filter((n) => n.startsWith("started.")).length

/** Waits until `count` calls run and the spinner has turned a few frames (each frame is a redraw). */
const runningAndTurning = async (s: Tmux.Session, p: Project, count: number) => {
  const seen = new Set<string>()
  const deadline = Date.now() + 15_000
  while (started(p) < count || seen.size < 3) {
    for (const frame of s.pane(false).match(SPINNER) ?? []) seen.add(frame)
    if (Date.now() > deadline)
      throw new Error(`${started(p)} of ${count} calls started, frames seen: ${[...seen].join("")}\n${s.pane()}`)
    await new Promise((r) => setTimeout(r, 30))
  }
}

describe.skipIf(!Tmux.available)(
  `the terminal under fault injection (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("a running row of wide characters is erased each frame: no spinner line is left behind", async () => {
      const p = makeProject({ "hold.sh": HOLD, hold: "" })
      fs.writeFileSync(path.join(p.storage, "config.toml"), tool("slow", "hold.sh", "unattended"))
      const name = "日本語のファイル名".repeat(12)
      const script = writeScript(p, [
        { message: "Go.", tool_calls: [{ id: "call_1", name: "slow", arguments: { name } }] },
        { message: "Done." }
      ])
      const s = start(p, ["query", "hi", "--model", "scripted", "--script", script])
      await runningAndTurning(s, p, 1)
      fs.rmSync(path.join(p.root, "hold"))
      expect(await s.waitForExit()).toBe(0)
      const pane = s.pane()
      expect(pane.match(SPINNER)).toBeNull()
      expect(pane).toMatch(/^✓ slow \{"name":"日本語/m)
      expect(pane).toContain("\nDone.")
    })

    it("more running calls than the screen has rows: the live rows fit the screen, and are all erased", async () => {
      const p = makeProject({ "hold.sh": HOLD, hold: "" })
      fs.writeFileSync(path.join(p.storage, "config.toml"), tool("slow", "hold.sh", "unattended"))
      const calls = Array.from({ length: 30 }, (_, i) => ({
        id: `call_${i + 1}`,
        name: "slow",
        arguments: { name: `n${i + 1}` }
      }))
      const script = writeScript(p, [{ message: "Go.", tool_calls: calls }, { message: "Done." }])
      const s = start(p, ["query", "hi", "--model", "scripted", "--script", script], { height: 20 })
      await runningAndTurning(s, p, 30)
      const screen = s.pane(false)
      expect(screen).toMatch(/… and 12 more$/m) // 19 rows: 18 calls and the rest counted
      fs.rmSync(path.join(p.root, "hold"))
      expect(await s.waitForExit()).toBe(0)
      const pane = s.pane()
      expect(pane.match(SPINNER)).toBeNull()
      expect(pane.match(/^✓ slow /gm)).toHaveLength(30)
    })

    it("escape sequences in a tool's name, a question, an answer and an error are shown, never obeyed", async () => {
      const p = makeProject({ "hostile.sh": HOSTILE })
      fs.writeFileSync(
        path.join(p.storage, "config.toml"),
        tool("hostile", "hostile.sh", "unattended") +
          `
[conversation.tools.hostile.questions.q]
target = "assistant"
`
      )
      const script = writeScript(p, [
        {
          message: "Go.",
          tool_calls: [
            { id: "call_1", name: "hostile", arguments: { name: "ask", note: "\u009b2J\u202egnp.exe" } },
            { id: "call_2", name: "hostile", arguments: { name: "multi" } },
            {
              id: "call_3",
              name: "nope\u001b]2;TITLE-BY-NAME\u0007\u001b[2J",
              arguments: { name: "\u009b2J\u202egnp.exe" }
            }
          ]
        },
        { structured: { answer: "fine\u001b[2J\u001b[H" } },
        { message: "Done." }
      ])
      const s = start(p, ["query", "hi", "--model", "scripted", "--script", script])
      expect(await s.waitForExit()).toBe(0)
      expect(title(s)).not.toMatch(/TITLE-BY/)
      const pane = s.pane()
      expect(pane).toContain("↳ Which␛]0;TITLE-BY-QUESTION␇ one? → fine␛[2J␛[H (assistant)\n")
      expect(pane).toContain("✗ hostile: first␛[31m line\n") // the first line only
      expect(pane).toContain(`✓ hostile {"name":"ask","note":"<U+009B>2J<U+202E>gnp.exe"}\n`)
      expect(pane).toMatch(/^✗ nope␛\]2;TITLE-BY-NAME␇␛\[2J: Tool 'nope␛\]2;TITLE-BY-NAME␇␛\[2J' is not available/m)
      expect(pane).toMatch(/^conversation \d+ \(new\)\nGo\.\n/) // nothing cleared the screen
    })

    it("a reply, a printed conversation and a listed title are shown on the terminal, never obeyed; piped, the reply is passed on as it came", async () => {
      const p = makeProject()
      const reply = "Hi\u001b]2;TITLE-BY-REPLY\u0007\u001b[2J\u001b]52;c;cHduZWQ=\u0007\tthere"
      const script = writeScript(p, [{ message: reply }])
      const s = start(p, ["query", "hi", "--model", "scripted", "--script", script])
      expect(await s.waitForExit()).toBe(0)
      expect(title(s)).not.toMatch(/TITLE-BY/)
      expect(s.pane()).toMatch(/^conversation \d+ \(new\)\nHi␛\]2;TITLE-BY-REPLY␇␛\[2J␛\]52;c;cHduZWQ=␇\s+there$/m) // the tab is the terminal's to expand
      const id = /^conversation (\d+)/m.exec(s.pane())![1]!
      // The conversation's title comes from its first message: make it hostile too.
      const conversations = path.join(p.storage, "conversations")
      const meta = path.join(
        conversations,
        fs.readdirSync(conversations).find((d) => d.startsWith(id))!,
        "metadata.json"
      )
      fs.writeFileSync(
        meta,
        JSON.stringify(
          { ...JSON.parse(fs.readFileSync(meta, "utf8")), title: "T\u001b]2;TITLE-BY-LS\u0007" },
          null,
          2
        ) + "\n"
      )
      const printed = start(p, ["conversation", "print", id])
      expect(await printed.waitForExit()).toBe(0)
      expect(title(printed)).not.toMatch(/TITLE-BY/)
      expect(printed.pane()).toContain("Hi␛]2;TITLE-BY-REPLY␇␛[2J␛]52;c;cHduZWQ=␇")
      const listed = start(p, ["conversation", "ls"])
      expect(await listed.waitForExit()).toBe(0)
      expect(title(listed)).not.toMatch(/TITLE-BY/)
      expect(listed.pane()).toMatch(new RegExp(`^${id} .* events  T␛\\]2;TITLE-BY-LS␇$`, "m"))
      // Not a terminal: the bytes the model sent, for whatever reads them.
      const piped = runParley([
        "--storage",
        p.storage,
        "query",
        "again",
        "--id",
        id,
        "--model",
        "scripted",
        "--script",
        writeScript(p, [{ message: reply }])
      ])
      expect([piped.code, piped.stdout]).toStrictEqual([0, reply + "\n"])
    })

    it("parley ask on a terminal shows an answer given elsewhere, never obeys it", async () => {
      const p = makeProject({})
      const hostile = "T\u001b]2;TITLE-BY-ASK\u0007"
      const answerFromAfar = async () => {
        let row: { conversation_id: string; inquiry_id: string } | undefined
        await waitFor("the question listed", () => {
          row = JSON.parse(runParley(["--storage", p.storage, "inbox", "--format", "json"], { cwd: p.root }).stdout)[0]
          return row !== undefined
        })
        if (row === undefined) throw new Error("not listed")
        const answered = runParley(
          ["--storage", p.storage, "conversation", "answer", row.conversation_id, row.inquiry_id, hostile],
          { cwd: p.root }
        )
        expect(answered.code, answered.stderr).toBe(0)
      }
      const asked = start(p, ["ask", "Name?", "--new", "--type", "text"])
      await asked.waitFor(/Name\?/)
      await answerFromAfar()
      expect(await asked.waitForExit()).toBe(0)
      expect(title(asked)).not.toMatch(/TITLE-BY/)
      expect(asked.pane()).toContain("T␛]2;TITLE-BY-ASK␇")
    })

    it("the prompts show a hostile tool name, arguments, question and options as text; the option picked is recorded as it was", async () => {
      const p = makeProject({ "pick.sh": PICK })
      // A quoted TOML key may hold any character; so may an MCP server's tool name.
      fs.writeFileSync(
        path.join(p.storage, "config.toml"),
        tool(`"pick\\u001b]2;TITLE-BY-NAME\\u0007"`, "pick.sh", "ask")
      )
      const name = "pick\u001b]2;TITLE-BY-NAME\u0007"
      const script = writeScript(p, [
        { message: "Go.", tool_calls: [{ id: "call_1", name, arguments: { name: "\u009b2J\u202egnp.exe" } }] },
        { message: "Done." }
      ])
      const s = start(p, ["query", "hi", "--model", "scripted", "--script", script])
      await s.waitFor(/\? Run local pick␛\]2;TITLE-BY-NAME␇ tool\? \[y/)
      expect(s.pane()).toContain(`  {\n    "name": "<U+009B>2J<U+202E>gnp.exe"\n  }\n? Run local`)
      s.sendKeys("y")
      await s.waitFor(/\? Pick␛\]0;TITLE-BY-PROMPT␇ one\?/)
      expect(s.pane()).toMatch(/❯ a␛\[2Jb/)
      s.sendKeys("Enter")
      expect(await s.waitForExit()).toBe(0)
      expect(title(s)).not.toMatch(/TITLE-BY/)
      expect(s.pane()).toContain("↳ Pick␛]0;TITLE-BY-PROMPT␇ one? → a␛[2Jb (you)\n")
      const events = onDisk(p.storage)
      // The permission (recorded first, docs/decisions.md#permission-decisions-recorded) and the question, each as it was.
      expect(events.filter((e) => e["type"] === "inquiry_response").map((e) => [e["id"], e["answer"]])).toStrictEqual([
        ["call_1.__permission__.1", true],
        ["call_1.pick.1", "a\u001b[2Jb"]
      ])
      expect(events.find((e) => e["type"] === "inquiry_request")).toMatchObject({
        question: { text: `Run local ${name} tool?` }
      })
    })

    it("SIGTERM at a question prompt ends the prompt's line before the cancellation is shown (exit 143)", async () => {
      const p = makeProject({ "a.txt": "old\n" })
      const script = writeScript(p, [
        {
          message: "Writing.",
          tool_calls: [{ id: "call_1", name: "write_file", arguments: { path: "a.txt", content: "new\n" } }]
        }
      ])
      const s = start(p, ["query", "hi", "--model", "scripted", "--script", script])
      await s.waitFor(/\? Overwrite a\.txt\? \[y\/Y\/n\/N,\?\]$/)
      process.kill(parleyPid(p), "SIGTERM")
      expect(await s.waitForExit()).toBe(143)
      expect(s.pane()).toContain(
        "? Overwrite a.txt? [y/Y/n/N,?] (cancelled)\n↳ Overwrite a.txt? → cancelled: user\nparley: interrupted."
      )
      expect(onDisk(p.storage).at(-1)).toMatchObject({
        type: "inquiry_response",
        id: "call_1.overwrite.1",
        outcome: "cancelled",
        reason: "user"
      })
    })

    it("SIGHUP at the incomplete-turn menu ends the menu's line (exit 129) and changes nothing", async () => {
      const p = makeProject()
      const failing = path.join(p.root, "failing.json")
      fs.writeFileSync(failing, JSON.stringify({ steps: [{ error: "provider unavailable" }] }))
      expect(runParley(["--storage", p.storage, "query", "hi", "--script", failing], { cwd: p.root }).code).toBe(1)
      const file = path.join(
        p.storage,
        "conversations",
        fs.readdirSync(path.join(p.storage, "conversations")).find((n) => /^\d/.test(n))!,
        "events.json"
      )
      const before = fs.readFileSync(file, "utf8")
      const s = start(p, ["query", "--script", writeScript(p, [{ message: "Hello." }])])
      await s.waitFor(/\? What now\? \[r\/d\/e\/q,\?\]$/)
      process.kill(parleyPid(p), "SIGHUP")
      expect(await s.waitForExit()).toBe(129)
      expect(s.pane()).toMatch(/\? What now\? \[r\/d\/e\/q,\?\] \(cancelled\)\nparley: interrupted\./)
      expect(onDisk(p.storage)).toHaveLength(JSON.parse(before).length) // folded, nothing left in a journal
      expect(fs.readFileSync(file, "utf8")).toBe(before)
    })

    it("a tool that floods stderr (1 MB, one line) is shown stopped for its output, on one line", async () => {
      const p = makeProject({ "big.sh": `head -c 1100000 /dev/zero | tr '\\0' x >&2\nexit 1\n` })
      fs.writeFileSync(path.join(p.storage, "config.toml"), tool("big", "big.sh", "unattended"))
      const script = writeScript(p, [
        { message: "Go.", tool_calls: [{ id: "call_1", name: "big", arguments: {} }] },
        { message: "Done." }
      ])
      const s = start(p, ["query", "hi", "--model", "scripted", "--script", script])
      expect(await s.waitForExit()).toBe(0)
      expect(s.pane()).toMatch(
        /^✗ big: Tool 'big' printed more than 1048576 bytes \(max_output_bytes\) and was stopped; .*…\nDone\.$/m
      )
    })

    it("stdin not a terminal (a message piped in), stderr one: no prompt, but the status lines are shown", async () => {
      const p = makeProject()
      const script = writeScript(p, [
        { message: "Reading.", tool_calls: [{ id: "call_1", name: "read_file", arguments: { path: "nope.txt" } }] },
        { message: "Done." }
      ])
      const cmd = [process.execPath, binary, "--storage", p.storage, "query", "--model", "scripted", "--script", script]
        .map(Tmux.shellQuote)
        .join(" ")
      const s = Tmux.start({ command: ["sh", "-c", `echo "Read it" | ${cmd}`], cwd: p.root })
      expect(await s.waitForExit()).toBe(0)
      expect(s.pane()).toMatch(/^Reading\.\n✗ read_file: .*\nDone\.$/m)
      expect(onDisk(p.storage).find((e) => e["type"] === "chat_request")).toMatchObject({ content: "Read it" })
    })

    it("--format json, `q` or an abandoned edit at the menu: the document says the turn is still incomplete, with the command that resumes it", async () => {
      const p = makeProject()
      const failing = path.join(p.root, "failing.json")
      fs.writeFileSync(failing, JSON.stringify({ steps: [{ error: "provider unavailable" }] }))
      expect(runParley(["--storage", p.storage, "query", "hi", "--script", failing], { cwd: p.root }).code).toBe(1)
      const id = fs
        .readdirSync(path.join(p.storage, "conversations"))
        .find((n) => /^\d/.test(n))!
        .split("-")[0]!
      const script = writeScript(p, [{ message: "Hello." }])
      const run = async (key: string, env: Record<string, string>) => {
        const cmd = [process.execPath, binary, "--storage", p.storage, "query", "--script", script, "--format", "json"]
          .map(Tmux.shellQuote)
          .join(" ")
        const s = Tmux.start({ command: ["sh", "-c", `${cmd} > out.json`], cwd: p.root, env })
        await s.waitFor(/\? What now\? \[r\/d\/e\/q,\?\]$/)
        s.sendKeys(key)
        const code = await s.waitForExit()
        return {
          code,
          doc: JSON.parse(fs.readFileSync(path.join(p.root, "out.json"), "utf8")) as Record<string, unknown>
        }
      }
      const resume = `parley query --continue-turn --id ${id} --script ${script} --storage ${p.storage}`
      const quit = await run("q", {})
      expect(quit.code).toBe(0)
      expect(quit.doc).toMatchObject({ outcome: "quit", incomplete: { state: "pending-llm-response" }, resume })
      const edit = await run("e", { EDITOR: "false" })
      expect(edit.code).toBe(1)
      expect(edit.doc).toMatchObject({
        outcome: "edit_abandoned",
        incomplete: { state: "pending-llm-response" },
        resume
      })
      expect(edit.doc["error"]).toBe(
        "Kept the pending query as it was (the editor (false) exited with status 1); nothing was sent."
      )
      // Ctrl-C at an editor that does not take the terminal (like `code --wait`) is the editor's: the edit is abandoned, the run is not killed.
      fs.writeFileSync(path.join(p.root, "slow-edit.sh"), `touch "${path.join(p.root, "editing")}"\nsleep 30\n`)
      const cmd = [process.execPath, binary, "--storage", p.storage, "query", "--script", script, "--format", "json"]
        .map(Tmux.shellQuote)
        .join(" ")
      // exec: no shell waits in between to die of the same Ctrl-C.
      const s = Tmux.start({
        command: ["sh", "-c", `exec ${cmd} > out.json`],
        cwd: p.root,
        env: { EDITOR: `sh ${path.join(p.root, "slow-edit.sh")}` }
      })
      await s.waitFor(/\? What now\? \[r\/d\/e\/q,\?\]$/)
      s.sendKeys("e")
      await waitFor("the editor running", () => fs.existsSync(path.join(p.root, "editing")))
      s.sendKeys("C-c")
      expect(await s.waitForExit()).toBe(1)
      const doc = JSON.parse(fs.readFileSync(path.join(p.root, "out.json"), "utf8")) as Record<string, unknown>
      expect(doc).toMatchObject({ outcome: "edit_abandoned", incomplete: { state: "pending-llm-response" }, resume })
      expect(doc["error"]).toBe(
        `Kept the pending query as it was (the editor (sh ${path.join(p.root, "slow-edit.sh")}) was stopped by SIGINT); nothing was sent.`
      )
    })

    it("two Ctrl-C at permission prompts: every response recorded is shown, and is in the JSON document", async () => {
      const p = makeProject({ "ping.sh": `printf '{"type":"success","content":"ran"}\\n'\n` })
      fs.writeFileSync(path.join(p.storage, "config.toml"), tool("ping", "ping.sh", "ask"))
      const calls = [1, 2, 3].map((i) => ({ id: `call_${i}`, name: "ping", arguments: { name: `n${i}` } }))
      const script = writeScript(p, [{ message: "Pinging.", tool_calls: calls }, { message: "Done." }])
      const cmd = [
        process.execPath,
        binary,
        "--storage",
        p.storage,
        "query",
        "hi",
        "--model",
        "scripted",
        "--script",
        script,
        "--format",
        "json"
      ]
        .map(Tmux.shellQuote)
        .join(" ")
      const s = Tmux.start({ command: ["sh", "-c", `${cmd} > out.json`], cwd: p.root })
      await s.waitFor(/call 1 of 3[\s\S]*Run local ping tool\? \[y\/Y\/n\/N,\?\]$/)
      s.sendKeys("C-c")
      await s.waitFor(/call 2 of 3[\s\S]*Run local ping tool\? \[y\/Y\/n\/N,\?\]$/)
      s.sendKeys("C-c")
      expect(await s.waitForExit()).toBe(130)
      const responses = onDisk(p.storage)
        .filter((e) => e["type"] === "tool_call_response")
        .map((e) => e["id"])
      expect(responses.length).toBeGreaterThanOrEqual(1)
      expect(s.pane().match(/^– ping: Tool skipped by user\.$/gm)).toHaveLength(responses.length)
      const doc = JSON.parse(fs.readFileSync(path.join(p.root, "out.json"), "utf8")) as {
        tool_calls: Array<{ id: string; outcome: string }>
      }
      expect(doc.tool_calls.filter((c) => c.outcome === "skipped").map((c) => c.id)).toStrictEqual(responses)
    })
  }
)
