// `parley query` on a real terminal (tmux), part two: the permission prompt
// of a local tool configured with run = "ask" (y, Y, n, N — single keys,
// Y/N remembered for the turn), and the incomplete-turn prompt's `e`
// (edit the pending query in $EDITOR, then resume) — each checked against
// the exact events recorded in events.json and the exit code.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { runParley } from "../support/Cli.ts"
import * as Tmux from "../support/Tmux.ts"
import {
  b64,
  type Entry,
  makeProject as makeProjectIn,
  onDisk,
  type Project,
  recorded,
  removeProjects,
  startParley,
  writeScript
} from "../support/TtyProject.ts"

const count = (text: string, needle: string) => text.split(needle).length - 1

const makeProject = (files: Readonly<Record<string, string>> = {}) => makeProjectIn("parley-tty-perm-", files)

if (Tmux.skipReason !== undefined) console.warn(`TtyPermission.test.ts skipped: ${Tmux.skipReason}`)

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

describe.skipIf(!Tmux.available)(
  `parley query on a real TTY (tmux): permissions and editing${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    describe('the permission prompt of a local tool with run = "ask"', () => {
      // Each run of the tool appends a line to ping.count (absent until it first runs).
      const TOOL = `echo run >> ping.count\nprintf '{"type":"success","content":"ran"}\\n'\n`
      const CONFIG = `
[conversation.tools.ping]
source = "local"
command = "sh ping.sh"
description = "Pings."
parameters = { type = "object", properties = {} }
run = "ask"
`
      const PROMPT = /\? Run local ping tool\? \[y\/Y\/n\/N,\?\]/
      const setUp = (calls: number) => {
        const p = makeProject({ "ping.sh": TOOL })
        fs.writeFileSync(path.join(p.storage, "config.toml"), CONFIG)
        const toolCalls = Array.from({ length: calls }, (_, i) => ({
          id: `call_${i + 1}`,
          name: "ping",
          arguments: {}
        }))
        const script = writeScript(p, [{ message: "Pinging.", tool_calls: toolCalls }, { message: "Done." }])
        const s = startParley(p, ["query", "Ping", "--model", "scripted", "--script", script])
        return { p, s }
      }
      const runs = (p: Project): number | undefined => {
        const file = path.join(p.root, "ping.count")
        return fs.existsSync(file)
          ? fs
              .readFileSync(file, "utf8")
              .split("\n")
              .filter((l) => l === "run").length
          : undefined
      }
      const head = (calls: number): Array<Entry> => [
        { type: "turn_start" },
        { type: "chat_request", content: "Ping" },
        { type: "chat_response", message: "Pinging." },
        ...Array.from({ length: calls }, (_, i) => ({
          type: "tool_call_request",
          id: `call_${i + 1}`,
          name: "ping",
          arguments: {}
        }))
      ]
      const response = (id: string, content: string): Entry => ({
        type: "tool_call_response",
        id,
        content: b64(content),
        is_error: false
      })
      const byId = (a: Entry, b: Entry) => String(a["id"]).localeCompare(String(b["id"]))
      // The decision typed at the prompt, recorded before the tool runs (`PermissionInquiry`; docs/decisions.md#permission-decisions-recorded).
      const decision = (id: string, run: boolean, remembered = false): Array<Entry> => [
        {
          type: "inquiry_request",
          id: `${id}.__permission__.1`,
          source: { source: "tool", name: "ping" },
          question: { text: "Run local ping tool?", answer_type: { type: "boolean" } },
          metadata: { parley_permission: true }
        },
        {
          type: "inquiry_response",
          outcome: "answered",
          id: `${id}.__permission__.1`,
          answer: run,
          ...(remembered ? { metadata: { parley_remembered: true } } : {})
        }
      ]

      it("`y` runs the tool once: the counter is 1 and its output is the recorded response", async () => {
        const { p, s } = setUp(1)
        await s.waitFor(PROMPT)
        expect(runs(p)).toBeUndefined() // nothing runs before the answer
        s.sendKeys("y") // one key, no Enter
        expect(await s.waitForExit()).toBe(0)
        const pane = s.pane()
        // Then the call's status line (docs/cli.md#status-lines), then the reply.
        expect(pane).toContain("✔ Run local ping tool? run\n✓ ping\nDone.")
        expect(count(pane, "Run local ping tool?")).toBe(1)
        expect(runs(p)).toBe(1)
        expect(recorded(p.storage)).toStrictEqual([
          ...head(1),
          ...decision("call_1", true),
          response("call_1", "ran"),
          { type: "chat_response", message: "Done." }
        ])
      })

      it("`Y` is remembered for the turn: two calls, one prompt, both run", async () => {
        const { p, s } = setUp(2)
        await s.waitFor(PROMPT)
        s.sendKeys("Y")
        expect(await s.waitForExit()).toBe(0)
        const pane = s.pane()
        expect(pane).toContain("✔ Run local ping tool? run, and remember for this turn\n✓ ping\n✓ ping\nDone.")
        expect(pane).toContain("ping · call 1 of 2 (call_1)\n") // the prompt says which call asks
        expect(count(pane, "Run local ping tool?")).toBe(1) // the second call was never asked
        expect(runs(p)).toBe(2)
        const events = recorded(p.storage)
        expect(events.length).toBe(10)
        expect(events.slice(0, 5)).toStrictEqual(head(2))
        // The asked call (call_1) records the decision, remembered for the turn, before either tool runs.
        expect(events.slice(5, 7)).toStrictEqual(decision("call_1", true, true))
        // The two tools run concurrently: their responses may land in either order.
        expect(events.slice(7, 9).sort(byId)).toStrictEqual([response("call_1", "ran"), response("call_2", "ran")])
        expect(events[9]).toStrictEqual({ type: "chat_response", message: "Done." })
      })

      it('`n` skips the tool: it never runs and the response is JP\'s "Tool skipped by user." (not an error)', async () => {
        const { p, s } = setUp(1)
        await s.waitFor(PROMPT)
        s.sendKeys("n")
        expect(await s.waitForExit()).toBe(0)
        expect(s.pane()).toContain("✔ Run local ping tool? skip\n– ping: Tool skipped by user.\nDone.")
        expect(runs(p)).toBeUndefined()
        expect(recorded(p.storage)).toStrictEqual([
          ...head(1),
          ...decision("call_1", false),
          response("call_1", "Tool skipped by user."),
          { type: "chat_response", message: "Done." }
        ])
      })

      it("`N` is remembered for the turn: two calls, one prompt, the second skipped as remembered, nothing runs", async () => {
        const { p, s } = setUp(2)
        await s.waitFor(PROMPT)
        s.sendKeys("N")
        expect(await s.waitForExit()).toBe(0)
        const pane = s.pane()
        expect(pane).toContain(
          "✔ Run local ping tool? skip, and remember for this turn\n– ping: Tool skipped by user.\n– ping: Tool skipped by user (remembered).\nDone."
        )
        expect(count(pane, "Run local ping tool?")).toBe(1)
        expect(runs(p)).toBeUndefined()
        const events = recorded(p.storage)
        expect(events.length).toBe(10)
        expect(events.slice(0, 5)).toStrictEqual(head(2))
        // The asked call records its decision and answers first (the other waits for
        // the prompt, then finds the remembered N); which call was asked first is the runtime's choice.
        const [first, second] = [events[7]!, events[8]!]
        expect([first["id"], second["id"]].sort()).toStrictEqual(["call_1", "call_2"])
        expect(events.slice(5, 7)).toStrictEqual(decision(String(first["id"]), false, true))
        expect(first).toStrictEqual(response(String(first["id"]), "Tool skipped by user."))
        expect(second).toStrictEqual(response(String(second["id"]), "Tool skipped by user (remembered)."))
        expect(events[9]).toStrictEqual({ type: "chat_response", message: "Done." })
      })
    })

    describe("the incomplete-turn prompt's `e`", () => {
      const ID = "17000000002"
      const complete: ReadonlyArray<Entry> = [
        { timestamp: "2026-03-01 10:00:10.5", type: "turn_start" },
        { timestamp: "2026-03-01 10:00:11.5", type: "chat_request", content: "hi" },
        { timestamp: "2026-03-01 10:00:12.5", type: "chat_response", message: "hello" }
      ]
      const pending: ReadonlyArray<Entry> = [
        { timestamp: "2026-03-01 10:00:13.5", type: "turn_start" },
        { timestamp: "2026-03-01 10:00:14.5", type: "chat_request", content: "original question" }
      ]
      // JP's hand-written events (see ConversationLsPrintFork.test.ts).
      const writeConversation = (storage: string, entries: ReadonlyArray<Entry>) => {
        const dir = path.join(storage, "conversations", `${ID}-case`)
        fs.mkdirSync(dir, { recursive: true })
        fs.writeFileSync(
          path.join(dir, "metadata.json"),
          JSON.stringify({ title: `case ${ID}`, last_activated_at: "2026-03-01 10:00:00.0" }, null, 2) + "\n"
        )
        // The conversation remembers the scripted model, as one parley started would (no config_delta on resume).
        fs.writeFileSync(
          path.join(dir, "base_config.json"),
          JSON.stringify({ assistant: { model: { id: { provider: "scripted", name: "" } } } }, null, 2) + "\n"
        )
        fs.writeFileSync(path.join(dir, "events.json"), JSON.stringify(entries, null, 2) + "\n")
      }
      const lsRow = (p: Project) => {
        const r = runParley(["conversation", "ls", "--storage", p.storage, "--format", "json"])
        expect(r.code).toBe(0)
        return (JSON.parse(r.stdout) as Array<{ id: string; incomplete: unknown; events: number }>).find(
          (row) => row.id === ID
        )!
      }
      const summary =
        /⚠ Conversation jp-c17000000002 has an incomplete turn\.\n\n {2}waiting for the assistant's reply\n\n\? What now\? \[r\/d\/e\/q,\?\]/

      /**
       * A project with the pending conversation and an editor script that
       * keeps what it was given (seen.txt), where (seen-path.txt), writes
       * `replacement` in its place, then runs `then` (e.g. `exit 3`).
       */
      const setUp = (replacement: string, then = "") => {
        const p = makeProject()
        const tmp = path.join(p.root, "tmp")
        fs.mkdirSync(tmp)
        fs.writeFileSync(
          path.join(p.root, "edit.sh"),
          `cp "$1" seen.txt\nprintf '%s' "$1" > seen-path.txt\nprintf '%s' '${replacement}' > "$1"\n${then}\n`
        )
        writeConversation(p.storage, [...complete, ...pending])
        const script = writeScript(p, [{ message: "Edited reply." }])
        expect(lsRow(p).incomplete).not.toBeNull()
        const s = startParley(p, ["query", "--id", ID, "--model", "scripted", "--script", script], {
          EDITOR: `sh ${path.join(p.root, "edit.sh")}`,
          TMPDIR: tmp
        })
        return { p, s, tmp }
      }
      const read = (p: Project, name: string) => fs.readFileSync(path.join(p.root, name), "utf8")

      it("`e` opens the pending query in $EDITOR, records the edited text in place, and resumes the turn", async () => {
        const { p, s, tmp } = setUp("edited question")
        await s.waitFor(summary)
        s.sendKeys("e")
        expect(await s.waitForExit()).toBe(0)
        expect(s.pane()).toContain("✔ What now? edit the pending query, then resume\nEdited reply.")
        // The editor got the pending query in a temp file, which is gone afterwards.
        expect(read(p, "seen.txt")).toBe("original question")
        expect(path.basename(read(p, "seen-path.txt"))).toBe("QUERY_MESSAGE.md")
        expect(read(p, "seen-path.txt").startsWith(tmp + path.sep)).toBe(true)
        expect(fs.readdirSync(tmp)).toStrictEqual([])
        // The chat_request is edited where it was, keeping its timestamp; nothing else changed.
        const events = onDisk(p.storage)
        expect(events.slice(0, 5)).toStrictEqual([
          ...complete,
          pending[0]!,
          { ...pending[1]!, content: "edited question" }
        ])
        expect(events.length).toBe(6)
        const { timestamp, ...reply } = events[5]!
        expect(typeof timestamp).toBe("string")
        expect(reply).toStrictEqual({ type: "chat_response", message: "Edited reply." })
        expect(lsRow(p)).toMatchObject({ incomplete: null, events: 6 })
      })

      it("`e` with an editor that saves nothing keeps the pending query as it was and sends nothing (exit 1)", async () => {
        const { p, s } = setUp("")
        await s.waitFor(summary)
        s.sendKeys("e")
        expect(await s.waitForExit()).toBe(1)
        const pane = s.pane()
        expect(pane).toContain(
          "parley: Kept the pending query as it was (the edited query is empty); nothing was sent."
        )
        expect(pane).toContain(`The turn is saved; resume it with: parley query --continue-turn --id ${ID}`)
        expect(pane).not.toContain("Edited reply.")
        expect(read(p, "seen.txt")).toBe("original question")
        expect(onDisk(p.storage)).toStrictEqual([...complete, ...pending])
        expect(lsRow(p).incomplete).toStrictEqual({ state: "pending-llm-response" })
      })

      it("`e` with an editor that fails keeps the pending query as it was, whatever it wrote", async () => {
        const { p, s } = setUp("half-edited", "exit 3")
        await s.waitFor(summary)
        s.sendKeys("e")
        expect(await s.waitForExit()).toBe(1)
        expect(s.pane()).toMatch(
          /Kept the pending query as it was \(the editor \(sh \S+edit\.sh\) exited with status 3\); nothing was sent\./
        )
        expect(read(p, "seen.txt")).toBe("original question")
        expect(onDisk(p.storage)).toStrictEqual([...complete, ...pending])
      })
    })
  }
)
