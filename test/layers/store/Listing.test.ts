/**
 * `conversation ls` from the sidecar index (docs/benchmarks.md): a row is reused only
 * while every file it came from is unchanged; damage is remembered (not
 * re-parsed) until the files change; the order is by the time each
 * conversation was last active, whatever its timestamp's form.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Listing from "../../../src/layers/store/Listing.ts"
import { tempDir } from "../../support/Fixtures.ts"

const entry = (timestamp: string, type: string, extra: Record<string, unknown> = {}) => ({ timestamp, type, ...extra })
const pretty = (entries: ReadonlyArray<object>) =>
  entries.length === 0
    ? "[]\n"
    : "[\n" + entries.map((e) => "  " + JSON.stringify(e, null, 2).replaceAll("\n", "\n  ")).join(",\n") + "\n]\n"

/** Writes one conversation directory (base_config.json, so the first entry may be anything). */
const write = (
  conversations: string,
  name: string,
  lastActive: string,
  entries: ReadonlyArray<object>,
  title = name
) => {
  const dir = path.join(conversations, name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "metadata.json"),
    JSON.stringify({ title, last_activated_at: lastActive }, null, 2) + "\n"
  )
  fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
  fs.writeFileSync(path.join(dir, "events.json"), pretty(entries))
  return dir
}

const oneTurn = [
  entry("2026-03-01 10:00:00.0", "turn_start"),
  entry("2026-03-01 10:00:00.1", "chat_request", { content: "hi" })
]
const indexStat = (conversations: string) => {
  const st = fs.statSync(path.join(conversations, Listing.INDEX))
  return `${st.ino}:${st.mtimeMs}`
}

