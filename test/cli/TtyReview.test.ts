// Issue 14's terminal, fault-injected on a real terminal (tmux): what a
// reviewer found by running the built binary. Live status rows are always
// erased (wide characters, more running calls than the screen has rows).
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary } from "../support/Cli.ts"
import * as Tmux from "../support/Tmux.ts"
import { makeProject as makeProjectIn, type Project, removeProjects, writeScript } from "../support/TtyProject.ts"

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

const start = (p: Project, args: ReadonlyArray<string>, options: { height?: number; env?: Record<string, string> } = {}) =>
  Tmux.start({
    command: [process.execPath, binary, "--storage", p.storage, ...args],
    cwd: p.root,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.height !== undefined ? { height: options.height } : {})
  })

const started = (p: Project) => fs.readdirSync(p.root).filter((n) => n.startsWith("started.")).length

/** Waits until `count` calls run and the spinner has turned a few frames (each frame is a redraw). */
const runningAndTurning = async (s: Tmux.Session, p: Project, count: number) => {
  const seen = new Set<string>()
  const deadline = Date.now() + 15_000
  while (started(p) < count || seen.size < 3) {
    for (const frame of s.pane(false).match(SPINNER) ?? []) seen.add(frame)
    if (Date.now() > deadline) throw new Error(`${started(p)} of ${count} calls started, frames seen: ${[...seen].join("")}\n${s.pane()}`)
    await new Promise((r) => setTimeout(r, 30))
  }
}

describe.skipIf(!Tmux.available)(`the terminal under fault injection (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`, () => {
  it("a running row of wide characters is erased each frame: no spinner line is left behind", async () => {
    const p = makeProject({ "hold.sh": HOLD, hold: "" })
    fs.writeFileSync(path.join(p.storage, "config.toml"), tool("slow", "hold.sh", "unattended"))
    const name = "日本語のファイル名".repeat(12)
    const script = writeScript(p, [{ message: "Go.", tool_calls: [{ id: "call_1", name: "slow", arguments: { name } }] }, { message: "Done." }])
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
    const calls = Array.from({ length: 30 }, (_, i) => ({ id: `call_${i + 1}`, name: "slow", arguments: { name: `n${i + 1}` } }))
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
})
