/**
 * `conversation print --output PATH` writes INTO the path a person named
 * (docs/security.md#other-users-on-the-machine): a symlink's target (the link kept), a FIFO's reader, a
 * character device left a character device, our own stdout as it is (a `>>`
 * redirect appends), and a clear exit 1 for a directory or a socket. The
 * device is one made for the test in a temp dir (`mknod`, as root), never
 * the machine's own `/dev/null`.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { copyToTemp, fixtureCorpus } from "../support/Fixtures.ts"

const ID = "17738399468"
const storage = copyToTemp(fixtureCorpus.dir, "parley-output-")
const dir = fs.mkdtempSync(path.join(storage, "out-"))
const print = (output: string) => runParley(["conversation", "print", ID, "--storage", storage, "--output", output])
const page = runParley(["conversation", "print", ID, "--storage", storage]).stdout
const isRoot = process.getuid?.() === 0

afterAll(() => fs.rmSync(storage, { recursive: true, force: true }))

/** No temp file of ours is left beside the outputs. */
const noTemps = () => expect(fs.readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toStrictEqual([])

describe("conversation print --output writes into the named path", () => {
  it("the page is what stdout shows", () => {
    expect(page.length).toBeGreaterThan(1000)
  })

  it("a symlink: its target gets the page, the link stays a link", () => {
    const target = path.join(dir, "target.md")
    const link = path.join(dir, "link.md")
    fs.writeFileSync(target, "old\n", { mode: 0o600 })
    fs.symlinkSync("target.md", link)
    const r = print(link)
    expect([r.code, r.stderr]).toStrictEqual([0, ""])
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
    expect(fs.readlinkSync(link)).toBe("target.md")
    expect(fs.readFileSync(target, "utf8")).toBe(page)
    expect(fs.statSync(target).mode & 0o777).toBe(0o600)
    noTemps()
  })

  it("a dangling symlink: the file it names is created, the link kept", () => {
    const link = path.join(dir, "dangling.md")
    fs.symlinkSync("created-by-print.md", link)
    expect(print(link).code).toBe(0)
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
    expect(fs.readFileSync(path.join(dir, "created-by-print.md"), "utf8")).toBe(page)
  })

  it("a FIFO: the reader gets the page, the FIFO stays a FIFO", async () => {
    const fifo = path.join(dir, "pipe")
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0)
    // The reader writes to a file: this process cannot drain a pipe while spawnSync waits.
    const received = path.join(dir, "received.md")
    const reader = spawn("timeout", ["30", "sh", "-c", 'cat "$0" > "$1"', fifo, received], { stdio: "ignore" })
    const closed = new Promise((resolve) => reader.on("close", resolve))
    const r = print(fifo)
    expect(await closed).toBe(0)
    expect([r.code, r.stderr]).toStrictEqual([0, ""])
    expect(fs.readFileSync(received, "utf8")).toBe(page)
    expect(fs.lstatSync(fifo).isFIFO()).toBe(true)
  })

  it.skipIf(!isRoot)("a character device (a null device made for the test): stays that device", () => {
    const device = path.join(dir, "null")
    expect(spawnSync("mknod", ["-m", "666", device, "c", "1", "3"]).status).toBe(0)
    const before = fs.lstatSync(device)
    const link = path.join(dir, "null-link")
    fs.symlinkSync(device, link)
    for (const output of [device, link]) {
      const r = print(output)
      expect([r.code, r.stderr]).toStrictEqual([0, ""])
    }
    const after = fs.lstatSync(device)
    expect(after.isCharacterDevice()).toBe(true)
    expect([after.rdev, after.ino]).toStrictEqual([before.rdev, before.ino])
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
    noTemps()
  })

  // Through a link of our own to /proc/self/fd/1, which is what /dev/stdout is: a test must never
  // name the machine's /dev/stdout, which a broken writer would replace for every program.
  it("a link to /proc/self/fd/1 (as /dev/stdout is) is our stdout as it is: a pipe gets the page, a >> redirect appends", () => {
    const stdout = path.join(dir, "stdout")
    fs.symlinkSync("/proc/self/fd/1", stdout)
    const piped = print(stdout)
    expect([piped.code, piped.stderr, piped.stdout === page]).toStrictEqual([0, "", true])
    const file = path.join(dir, "appended.md")
    fs.writeFileSync(file, "before\n")
    const r = spawnSync(
      "sh",
      [
        "-c",
        `"${process.execPath}" "${binary}" conversation print ${ID} --storage "${storage}" --output "${stdout}" >> "${file}"`
      ],
      {
        encoding: "utf8",
        timeout: 60_000
      }
    )
    expect([r.status, r.stderr]).toStrictEqual([0, ""])
    expect(fs.readFileSync(file, "utf8")).toBe("before\n" + page)
    expect(fs.lstatSync(stdout).isSymbolicLink()).toBe(true)
  })

  it("a directory: exit 1 with the reason, the directory untouched", () => {
    const folder = path.join(dir, "folder")
    fs.mkdirSync(folder)
    const r = print(folder)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toBe(`parley: --output: cannot write ${folder}: it is a directory; pass the path of a file.\n`)
    expect(fs.statSync(folder).isDirectory()).toBe(true)
    expect(fs.readdirSync(folder)).toStrictEqual([])
    noTemps()
  })

  it("a socket: exit 1 with the reason, the socket untouched", async () => {
    const socket = path.join(dir, "sock")
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(socket, resolve))
    try {
      const r = print(socket)
      expect(r.code).toBe(1)
      expect(r.stderr).toBe(`parley: --output: cannot write ${socket}: it is a socket; pass the path of a file.\n`)
      expect(fs.lstatSync(socket).isSocket()).toBe(true)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
