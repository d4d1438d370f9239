// parley serve (docs/serve.md#the-api): the losers of an answer race are told the truth. One answer wins a
// running turn's question; 200 more for the same question race the run's end (the winning answer lets the
// tool finish, the turn ends, its host goes away, and the answer is then on disk): every late one gets
// `409 QuestionAlreadyAnswered` naming who answered (or `409 QuestionCancelled`), never
// `ConversationBusy`, `RunLost` or an empty body.
import { afterEach, describe, expect, it } from "@effect/vitest"
import { effectsOf, hostSockets, persisted, waitFor, waitingProject, writeScript } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const servers: Array<Serve.Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("late answers racing a run's end", () => {
  it("200 late answers: each is a 409 QuestionAlreadyAnswered (or QuestionCancelled), none ConversationBusy, RunLost or empty", async () => {
    const p = waitingProject()
    const script = writeScript(p, "s.json", [
      {
        message: "Working.",
        tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }]
      },
      { message: "Done." }
    ])
    const server = await Serve.start(p, [], { PARLEY_SCRIPT: script, OPENAI_API_KEY: "", OPENAI_BASE_URL: "" })
    servers.push(server)
    const created = await server.post("/api/conversations", { message: "deploy", model: "scripted" })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const id = created.body.conversation_id as string
    let open: Array<{ id: string }> = []
    await waitFor(
      "the question",
      () => {
        void server.json("/api/questions").then((r) => (open = r.body))
        return open.length === 1
      },
      30_000
    )
    const target = `/api/conversations/${id}/questions/a1.confirm.1`
    const won = await server.post(target, { answer: true })
    expect(won).toStrictEqual({ status: 200, body: { id: "a1.confirm.1", outcome: "delivered" } })
    // 200 late answers in waves of 5: every 100 ms while the run ends (at most 150), the rest once it ended
    // (its host's socket gone, the reply on disk).
    const late: Array<{ status: number; body: any }> = []
    const ended = () => persisted(p).at(-1)?.type === "chat_response" && hostSockets(p).length === 0
    const wave = async (n: number) =>
      late.push(...(await Promise.all(Array.from({ length: n }, () => server.post(target, { answer: false })))))
    while (!ended() && late.length < 150) {
      await wave(5)
      await sleep(100)
    }
    const before = late.length
    await waitFor("the run's end", ended, 30_000)
    while (late.length < 200) await wave(Math.min(10, 200 - late.length))
    // The race spanned the end: answers went out while the run ended, and after.
    expect(before).toBeGreaterThan(0)
    expect(before).toBeLessThan(200)
    const tags = new Map<string, number>()
    for (const r of late) {
      const tag = `${r.status} ${r.body?.error ?? "(empty)"}`
      tags.set(tag, (tags.get(tag) ?? 0) + 1)
    }
    expect(late.length).toBe(200)
    expect(
      [...tags.keys()].filter((t) => t !== "409 QuestionAlreadyAnswered" && t !== "409 QuestionCancelled")
    ).toStrictEqual([])
    for (const r of late)
      if (r.body.error === "QuestionAlreadyAnswered")
        expect(r.body).toMatchObject({ inquiry_id: "a1.confirm.1", by: expect.any(String) })
    // The tool ran once, with the winning answer.
    expect(effectsOf(p, "prod")).toBe("true\n")
  }, 180_000)
})
