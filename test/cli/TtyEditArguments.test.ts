// JP's `run = "edit"` on a real terminal (tmux; docs/tools.md#editing-a-calls-arguments):
// the call's arguments open in $EDITOR (a script that rewrites the file) before the local tool runs;
// the tool receives the edited arguments, and they are recorded with the `true` permission decision.
// Invalid JSON opens the editor again; an emptied edit goes back to the permission prompt, whose `e`
// edits again. JP's result review (docs/tools.md#reviewing-a-result): `result = "ask"` shows the
// result and its `e` edits it in $EDITOR before the model sees it.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { runParley } from "../support/Cli.ts"
import * as Tmux from "../support/Tmux.ts"
import {
  b64,
  makeProject as makeProjectIn,
  recorded,
  removeProjects,
  startParley,
  writeScript
} from "../support/TtyProject.ts"

if (Tmux.skipReason !== undefined) console.warn(`TtyEditArguments.test.ts skipped: ${Tmux.skipReason}`)

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

// The tool writes the request it received on stdin (its arguments under `tool`) to got.json.
const TOOL = `cat > got.json\nprintf '{"type":"success","content":"ran"}\\n'\n`
const CONFIG = (run: string) => `
[conversation.tools.ping]
source = "local"
command = "sh ping.sh"
description = "Pings."
parameters = { type = "object", properties = { host = { type = "string" } } }
run = "${run}"
`

/**
 * An editor that, on its n-th run, copies what it was given to seen-<n>.txt
 * and writes the n-th of `writes` into the file.
 */
const editor = (writes: ReadonlyArray<string>) =>
  [
    `n=$(( $(cat edits.count 2>/dev/null || echo 0) + 1 ))`,
    `echo $n > edits.count`,
    `cp "$1" "seen-$n.txt"`,
    `printf '%s' "$1" > seen-path.txt`,
    ...writes.map((w, i) => `[ $n = ${i + 1} ] && printf '%s' '${w}' > "$1"`),
    "exit 0"
  ].join("\n")

const setUp = (run: string, writes: ReadonlyArray<string>) => {
  const p = makeProjectIn("parley-tty-edit-", { "ping.sh": TOOL, "edit.sh": editor(writes) })
  fs.writeFileSync(path.join(p.storage, "config.toml"), CONFIG(run))
  const script = writeScript(p, [
    { message: "Pinging.", tool_calls: [{ id: "call_1", name: "ping", arguments: { host: "prod" } }] },
    { message: "Done." }
  ])
  const s = startParley(p, ["query", "Ping", "--model", "scripted", "--script", script], {
    EDITOR: `sh ${path.join(p.root, "edit.sh")}`
  })
  return { p, s }
}

const read = (root: string, name: string) => fs.readFileSync(path.join(root, name), "utf8")
const received = (root: string) =>
  (JSON.parse(read(root, "got.json")) as { tool: { arguments: unknown } }).tool.arguments

/**
 * The permission decision recorded for call_1, with the edited arguments
 * (metadata string leaves are stored base64, as JP stores them).
 */
const edited = (args: Record<string, string>) => [
  {
    type: "inquiry_request",
    id: "call_1.__permission__.1",
    source: { source: "tool", name: "ping" },
    question: { text: "Run local ping tool?", answer_type: { type: "boolean" } },
    metadata: { parley_permission: true }
  },
  {
    type: "inquiry_response",
    outcome: "answered",
    id: "call_1.__permission__.1",
    answer: true,
    metadata: { parley_arguments: Object.fromEntries(Object.entries(args).map(([k, v]) => [k, b64(v)])) }
  }
]

