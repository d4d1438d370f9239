// The two ways a session's close reads and writes (src/layers/store/FileCalls.ts): the same values and
// errors through the thread pool or blocking; a fold and a lock's release give the same files either way,
// and the blocking one never lets the event loop run meanwhile.
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as FileCalls from "../../../src/layers/store/FileCalls.ts"
import * as FileLock from "../../../src/layers/store/FileLock.ts"
import * as Journal from "../../../src/layers/store/Journal.ts"
import { tempDir } from "../../support/Fixtures.ts"

const ways = [
  ["promised", FileCalls.promised],
  ["blocking", FileCalls.blocking]
] as const

/** What a call gave: its value, or its error's class, code, syscall and path. */
const outcome = async (f: () => unknown): Promise<unknown> => {
  try {
    return { value: await f() }
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    return { error: e.constructor.name, code: e.code, syscall: e.syscall, path: e.path }
  }
}

/** Every call on `dir`, in order, with what each gave. */
const script = async (calls: FileCalls.FileCalls, dir: string) => {
  const file = path.join(dir, "f")
  const out: Array<unknown> = []
  out.push(await outcome(() => calls.readText(file)))
  out.push(await outcome(() => calls.readText(dir)))
  out.push(await outcome(() => calls.open(path.join(dir, "missing"), "r+")))
  out.push(await outcome(() => calls.mtimeMs(path.join(dir, "missing"))))
  out.push(await outcome(() => calls.remove(path.join(dir, "missing"))))
  const appended = await calls.open(file, "a", 0o600)
  await appended.append("héllo\n")
  await appended.append("world\n")
  await appended.datasync()
  await appended.close()
  out.push(await outcome(() => calls.readText(file)))
  const handle = await calls.open(file, "r+")
  out.push(await outcome(() => handle.size()))
  await handle.write(Buffer.from("HE"), 0)
  await handle.truncate(9)
  const buffer = Buffer.alloc(4)
  await handle.read(buffer, 4, 3)
  out.push(buffer.toString("latin1"))
  await handle.sync()
  await handle.close()
  out.push(await outcome(() => calls.readText(file)))
  await calls.truncate(file, 2)
  out.push(await outcome(() => calls.readText(file)))
  out.push(typeof (await calls.mtimeMs(file)))
  out.push(fs.statSync(file).mode & 0o777)
  await calls.remove(file)
  out.push(fs.existsSync(file))
  return out
}

/** A conversation directory with a journal of two entries. */
const journaled = async (events: string) => {
  const dir = tempDir("parley-calls-")
  fs.writeFileSync(path.join(dir, Journal.EVENTS), events)
  const entry = (i: number) => ({ type: "chat_request", timestamp: "2026-11-30T00:00:00.000Z", content: `hi ${i}` })
  await Journal.append(dir, [{ at: 0, entry: entry(0) }], String(Buffer.byteLength(events)))
  await Journal.append(dir, [{ at: 1, entry: entry(1) }], String(Buffer.byteLength(events)))
  return dir
}

describe("FileCalls", () => {
  it("both ways give the same values and the same errors (class, code, syscall, path)", async () => {
    const [promised, blocking] = await Promise.all(ways.map(([, calls]) => script(calls, tempDir("parley-calls-"))))
    const paths = (o: unknown) => JSON.parse(JSON.stringify(o).replace(/\/[^"]*parley-calls-[^/"]*/g, "<dir>"))
    expect(paths(blocking)).toStrictEqual(paths(promised))
    // The script met what it meant to: a missing file, a directory read as a file, the bytes written.
    expect(promised[0]).toStrictEqual({ value: undefined })
    expect(paths(promised).slice(1, 4)).toStrictEqual([
      { error: "Error", code: "EISDIR", syscall: "read" },
      { error: "Error", code: "ENOENT", syscall: "open", path: "<dir>/missing" },
      { error: "Error", code: "ENOENT", syscall: "stat", path: "<dir>/missing" }
    ])
    expect(promised.slice(5, 10)).toStrictEqual([
      { value: "héllo\nworld\n" },
      { value: 13 },
      "llo\n",
      // "HE" over "hé": the second byte of é is left alone, and reads as a replacement character.
      { value: "HE\uFFFDllo\nwo" },
      { value: "HE" }
    ])
  })

  for (const events of [
    "[]\n",
    '[\n  {\n    "type": "chat_request",\n    "timestamp": "2026-11-29T00:00:00.000Z",\n    "content": "before"\n  }\n]\n'
  ]) {
    it(`a fold gives the same events.json either way (${events.length === 3 ? "empty" : "one entry"} before)`, async () => {
      const files = await Promise.all(
        ways.map(async ([, calls]) => {
          const dir = await journaled(events)
          expect(await Journal.fold(dir, calls)).toBe("folded")
          expect(fs.existsSync(path.join(dir, Journal.FILE))).toBe(false)
          return fs.readFileSync(path.join(dir, Journal.EVENTS), "utf8")
        })
      )
      expect(files[1]).toBe(files[0])
      expect(
        JSON.parse(files[0]!)
          .map((e: { content: string }) => e.content)
          .slice(-2)
      ).toStrictEqual(["hi 0", "hi 1"])
    })
  }

  it("a fold a crash cut short (its record written, half its tail) is finished the same either way", async () => {
    const files = await Promise.all(
      ways.map(async ([, calls]) => {
        const dir = await journaled("[]\n")
        // What a fold killed mid-write leaves: its record in the journal, part of the tail in events.json.
        fs.appendFileSync(path.join(dir, Journal.FILE), `${JSON.stringify({ fold: { base: "3", cut: 0 } })}\n`)
        fs.writeFileSync(path.join(dir, Journal.EVENTS), '[\n  {\n    "type": "chat_req')
        expect(await Journal.fold(dir, calls)).toBe("folded")
        return fs.readFileSync(path.join(dir, Journal.EVENTS), "utf8")
      })
    )
    expect(files[1]).toBe(files[0])
    expect(JSON.parse(files[0]!).map((e: { content: string }) => e.content)).toStrictEqual(["hi 0", "hi 1"])
  })

  it("the blocking fold and release never let the event loop run meanwhile; the promised ones do", async () => {
    const ran: Record<string, boolean> = {}
    for (const [name, calls] of ways) {
      const dir = await journaled("[]\n")
      const lock = path.join(dir, "jp-c1.lock")
      expect(await FileLock.acquire(lock)).toStrictEqual({ _tag: "Acquired" })
      let looped = false
      setImmediate(() => {
        looped = true
      })
      await Journal.fold(dir, calls)
      await FileLock.release(lock, calls)
      ran[name] = looped
      expect(fs.existsSync(lock)).toBe(false)
      expect(fs.existsSync(path.join(dir, Journal.FILE))).toBe(false)
    }
    expect(ran).toStrictEqual({ promised: true, blocking: false })
  })
})
