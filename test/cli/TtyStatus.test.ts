// The CLI's words (docs/cli.md#status-lines) on a real terminal (tmux): the permission prompt shows the
// call's arguments before it is answered, a tool whose command does not
// exist is shown failed with its name and why, a question answered by config
// says so, a resumed call is shown running, and NO_COLOR turns colour off.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Tmux from "../support/Tmux.ts"
import {
  b64,
  makeProject as makeProjectIn,
  recorded,
  removeProjects,
  startParley,
  writeScript
} from "../support/TtyProject.ts"

const makeProject = (files: Readonly<Record<string, string>> = {}) => makeProjectIn("parley-tty-status-", files)

if (Tmux.skipReason !== undefined) console.warn(`TtyStatus.test.ts skipped: ${Tmux.skipReason}`)

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

const tool = (name: string, command: string, run: string) => `
[conversation.tools.${name}]
source = "local"
command = "${command}"
description = "A test tool."
parameters = { type = "object", properties = { paths = { type = "array" }, name = { type = "string" } } }
run = "${run}"
`

/** The pane with its escape sequences (colour, dim). */
const paneWithEscapes = (s: Tmux.Session): string =>
  execFileSync(Tmux.tmuxBinary!, ["-L", s.name, "capture-pane", "-p", "-e", "-J", "-t", s.name, "-S", "-"], {
    encoding: "utf8"
  })

