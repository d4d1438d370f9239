// A person at a terminal is asked, whatever stdout is, and can stop a turn
// (docs/cli.md#resuming-a-turn-rfd-023), on a real terminal (tmux): `parley query … | cat` still
// prompts on the terminal; a second Ctrl-C within 2 s of a cancelled prompt
// stops the whole turn (exit 130, open questions Cancelled{user}); Ctrl-C
// at the incomplete-turn menu stops the run (exit 130), not a quiet exit 0.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary } from "../support/Cli.ts"
import * as Tmux from "../support/Tmux.ts"
import { waitFor } from "../support/Project.ts"
import {
  b64,
  makeProject as makeProjectIn,
  onDisk,
  recorded,
  removeProjects,
  startParley,
  writeScript
} from "../support/TtyProject.ts"

const makeProject = (files: Readonly<Record<string, string>> = {}) => makeProjectIn("parley-tty-edges-", files)

if (Tmux.skipReason !== undefined) console.warn(`TtyEdges.test.ts skipped: ${Tmux.skipReason}`)

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

const PING = `echo run >> ping.count\nprintf '{"type":"success","content":"ran"}\\n'\n`
const ASK = `python3 -c '
import json, sys
req = json.load(sys.stdin)
if "ok" not in req["tool"]["answers"]:
    print(json.dumps({"type": "needs_input", "question": {"id": "ok", "text": "Proceed with " + req["tool"]["arguments"]["n"] + "?", "answer_type": {"type": "boolean"}}}))
else:
    print(json.dumps({"type": "success", "content": "done"}))
'
`
const config = (name: string, script: string, run: string) => `
[conversation.tools.${name}]
source = "local"
command = "sh ${script}"
description = "A test tool."
parameters = { type = "object", properties = { n = { type = "string" } } }
run = "${run}"
`

describe.skipIf(!Tmux.available)(
  `a person at a terminal (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("`parley query … | cat`: the permission prompt is on the terminal, `n` skips the tool, the reply goes through the pipe", async () => {
      const p = makeProject({ "ping.sh": PING })
      fs.writeFileSync(path.join(p.storage, "config.toml"), config("ping", "ping.sh", "ask"))
      const script = writeScript(p, [
        { message: "Pinging.", tool_calls: [{ id: "call_1", name: "ping", arguments: {} }] },
        { message: "Done." }
      ])
      const cmd = [
        process.execPath,
        binary,
        "--storage",
        p.storage,
        "query",
        "Ping",
        "--model",
        "scripted",
        "--script",
        script
      ]
        .map(Tmux.shellQuote)
        .join(" ")
      const s = Tmux.start({ command: ["bash", "-c", `set -o pipefail; ${cmd} | cat > reply.txt`], cwd: p.root })
      await s.waitFor(/Run local ping tool\? \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("n")
      expect(await s.waitForExit()).toBe(0)
      expect(fs.existsSync(path.join(p.root, "ping.count"))).toBe(false)
      expect(fs.readFileSync(path.join(p.root, "reply.txt"), "utf8")).toBe("Pinging.\nDone.\n")
      const response = recorded(p.storage).find((e) => e["type"] === "tool_call_response")
      expect(response).toStrictEqual({
        type: "tool_call_response",
        id: "call_1",
        content: b64("Tool skipped by user."),
        is_error: false
      })
    })

    it("a second Ctrl-C within 2 s of a cancelled prompt stops the turn: exit 130, every open question Cancelled{user}", async () => {
      const p = makeProject({ "ask.sh": ASK })
      fs.writeFileSync(path.join(p.storage, "config.toml"), config("ask", "ask.sh", "unattended"))
      const calls = ["a", "b", "c"].map((n, i) => ({ id: `call_${i + 1}`, name: "ask", arguments: { n } }))
      const script = writeScript(p, [{ tool_calls: calls }, { message: "Done." }])
      const s = startParley(p, ["query", "Ask thrice", "--model", "scripted", "--script", script])
      await s.waitFor(/Proceed with \w\?/)
      // Every tool has asked (its question is in the journal) before the first Ctrl-C: on a
      // loaded machine the third tool may not have asked yet when the turn stops.
      const journal = path.join(
        p.storage,
        "conversations",
        fs.readdirSync(path.join(p.storage, "conversations")).find((d) => /^\d/.test(d))!,
        "events.json.journal"
      )
      await waitFor(
        "the three questions on disk",
        () => (fs.readFileSync(journal, "utf8").match(/"type":"inquiry_request"/g) ?? []).length === 3
      )
      s.sendKeys("C-c")
      await s.waitFor(/\(cancelled\)[\s\S]*Proceed with \w\?/)
      s.sendKeys("C-c")
      expect(await s.waitForExit()).toBe(130)
      const events = onDisk(p.storage)
      const requests = events.filter((e) => e["type"] === "inquiry_request").map((e) => e["id"])
      const responses = events.filter((e) => e["type"] === "inquiry_response")
      expect(requests.length).toBe(3) // every tool asked
      expect(responses.map((e) => [e["id"], e["outcome"], e["reason"]]).sort()).toStrictEqual(
        requests.map((id) => [id, "cancelled", "user"]).sort()
      )
      // The first call got its answer ("cancelled by user") and ended; the others stay pending for a resume.
      expect(events.filter((e) => e["type"] === "tool_call_response").length).toBe(1)
      expect(s.pane()).toContain("--continue-turn")
    })

    it("Ctrl-C at the incomplete-turn menu stops the run with exit 130 and changes nothing", async () => {
      const p = makeProject({ "ping.sh": PING })
      fs.writeFileSync(path.join(p.storage, "config.toml"), config("ping", "ping.sh", "unattended"))
      // Leave a turn incomplete: SIGINT while the model has not answered yet (no terminal needed for that).
      const first = spawn(
        process.execPath,
        [
          binary,
          "--storage",
          p.storage,
          "query",
          "Hello",
          "--model",
          "scripted",
          "--script",
          writeScript(p, [{ delay_ms: 60_000, message: "late" }])
        ],
        { cwd: p.root, stdio: "ignore" }
      )
      const conversations = path.join(p.storage, "conversations")
      const journal = () =>
        fs.existsSync(conversations) &&
        fs
          .readdirSync(conversations)
          .some((d) => /^\d/.test(d) && fs.existsSync(path.join(p.storage, "conversations", d, "events.json.journal")))
      for (let i = 0; i < 400 && !journal(); i++) await new Promise((r) => setTimeout(r, 25))
      first.kill("SIGINT")
      expect(await new Promise((resolve) => first.on("exit", resolve))).toBe(130)
      const before = JSON.stringify(onDisk(p.storage))
      const s = startParley(p, ["query", "Next", "--model", "scripted", "--script", writeScript(p, [{ message: "x" }])])
      await s.waitFor(/What now\?/)
      s.sendKeys("C-c")
      expect(await s.waitForExit()).toBe(130)
      expect(JSON.stringify(onDisk(p.storage))).toBe(before)
    })
  }
)
