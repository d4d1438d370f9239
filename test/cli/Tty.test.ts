// `parley query` on a real terminal (tmux): single-key y/Y answers, a
// secret typed without echo, Ctrl-C at a prompt, the incomplete-turn
// prompt's r and d, and `parley demo` — each checked against the exact
// events recorded in events.json and the exit code.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import * as Tmux from "../support/Tmux.ts"
import {
  b64,
  type Entry,
  makeProject as makeProjectIn,
  type Project,
  recorded,
  removeProjects,
  startParley,
  trackedTempDir,
  writeScript
} from "../support/TtyProject.ts"

const makeProject = (files: Readonly<Record<string, string>> = {}) => makeProjectIn("parley-tty-", files)

const count = (text: string, needle: string) => text.split(needle).length - 1

// JP's hand-written events (see ConversationLsPrintFork.test.ts).
const writeConversation = (storage: string, id: string, entries: ReadonlyArray<Entry>) => {
  const dir = path.join(storage, "conversations", `${id}-case`)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "metadata.json"),
    JSON.stringify({ title: `case ${id}`, last_activated_at: "2026-03-01 10:00:00.0" }, null, 2) + "\n"
  )
  // The conversation remembers the scripted model, as one parley started would (no config_delta on resume).
  fs.writeFileSync(
    path.join(dir, "base_config.json"),
    JSON.stringify({ assistant: { model: { id: { provider: "scripted", name: "" } } } }, null, 2) + "\n"
  )
  fs.writeFileSync(path.join(dir, "events.json"), JSON.stringify(entries, null, 2) + "\n")
}

/** write_file's question; `size` (bytes of the existing file): recorded with its context (RFD 083), as parley writes it now. */
const overwriteRequest = (id: string, file: string, size?: number): Entry => ({
  type: "inquiry_request",
  id,
  source: { source: "tool", name: "write_file" },
  question: {
    text: `Overwrite ${file}?`,
    answer_type: { type: "boolean" },
    default: false,
    ...(size !== undefined ? { context: `${file} already exists (${size} bytes).` } : {})
  }
})

const writeCall = (id: string, file: string, content: string): Entry => ({
  type: "tool_call_request",
  id,
  name: "write_file",
  arguments: { path: b64(file), content: b64(content) }
})

/** Every base64 rendering of `secret` inside a longer text (its three alignments), plus the plain bytes. */
const secretNeedles = (secret: string): Array<string> => {
  const needles = [secret, b64(secret)]
  for (const pad of ["a", "ab"]) {
    const encoded = b64(pad + secret)
    // Drop the characters that mix in the pad's bits and the possibly-padded tail.
    needles.push(encoded.slice(Math.ceil((pad.length * 8) / 6) + 1, -4))
  }
  return needles
}

const filesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? filesUnder(p) : [p]
  })

if (Tmux.skipReason !== undefined) console.warn(`Tty.test.ts skipped: ${Tmux.skipReason}`)

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

