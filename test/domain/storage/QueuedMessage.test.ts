// The queue's log (docs/cli.md#talk-to-a-running-turn): ids by the order of `queue` records; the first of a
// withdraw and a take wins; a taken message not in the events is still to deliver (its run died), a delivered
// one never again; a torn last line is skipped.
import { describe, expect, it } from "@effect/vitest"
import * as Events from "../../../src/domain/event/Events.ts"
import * as Timestamp from "../../../src/domain/event/Timestamp.ts"
import * as QueuedMessage from "../../../src/domain/storage/QueuedMessage.ts"

const queue = (nonce: string, message: string): QueuedMessage.Record => ({
  op: "queue",
  nonce,
  message,
  surface: "terminal",
  when: "after",
  at: "2026-11-29T07:00:00Z"
})

describe("QueuedMessage", () => {
  it("folds a log: ids in order, withdraw before take wins, take before withdraw wins", () => {
    const records: Array<QueuedMessage.Record> = [
      queue("a", "one"),
      queue("b", "two"),
      queue("c", "three"),
      { op: "withdraw", id: 2, nonce: "w1" },
      { op: "take", id: 2 },
      { op: "take", id: 3 },
      { op: "withdraw", id: 3, nonce: "w2" }
    ]
    const log = QueuedMessage.fold(records)
    expect(log.messages.map((m) => [m.id, m.message, m.state])).toStrictEqual([
      [1, "one", "queued"],
      [2, "two", "withdrawn"],
      [3, "three", "taken"]
    ])
    expect(QueuedMessage.withdrawOutcome(records, 2, "w1")).toBe("withdrawn")
    expect(QueuedMessage.withdrawOutcome(records, 3, "w2")).toBe("delivered")
    expect(QueuedMessage.withdrawOutcome(records, 9, "w2")).toBe("unknown")
  })

  it("a taken message is pending until its chat_request is in the events", () => {
    const log = QueuedMessage.fold([queue("a", "one"), queue("b", "two"), { op: "take", id: 1 }])
    expect(QueuedMessage.pending(log, new Set()).map((m) => m.id)).toStrictEqual([1, 2])
    const delivered = Events.chatRequest(Timestamp.now(), "one", {
      [QueuedMessage.METADATA_KEY]: { id: 1, nonce: "a", via: "api" }
    })
    const nonces = QueuedMessage.deliveredIn([Events.chatRequest(Timestamp.now(), "hi"), delivered])
    expect([...nonces]).toStrictEqual(["a"])
    expect(QueuedMessage.pending(log, nonces).map((m) => m.id)).toStrictEqual([2])
  })

  it("delivery is matched by the record's nonce: a fork's delivered message 1 does not hide the fork's own message 1", () => {
    const inherited = Events.chatRequest(Timestamp.now(), "from the source", {
      [QueuedMessage.METADATA_KEY]: { id: 1, nonce: "source-a", via: "api" }
    })
    const forkQueue = QueuedMessage.fold([queue("fork-a", "new")])
    expect(
      QueuedMessage.pending(forkQueue, QueuedMessage.deliveredIn([inherited])).map((m) => m.message)
    ).toStrictEqual(["new"])
  })

  it("a withdraw whose own record is not in the log is not said to be withdrawn", () => {
    const records = [queue("a", "one")]
    expect(QueuedMessage.withdrawOutcome(records, 1, "never-logged")).toBe("unknown")
  })

  it("a record written after a torn one still reads: every line starts on a line of its own", () => {
    const torn = QueuedMessage.line(queue("a", "one")).slice(0, 25)
    const text = `${torn}${QueuedMessage.line(queue("b", "two"))}`
    expect(QueuedMessage.parse(text).map((r) => (r.op === "queue" ? r.nonce : r.op))).toStrictEqual(["b"])
  })

  it("parses a log, skipping a torn last line and lines that are not records", () => {
    const text = `${QueuedMessage.line(queue("a", "one"))}{"op":"nope"}\n${QueuedMessage.line(queue("b", "two")).slice(0, 20)}`
    expect(QueuedMessage.parse(text).map((r) => r.op)).toStrictEqual(["queue"])
    expect(QueuedMessage.describe(1)).toBe("1 message queued")
    expect(QueuedMessage.describe(3)).toBe("3 messages queued")
  })
})
