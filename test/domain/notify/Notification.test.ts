// The fold of a run's events into notifications (docs/questions-and-approvals.md#notifications): what each
// event tells, that a delivery id depends only on what it is about, and that no secret value is carried.
import * as crypto from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as Delivery from "../../../src/domain/notify/Delivery.ts"
import * as Notification from "../../../src/domain/notify/Notification.ts"
import * as RunEvent from "../../../src/domain/run/RunEvent.ts"
import { Question } from "../../../src/domain/tool/Question.ts"

const context: Notification.Context = {
  run: "r1",
  hash: (text) => crypto.createHash("sha256").update(text).digest("hex"),
  answerCommand: (id, inquiry, type, kind, rememberable) =>
    `answer ${id} ${inquiry} ${type.type} ${kind}${rememberable ? "" : " once"}`,
  url: (id) => `http://127.0.0.1:3141/conversations/${id}`
}

const question = (id: string, answer_type: unknown, extra: Record<string, unknown> = {}) =>
  Schema.decodeUnknownSync(Question)({ id, text: `${id}?`, answer_type, ...extra })

const call = { id: "c1", name: "deploy", arguments: { target: "prod" } }
const opened = (inquiry_id: string, q: Question, kind: "question" | "approval" = "question") =>
  RunEvent.make.QuestionOpened({
    inquiry_id,
    kind,
    call,
    question: q,
    source: { source: "tool", name: "deploy" },
    audience: "person",
    since: "2026-11-29T04:00:00.000Z"
  })
const closed = (inquiry_id: string, q: Question, outcome: RunEvent.QuestionOutcome) =>
  RunEvent.make.QuestionClosed({ inquiry_id, kind: "question", call, question: q, by: "config", outcome })

const fold = (events: ReadonlyArray<RunEvent.RunEvent>) => {
  let state = Notification.initial
  const out: Array<Notification.Notification> = []
  for (const e of events) {
    const [next, told] = Notification.step(context, state, e)
    state = next
    out.push(...told)
  }
  return out
}

describe("Notification.step", () => {
  const confirm = question("confirm", { type: "boolean" }, { default: true })
  const token = question("token", { type: "secret" }, { default: "hunter2-default" })
  const events = [
    RunEvent.make.ConversationKnown({ conversation_id: "17", created: true, title: "deploy prod" }),
    RunEvent.make.TextDelta({ text: "hi" }),
    opened("c1.__permission__.1", question("__permission__", { type: "boolean" }), "approval"),
    opened("c1.confirm.1", confirm),
    opened("c1.token.1", token),
    closed("c1.token.1", token, { _tag: "Redacted" }),
    closed("c1.confirm.1", confirm, { _tag: "Answered", answer: false }),
    RunEvent.make.Stopped({ ending: "deferred", incomplete: { state: "waiting-for-input" } })
  ]

  it("an approval asked each time (persistence none: an MCP page or form) is told as one (yes or no only)", () => {
    const consent = question("url", { type: "boolean" }, { persistence: "none" })
    const [out] = fold([
      RunEvent.make.ConversationKnown({ conversation_id: "17", created: true }),
      opened("c1.url.1", consent, "approval")
    ])
    expect(out!.body).toMatchObject({ kind: "approval", answer_command: "answer 17 c1.url.1 boolean approval once" })
  })

  it("tells questions opened and closed, and a deferred end as run_waiting with what stays open", () => {
    const out = fold(events)
    expect(out.map((n) => n.event)).toStrictEqual([
      "question_opened",
      "question_opened",
      "question_opened",
      "question_closed",
      "question_closed",
      "run_waiting"
    ])
    expect(out[0]!.body).toMatchObject({
      conversation_id: "17",
      title: "deploy prod",
      kind: "approval",
      tool: "deploy",
      arguments: { target: "prod" },
      answer_command: "answer 17 c1.__permission__.1 boolean approval",
      url: "http://127.0.0.1:3141/conversations/17"
    })
    expect(out[1]!.body).toMatchObject({ kind: "question", arguments: null, default: true, options: null })
    expect(out[4]!.body).toMatchObject({ answered_by: "config", via: null, answer: false, outcome: "answered" })
    expect(out[5]!.body).toMatchObject({ ending: "deferred", exit_code: 3, waiting: ["c1.__permission__.1"] })
    expect(out.map((n) => n.body["title"])).toStrictEqual(out.map(() => "deploy prod"))
  })

  it("names an untitled conversation's notifications with a null title", () => {
    const untitled = [RunEvent.make.ConversationKnown({ conversation_id: "17", created: false }), ...events.slice(1)]
    expect(fold(untitled).map((n) => n.body["title"])).toStrictEqual(fold(untitled).map(() => null))
  })

  it("carries no secret: neither a secret's default nor its answer", () => {
    const out = fold(events)
    expect(out[2]!.body["default"]).toBe(null)
    expect(out[3]!.body["answer"]).toBe(null)
    expect(JSON.stringify(out)).not.toContain("hunter2")
  })

  it("derives each delivery id from the conversation, the subject and the event alone", () => {
    const [a, b] = [fold(events), fold(events)]
    expect(a.map((n) => n.delivery_id)).toStrictEqual(b.map((n) => n.delivery_id))
    expect(new Set(a.map((n) => n.delivery_id)).size).toBe(a.length)
    expect(a[0]!.body["delivery_id"]).toBe(a[0]!.delivery_id)
  })

  it("tells nothing before the conversation is known, and a page only when a server port is configured", () => {
    expect(fold(events.slice(1))).toStrictEqual([])
    expect(Notification.pageUrl(undefined)("17")).toBe(null)
    expect(Notification.pageUrl({ port: 0 })("17")).toBe(null)
    expect(Notification.pageUrl({ bind: "::", port: 8080 })("17")).toBe("http://[::1]:8080/conversations/17")
  })
})

describe("Delivery", () => {
  it("retries what a receiver may take later, and backs off to at most 30 s", () => {
    expect([200, 204, 301, 404, 408, 429, 500, 503].map(Delivery.outcomeOf)).toStrictEqual([
      "delivered",
      "delivered",
      "failed",
      "failed",
      "retry",
      "retry",
      "retry",
      "retry"
    ])
    expect([0, 1, 2, 20].map(Delivery.backoffMs)).toStrictEqual([250, 500, 1000, 30_000])
  })

  it("names entries so that sorting them is their order, and tells a claim from an entry", () => {
    const a = Delivery.entryName({ created: 5, n: 2, target: "webhook", delivery_id: "ab" })
    const b = Delivery.entryName({ created: 5, n: 10, target: "command", delivery_id: "cd" })
    expect([b, a].sort()).toStrictEqual([a, b])
    expect(Delivery.isEntry(a)).toBe(true)
    expect(Delivery.claimant(`${a}${Delivery.CLAIMED}42`)).toStrictEqual({ entry: a, pid: 42 })
    expect(Delivery.claimant(a)).toBe(undefined)
  })
})