describe.skipIf(!Tmux.available)(
  `JP run = "edit" on a real TTY (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("JP run = edit: $EDITOR opens on the arguments; the tool gets the edited ones, recorded with the true decision", async () => {
      const { p, s } = setUp("edit", ['{"host": "staging"}'])
      expect(await s.waitForExit()).toBe(0)
      expect(read(p.root, "seen-1.txt")).toBe(JSON.stringify({ host: "prod" }, null, 2))
      expect(path.basename(read(p.root, "seen-path.txt"))).toBe("ARGUMENTS.json")
      expect(received(p.root)).toStrictEqual({ host: "staging" })
      expect(s.pane()).not.toContain("Run local ping tool?")
      expect(recorded(p.storage)).toStrictEqual([
        { type: "turn_start" },
        { type: "chat_request", content: "Ping" },
        { type: "chat_response", message: "Pinging." },
        { type: "tool_call_request", id: "call_1", name: "ping", arguments: { host: b64("prod") } },
        ...edited({ host: "staging" }),
        { type: "tool_call_response", id: "call_1", content: b64("ran"), is_error: false },
        { type: "chat_response", message: "Done." }
      ])
    })

    it("JP run = edit: invalid JSON opens the editor again as left; an emptied edit goes back to the prompt, whose e edits again", async () => {
      const { p, s } = setUp("edit", ["{nope", "", '{"host": "qa"}'])
      await s.waitFor(/\? Run local ping tool\? \[y\/Y\/n\/N,\?\]/)
      expect(read(p.root, "seen-2.txt")).toBe("{nope")
      expect(s.pane()).toContain("the edited arguments are not valid JSON")
      expect(fs.existsSync(path.join(p.root, "got.json"))).toBe(false)
      s.sendKeys("e")
      expect(await s.waitForExit()).toBe(0)
      expect(read(p.root, "seen-3.txt")).toBe(JSON.stringify({ host: "prod" }, null, 2))
      expect(received(p.root)).toStrictEqual({ host: "qa" })
      expect(recorded(p.storage).filter((e) => String(e["type"]).startsWith("inquiry_"))).toStrictEqual(
        edited({ host: "qa" })
      )
    })

    it("JP result = ask: the result is shown with Deliver ping result to assistant?; e edits it in $EDITOR and the edited text is recorded", async () => {
      const p = makeProjectIn("parley-tty-review-", { "ping.sh": TOOL, "edit.sh": editor(["edited result"]) })
      fs.writeFileSync(path.join(p.storage, "config.toml"), `${CONFIG("unattended")}result = "ask"\n`)
      const script = writeScript(p, [
        { message: "Pinging.", tool_calls: [{ id: "call_1", name: "ping", arguments: { host: "prod" } }] },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Ping", "--model", "scripted", "--script", script], {
        EDITOR: `sh ${path.join(p.root, "edit.sh")}`
      })
      await s.waitFor(/\? Deliver ping result to assistant\? \[y\/n\/e,\?\]/)
      expect(s.pane()).toContain("  ran\n")
      s.sendKeys("e")
      expect(await s.waitForExit()).toBe(0)
      expect(read(p.root, "seen-1.txt")).toBe("ran")
      expect(path.basename(read(p.root, "seen-path.txt"))).toBe("RESULT.md")
      expect(recorded(p.storage).find((e) => e["type"] === "tool_call_response")).toStrictEqual({
        type: "tool_call_response",
        id: "call_1",
        content: b64("edited result"),
        is_error: false,
        metadata: { parley_result_review: b64("edited") }
      })
    })

    it("JP run = edit: an approval deferred without a terminal, resumed at one, is asked with e; the edit runs the call", async () => {
      const p = makeProjectIn("parley-tty-edit-", { "ping.sh": TOOL, "edit.sh": editor(['{"host": "later"}']) })
      fs.writeFileSync(path.join(p.storage, "config.toml"), CONFIG("edit"))
      const script = writeScript(p, [
        { message: "Pinging.", tool_calls: [{ id: "call_1", name: "ping", arguments: { host: "prod" } }] },
        { message: "Done." }
      ])
      const first = runParley(
        [
          "--storage",
          p.storage,
          "query",
          "Ping",
          "--model",
          "scripted",
          "--script",
          script,
          "--detached-policy",
          "defer"
        ],
        { cwd: p.root }
      )
      expect(first.code, first.stderr).toBe(3)
      const id = /parley conversation answer (\d+)/.exec(first.stderr)![1]!
      const resumed = writeScript(p, [{ message: "Done." }])
      const s = startParley(p, ["query", "--continue-turn", "--id", id, "--model", "scripted", "--script", resumed], {
        EDITOR: `sh ${path.join(p.root, "edit.sh")}`
      })
      await s.waitFor(/\? Run local ping tool\? \[y\/Y\/n\/N,\?\]/)
      s.sendKeys("e")
      expect(await s.waitForExit()).toBe(0)
      expect(received(p.root)).toStrictEqual({ host: "later" })
      expect(recorded(p.storage).filter((e) => String(e["type"]).startsWith("inquiry_"))).toStrictEqual(
        edited({ host: "later" })
      )
    })

    it("JP run = ask: e at the permission prompt (listed under ?) edits the arguments in $EDITOR, then runs the call", async () => {
      const { p, s } = setUp("ask", ['{"host": "dev"}'])
      await s.waitFor(/\? Run local ping tool\? \[y\/Y\/n\/N,\?\]/)
      // Listed under ?, with the other keys.
      s.sendKeys("?")
      await s.waitFor(/ {2}e {2}edit the arguments, then run\n/)
      s.sendKeys("e")
      expect(await s.waitForExit()).toBe(0)
      expect(received(p.root)).toStrictEqual({ host: "dev" })
      expect(recorded(p.storage).filter((e) => String(e["type"]).startsWith("inquiry_"))).toStrictEqual(
        edited({ host: "dev" })
      )
    })
  }
)
