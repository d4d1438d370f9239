// Permission decisions recorded (docs/decisions.md#permission-decisions-recorded): a permission decision survives `kill -9` while the approved call
// still runs (real TTY for the decision and for the resumed run, so a prompt
// asked again would show). The decision is recorded as an inquiry pair (its
// request and its response, `parley_permission` on the request) the moment it
// is typed, before the tool starts; the test strikes as soon as that record
// and the running tool are both there.
//
// What a resumed turn does with it (RFD 023 "Turn Loop Resumption": the turn
// state, persisted inquiry responses included, is rebuilt from the turn's
// events, and the calls without a response run again): the call the person
// approved runs again without asking — `y` approved that call, and the call
// is not done yet —, `Y` also answers the other calls of the tool in the turn
// (remembered for the turn), and a call whose permission was never decided is
// asked as before.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { persisted, waitFor } from "../support/Project.ts"
import * as Tmux from "../support/Tmux.ts"
import {
  makeProject,
  onDisk,
  parleyPid,
  type Project,
  removeProjects,
  startParley,
  writeScript
} from "../support/TtyProject.ts"

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

/** Logs `start <name>`, marks `started.<name>`, then waits for `<root>/release` (30 s at most) and succeeds. */
const SLOW = `import json, os, sys, time
req = json.load(sys.stdin)
name, root = req["tool"]["arguments"]["name"], req["context"]["root"]
with open(os.path.join(root, "runs.log"), "a") as f:
    f.write("start " + name + "\\n")
open(os.path.join(root, "started." + name), "w").close()
deadline = time.time() + 30
while not os.path.exists(os.path.join(root, "release")) and time.time() < deadline:
    time.sleep(0.05)
print(json.dumps({"type": "success", "content": name + " done"}))
`

const CONFIG = `
[conversation.tools.slow]
source = "local"
command = "python3 slow.py"
parameters = { type = "object", properties = { name = { type = "string" } }, required = ["name"] }
run = "ask"
`

