/**
 * Approvals an effect/ai tool needs (docs/library.md#effectai-tools-as-parleys-executor-asking-questions-mid-run) on a real terminal (tmux) and without one: a consumer's
 * agent (`_approvalAgent.ts`) whose effect/ai tool has `needsApproval: true`
 * never runs it unprompted. No TTY, `detached = "assistant"`: skipped (an
 * approval never goes to the assistant). On a TTY: the person is asked as
 * for `run = "ask"`; `n` skips it, `y` runs it; the tool without approval
 * runs either way.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { repoRoot } from "../support/Fixtures.ts"
import * as Tmux from "../support/Tmux.ts"
import { removeProjects, trackedTempDir } from "../support/TtyProject.ts"

const agent = path.join(repoRoot, "test", "ai", "_approvalAgent.ts")
const PROMPT = /\? Run built-in deploy tool\? \[y\/Y\/n\/N,\?\]/

const configFile = (text: string) => {
  const dir = trackedTempDir("parley-approval-")
  const file = path.join(dir, "config.toml")
  fs.writeFileSync(file, text)
  return { dir, file }
}

const resultOf = (text: string) => {
  const line = text.split("\n").find((l) => l.startsWith("RESULT "))
  expect(line, text).toBeDefined()
  return JSON.parse(line!.slice("RESULT ".length)) as { ran: Array<string>; responses: Array<[string, string]> }
}

const skipped = `The tool 'deploy' needs a person's approval to run, and nobody could be asked (the detached policy is "assistant"; an approval never goes to an assistant), so it did not run. Do not retry this tool call in this turn.`

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

describe("an effect/ai tool with needsApproval, in a consumer's agent", () => {
  it("no TTY, detached = assistant: the tool is skipped and the skip recorded; the other tool runs", () => {
    const { dir, file } = configFile(`[conversation.inquiry]\ndetached = "assistant"\n`)
    const child = spawnSync(process.execPath, ["--import", "tsx", agent, file], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 60_000,
      stdio: ["ignore", "pipe", "pipe"]
    })
    expect(child.status, child.stderr).toBe(0)
    expect(resultOf(child.stdout)).toStrictEqual({
      ran: ["status"],
      responses: [
        ["call_1", skipped],
        ["call_2", "production is up"]
      ]
    })
    expect(fs.readdirSync(dir)).toStrictEqual(["config.toml"])
  }, 90_000)

  describe.skipIf(!Tmux.available)(
    `on a TTY (tmux)${Tmux.skipReason !== undefined ? ` — skipped: ${Tmux.skipReason}` : ""}`,
    () => {
      const run = async (key: string) => {
        const { dir, file } = configFile("")
        const result = path.join(dir, "result.json")
        const s = Tmux.start({ command: [process.execPath, "--import", "tsx", agent, file, result], cwd: repoRoot })
        await s.waitFor(PROMPT, { timeoutMs: 60_000 })
        s.sendKeys(key)
        expect(await s.waitForExit({ timeoutMs: 30_000 })).toBe(0)
        expect(s.pane()).toMatch(/✔ Run built-in deploy tool\? (run|skip)/)
        const out = JSON.parse(fs.readFileSync(result, "utf8")) as {
          ran: Array<string>
          responses: Array<[string, string]>
        }
        // Recorded as each call ends: the status call may end while the person is asked.
        return { ran: out.ran.sort(), responses: out.responses.sort((a, b) => a[0].localeCompare(b[0])) }
      }

      it("`n` skips it (recorded as the person's skip)", async () => {
        expect(await run("n")).toStrictEqual({
          ran: ["status"],
          responses: [
            ["call_1", "Tool skipped by user."],
            ["call_2", "production is up"]
          ]
        })
      }, 90_000)

      it("`y` runs it", async () => {
        expect(await run("y")).toStrictEqual({
          ran: ["deploy", "status"],
          responses: [
            ["call_1", "deployed to production"],
            ["call_2", "production is up"]
          ]
        })
      }, 90_000)
    }
  )
})
