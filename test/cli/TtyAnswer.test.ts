// Answers from anywhere (docs/decisions.md#answer-from-anywhere) on a real terminal (tmux): `parley conversation answer ID`
// asks the open questions of a deferred turn one by one, records each, and
// says how to resume; a secret is left for the resumed turn; Ctrl-C stops
// with 130 and records nothing more.
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { runParley } from "../support/Cli.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { DEFERRABLE } from "../support/Project.ts"
import * as Tmux from "../support/Tmux.ts"
import { makeProject, onDisk, type Project, removeProjects, startParley, writeScript } from "../support/TtyProject.ts"

if (Tmux.skipReason !== undefined) console.warn(`TtyAnswer.test.ts skipped: ${Tmux.skipReason}`)

afterEach(() => {
  Tmux.killAll()
  removeProjects()
})

const CONFIG = `
[conversation.inquiry]
detached = "defer"

${DEFERRABLE}`

/** A conversation whose turn waits for a boolean, a select and a secret (deferred by a run without a terminal). */
const deferred = (): { p: Project; id: string } => {
  const p = makeProject("parley-tty-answer-", {
    "deferrable.py": fs.readFileSync(path.join(repoRoot, "test", "fixtures", "tools", "deferrable.py"), "utf8")
  })
  fs.writeFileSync(path.join(p.storage, "config.toml"), CONFIG)
  const call = (id: string, name: string, mode: string) => ({ id, name: "deferrable", arguments: { name, mode } })
  const script = writeScript(p, [
    {
      message: "Working.",
      tool_calls: [call("a1", "prod", "ask"), call("p1", "paint", "pick"), call("s1", "api", "secret")]
    }
  ])
  const r = runParley(["--storage", p.storage, "query", "--new", "go", "--model", "scripted", "--script", script], {
    cwd: p.root
  })
  expect(r.code).toBe(3)
  const id = fs
    .readdirSync(path.join(p.storage, "conversations"))
    .find((n) => /^\d+-/.test(n))!
    .split("-")[0]!
  return { p, id }
}

const responses = (p: Project) =>
  onDisk(p.storage)
    .filter((e) => e["type"] === "inquiry_response")
    .map((e) => [e["id"], e["answer"]])

describe.skipIf(!Tmux.available)("parley conversation answer on a real TTY (tmux)", () => {
  it("asks each open question at the prompt, records the answers, and leaves the secret for the resumed turn", async () => {
    const { p, id } = deferred()
    const s = startParley(p, ["conversation", "answer", id])
    // The questions come in the order they were asked (the tools ran in parallel): answer each as it shows.
    // The second is whichever the first was not (both stay in the pane once shown).
    let first: string | undefined
    for (let i = 0; i < 2; i++) {
      const [shown] = await s.waitFor(
        first === undefined
          ? /Deploy prod\?|Which color\?/
          : first === "Deploy prod?"
            ? /Which color\?/
            : /Deploy prod\?/
      )
      first ??= shown
      if (shown === "Deploy prod?") s.sendKeys("n")
      else s.sendKeys("Down", "Enter")
    }
    expect(await s.waitForExit()).toBe(0)
    const pane = s.pane()
    expect(pane).toContain("Answered 2 questions; resume the turn to hand the answers to the tools:")
    expect(pane).toContain(`s1.token.1 asks for a secret: it is asked when the turn is resumed in a terminal:`)
    expect(responses(p).sort()).toStrictEqual([
      ["a1.confirm.1", false],
      ["p1.color.1", "green"]
    ])
  })

  it("Ctrl-C at the prompt stops with 130; what was answered before it stays recorded", async () => {
    const { p, id } = deferred()
    const s = startParley(p, ["conversation", "answer", id])
    const [first] = await s.waitFor(/Deploy prod\?|Which color\?/)
    if (first === "Deploy prod?") s.sendKeys("y")
    else s.sendKeys("Enter")
    await s.waitFor(first === "Deploy prod?" ? /Which color\?/ : /Deploy prod\?/)
    s.sendKeys("C-c")
    expect(await s.waitForExit()).toBe(130)
    expect(responses(p)).toStrictEqual([first === "Deploy prod?" ? ["a1.confirm.1", true] : ["p1.color.1", "red"]])
  })
})