const PROMPT = "Run local slow tool?"
const count = (text: string, needle: string) => text.split(needle).length - 1
const runs = (p: Project) =>
  fs
    .readFileSync(path.join(p.root, "runs.log"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .sort()

/** A project whose model calls `slow` twice (`call_a`, `call_b`), then says "Done.". */
const twoCalls = () => {
  const p = makeProject("parley-resume-perm-", { "slow.py": SLOW })
  fs.writeFileSync(path.join(p.storage, "config.toml"), CONFIG)
  const script = writeScript(p, [
    {
      message: "Both.",
      tool_calls: [
        { id: "call_a", name: "slow", arguments: { name: "a" } },
        { id: "call_b", name: "slow", arguments: { name: "b" } }
      ]
    },
    { message: "Done." }
  ])
  return { p, s: startParley(p, ["query", "Go", "--model", "scripted", "--script", script]) }
}

/** The permission decisions on disk (journal included), without timestamps. */
const decisions = (p: Project) =>
  persisted(p)
    .filter((e) => e.type === "inquiry_request" || e.type === "inquiry_response")
    .map(({ timestamp: _, ...e }) => e)

/** Kills the run with SIGKILL, lets the orphaned tools finish, and waits for the pane's command to end. */
const strike = async (p: Project, s: Tmux.Session) => {
  process.kill(parleyPid(p), "SIGKILL")
  fs.writeFileSync(path.join(p.root, "release"), "")
  await s.waitForExit()
}

/** `--continue-turn` on a real TTY; the model has only the follow-up left to say. */
const resume = (p: Project) => {
  const rest = path.join(p.root, "rest.json")
  fs.writeFileSync(rest, JSON.stringify({ steps: [{ message: "Done." }] }))
  return startParley(p, ["query", "--continue-turn", "--script", rest])
}

const request = (call: string) => ({
  type: "inquiry_request",
  id: `${call}.__permission__.1`,
  source: { source: "tool", name: "slow" },
  question: { text: PROMPT, answer_type: { type: "boolean" } },
  metadata: { parley_permission: true }
})

const responses = (p: Project) =>
  onDisk(p.storage)
    .filter((e) => e["type"] === "tool_call_response")
    .map((e) => [e["id"], Buffer.from(String(e["content"]), "base64").toString()])
    .sort()

describe.skipIf(!Tmux.available || !fs.existsSync("/proc/self/stat"))(
  `a permission decision survives kill -9 (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("Y, then kill -9 while both calls run: --continue-turn asks nothing and runs both again", async () => {
      const { p, s } = twoCalls()
      await s.waitFor(new RegExp(PROMPT.replace("?", "\\?")))
      const asked = (await s.waitFor(/slow · call \d of 2 \((call_[ab])\)/))[1]!
      s.sendKeys("Y")
      await waitFor(
        "both tools running and the decision recorded",
        () =>
          fs.existsSync(path.join(p.root, "started.a")) &&
          fs.existsSync(path.join(p.root, "started.b")) &&
          decisions(p).length === 2
      )
      await strike(p, s)
      expect(decisions(p)).toStrictEqual([
        request(asked),
        {
          type: "inquiry_response",
          outcome: "answered",
          id: `${asked}.__permission__.1`,
          answer: true,
          metadata: { parley_remembered: true }
        }
      ])
      expect(persisted(p).filter((e) => e.type === "tool_call_response")).toStrictEqual([])

      const again = resume(p)
      expect(await again.waitForExit({ timeoutMs: 30_000 })).toBe(0)
      expect(count(again.pane(), PROMPT)).toBe(0)
      expect(again.pane()).toContain("Done.")
      expect(runs(p)).toStrictEqual(["start a", "start a", "start b", "start b"])
      expect(responses(p)).toStrictEqual([
        ["call_a", "a done"],
        ["call_b", "b done"]
      ])
      expect(onDisk(p.storage).at(-1)).toMatchObject({ type: "chat_response", message: "Done." })
    })

    it("y for one call, kill -9 while it runs and the other waits at its prompt: --continue-turn runs the approved call unasked and asks only the other", async () => {
      const { p, s } = twoCalls()
      const first = (await s.waitFor(/slow · call \d of 2 \((call_[ab])\)/))[1]!
      const other = first === "call_a" ? "call_b" : "call_a"
      s.sendKeys("y")
      // The other call's prompt is up while the approved call runs.
      await s.waitFor(new RegExp(`slow · call \\d of 2 \\(${other}\\)`))
      const name = (id: string) => id.slice("call_".length)
      await waitFor(
        "the approved tool running and its decision recorded",
        () => fs.existsSync(path.join(p.root, `started.${name(first)}`)) && decisions(p).length === 2
      )
      await strike(p, s)
      expect(decisions(p)).toStrictEqual([
        request(first),
        { type: "inquiry_response", outcome: "answered", id: `${first}.__permission__.1`, answer: true }
      ])

      const again = resume(p)
      // The call's header is written before its question: both, in that order (a pane read between the two writes
      // holds only the header).
      await again.waitFor(new RegExp(`slow · call \\d of 2 \\(${other}\\)[\\s\\S]*${PROMPT.replace("?", "\\?")}`), {
        timeoutMs: 30_000
      })
      expect(count(again.pane(), PROMPT)).toBe(1)
      again.sendKeys("n")
      expect(await again.waitForExit({ timeoutMs: 30_000 })).toBe(0)
      expect(count(again.pane(), PROMPT)).toBe(1)
      expect(runs(p)).toStrictEqual([`start ${name(first)}`, `start ${name(first)}`])
      expect(responses(p)).toStrictEqual(
        [
          [first, `${name(first)} done`],
          [other, "Tool skipped by user."]
        ].sort()
      )
      // The second decision is recorded too; a plain n is not remembered.
      expect(
        onDisk(p.storage)
          .filter((e) => e["type"] === "inquiry_response")
          .map(({ timestamp: _, ...e }) => e)
      ).toStrictEqual([
        { type: "inquiry_response", outcome: "answered", id: `${first}.__permission__.1`, answer: true },
        { type: "inquiry_response", outcome: "answered", id: `${other}.__permission__.1`, answer: false }
      ])
    })
  }
)
