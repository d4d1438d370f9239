/**
 * `conversation ls` of a storage directory it cannot write (docs/benchmarks.md: a
 * read-only mount, or another user's project): it lists from the files, with
 * no index, whatever a killed listing left behind. The read-only file system
 * is made exact by wrapping the writes of node:fs and node:fs/promises (the
 * tests may run as root, whom permissions do not stop).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Listing from "../../../src/layers/store/Listing.ts"
import { tempDir } from "../../support/Fixtures.ts"

/** Writes under `root` fail as on a read-only mount (EROFS). */
const readOnly = vi.hoisted(() => ({ root: undefined as string | undefined }))

const refuse = (op: string, target: unknown): void => {
  const file = String(target)
  if (readOnly.root !== undefined && file.startsWith(readOnly.root)) {
    throw Object.assign(new Error(`EROFS: read-only file system, ${op} '${file}'`), { code: "EROFS" })
  }
}

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>()
  const guarded = <F extends (...args: Array<never>) => unknown>(op: string, f: F): F =>
    ((...args: Parameters<F>) => {
      refuse(op, args[0])
      return f(...args)
    }) as F
  const writes = {
    rmSync: guarded("rm", real.rmSync),
    unlinkSync: guarded("unlink", real.unlinkSync),
    mkdirSync: guarded("mkdir", real.mkdirSync),
    writeFileSync: guarded("open", real.writeFileSync),
    renameSync: guarded("rename", real.renameSync)
  }
  return { ...real, ...writes, default: { ...real, ...writes } }
})

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>()
  const guarded = <F extends (...args: Array<never>) => Promise<unknown>>(op: string, f: F): F =>
    (async (...args: Parameters<F>) => {
      refuse(op, args[0])
      return f(...args)
    }) as F
  const open = (async (
    file: Parameters<typeof real.open>[0],
    flags?: Parameters<typeof real.open>[1],
    mode?: Parameters<typeof real.open>[2]
  ) => {
    if (flags !== undefined && flags !== "r") refuse("open", file)
    return real.open(file, flags, mode)
  }) as typeof real.open
  const writes = {
    open,
    rm: guarded("rm", real.rm),
    unlink: guarded("unlink", real.unlink),
    mkdir: guarded("mkdir", real.mkdir),
    writeFile: guarded("open", real.writeFile),
    rename: guarded("rename", real.rename),
    link: guarded("link", real.link)
  }
  return { ...real, ...writes, default: { ...real, ...writes } }
})

const write = (conversations: string, name: string, lastActive: string) => {
  const dir = path.join(conversations, name)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(
    path.join(dir, "metadata.json"),
    JSON.stringify({ title: name, last_activated_at: lastActive }, null, 2) + "\n"
  )
  fs.writeFileSync(path.join(dir, "base_config.json"), "{}\n")
  fs.writeFileSync(path.join(dir, "events.json"), "[]\n")
}

describe("Listing.list on a storage directory it cannot write", () => {
  it("lists from the files, leaving a killed listing's temp file it cannot remove, and writes no index", async () => {
    const root = tempDir()
    const conversations = path.join(root, "conversations")
    write(conversations, "17000000001-a", "2026-03-01 10:00:01.0")
    write(conversations, "17000000002-b", "2026-03-01 10:00:02.0")
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8"
    }).stdout
    const orphan = path.join(conversations, `${Listing.INDEX}.${dead}.abc123.tmp`)
    fs.writeFileSync(orphan, "{")
    readOnly.root = root
    try {
      for (let round = 0; round < 2; round++) {
        const listing = await Listing.list(conversations, { archived: true })
        expect([listing.conversations.map((c) => c.title), listing.damaged]).toStrictEqual([
          ["17000000002-b", "17000000001-a"],
          []
        ])
      }
    } finally {
      readOnly.root = undefined
    }
    expect(fs.readdirSync(conversations).sort()).toStrictEqual([
      path.basename(orphan),
      "17000000001-a",
      "17000000002-b"
    ])
    fs.rmSync(root, { recursive: true, force: true })
  })
})