describe("Listing.list", () => {
  it("reuses a row only while its files are unchanged", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    const dir = write(conversations, "17000000001-a", "2026-03-01 10:00:00.0", oneTurn, "First title")
    const first = await Listing.list(conversations, { archived: false })
    expect(first.conversations.map((c) => [c.title, c.events, c.incomplete])).toStrictEqual([
      ["First title", 2, { state: "pending-llm-response" }]
    ])
    const stamp = indexStat(conversations)
    // Unchanged: served from the index, which is not rewritten.
    expect((await Listing.list(conversations, { archived: false })).conversations).toStrictEqual(first.conversations)
    expect(indexStat(conversations)).toBe(stamp)
    // metadata.json changed (the same size): the new title.
    fs.writeFileSync(
      path.join(dir, "metadata.json"),
      JSON.stringify({ title: "Other title", last_activated_at: "2026-03-01 10:00:00.0" }, null, 2) + "\n"
    )
    expect((await Listing.list(conversations, { archived: false })).conversations.map((c) => c.title)).toStrictEqual([
      "Other title"
    ])
    // events.json replaced: the new count and state.
    fs.writeFileSync(
      path.join(dir, "events.json.tmp"),
      pretty([...oneTurn, entry("2026-03-01 10:00:01.0", "chat_response", { message: "hello" })])
    )
    fs.renameSync(path.join(dir, "events.json.tmp"), path.join(dir, "events.json"))
    expect(
      (await Listing.list(conversations, { archived: false })).conversations.map((c) => [c.events, c.incomplete])
    ).toStrictEqual([[3, null]])
    // A journal line appended beside it (a turn still running): counted.
    const line = {
      at: 3,
      base: String(fs.statSync(path.join(dir, "events.json")).size),
      entry: entry("2026-03-01 10:00:02.0", "turn_start")
    }
    fs.writeFileSync(path.join(dir, "events.json.journal"), JSON.stringify(line) + "\n")
    expect((await Listing.list(conversations, { archived: false })).conversations.map((c) => c.events)).toStrictEqual([
      4
    ])
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("reports a damaged conversation on every listing without re-reading it, and lists it once repaired", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-good", "2026-03-01 10:00:00.0", oneTurn)
    const bad = write(conversations, "17000000002-bad", "2026-03-01 10:00:00.0", oneTurn)
    fs.writeFileSync(path.join(bad, "events.json"), '[\n  {\n    "type": 5\n  }\n]\n')
    const first = await Listing.list(conversations, { archived: false })
    expect(first.conversations.map((c) => c.id)).toStrictEqual(["17000000001"])
    expect(first.damaged.map((d) => [d.id, d.reason.replace(bad, "<dir>")])).toStrictEqual([
      ["17000000002", '<dir>/events.json: entry 0: field "type" must be a string, got number 5']
    ])
    const stamp = indexStat(conversations)
    expect(await Listing.list(conversations, { archived: false })).toStrictEqual(first)
    expect(indexStat(conversations)).toBe(stamp) // remembered, so nothing was decoded and nothing rewritten
    fs.writeFileSync(path.join(bad, "events.json"), pretty(oneTurn))
    const repaired = await Listing.list(conversations, { archived: false })
    expect([repaired.conversations.map((c) => c.id).sort(), repaired.damaged]).toStrictEqual([
      ["17000000001", "17000000002"],
      []
    ])
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("orders by last activity (fractions of any length, RFC 3339 offsets), then by the higher id", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-a", "2026-03-01 10:00:00.65", [])
    write(conversations, "17000000002-b", "2026-03-01 10:00:00.7", [])
    write(conversations, "17000000003-c", "2026-03-01 09:00:00.0", [])
    write(conversations, "17000000004-d", "2026-03-01T09:30:00-01:00", []) // 10:30 UTC: the latest
    write(conversations, "17000000005-e", "2026-03-01 10:00:00.650", []) // ties with a: the higher id first
    write(conversations, "17000000006-f", "2026-03-01 09:00:00", []) // ties with c
    write(conversations, "17000000007-g", "2026-03-01T08:00:00Z", []) // the largest string
    write(conversations, "17000000008-h", "1969-12-31 23:59:59.5", []) // before the epoch: the earliest
    for (let round = 0; round < 2; round++) {
      // from the files, then from the index
      const { conversations: rows } = await Listing.list(conversations, { archived: false })
      expect(rows.map((c) => c.id.slice(-1))).toStrictEqual(["4", "2", "5", "1", "6", "3", "7", "8"])
    }
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("an index it cannot read (damaged, truncated, another version, wrong shapes) is rebuilt from the files", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-a", "2026-03-01 10:00:00.0", oneTurn)
    write(conversations, "17000000002-b", "2026-03-01 11:00:00.0", [])
    await Listing.list(conversations, { archived: false })
    const good = fs.readFileSync(path.join(conversations, Listing.INDEX), "utf8")
    const stored = JSON.parse(good) as {
      version: number
      keys: Array<unknown>
      stamps: Array<unknown>
      cells: Array<unknown>
    }
    const hostile = [
      "{not json",
      good.slice(0, good.length / 2),
      "",
      "null",
      "[]",
      JSON.stringify({ version: 2, rows: { "17000000001-a": { stamp: "x", summary: {} } } }),
      JSON.stringify({ ...stored, keys: [1, 2] }), // not names
      JSON.stringify({ ...stored, keys: [stored.keys[0], stored.keys[0]] }), // one name twice
      JSON.stringify({ ...stored, stamps: stored.stamps.slice(1) }), // columns that do not line up
      JSON.stringify({
        ...stored,
        cells: stored.cells.map((c) => (typeof c === "number" ? "many" : typeof c === "string" ? 5 : c))
      }),
      JSON.stringify({
        ...stored,
        cells: stored.cells.map((c) => (c !== null && typeof c === "object" ? { state: 1 } : c))
      }),
      JSON.stringify({ ...stored, keys: [...stored.keys].reverse() }) // rows swapped: each row's stamp no longer matches
    ]
    for (const text of hostile) {
      fs.writeFileSync(path.join(conversations, Listing.INDEX), text)
      const listing = await Listing.list(conversations, { archived: false })
      expect([
        text,
        listing.conversations.map((c) => [c.id, c.title, c.events, c.incomplete]),
        listing.damaged
      ]).toStrictEqual([
        text,
        [
          ["17000000002", "17000000002-b", 0, null],
          ["17000000001", "17000000001-a", 2, { state: "pending-llm-response" }]
        ],
        []
      ])
      // Rebuilt: the next listing is served from it, and leaves it as it is.
      const stamp = indexStat(conversations)
      await Listing.list(conversations, { archived: false })
      expect(indexStat(conversations)).toBe(stamp)
    }
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("rows carry the provider view's estimated tokens (compactions applied), kept in the index (docs/cli.md#commands)", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    const big = "x".repeat(4000)
    const b64 = (text: string) => Buffer.from(text).toString("base64")
    const turns = [
      entry("2026-03-01 10:00:00.0", "turn_start"),
      entry("2026-03-01 10:00:00.1", "chat_request", { content: "read it" }),
      entry("2026-03-01 10:00:00.2", "tool_call_request", { id: "c", name: "read", arguments: {} }),
      entry("2026-03-01 10:00:00.3", "tool_call_response", { id: "c", content: b64(big), is_error: false }),
      entry("2026-03-01 10:00:00.4", "chat_response", { message: "done" })
    ]
    write(conversations, "17000000001-plain", "2026-03-01 10:00:00.0", turns)
    write(conversations, "17000000002-compacted", "2026-03-01 11:00:00.0", [
      ...turns,
      {
        type: "compaction",
        timestamp: "2026-03-01 12:00:00.0",
        from_turn: 0,
        to_turn: 0,
        tool_calls: { policy: "strip", request: true, response: true }
      }
    ])
    const first = await Listing.list(conversations, { archived: false })
    // "read it" + "read{}" + 4,000 + "done" = 4,017 characters → 1,005 tokens; stripped, "[compacted] read: success"
    // stands for the 4,000: 42 characters → 11 tokens.
    expect(first.conversations.map((c) => [c.id, c.tokens])).toStrictEqual([
      ["17000000002", 11],
      ["17000000001", 1005]
    ])
    // Served from the index: a tokens cell edited by hand (files unchanged) is what a warm listing shows.
    const index = path.join(conversations, Listing.INDEX)
    const stored = JSON.parse(fs.readFileSync(index, "utf8")) as { version: number; cells: Array<unknown> }
    expect(stored.version).toBe(10)
    stored.cells[11 + 7] = 4242
    fs.writeFileSync(index, JSON.stringify(stored))
    expect((await Listing.list(conversations, { archived: false })).conversations.map((c) => c.tokens)).toStrictEqual([
      11, 4242
    ])
    // An index of the version before the last run's error is rebuilt from the files.
    fs.writeFileSync(
      index,
      JSON.stringify({ ...stored, version: 9, cells: stored.cells.filter((_, i) => i % 11 !== 10) })
    )
    expect((await Listing.list(conversations, { archived: false })).conversations.map((c) => c.tokens)).toStrictEqual([
      11, 1005
    ])
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("a hand-edited index out of listing order lists in order", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    for (let i = 1; i <= 5; i++) write(conversations, `1700000000${i}-c`, `2026-03-01 10:00:0${i}.0`, [])
    await Listing.list(conversations, { archived: false })
    const file = path.join(conversations, Listing.INDEX)
    const stored = JSON.parse(fs.readFileSync(file, "utf8")) as {
      keys: Array<string>
      stamps: Array<number>
      cells: Array<unknown>
    }
    // Rows rotated by one, each with its own stamp and cells: all valid, out of order.
    const rotate = <A>(xs: Array<A>, n: number) => [...xs.slice(n), ...xs.slice(0, n)]
    const per = { stamps: stored.stamps.length / 5, cells: stored.cells.length / 5 }
    fs.writeFileSync(
      file,
      JSON.stringify({
        ...stored,
        keys: rotate(stored.keys, 1),
        stamps: rotate(stored.stamps, per.stamps),
        cells: rotate(stored.cells, per.cells)
      })
    )
    const stamp = indexStat(conversations)
    expect(
      (await Listing.list(conversations, { archived: false })).conversations.map((c) => c.id.slice(-1))
    ).toStrictEqual(["5", "4", "3", "2", "1"])
    expect(indexStat(conversations)).toBe(stamp) // nothing decoded, nothing gone: left as it is
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("keeps the archive's rows while listing without it, and merges changed rows into their place", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-a", "2026-03-01 10:00:01.0", [])
    write(conversations, "17000000002-b", "2026-03-01 10:00:02.0", [])
    write(path.join(conversations, ".archive"), "17000000003-c", "2026-03-01 10:00:03.0", [])
    const ids = async (archived: boolean) =>
      (await Listing.list(conversations, { archived })).conversations.map(
        (c) => `${c.id.slice(-1)}${c.archived ? "*" : ""}`
      )
    expect(await ids(true)).toStrictEqual(["3*", "2", "1"])
    const stamp = indexStat(conversations)
    expect(await ids(false)).toStrictEqual(["2", "1"])
    expect(await ids(true)).toStrictEqual(["3*", "2", "1"])
    expect(indexStat(conversations)).toBe(stamp)
    // One conversation active again: decoded, and merged to the front.
    write(conversations, "17000000001-a", "2026-03-01 10:00:09.0", [])
    expect(await ids(false)).toStrictEqual(["1", "2"])
    expect(await ids(true)).toStrictEqual(["1", "3*", "2"])
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("sees a change to base_config.json alone: damage it causes is reported, and forgotten once it is repaired", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    const dir = write(conversations, "17000000001-a", "2026-03-01 10:00:00.0", oneTurn)
    const base = path.join(dir, "base_config.json")
    const listed = [["17000000001", 2]]
    const ids = async () => {
      const { conversations: rows, damaged } = await Listing.list(conversations, { archived: false })
      // The JSON error's wording after the file is V8's.
      return [
        rows.map((c) => [c.id, c.events]),
        damaged.map((d) => [d.id, d.reason.replace(dir, "<dir>").replace(/(: invalid JSON).*/, "$1")])
      ]
    }
    expect(await ids()).toStrictEqual([listed, []])
    // Damaged in place (its other files untouched): what `load` and a cold listing refuse.
    fs.writeFileSync(base, "{ broken\n")
    const broken = [[], [["17000000001", "<dir>/base_config.json: invalid JSON"]]]
    expect(await ids()).toStrictEqual(broken)
    expect(await ids()).toStrictEqual(broken)
    // Repaired as `conversation check` asks: listed again.
    fs.writeFileSync(base, "{}\n")
    expect(await ids()).toStrictEqual([listed, []])
    // Removed: the first entry is not the packed base config JP's legacy layout needs.
    fs.rmSync(base)
    expect((await ids())[1]).toStrictEqual([
      [
        "17000000001",
        "<dir>/events.json: entry 0: without base_config.json the first entry must be the packed base config_delta (JP's legacy layout)"
      ]
    ])
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("remembered damage names the conversation where it is now, after the storage directory moved", async () => {
    const root = tempDir()
    const conversations = path.join(root, "old", "conversations")
    const bad = write(conversations, "17000000002-bad", "2026-03-01 10:00:00.0", oneTurn)
    fs.writeFileSync(path.join(bad, "events.json"), '[\n  {\n    "type": 5\n  }\n]\n')
    const reason = (dir: string) => `${dir}/events.json: entry 0: field "type" must be a string, got number 5`
    expect((await Listing.list(conversations, { archived: false })).damaged.map((d) => d.reason)).toStrictEqual([
      reason(bad)
    ])
    fs.renameSync(path.join(root, "old"), path.join(root, "new"))
    const moved = path.join(root, "new", "conversations")
    const warm = await Listing.list(moved, { archived: false })
    expect(warm.damaged.map((d) => [d.path, d.reason])).toStrictEqual([
      [path.join(moved, "17000000002-bad"), reason(path.join(moved, "17000000002-bad"))]
    ])
    fs.rmSync(path.join(moved, Listing.INDEX))
    expect(await Listing.list(moved, { archived: false })).toStrictEqual(warm)
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("one id twice (active and archived) with the same last activity lists in one order, warm or cold", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    const archive = path.join(conversations, ".archive")
    const at = "2026-03-01 10:00:00.0"
    write(conversations, "17000000001-a", at, oneTurn)
    write(archive, "17000000001-a", at, oneTurn)
    write(conversations, "17000000002-b", at, [])
    const bad = [write(conversations, "17000000003-c", at, []), write(archive, "17000000003-c", at, [])]
    for (const dir of bad) fs.writeFileSync(path.join(dir, "events.json"), "{")
    const shown = async () => {
      const { conversations: rows, damaged } = await Listing.list(conversations, { archived: true })
      return [
        rows.map((c) => `${c.id.slice(-1)}${c.archived ? "*" : ""}:${c.events}`),
        damaged.map((d) => path.relative(conversations, d.path))
      ]
    }
    const cold = async () => {
      fs.rmSync(path.join(conversations, Listing.INDEX), { force: true })
      return shown()
    }
    expect(await cold()).toStrictEqual([
      ["2:0", "1:2", "1*:2"],
      ["17000000003-c", path.join(".archive", "17000000003-c")]
    ])
    // The active copies change (metadata untouched: the same last activity): decoded again, and merged in.
    write(conversations, "17000000001-a", at, [...oneTurn, entry("2026-03-01 10:00:01.0", "turn_start")])
    fs.writeFileSync(path.join(bad[0]!, "events.json"), "[")
    const warm = await shown()
    expect(warm).toStrictEqual([
      ["2:0", "1:3", "1*:2"],
      ["17000000003-c", path.join(".archive", "17000000003-c")]
    ])
    expect(await cold()).toStrictEqual(warm)
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("reports a conversation whose directory name does not open it (not UTF-8), never drops it", async (ctx) => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-a", "2026-03-01 10:00:00.0", [])
    // "17000000002-caf\xe9": Latin-1, which node reads back as U+FFFD, a name that opens nothing.
    const name = Buffer.concat([Buffer.from(path.join(conversations, "17000000002-caf")), Buffer.from([0xe9])])
    try {
      fs.mkdirSync(name)
    } catch {
      return ctx.skip("this file system takes only UTF-8 names")
    }
    fs.writeFileSync(
      Buffer.concat([name, Buffer.from("/metadata.json")]),
      JSON.stringify({ last_activated_at: "2026-03-01 10:00:00.0" }) + "\n"
    )
    fs.writeFileSync(Buffer.concat([name, Buffer.from("/events.json")]), "[]\n")
    for (let round = 0; round < 2; round++) {
      const listing = await Listing.list(conversations, { archived: false })
      expect([
        listing.conversations.map((c) => c.id),
        listing.damaged.map((d) => [d.id, path.basename(d.path), d.reason.replace(conversations, "<c>")])
      ]).toStrictEqual([
        ["17000000001"],
        [
          [
            "17000000002",
            "17000000002-caf\ufffd",
            "<c>/17000000002-caf\ufffd: listed under a name that does not open it (a name that is not UTF-8?)"
          ]
        ]
      ])
    }
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("a warm listing equals a cold one through a long run of changes (seeded), with or without the archive", async () => {
    const root = tempDir()
    let conversations = path.join(root, "s0", "conversations")
    const archive = () => path.join(conversations, ".archive")
    let seed = 16
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    }
    /** Atomic, as JP and parley write (a new inode per write: the stamp sees every change). */
    const put = (file: string, text: string) => {
      fs.writeFileSync(file + ".tmp", text)
      fs.renameSync(file + ".tmp", file)
    }
    const dirs = () => [
      ...fs
        .readdirSync(conversations)
        .filter((n) => /^\d/.test(n))
        .map((n) => path.join(conversations, n)),
      ...(fs.existsSync(archive()) ? fs.readdirSync(archive()).map((n) => path.join(archive(), n)) : [])
    ]
    const any = () => dirs()[rand(dirs().length)]
    const at = () => `2026-03-01 10:00:0${rand(3)}.0` // few values: ties
    const changes: ReadonlyArray<() => void> = [
      () =>
        void write(
          rand(2) === 0 ? conversations : archive(),
          `1700000000${rand(6)}-${"abc"[rand(3)]}`,
          at(),
          rand(2) === 0 ? [] : oneTurn
        ),
      () => {
        const d = any()
        if (d)
          put(
            path.join(d, "events.json"),
            pretty([...oneTurn, entry("2026-03-01 10:00:01.0", "chat_response", { message: "x".repeat(rand(3)) })])
          )
      },
      () => {
        const d = any()
        if (d)
          put(
            path.join(d, "metadata.json"),
            JSON.stringify({ title: `t${rand(9)}`, last_activated_at: at() }, null, 2) + "\n"
          )
      },
      () => {
        const d = any()
        if (d) put(path.join(d, "base_config.json"), rand(2) === 0 ? "{ broken" : "{}\n")
      },
      () => {
        const d = any()
        if (d) put(path.join(d, "events.json"), rand(2) === 0 ? "[" : pretty(oneTurn))
      },
      () => {
        const d = any()
        if (d) fs.rmSync(path.join(d, "base_config.json"), { force: true })
      },
      () => {
        const d = any()
        if (d)
          fs.writeFileSync(
            path.join(d, "events.json.journal"),
            JSON.stringify({
              at: 2,
              base: String(fs.statSync(path.join(d, "events.json")).size),
              entry: entry("2026-03-01 10:00:02.0", "turn_start")
            }) + "\n"
          )
      },
      () => {
        const d = any()
        if (d) fs.rmSync(d, { recursive: true, force: true })
      },
      () => {
        // archived, or back (JP replaces the target)
        const d = any()
        if (d === undefined) return
        const to =
          path.dirname(d) === conversations
            ? path.join(archive(), path.basename(d))
            : path.join(conversations, path.basename(d))
        fs.mkdirSync(path.dirname(to), { recursive: true })
        fs.rmSync(to, { recursive: true, force: true })
        fs.renameSync(d, to)
      },
      () => {
        // copied into the archive
        const d = any()
        const to = d === undefined ? undefined : path.join(archive(), path.basename(d))
        if (d !== undefined && to !== d) fs.cpSync(d, to!, { recursive: true, force: true, preserveTimestamps: true })
      },
      () => {
        // a new title: renamed
        const d = any()
        const to =
          d === undefined
            ? undefined
            : path.join(path.dirname(d), `${path.basename(d).split("-")[0]}-${"xyz"[rand(3)]}`)
        if (d !== undefined && !fs.existsSync(to!)) fs.renameSync(d, to!)
      },
      () => {
        // the storage directory moved
        const next = path.join(root, `s${rand(1000)}`, "conversations")
        if (fs.existsSync(path.dirname(next))) return
        fs.renameSync(path.dirname(conversations), path.dirname(next))
        conversations = next
      }
    ]
    const index = () => path.join(conversations, Listing.INDEX)
    write(conversations, "17000000001-a", at(), oneTurn)
    for (let step = 0; step < 300; step++) {
      changes[rand(changes.length)]!()
      const archived = rand(2) === 0
      const warm = await Listing.list(conversations, { archived })
      const kept = fs.readFileSync(index())
      fs.rmSync(index())
      const cold = await Listing.list(conversations, { archived })
      expect([step, warm]).toStrictEqual([step, cold])
      fs.writeFileSync(index(), kept) // the warm chain goes on from the warm listing's index
    }
    fs.rmSync(root, { recursive: true, force: true })
  })

  it("removes index temp files a killed listing left, and no one else's", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-a", "2026-03-01 10:00:00.0", [])
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8"
    }).stdout
    const orphan = path.join(conversations, `${Listing.INDEX}.${dead}.abc123.tmp`)
    const live = path.join(conversations, `${Listing.INDEX}.${process.ppid}.abc123.tmp`) // a listing still writing
    const other = path.join(conversations, `notes.${dead}.abc123.tmp`)
    for (const file of [orphan, live, other]) fs.writeFileSync(file, "{")
    await Listing.list(conversations, { archived: false })
    expect([orphan, live, other].map((f) => fs.existsSync(f))).toStrictEqual([false, true, true])
    fs.rmSync(root, { recursive: true, force: true })
  })
})