describe.skipIf(!Tmux.available)(
  `status lines on a real TTY (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
  () => {
    it("the permission prompt shows the call's arguments before it is answered", async () => {
      const p = makeProject({ "rm.sh": `printf '{"type":"success","content":"removed"}\\n'\n` })
      fs.writeFileSync(path.join(p.storage, "config.toml"), tool("rm_files", "sh rm.sh", "ask"))
      const script = writeScript(p, [
        {
          message: "Removing.",
          tool_calls: [{ id: "call_1", name: "rm_files", arguments: { paths: ["/srv/ARG-MARK-77", "/home"] } }]
        },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Clean up", "--model", "scripted", "--script", script])
      await s.waitFor(/\? Run local rm_files tool\? \[y\/Y\/n\/N,\?\]/)
      const before = s.pane()
      expect(before).toContain(
        `  {\n    "paths": [\n      "/srv/ARG-MARK-77",\n      "/home"\n    ]\n  }\n? Run local rm_files tool?`
      )
      s.sendKeys("n")
      expect(await s.waitForExit()).toBe(0)
      expect(s.pane()).toContain("✔ Run local rm_files tool? skip\n– rm_files: Tool skipped by user.\nDone.")
    })

    it("long arguments are cut to a few lines; `?` shows them whole", async () => {
      const p = makeProject({ "rm.sh": `printf '{"type":"success","content":"removed"}\\n'\n` })
      fs.writeFileSync(path.join(p.storage, "config.toml"), tool("rm_files", "sh rm.sh", "ask"))
      const paths = Array.from({ length: 20 }, (_, i) => `/data/file-${i}`)
      const script = writeScript(p, [
        { tool_calls: [{ id: "call_1", name: "rm_files", arguments: { paths } }] },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Clean up", "--model", "scripted", "--script", script])
      await s.waitFor(/\? Run local rm_files tool\?/)
      const cut = s.pane()
      expect(cut).toContain("/data/file-4")
      expect(cut).not.toContain("/data/file-19")
      expect(cut).toMatch(/… \d+ more lines \(\? shows all\)/)
      s.sendKeys("?")
      await s.waitFor(/"\/data\/file-19"/)
      s.sendKeys("y")
      expect(await s.waitForExit()).toBe(0)
    })

    it("a tool whose command does not exist is shown failed with its name; a question answered by config says (config)", async () => {
      const p = makeProject({ "a.txt": "old\n" })
      fs.writeFileSync(
        path.join(p.storage, "config.toml"),
        tool("broken", "definitely-not-a-command", "unattended") +
          `
[conversation.tools.write_file.questions.overwrite]
answer = false
`
      )
      const script = writeScript(p, [
        {
          message: "Trying.",
          tool_calls: [
            { id: "call_1", name: "broken", arguments: {} },
            { id: "call_2", name: "write_file", arguments: { path: "a.txt", content: "new\n" } }
          ]
        },
        { message: "Done." }
      ])
      const s = startParley(p, ["query", "Try", "--model", "scripted", "--script", script])
      expect(await s.waitForExit()).toBe(0)
      const pane = s.pane()
      expect(pane).toMatch(/^✗ broken: .*definitely-not-a-command.*not found$/m)
      expect(pane).toContain("↳ Overwrite a.txt? → no (config)\n")
      expect(pane).toContain("✗ write_file: Overwriting a.txt was rejected; the file was left unchanged.\n")
      expect(pane).toMatch(/^conversation \d{11} \(new\)\nTrying\.\n/m)
      expect(fs.readFileSync(path.join(p.root, "a.txt"), "utf8")).toBe("old\n")
    })

    it("a resumed call is shown running, then finished", async () => {
      const COUNTER = `while [ -f hold ]; do sleep 0.05; done\nprintf '{"type":"success","content":"counted"}\\n'\n`
      const p = makeProject({ "counter.sh": COUNTER, hold: "" })
      fs.writeFileSync(path.join(p.storage, "config.toml"), tool("counter", "sh counter.sh", "unattended"))
      const id = "17000000003"
      const dir = path.join(p.storage, "conversations", `${id}-count`)
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(
        path.join(dir, "metadata.json"),
        JSON.stringify({ title: "count", last_activated_at: "2026-03-01 10:00:00.0" }, null, 2) + "\n"
      )
      fs.writeFileSync(
        path.join(dir, "base_config.json"),
        JSON.stringify({ assistant: { model: { id: { provider: "scripted", name: "" } } } }, null, 2) + "\n"
      )
      fs.writeFileSync(
        path.join(dir, "events.json"),
        JSON.stringify(
          [
            { timestamp: "2026-03-01 10:00:00.1", type: "turn_start" },
            { timestamp: "2026-03-01 10:00:00.2", type: "chat_request", content: "count" },
            {
              timestamp: "2026-03-01 10:00:00.3",
              type: "tool_call_request",
              id: "c1",
              name: "counter",
              arguments: { name: b64("x") }
            }
          ],
          null,
          2
        ) + "\n"
      )
      const script = writeScript(p, [{ message: "Counted." }])
      const s = startParley(p, ["query", "--continue-turn", "--id", id, "--script", script])
      await s.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] counter \(resumed\) \{"name":"x"\}/)
      fs.rmSync(path.join(p.root, "hold"))
      expect(await s.waitForExit()).toBe(0)
      expect(s.pane()).toContain(`conversation ${id}\n✓ counter {"name":"x"}\nCounted.`)
      expect(recorded(p.storage).map((e) => e["type"])).toStrictEqual([
        "turn_start",
        "chat_request",
        "tool_call_request",
        "tool_call_response",
        "chat_response"
      ])
    })

    it("status lines are coloured, and not at all under NO_COLOR", async () => {
      const steps = [
        { message: "Reading.", tool_calls: [{ id: "call_1", name: "read_file", arguments: { path: "nope.txt" } }] },
        { message: "Done." }
      ]
      const run = async (env: Record<string, string>) => {
        const p = makeProject()
        const s = startParley(p, ["query", "Read", "--model", "scripted", "--script", writeScript(p, steps)], env)
        expect(await s.waitForExit()).toBe(0)
        expect(s.pane()).toMatch(/^✗ read_file: /m)
        return paneWithEscapes(s)
      }
      expect(await run({})).toContain("\x1b[31m✗") // red
      expect(await run({ NO_COLOR: "1" })).not.toMatch(/\x1b\[[0-9;]*m/)
    })
  }
)