describe.skipIf(!Tmux.available)(
  `parley query on a real TTY (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("a boolean question answered with a single `y` keypress is recorded as answered true and the file is overwritten", async () => {
      const p = makeProject({ "notes.txt": "old\n" })
      const script = writeScript(p, [
        {
          message: "Writing.",
          tool_calls: [{ id: "call_1", name: "write_file", arguments: { path: "notes.txt", content: "new\n" } }]
        },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Update notes", "--model", "scripted", "--script", script])
      await s.waitFor(/\? Overwrite notes\.txt\? \[y\/Y\/n\/N,\?\]/)
      expect(s.pane()).toContain("notes.txt already exists (4 bytes).")
      s.sendKeys("y") // one key, no Enter
      expect(await s.waitForExit()).toBe(0)
      const pane = s.pane()
      // Then who answered, and the call's status line (docs/cli.md#status-lines), then the reply.
      expect(pane).toContain(
        `✔ Overwrite notes.txt? yes\n↳ Overwrite notes.txt? → yes (you)\n✓ write_file {"path":"notes.txt","content":"new\\n"}\nDone.`
      )
      expect(fs.readFileSync(path.join(p.root, "notes.txt"), "utf8")).toBe("new\n")
      expect(recorded(p.storage)).toStrictEqual([
        { type: "turn_start" },
        { type: "chat_request", content: "Update notes" },
        { type: "chat_response", message: "Writing." },
        writeCall("call_1", "notes.txt", "new\n"),
        overwriteRequest("call_1.overwrite.1", "notes.txt", 4),
        { type: "inquiry_response", outcome: "answered", id: "call_1.overwrite.1", answer: true },
        { type: "tool_call_response", id: "call_1", content: b64("Wrote 4 bytes to notes.txt."), is_error: false },
        { type: "chat_response", message: "Done." }
      ])
    })

    it("`Y` is remembered for the turn: two write_file calls, one prompt, both inquiries answered true under their own ids", async () => {
      const p = makeProject({ "a.txt": "old a\n", "b.txt": "old b\n" })
      const script = writeScript(p, [
        {
          message: "Writing two files.",
          tool_calls: [
            { id: "call_1", name: "write_file", arguments: { path: "a.txt", content: "A\n" } },
            { id: "call_2", name: "write_file", arguments: { path: "b.txt", content: "B\n" } }
          ]
        },
        { message: "Both written." }
      ])
      const s = startParley(p, ["query", "Write both", "--model", "scripted", "--script", script])
      // Both calls run concurrently; whichever asks first gets the prompt.
      const first = (await s.waitFor(/\? Overwrite ([ab])\.txt\? \[y\/Y\/n\/N,\?\]/))[1]!
      s.sendKeys("Y")
      expect(await s.waitForExit()).toBe(0)
      const pane = s.pane()
      const other = first === "a" ? "b" : "a"
      expect(pane).toContain(`✔ Overwrite ${first}.txt? yes, and remember for this turn\n`)
      expect(pane).toContain(`↳ Overwrite ${first}.txt? → yes (you)\n`)
      expect(pane).toContain(`↳ Overwrite ${other}.txt? → yes (remembered)\n`)
      expect(pane).toMatch(/✓ write_file \{"path":"[ab]\.txt".*\n✓ write_file \{"path":"[ab]\.txt".*\nBoth written\./)
      expect(count(pane, "✔ Overwrite")).toBe(1) // the second call was never asked
      expect(count(pane, "already exists")).toBe(1)
      expect(fs.readFileSync(path.join(p.root, "a.txt"), "utf8")).toBe("A\n")
      expect(fs.readFileSync(path.join(p.root, "b.txt"), "utf8")).toBe("B\n")

      const events = recorded(p.storage)
      expect(events.slice(0, 5)).toStrictEqual([
        { type: "turn_start" },
        { type: "chat_request", content: "Write both" },
        { type: "chat_response", message: "Writing two files." },
        writeCall("call_1", "a.txt", "A\n"),
        writeCall("call_2", "b.txt", "B\n")
      ])
      expect(events.at(-1)).toStrictEqual({ type: "chat_response", message: "Both written." })
      expect(events.length).toBe(12)
      // The two calls interleave; each call's own events are in order.
      const of = (call: string) =>
        events.slice(5, -1).filter((e) => e["id"] === call || String(e["id"]).startsWith(`${call}.`))
      for (const [call, file, content] of [
        ["call_1", "a.txt", "A\n"],
        ["call_2", "b.txt", "B\n"]
      ] as const) {
        expect(of(call)).toStrictEqual([
          overwriteRequest(`${call}.overwrite.1`, file, 6),
          // The answer typed with Y is recorded as remembered (a resumed turn remembers it too; docs/decisions.md#remembered-answers-recorded).
          {
            type: "inquiry_response",
            outcome: "answered",
            id: `${call}.overwrite.1`,
            answer: true,
            ...(file === `${first}.txt` ? { metadata: { parley_remembered: true } } : {})
          },
          {
            type: "tool_call_response",
            id: call,
            content: b64(`Wrote ${content.length} bytes to ${file}.`),
            is_error: false
          }
        ])
      }
    })

    it("a secret is typed without echo, recorded as redacted, and its bytes are in no file", async () => {
      const secret = "S3cr3t-XYZ-42"
      const p = makeProject()
      const script = writeScript(p, [
        {
          message: "I need a token.",
          tool_calls: [{ id: "call_1", name: "use_token", arguments: { purpose: "the deploy" } }]
        },
        { message: "Token received." }
      ])
      const s = startParley(p, ["query", "Deploy", "--model", "scripted", "--script", script])
      await s.waitFor(/\? Enter the access token for the deploy\./)
      const before = s.pane()
      const noEcho = () => {
        const pane = s.pane()
        for (const piece of [secret, "S3c", "XYZ", "-42", "*****"]) expect(pane).not.toContain(piece)
        return pane
      }
      s.sendText(secret.slice(0, 6))
      await new Promise((r) => setTimeout(r, 300))
      expect(noEcho()).toBe(before) // not one character (nor a mask) appeared
      s.sendText(secret.slice(6))
      await new Promise((r) => setTimeout(r, 300))
      expect(noEcho()).toBe(before)
      s.sendKeys("Enter")
      expect(await s.waitForExit()).toBe(0)
      expect(noEcho()).toContain("Token received.")

      expect(recorded(p.storage)).toStrictEqual([
        { type: "turn_start" },
        { type: "chat_request", content: "Deploy" },
        { type: "chat_response", message: "I need a token." },
        { type: "tool_call_request", id: "call_1", name: "use_token", arguments: { purpose: b64("the deploy") } },
        {
          type: "inquiry_request",
          id: "call_1.token.1",
          source: { source: "tool", name: "use_token" },
          question: { text: "Enter the access token for the deploy.", answer_type: { type: "secret" } }
        },
        { type: "inquiry_response", outcome: "redacted", id: "call_1.token.1" },
        {
          type: "tool_call_response",
          id: "call_1",
          content: b64(`Received a token of ${secret.length} characters.`),
          is_error: false
        },
        { type: "chat_response", message: "Token received." }
      ])
      const files = filesUnder(p.root)
      expect(files.some((f) => f.endsWith("events.json"))).toBe(true)
      for (const file of files) {
        const bytes = fs.readFileSync(file)
        for (const needle of secretNeedles(secret)) {
          expect(bytes.includes(needle), `${needle} in ${file}`).toBe(false)
        }
      }
    })

    it("Ctrl-C at the overwrite prompt is recorded as cancelled by the user; the turn continues and exits 0", async () => {
      const p = makeProject({ "notes.txt": "old\n" })
      const script = writeScript(p, [
        {
          message: "Writing.",
          tool_calls: [{ id: "call_1", name: "write_file", arguments: { path: "notes.txt", content: "new\n" } }]
        },
        { message: "Left it alone." }
      ])
      const s = startParley(p, ["query", "Update notes", "--model", "scripted", "--script", script])
      await s.waitFor(/\? Overwrite notes\.txt\? \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("C-c")
      expect(await s.waitForExit()).toBe(0)
      // The quit prompt's line is closed, so the reply starts on its own line.
      expect(s.pane()).toMatch(
        /\? Overwrite notes\.txt\? \[y\/Y\/n\/N,\?\] \(cancelled\)\n↳ Overwrite notes\.txt\? → cancelled: user \(you\)\n✓ write_file .*\nLeft it alone\.\n/
      )
      expect(fs.readFileSync(path.join(p.root, "notes.txt"), "utf8")).toBe("old\n")
      expect(recorded(p.storage)).toStrictEqual([
        { type: "turn_start" },
        { type: "chat_request", content: "Update notes" },
        { type: "chat_response", message: "Writing." },
        writeCall("call_1", "notes.txt", "new\n"),
        overwriteRequest("call_1.overwrite.1", "notes.txt", 4),
        { type: "inquiry_response", outcome: "cancelled", id: "call_1.overwrite.1", reason: "user" },
        { type: "tool_call_response", id: "call_1", content: b64("Tool input cancelled by user."), is_error: false },
        { type: "chat_response", message: "Left it alone." }
      ])
    })

    describe("the incomplete-turn prompt", () => {
      const ID = "17000000001"
      const complete: ReadonlyArray<Entry> = [
        { timestamp: "2026-03-01 10:00:10.5", type: "turn_start" },
        { timestamp: "2026-03-01 10:00:11.5", type: "chat_request", content: "hi" },
        { timestamp: "2026-03-01 10:00:12.5", type: "chat_response", message: "hello" }
      ]
      const pendingLlm: ReadonlyArray<Entry> = [
        { timestamp: "2026-03-01 10:00:13.5", type: "turn_start" },
        { timestamp: "2026-03-01 10:00:14.5", type: "chat_request", content: "second" }
      ]
      const strip = (entries: ReadonlyArray<Entry>) => entries.map(({ timestamp: _, ...rest }) => rest)
      const lsRow = (p: Project) => {
        const r = runParley(["conversation", "ls", "--storage", p.storage, "--format", "json"])
        expect(r.code).toBe(0)
        return (JSON.parse(r.stdout) as Array<{ id: string; incomplete: unknown; events: number }>).find(
          (row) => row.id === ID
        )!
      }
      const setUp = (tail: ReadonlyArray<Entry>, steps: ReadonlyArray<Entry>) => {
        const p = makeProject({ "notes.txt": "old\n" })
        writeConversation(p.storage, ID, [...complete, ...tail])
        const script = writeScript(p, steps)
        expect(lsRow(p).incomplete).not.toBeNull()
        return { p, s: startParley(p, ["query", "--id", ID, "--model", "scripted", "--script", script]) }
      }
      const summary =
        /⚠ Conversation jp-c17000000001 has an incomplete turn\.\n\n {2}waiting for the assistant's reply\n\n\? What now\? \[r\/d\/e\/q,\?\]/

      it("`r` resumes a turn waiting for the assistant: the scripted reply is recorded and the turn completes", async () => {
        const { p, s } = setUp(pendingLlm, [{ message: "Resumed reply." }])
        await s.waitFor(summary)
        s.sendKeys("r")
        expect(await s.waitForExit()).toBe(0)
        expect(s.pane()).toContain("✔ What now? resume the incomplete turn\nResumed reply.")
        expect(recorded(p.storage)).toStrictEqual([
          ...strip(complete),
          ...strip(pendingLlm),
          { type: "chat_response", message: "Resumed reply." }
        ])
        expect(lsRow(p)).toMatchObject({ incomplete: null, events: 6 })
      })

      it("`d` discards the incomplete turn: events.json no longer holds its events", async () => {
        const { p, s } = setUp(pendingLlm, [{ message: "never sent" }])
        await s.waitFor(summary)
        s.sendKeys("d")
        expect(await s.waitForExit()).toBe(0)
        expect(s.pane()).toContain(
          "✔ What now? discard it and start fresh\nDiscarded the incomplete turn of jp-c17000000001."
        )
        expect(recorded(p.storage)).toStrictEqual(strip(complete))
        expect(lsRow(p)).toMatchObject({ incomplete: null, events: 3 })
      })

      it("`r` on a turn waiting for input asks the recorded question again at the prompt and closes it under its id", async () => {
        const tail: ReadonlyArray<Entry> = [
          { timestamp: "2026-03-01 10:00:13.5", type: "turn_start" },
          { timestamp: "2026-03-01 10:00:14.5", type: "chat_request", content: "update notes" },
          { timestamp: "2026-03-01 10:00:15.5", ...writeCall("call_1", "notes.txt", "new\n") },
          { timestamp: "2026-03-01 10:00:16.5", ...overwriteRequest("call_1.overwrite.1", "notes.txt") }
        ]
        const { p, s } = setUp(tail, [{ message: "Updated." }])
        await s.waitFor(
          / {2}⏸ write_file — waiting for input: "Overwrite notes\.txt\?"\n\n\? What now\? \[r\/d\/q,\?\]/
        )
        s.sendKeys("r")
        await s.waitFor(/\? Overwrite notes\.txt\? \[y\/Y\/n\/N,\?\]/)
        s.sendKeys("y")
        expect(await s.waitForExit()).toBe(0)
        expect(fs.readFileSync(path.join(p.root, "notes.txt"), "utf8")).toBe("new\n")
        expect(recorded(p.storage)).toStrictEqual([
          ...strip(complete),
          ...strip(tail),
          { type: "inquiry_response", outcome: "answered", id: "call_1.overwrite.1", answer: true },
          { type: "tool_call_response", id: "call_1", content: b64("Wrote 4 bytes to notes.txt."), is_error: false },
          { type: "chat_response", message: "Updated." }
        ])
        expect(lsRow(p).incomplete).toBeNull()
      })
    })

    it("parley demo asks the overwrite question at the prompt and completes when answered `y`", async () => {
      const tmp = trackedTempDir("parley-tty-demo-")
      const s = Tmux.start({ command: [process.execPath, binary, "demo"], cwd: tmp, env: { TMPDIR: tmp } })
      const project = (await s.waitFor(/a temporary project in (\S+)/))[1]!
      expect(path.dirname(project)).toBe(tmp)
      await s.waitFor(/\? Overwrite notes\.txt\? \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("y")
      expect(await s.waitForExit()).toBe(0)
      expect(s.pane()).toContain("✔ Overwrite notes.txt? yes")
      const events = recorded(path.join(project, ".parley"))
      expect(events.filter((e) => String(e["type"]).startsWith("inquiry_"))).toStrictEqual([
        overwriteRequest("call_1.overwrite.1", "notes.txt", "An older note.\n".length),
        { type: "inquiry_response", outcome: "answered", id: "call_1.overwrite.1", answer: true }
      ])
      expect(events.at(-1)).toMatchObject({ type: "chat_response" })
      expect(fs.readFileSync(path.join(project, "notes.txt"), "utf8")).toContain("Demo note")
    })
  }
)
