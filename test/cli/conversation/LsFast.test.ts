// `conversation ls` without Effect (src/cli/conversation/LsFast.ts): in its common case it gathers what the
// Effect path gathers (`layers/host/Listing.ts` with the file store), damaged and archived conversations and a
// failed notification included; a listed conversation with a host socket, or where a killed asker may have
// left a question, is declined with nothing taken (the second: test/cli/Ask.test.ts, kill -9 of the asker). The
// built command's two paths: test/cli/StartupPaths.test.ts.
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { gather } from "../../../src/cli/conversation/LsFast.ts"
import * as HostPath from "../../../src/layers/host/HostPath.ts"
import * as Listing from "../../../src/layers/host/Listing.ts"
import * as Spool from "../../../src/layers/notify/SpoolDir.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import { bundle } from "../../support/Cli.ts"
import { repoRoot, tempDir } from "../../support/Fixtures.ts"

const dir = tempDir("parley-lsfast-")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const corpus = path.join(repoRoot, "test", "fixtures", "corpus", "jp", "conversations")

/** A storage with two conversations, one archived, one damaged. */
const storage = (): string => {
  const at = fs.mkdtempSync(path.join(dir, "s-"))
  const conversations = path.join(at, "conversations")
  for (const [name, into] of [
    ["17758406187-missing-date-in-version-string", conversations],
    ["17738348630-workspace-sanitization-strategy", conversations],
    ["17727484633-preventing-rfd-summary-regeneration-churn", path.join(conversations, ".archive")]
  ] as const)
    fs.cpSync(path.join(corpus, name), path.join(into, name), { recursive: true })
  const damaged = path.join(conversations, "17700000000-damaged")
  fs.mkdirSync(damaged)
  fs.writeFileSync(path.join(damaged, "events.json"), "{ not json")
  fs.writeFileSync(path.join(damaged, "metadata.json"), "{}")
  return at
}

/** A failed notification of conversation `id`, as the notifier records one. */
const failNotification = (at: string, id: string): void => {
  const errors = Spool.errorsDir(Spool.dirOf(at))
  fs.mkdirSync(errors, { recursive: true, mode: 0o700 })
  fs.writeFileSync(path.join(errors, `${id}.txt`), "webhook: 503")
}

/** What the Effect path gathers. */
const withEffect = (at: string, archived: boolean) =>
  Effect.runPromise(Listing.gather(at, archived).pipe(Effect.provide(FileConversationStore.layer({ storageDir: at }))))

describe("conversation ls without Effect", () => {
  for (const archived of [false, true]) {
    it(`gathers what the Effect path gathers (archived: ${archived})`, async () => {
      const at = storage()
      failNotification(at, "17758406187")
      const plain = await gather(at, archived)
      failNotification(at, "17758406187")
      const effect = await withEffect(at, archived)
      expect(plain).toBeDefined()
      expect(plain!.rows.length).toBe(archived ? 3 : 2)
      expect(plain!.damaged.map((d) => d.id)).toStrictEqual(["17700000000"])
      expect(plain!.failed).toStrictEqual(new Map([["17758406187", "webhook: 503"]]))
      expect(plain).toStrictEqual(effect)
      // Each took the failure once.
      expect(fs.readdirSync(Spool.errorsDir(Spool.dirOf(at)))).toStrictEqual([])
    })
  }

  it("declines, taking nothing, when a listed conversation has a host socket", async () => {
    const at = storage()
    failNotification(at, "17758406187")
    const socket = HostPath.of(at, "17738348630")
    fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 })
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(socket, resolve))
    try {
      expect(await gather(at, false)).toBeUndefined()
      expect(fs.readdirSync(Spool.errorsDir(Spool.dirOf(at)))).toStrictEqual(["17758406187.txt"])
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
    // Without it, listed.
    expect(await gather(at, false)).toBeDefined()
  })

  it("Ctrl-C ends a listing by the signal, even one blocked on a read (a FIFO in place of events.json)", async () => {
    const at = storage()
    const blocked = path.join(at, "conversations", "17000000001-fifo")
    fs.mkdirSync(blocked)
    fs.copyFileSync(
      path.join(at, "conversations", "17758406187-missing-date-in-version-string", "metadata.json"),
      path.join(blocked, "metadata.json")
    )
    execFileSync("mkfifo", [path.join(blocked, "events.json")])
    const ls = spawn(process.execPath, [bundle, "--storage", at, "conversation", "ls"], { stdio: "ignore" })
    const ended = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      ls.once("exit", (code, signal) => resolve([code, signal]))
    )
    // Blocked for good on the FIFO: never listed before the signal.
    await new Promise((resolve) => setTimeout(resolve, 500))
    ls.kill("SIGINT")
    const bound = setTimeout(() => ls.kill("SIGKILL"), 10_000)
    expect(await ended).toStrictEqual([null, "SIGINT"])
    clearTimeout(bound)
  })
})
