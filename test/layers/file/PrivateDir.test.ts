// The one place that lstat's runtime paths: ensure() makes missing directories 0700 and refuses (unchanged) one
// that is a link, another user's, or open to others; socketProblem() says whether a client may send to a socket.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as PrivateDir from "../../../src/layers/file/PrivateDir.ts"
import { repoRoot, tempDir } from "../../support/Fixtures.ts"

const root = tempDir("parley-private-")
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
const isRoot = process.getuid?.() === 0
const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777
const refusal = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    return e
  }
  return undefined
}

describe("PrivateDir.ensure", () => {
  it("makes the temp-dir fallback and its parent 0700, whatever the umask (022 and 000, in a child process)", () => {
    for (const umask of ["022", "000"]) {
      const tmp = path.join(root, `tmp-${umask}`)
      fs.mkdirSync(tmp)
      const uid = process.getuid!()
      const dir = path.join(tmp, `parley-${uid}`, "parley")
      const code = `import("${path.join(repoRoot, "src/layers/file/PrivateDir.ts")}").then((m) => m.ensure(${JSON.stringify(dir)}))`
      const r = spawnSync("sh", ["-c", `umask ${umask}; exec "${process.execPath}" -e '${code}'`], { encoding: "utf8" })
      expect(r.stderr).toBe("")
      expect(modeOf(path.dirname(dir))).toBe(0o700)
      expect(modeOf(dir)).toBe(0o700)
    }
  })

  it("accepts its own private directory again, and refuses one open to others or a link, changing neither", () => {
    const run = path.join(root, "storage", "run")
    PrivateDir.ensure(run)
    PrivateDir.ensure(run)
    expect(modeOf(run)).toBe(0o700)
    fs.chmodSync(run, 0o755)
    const open = refusal(() => PrivateDir.ensure(run))
    expect(open).toBeInstanceOf(PrivateDir.NotPrivate)
    expect(open).toMatchObject({ path: run, problem: "open", mode: 0o755 })
    expect(modeOf(run)).toBe(0o755)
    const target = path.join(root, "elsewhere")
    fs.mkdirSync(target, { mode: 0o700 })
    const linked = path.join(root, "linked", "run")
    fs.mkdirSync(path.dirname(linked))
    fs.symlinkSync(target, linked)
    expect(refusal(() => PrivateDir.ensure(linked))).toMatchObject({ path: linked, problem: "symlink" })
    expect(fs.lstatSync(linked).isSymbolicLink()).toBe(true)
  })

  it.skipIf(!isRoot)(
    "refuses another user's directory (uid 65534, made first, mode 0777) and leaves it as it was",
    () => {
      const tmp = path.join(root, "shared-tmp")
      fs.mkdirSync(tmp, { mode: 0o1777 })
      const theirs = path.join(tmp, `parley-${process.getuid!()}`)
      fs.mkdirSync(theirs)
      fs.chmodSync(theirs, 0o777)
      fs.chownSync(theirs, 65534, 65534)
      const e = refusal(() => PrivateDir.ensure(path.join(theirs, "parley")))
      expect(e).toMatchObject({ path: theirs, problem: "owner", owner: 65534, mode: 0o777, uid: 0 })
      expect(fs.existsSync(path.join(theirs, "parley"))).toBe(false)
      expect(modeOf(theirs)).toBe(0o777)
    }
  )
})

describe("PrivateDir.socketProblem", () => {
  it("a socket of ours in our private directory may be used; a missing one is absent; a link is refused", async () => {
    const dir = path.join(root, "sockets", "run")
    PrivateDir.ensure(dir)
    const socket = path.join(dir, "1.sock")
    expect(PrivateDir.socketProblem(socket)).toBe("absent")
    const server = net.createServer()
    await new Promise<void>((resolve) => server.listen(socket, resolve))
    try {
      expect(PrivateDir.socketProblem(socket)).toBeUndefined()
      const link = path.join(dir, "2.sock")
      fs.symlinkSync(socket, link)
      expect(PrivateDir.socketProblem(link)).toMatchObject({ path: link, problem: "symlink", want: "socket" })
      fs.chmodSync(dir, 0o777)
      expect(PrivateDir.socketProblem(socket)).toMatchObject({ path: dir, problem: "open", want: "directory" })
      fs.chmodSync(dir, 0o700)
      if (isRoot) {
        fs.lchownSync(socket, 65534, 65534)
        expect(PrivateDir.socketProblem(socket)).toMatchObject({ path: socket, problem: "owner", owner: 65534 })
      }
    } finally {
      server.close()
    }
  })
})
