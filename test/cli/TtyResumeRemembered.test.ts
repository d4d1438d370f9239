// Remembered answers recorded (docs/decisions.md#remembered-answers-recorded): a turn resumed after `kill -9` remembers the Y it was told (real
// TTY for the Y, then `--continue-turn` without one). Call a asks `go` and
// gets Y; call b of the same tool asks `go` only once a file appears, and the
// process is killed -9 before that. The resumed run (detached = "defer", so a
// question asked again would end the run waiting for input, exit 3) answers
// b from the remembered Y and finishes.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary } from "../support/Cli.ts"
import { persisted } from "../support/Project.ts"
import * as Tmux from "../support/Tmux.ts"
import { makeProject, onDisk, parleyPid, removeProjects, startParley, writeScript } from "../support/TtyProject.ts"

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

/** Asks `go` (boolean); with `wait`, only once `<root>/release` exists (gives up after 30 s). */
const GATE = `import json, os, sys, time
req = json.load(sys.stdin)
args, answers, root = req["tool"]["arguments"], req["tool"]["answers"], req["context"]["root"]
if args.get("wait"):
    open(os.path.join(root, "waiting." + args["name"]), "w").close()
    deadline = time.time() + 30
    while not os.path.exists(os.path.join(root, "release")) and time.time() < deadline:
        time.sleep(0.05)
if "go" not in answers:
    print(json.dumps({"type": "needs_input", "question": {"id": "go", "text": "Go " + args["name"] + "?", "answer_type": {"type": "boolean"}}}))
else:
    print(json.dumps({"type": "success", "content": args["name"] + " went: " + json.dumps(answers["go"])}))
`

const CONFIG = `
[conversation.inquiry]
detached = "defer"

[conversation.tools.gate]
source = "local"
command = "python3 gate.py"
parameters = { type = "object", properties = { name = { type = "string" }, wait = { type = "boolean" } }, required = ["name"] }
run = "unattended"
`

const waitForFile = async (file: string) => {
  const deadline = Date.now() + 15_000
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} never appeared`)
    await new Promise((r) => setTimeout(r, 30))
  }
}

describe.skipIf(!Tmux.available || !fs.existsSync("/proc/self/stat"))(
  `a resumed turn remembers Y (tmux, kill -9)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("Y before kill -9: --continue-turn answers the same question from memory, recorded as answered", async () => {
      const p = makeProject("parley-remember-", { "gate.py": GATE })
      fs.writeFileSync(path.join(p.storage, "config.toml"), CONFIG)
      const script = writeScript(p, [
        {
          message: "Both.",
          tool_calls: [
            { id: "call_a", name: "gate", arguments: { name: "a" } },
            { id: "call_b", name: "gate", arguments: { name: "b", wait: true } }
          ]
        },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Go", "--model", "scripted", "--script", script])
      await s.waitFor(/Go a\? \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("Y")
      await s.waitFor(/✓ gate \{"name":"a"\}/)
      await waitForFile(path.join(p.root, "waiting.b"))
      process.kill(parleyPid(p), "SIGKILL")
      fs.writeFileSync(path.join(p.root, "release"), "")
      await s.waitForExit()
      // Read with the journal a killed process leaves behind.
      const before = persisted(p)
      expect(before.filter((e) => e["type"] === "inquiry_response").map(({ timestamp: _, ...e }) => e)).toStrictEqual([
        {
          type: "inquiry_response",
          outcome: "answered",
          id: "call_a.go.1",
          answer: true,
          metadata: { parley_remembered: true }
        }
      ])
      // The resumed run's model only has the follow-up left to say.
      const rest = path.join(p.root, "rest.json")
      fs.writeFileSync(rest, JSON.stringify({ steps: [{ message: "Done." }] }))
      const resumed = spawnSync(
        process.execPath,
        [binary, "--storage", p.storage, "query", "--continue-turn", "--script", rest],
        {
          cwd: p.root,
          env: { ...process.env, PARLEY_STORAGE: "" },
          input: "",
          encoding: "utf8",
          timeout: 60_000
        }
      )
      expect(resumed.stderr).not.toContain("waiting")
      expect(resumed.status).toBe(0)
      const after = onDisk(p.storage).map(({ timestamp: _, ...e }) => e)
      expect(after.filter((e) => e["type"] === "inquiry_response")).toStrictEqual([
        {
          type: "inquiry_response",
          outcome: "answered",
          id: "call_a.go.1",
          answer: true,
          metadata: { parley_remembered: true }
        },
        { type: "inquiry_response", outcome: "answered", id: "call_b.go.1", answer: true }
      ])
      expect(
        after
          .filter((e) => e["type"] === "tool_call_response")
          .map((e) => [e["id"], Buffer.from(String(e["content"]), "base64").toString()])
      ).toStrictEqual([
        ["call_a", "a went: true"],
        ["call_b", "b went: true"]
      ])
      expect(after.at(-1)).toStrictEqual({ type: "chat_response", message: "Done." })
    })
  }
)
