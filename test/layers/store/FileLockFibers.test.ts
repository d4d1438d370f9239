/**
 * Fibers of one process racing for one lock. The lock file names a process,
 * so within a process only {@link FileLock}'s own record of what it took
 * tells a lock just taken by a sibling fiber from one a dead namesake left.
 * A slow `rm` (wrapped node:fs/promises, once) holds a taker between linking
 * the lock into place and recording it as taken, or a releaser between
 * forgetting the lock and removing it: a sibling must see the lock held, and
 * a release must never remove a sibling's new lock.
 */
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as FileLock from "../../../src/layers/store/FileLock.ts"
import { tempDir } from "../../support/Fixtures.ts"

/**
 * How long the next `rm` of a lock writer's temp file that was linked into place (the winner's:
 * a loser's link fails), or of a lock, waits before it runs: once, then 0 again.
 */
const slow = vi.hoisted(() => ({ tempMs: 0, lockMs: 0, linked: new Set<string>() }))

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>()
  const link = (async (...args: Parameters<typeof real.link>) => {
    await real.link(...args)
    slow.linked.add(String(args[0]))
  }) as typeof real.link
  const rm = (async (...args: Parameters<typeof real.rm>) => {
    const file = String(args[0])
    const temp = file.endsWith(".tmp") && slow.linked.delete(file)
    const ms = temp ? slow.tempMs : file.endsWith(".lock") ? slow.lockMs : 0
    if (temp) slow.tempMs = 0
    if (file.endsWith(".lock")) slow.lockMs = 0
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
    return real.rm(...args)
  }) as typeof real.rm
  return { ...real, link, rm, default: { ...real, link, rm } }
})

const lockIn = () => path.join(tempDir(), "locks", "jp-c1.lock")

describe("FileLock within one process", () => {
  it("two fibers taking a free lock: exactly one gets it, though the winner is slow to record it", async () => {
    slow.tempMs = 40
    try {
      const file = lockIn()
      const results = await Promise.all(Array.from({ length: 6 }, () => FileLock.acquire(file)))
      expect(results.filter((r) => r._tag === "Acquired").length).toBe(1)
      expect(results.filter((r) => r._tag === "Held").map((r) => (r._tag === "Held" ? r.pid : 0))).toEqual(
        Array(5).fill(process.pid)
      )
      await FileLock.release(file)
      expect((await FileLock.acquire(file))._tag).toBe("Acquired")
      await FileLock.release(file)
    } finally {
      slow.tempMs = 0
    }
  })

  it("a fiber taking the lock while another releases it, slowly: it waits for the release and takes the lock, never both", async () => {
    slow.lockMs = 40
    try {
      const file = lockIn()
      expect((await FileLock.acquire(file))._tag).toBe("Acquired")
      const [, taken] = await Promise.all([FileLock.release(file), FileLock.acquire(file)])
      expect(taken._tag).toBe("Acquired")
      expect(await FileLock.heldLive(file)).toBe(true)
      await FileLock.release(file)
      expect(await FileLock.heldLive(file)).toBe(false)
    } finally {
      slow.lockMs = 0
    }
  })

  it("held and taken in turns by many fibers: never two at once", async () => {
    const file = lockIn()
    let inside = 0
    let most = 0
    let taken = 0
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let round = 0; round < 25; round++) {
          if ((await FileLock.acquire(file))._tag !== "Acquired") continue
          inside++
          taken++
          most = Math.max(most, inside)
          await new Promise((resolve) => setImmediate(resolve))
          inside--
          await FileLock.release(file)
        }
      })
    )
    expect(most).toBe(1)
    expect(taken).toBeGreaterThan(0)
  })
})
