// Runs beyond the terminal (docs/questions-and-approvals.md#runs-beyond-the-terminal): background runs' logs (`run/detached-*.log`) do not pile up:
// each new background run sweeps the ones older than a week, nothing else.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { sweepLogs } from "../../../src/layers/host/DetachedRun.ts"

describe("background run logs", () => {
  it("a sweep removes the logs older than 7 days and keeps newer logs and every other file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-logs-"))
    const now = Date.now()
    const file = (name: string, ageDays: number) => {
      fs.writeFileSync(path.join(dir, name), "x")
      const t = new Date(now - ageDays * 86_400_000)
      fs.utimesSync(path.join(dir, name), t, t)
    }
    file("detached-1-aa.log", 8)
    file("detached-2-bb.log", 6)
    file("17956994091.sock.txt", 30)
    file("detached-3-cc.txt", 30)
    sweepLogs(dir, now)
    expect(fs.readdirSync(dir).sort()).toStrictEqual(["17956994091.sock.txt", "detached-2-bb.log", "detached-3-cc.txt"])
    sweepLogs(path.join(dir, "missing"), now)
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
