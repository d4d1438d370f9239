// A run meant to be watched waits (docs/questions-and-approvals.md#when-nobody-is-there-the-detached-policy): with no policy set,
// `query --detach` keeps its questions open for an answer from anywhere instead of asking the model, and
// the policy a run used is recorded in the conversation's metadata, so the printed resume command
// follows it again (a deferred run resumed defers its next question too).
import * as fs from "node:fs"
import * as path from "node:path"
import { spawnSync } from "node:child_process"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import {
  addDeferrable,
  conversationDir,
  DEFERRABLE,
  effectsOf,
  hostSockets,
  killGroup,
  makeProject,
  parley,
  persisted,
  type Project,
  waitFor,
  writeScript
} from "../support/Project.ts"

const groups: Array<number> = []
afterEach(() => {
  for (const g of groups.splice(0)) killGroup(g)
})

/** The deferrable tool, and no `[conversation.inquiry] detached`: each run's default decides. */
const project = (): Project => {
  const p = makeProject()
  fs.appendFileSync(path.join(p.storage, "config.toml"), DEFERRABLE)
  addDeferrable(p.root)
  return p
}

const call = (id: string, name: string) => ({ id, name: "deferrable", arguments: { name, mode: "ask" } })

const metadata = (p: Project) => JSON.parse(fs.readFileSync(path.join(conversationDir(p), "metadata.json"), "utf8"))

describe("a run meant to be watched waits", () => {
  it.live(
    "query --detach with no policy: the question waits for an answer (no side call), the banner says so, the policy is recorded",
    () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = project()
        fake.enqueueAnthropic(
          {
            blocks: [{ type: "tool_use", id: "toolu_w", name: "deferrable", input: { name: "prod", mode: "ask" } }],
            stopReason: "tool_use"
          },
          { blocks: [{ type: "text", text: "Deployed." }] }
        )
        const r = spawnSync(
          process.execPath,
          [binary, "--storage", p.storage, "query", "--detach", "--new", "--model", "anthropic/claude-test", "deploy"],
          {
            cwd: p.root,
            encoding: "utf8",
            env: { ...process.env, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url, PARLEY_STORAGE: "" },
            timeout: 30_000
          }
        )
        expect(r.status, r.stderr).toBe(0)
        const id = r.stdout.trim()
        groups.push(Number(/\(pid (\d+)\)/.exec(r.stderr)![1]))
        expect(r.stderr).toContain(`conversation answer ${id} --storage`)
        expect(r.stderr).toContain("they wait for an answer")
        yield* Effect.promise(() =>
          waitFor("the question to open", () => persisted(p).some((e) => e.type === "inquiry_request"))
        )
        // Still open a moment later: nobody asked the model (a side call would be a third request, structured).
        yield* Effect.sleep("1 second")
        expect(persisted(p).some((e) => e.type === "inquiry_response")).toBe(false)
        expect(fake.requests.length).toBe(1)
        expect(parley(p, ["conversation", "answer", id, "toolu_w.confirm.1", "yes"]).code).toBe(0)
        yield* Effect.promise(() =>
          waitFor(
            "the run to finish",
            () => hostSockets(p).length === 0 && persisted(p).at(-1)?.type === "chat_response"
          )
        )
        expect(effectsOf(p, "prod")).toBe("true\n")
        expect(fake.requests.length).toBe(2)
        expect(metadata(p).parley_detached_policy).toMatchObject({ policy: "wait" })
      }),
    120_000
  )

  it("a run deferred with --detached-policy defer, answered and resumed with the printed command, defers its next question too", () => {
    const p = project()
    const script = writeScript(p, "s.json", [{ message: "First.", tool_calls: [call("a1", "prod")] }])
    const first = parley(p, ["query", "--new", "deploy", "--script", script, "--detached-policy", "defer"])
    expect(first.code, first.stderr).toBe(3)
    const id = JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout)[0].id as string
    expect(metadata(p).parley_detached_policy.policy).toBe("defer")
    expect(parley(p, ["conversation", "answer", id, "a1.confirm.1", "yes"]).code).toBe(0)
    // The printed command, as pasted (it names the script; its steps now go on from the answered call).
    const printed = /Then resume the turn: parley (.*)$/m.exec(first.stderr)![1]!
    writeScript(p, "s.json", [{ message: "Second.", tool_calls: [call("b1", "staging")] }, { message: "Done." }])
    const args = printed.split(" ").filter((a) => a !== "--storage" && a !== p.storage)
    const resumed = parley(p, args)
    expect(resumed.code, resumed.stderr).toBe(3)
    expect(effectsOf(p, "prod")).toBe("true\n")
    expect(effectsOf(p, "staging")).toBe("")
    expect(resumed.stderr).toContain("b1.confirm.1  deferrable: Deploy staging?")
    const responses = persisted(p).filter((e) => e.type === "inquiry_response")
    expect(responses.map((e) => e.id)).toStrictEqual(["a1.confirm.1"])
    expect(metadata(p).parley_detached_policy.policy).toBe("defer")
    // A flag says otherwise: this run follows it (deny), and records it.
    const ok = writeScript(p, "ok.json", [{ message: "Ok." }])
    const denied = parley(p, ["query", "--continue-turn", "--id", id, "--script", ok, "--detached-policy", "deny"])
    expect(denied.code, denied.stderr).toBe(0)
    expect(metadata(p).parley_detached_policy.policy).toBe("deny")
  }, 180_000)

  it("a plain run without a terminal keeps the assistant default and records no policy", () => {
    const p = project()
    const script = writeScript(p, "s.json", [
      { message: "Working.", tool_calls: [call("a1", "prod")] },
      { structured: { answer: false } },
      { message: "Done." }
    ])
    const r = parley(p, ["query", "--new", "deploy", "--script", script])
    expect(r.code, r.stderr).toBe(0)
    expect(effectsOf(p, "prod")).toBe("false\n")
    expect(metadata(p).parley_detached_policy).toBeUndefined()
  }, 120_000)
})
