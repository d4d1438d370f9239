// Another local user cannot stand in for a run: with no $XDG_RUNTIME_DIR, a storage whose socket path is too long
// uses <tmp>/parley-<uid>/parley, which another user could make first (0777) and listen in. Such a directory, one
// of ours left open, and another user's socket are refused with a line naming the path, owner and mode; an answer
// given with --stdin never leaves the process (a fake host of the other user's, listening there, gets 0 bytes);
// `ls` does not show the fake as running; a run refuses to host there and says so; `query --detach` refuses a run
// directory of another user's. A $XDG_RUNTIME_DIR that is not ours alone (su without -, sudo -E) is not used: the
// temp dir is; a temp dir others may write in without the sticky bit is refused (ssh's rule), 1777 is fine.
// Real users, real sockets: run as root (a throwaway user), skipped otherwise.
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"
import {
  addDeferrable,
  conversationIdOf,
  exited,
  killGroup,
  type Project,
  persisted,
  waitFor,
  WAITING,
  writeScript
} from "../support/Project.ts"

const isRoot = process.getuid?.() === 0
const user = { name: `parley-t-${crypto.randomBytes(4).toString("hex")}`, uid: -1 }
const dirs: Array<string> = []
const groups: Array<number> = []

beforeAll(() => {
  if (!isRoot) return
  execFileSync("useradd", ["-M", "-s", "/usr/sbin/nologin", user.name])
  user.uid = Number(execFileSync("id", ["-u", user.name], { encoding: "utf8" }).trim())
})
afterEach(() => {
  for (const g of groups.splice(0)) killGroup(g)
})
afterAll(() => {
  for (const g of groups.splice(0)) killGroup(g)
  if (isRoot) spawnSync("userdel", ["-r", user.name], { stdio: "ignore" })
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

/** A temp dir everyone may write in (sticky, as /tmp is), to stand for the temp dir parley falls back to. */
const sharedTmp = (): string => {
  const dir = tempDir("parley-foreign-tmp-")
  dirs.push(dir)
  fs.chmodSync(dir, 0o1777)
  return dir
}

/** A project whose storage path is too long for `<storage>/run/<id>.sock`: its host sockets go to the fallback. */
const longProject = (): Project => {
  const base = tempDir("parley-foreign-")
  dirs.push(base)
  const root = path.join(base, "p".repeat(90))
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage, { recursive: true })
  fs.writeFileSync(path.join(storage, "config.toml"), WAITING)
  addDeferrable(root)
  return { root, storage }
}

type Env = Record<string, string | undefined>

/** The env of a parley that falls back to `tmp` (no $XDG_RUNTIME_DIR), or uses the runtime directory `xdg`. */
const envIn = (tmp: string, xdg?: string): Env => ({ TMPDIR: tmp, XDG_RUNTIME_DIR: xdg, PARLEY_STORAGE: undefined })

const run = (p: Project, env: Env, args: ReadonlyArray<string>, input?: string) =>
  runParley(["--storage", p.storage, ...args], { cwd: p.root, env, ...(input !== undefined ? { input } : {}) })

const socketName = (p: Project, id: string) =>
  `${crypto.createHash("sha256").update(p.storage).digest("hex").slice(0, 16)}-${id}.sock`

/** Where parley looks for the host of conversation `id` of `p` (HostSocket's fallback name). */
const fallbackSocket = (p: Project, tmp: string, id: string) => path.join(tmp, "parley-0", "parley", socketName(p, id))

const asUser = (args: ReadonlyArray<string>) =>
  spawnSync("runuser", ["-u", user.name, "--", ...args], { encoding: "utf8" })

// A host of the other user's: accepts every connection and counts them (<count>.accepted) and the bytes it is sent.
const FAKE = `import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
total = 0
accepted = 0
open(sys.argv[2], "w").write("0")
while True:
    c, _ = s.accept()
    accepted += 1
    open(sys.argv[2] + ".accepted", "w").write(str(accepted))
    c.settimeout(3)
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            total += len(d)
            open(sys.argv[2], "w").write(str(total))
    except socket.timeout:
        pass
    c.close()
`

/** Starts the other user's fake host on `socket`; resolves with the file holding how many bytes it got. */
const fakeHost = async (tmp: string, socket: string): Promise<string> => {
  const script = path.join(tmp, `fake-${crypto.randomBytes(3).toString("hex")}.py`)
  fs.writeFileSync(script, FAKE, { mode: 0o644 })
  const count = `${script}.count`
  const child: ChildProcess = spawn("runuser", ["-u", user.name, "--", "/usr/bin/python3", script, socket, count], {
    detached: true,
    stdio: "ignore"
  })
  groups.push(child.pid!)
  await waitFor("the fake host to listen", () => fs.existsSync(count))
  return count
}

/** A conversation of `p` made by a short run (in a temp dir of its own, so `tmp` stays as the test set it up). */
const conversation = (p: Project): string => {
  const own = sharedTmp()
  const script = writeScript(p, "done.json", [{ message: "Done." }])
  const r = run(p, envIn(own), ["query", "--new", "hello", "--script", script])
  expect(r.code).toBe(0)
  const names = fs.readdirSync(path.join(p.storage, "conversations")).filter((n) => /^\d/.test(n))
  return names[0]!.split("-")[0]!
}

/**
 * A run of `p` (with `env`) that asks a question and hosts it in `tmp`'s fallback directory; another terminal
 * answers it there, and the run finishes. Resolves with the run's exit code.
 */
const answeredFromAnotherTerminal = async (p: Project, env: Env, tmp: string): Promise<number | null> => {
  const script = writeScript(p, "ask.json", [
    { message: "Asking.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
    { message: "Done." }
  ])
  const full: Env = { ...process.env, ...env }
  for (const k of Object.keys(full)) if (full[k] === undefined) delete full[k]
  const child = spawn(process.execPath, [binary, "--storage", p.storage, "query", "--new", "go", "--script", script], {
    cwd: p.root,
    env: full as NodeJS.ProcessEnv,
    stdio: ["ignore", "ignore", "ignore"],
    detached: true
  })
  groups.push(child.pid!)
  const fallback = path.join(tmp, "parley-0", "parley")
  await waitFor("the question to open", () => persisted(p).some((e) => e.type === "inquiry_request"))
  await waitFor("the run's host in the fallback directory", () =>
    fs.readdirSync(fallback).some((n) => n.endsWith(".sock"))
  )
  const id = conversationIdOf(p)
  const answered = run(p, env, ["conversation", "answer", id, "a1.confirm.1", "yes"])
  expect([answered.code, answered.stderr]).toStrictEqual([
    0,
    `Answered a1.confirm.1; the running turn (pid ${child.pid}) goes on with it.\n`
  ])
  return exited(child)
}

const SECRET = "hunter2-do-not-send"

/** `answer ID INQ --stdin` and `ls` against the fake host: refused by `line`, and the fake got no connection, no byte. */
const refusedWithNothingSent = (p: Project, env: Env, id: string, count: string, line: string) => {
  const answered = run(p, env, ["conversation", "answer", id, `${id}.q.1`, "--stdin"], `${SECRET}\n`)
  expect(answered.stderr).toContain(line)
  expect(answered.stderr).not.toContain("Answered")
  expect(answered.code).toBe(1)
  const listed = run(p, env, ["conversation", "ls", "--format", "json"])
  expect(listed.code).toBe(0)
  expect((JSON.parse(listed.stdout) as Array<{ id: string; running: unknown }>).find((r) => r.id === id)?.running).toBe(
    null
  )
  expect(fs.readFileSync(count, "utf8")).toBe("0")
  // Not even connected to: the check runs before the "is anything listening" probe too.
  expect(fs.existsSync(`${count}.accepted`)).toBe(false)
}

describe.skipIf(!isRoot)("another local user cannot stand in for a run (as root, with a throwaway user)", () => {
  it("a fallback directory another user made first (0777) is refused; a secret sent with --stdin never leaves", async () => {
    const p = longProject()
    const id = conversation(p)
    const tmp = sharedTmp()
    const theirs = path.join(tmp, "parley-0")
    expect(asUser(["mkdir", "-p", "-m", "0777", path.join(theirs, "parley")]).status).toBe(0)
    expect(asUser(["chmod", "0777", theirs]).status).toBe(0)
    const count = await fakeHost(tmp, fallbackSocket(p, tmp, id))
    refusedWithNothingSent(
      p,
      envIn(tmp),
      id,
      count,
      `Refusing to use ${theirs}: it belongs to uid ${user.uid}, not to you (uid 0) (owner uid ${user.uid}, mode 0777). Another user may be waiting there for what parley sends: have it removed (by uid ${user.uid} or root) (or set XDG_RUNTIME_DIR to a directory only you can use), then run again.`
    )
    // Nothing was changed: still theirs, still open.
    expect(fs.statSync(theirs)).toMatchObject({ uid: user.uid })
    expect(fs.statSync(theirs).mode & 0o7777).toBe(0o777)
  })

  it("a runtime directory of ours left open (0777) is refused with what to do; the fake in it gets nothing", async () => {
    const p = longProject()
    const id = conversation(p)
    const tmp = sharedTmp()
    const xdg = path.join(tmp, "xdg")
    fs.mkdirSync(xdg)
    fs.chmodSync(xdg, 0o700)
    const ours = path.join(xdg, "parley")
    fs.mkdirSync(ours)
    fs.chmodSync(ours, 0o777)
    // Bound where the other user may write, then moved into place (the runtime directory above is ours, 0700).
    const theirs = path.join(tmp, "theirs")
    expect(asUser(["mkdir", "-m", "0755", theirs]).status).toBe(0)
    const count = await fakeHost(tmp, path.join(theirs, "host.sock"))
    fs.renameSync(path.join(theirs, "host.sock"), path.join(ours, socketName(p, id)))
    refusedWithNothingSent(
      p,
      envIn(tmp, xdg),
      id,
      count,
      `Refusing to use ${ours}: other users have access to it (owner uid 0, mode 0777). It is yours: make it private (\`chmod 700 ${ours}\`), then run again.`
    )
  })

  it("a fallback directory of ours left open (0777) is refused too; the fake in it gets nothing", async () => {
    const p = longProject()
    const id = conversation(p)
    const tmp = sharedTmp()
    const ours = path.join(tmp, "parley-0")
    fs.mkdirSync(path.join(ours, "parley"), { recursive: true })
    fs.chmodSync(ours, 0o777)
    fs.chmodSync(path.join(ours, "parley"), 0o777)
    const count = await fakeHost(tmp, fallbackSocket(p, tmp, id))
    refusedWithNothingSent(
      p,
      envIn(tmp),
      id,
      count,
      `Refusing to use ${ours}: other users have access to it (owner uid 0, mode 0777). It is yours: make it private (\`chmod 700 ${ours}\`), then run again.`
    )
    expect(fs.statSync(ours).mode & 0o7777).toBe(0o777)
  })

  it("another user's socket in our private directory is refused; the fake behind it gets nothing", async () => {
    const p = longProject()
    const id = conversation(p)
    const tmp = sharedTmp()
    const socket = fallbackSocket(p, tmp, id)
    fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 })
    // Bound where the other user may write, then moved into place (as only root could): the listener stays.
    const theirs = path.join(tmp, "theirs")
    expect(asUser(["mkdir", "-m", "0755", theirs]).status).toBe(0)
    const count = await fakeHost(tmp, path.join(theirs, "host.sock"))
    fs.renameSync(path.join(theirs, "host.sock"), socket)
    refusedWithNothingSent(
      p,
      envIn(tmp),
      id,
      count,
      `Refusing to use ${socket}: it belongs to uid ${user.uid}, not to you (uid 0) (owner uid ${user.uid}, mode`
    )
  })

  it("a run does not host in another user's fallback directory: it says so once and goes on", async () => {
    const p = longProject()
    const tmp = sharedTmp()
    const theirs = path.join(tmp, "parley-0")
    expect(asUser(["mkdir", "-m", "0777", theirs]).status).toBe(0)
    const script = writeScript(p, "ask.json", [
      { message: "Asking.", tool_calls: [{ id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }] },
      { message: "Done." }
    ])
    const env: Env = { ...process.env, ...envIn(tmp) }
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k]
    const child = spawn(
      process.execPath,
      [binary, "--storage", p.storage, "query", "--new", "go", "--script", script],
      {
        cwd: p.root,
        env: env as NodeJS.ProcessEnv,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true
      }
    )
    groups.push(child.pid!)
    let err = ""
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()))
    await waitFor("the run's warning", () => err.includes("Other terminals cannot reach this run."))
    expect(err).toContain(`Refusing to use ${theirs}: it belongs to uid ${user.uid}, not to you (uid 0)`)
    expect(err.split("Refusing to use").length).toBe(2)
    expect(fs.readdirSync(theirs)).toStrictEqual([])
  })

  it("$XDG_RUNTIME_DIR of another user's (su without -, sudo -E) is not used: the run falls back to the temp dir", async () => {
    const p = longProject()
    const tmp = sharedTmp()
    const xdg = path.join(tmp, "their-xdg")
    expect(asUser(["mkdir", "-m", "0700", xdg]).status).toBe(0)
    expect(await answeredFromAnotherTerminal(p, envIn(tmp, xdg), tmp)).toBe(0)
    expect(asUser(["ls", "-A", xdg]).stdout).toBe("")
  }, 60_000)

  it("$XDG_RUNTIME_DIR of ours that others may reach (0755) is not used either: the temp dir is", async () => {
    const p = longProject()
    const tmp = sharedTmp()
    const xdg = path.join(tmp, "open-xdg")
    fs.mkdirSync(xdg, { mode: 0o755 })
    fs.chmodSync(xdg, 0o755)
    expect(await answeredFromAnotherTerminal(p, envIn(tmp, xdg), tmp)).toBe(0)
    expect(fs.readdirSync(xdg)).toStrictEqual([])
  }, 60_000)

  it("a temp dir everyone may write in with the sticky bit (1777, as /tmp) works", async () => {
    const p = longProject()
    const tmp = sharedTmp()
    expect(await answeredFromAnotherTerminal(p, envIn(tmp), tmp)).toBe(0)
  }, 60_000)

  it("a temp dir everyone may write in without the sticky bit (0777) is refused, naming it; nothing is made in it", async () => {
    const p = longProject()
    const tmp = tempDir("parley-foreign-open-")
    dirs.push(tmp)
    fs.chmodSync(tmp, 0o777)
    const line = `Refusing to use ${tmp}: other users may write in it and it has no sticky bit (owner uid 0, mode 0777). Anyone may replace what parley makes in it: set TMPDIR to a directory only you (or root) may write in, or XDG_RUNTIME_DIR to a private one of yours, then run again.`
    // The run warns once and goes on without a host; a detached run (its own host) is refused. Its turn calls a
    // tool (an unknown one: refused, then the reply), so it is served at once (src/cli/Host.ts).
    const script = writeScript(p, "served.json", [
      { message: "Working.", tool_calls: [{ name: "nope", arguments: {} }] },
      { message: "Done." }
    ])
    const ran = run(p, envIn(tmp), ["query", "--new", "hi", "--script", script])
    expect(ran.stderr).toContain(line)
    expect(ran.code).toBe(0)
    expect(fs.readdirSync(tmp)).toStrictEqual([])
    // A client refuses it too, before it judges the directories below: a host moved into place there gets nothing.
    const id = conversationIdOf(p)
    const socket = fallbackSocket(p, tmp, id)
    fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 })
    const theirs = path.join(tmp, "theirs")
    expect(asUser(["mkdir", "-m", "0755", theirs]).status).toBe(0)
    const count = await fakeHost(tmp, path.join(theirs, "host.sock"))
    fs.renameSync(path.join(theirs, "host.sock"), socket)
    refusedWithNothingSent(p, envIn(tmp), id, count, line)
  })

  it("query --detach refuses a run directory of another user's (the detached log would go there)", () => {
    const base = tempDir("parley-foreign-detach-")
    dirs.push(base)
    const storage = path.join(base, ".parley")
    fs.mkdirSync(path.join(storage, "run"), { recursive: true })
    fs.chownSync(path.join(storage, "run"), user.uid, user.uid)
    const r = runParley(["--storage", storage, "query", "--detach", "hello", "--script", "/nonexistent.json"], {
      cwd: base,
      env: { PARLEY_STORAGE: undefined }
    })
    expect(r.stderr).toContain(
      `Refusing to use ${path.join(storage, "run")}: it belongs to uid ${user.uid}, not to you (uid 0) (owner uid ${user.uid}, mode 0755).`
    )
    expect(r.code).toBe(1)
    expect(fs.readdirSync(path.join(storage, "run"))).toStrictEqual([])
  })
})

describe.skipIf(isRoot)("another local user (skipped)", () => {
  it.skip("needs root to create a throwaway local user with useradd", () => undefined)
})
