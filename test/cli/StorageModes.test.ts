// Conversations are private: a storage parley creates is 0700 and its files 0600 (conversation files, journal,
// index, locks, the run directory, a print --output file) whatever the umask (022 and 000), so another local user
// can neither list nor read them; an existing storage keeps its modes; `conversation check` warns once about a
// storage directory others can reach, its exit code and JSON unchanged.
import { execFileSync, spawnSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { copyToTemp, fixtureCorpus, tempDir } from "../support/Fixtures.ts"

const isRoot = process.getuid?.() === 0
const user = `parley-t-${crypto.randomBytes(4).toString("hex")}`
const dirs: Array<string> = []
beforeAll(() => {
  if (isRoot) execFileSync("useradd", ["-M", "-s", "/usr/sbin/nologin", user])
})
afterAll(() => {
  if (isRoot) spawnSync("userdel", ["-r", user], { stdio: "ignore" })
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})

/** A project directory others may enter (0755): only the modes parley gives its storage keep them out. */
const openProject = (): string => {
  const root = tempDir("parley-modes-")
  dirs.push(root)
  fs.chmodSync(root, 0o755)
  fs.writeFileSync(path.join(root, "done.json"), JSON.stringify({ steps: [{ message: "Done." }] }))
  // A turn that calls a tool (an unknown one: refused, then the reply) is served on its socket at once, so the run
  // directory is made; a turn over without one may end before it is due to be served (src/cli/Host.ts).
  fs.writeFileSync(
    path.join(root, "served.json"),
    JSON.stringify({
      steps: [{ message: "Working.", tool_calls: [{ name: "nope", arguments: {} }] }, { message: "Done." }]
    })
  )
  return root
}

/** parley under `umask`, as a shell would start it. */
const underUmask = (umask: string, cwd: string, args: ReadonlyArray<string>) =>
  spawnSync("sh", ["-c", `umask ${umask}; exec "$0" "$@"`, process.execPath, binary, ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, PARLEY_STORAGE: "", PARLEY_SCRIPT: "" },
    timeout: 60_000
  })

/** Every path under `dir` (itself included) with its permission bits. */
const modes = (dir: string): Array<[string, number, boolean]> => {
  const out: Array<[string, number, boolean]> = []
  const walk = (p: string) => {
    const s = fs.lstatSync(p)
    out.push([path.relative(dir, p) || ".", s.mode & 0o7777, s.isDirectory()])
    if (s.isDirectory()) for (const n of fs.readdirSync(p)) walk(path.join(p, n))
  }
  walk(dir)
  return out
}

const asUser = (args: ReadonlyArray<string>) => spawnSync("runuser", ["-u", user, "--", ...args], { encoding: "utf8" })

describe("new storage is its user's alone", () => {
  for (const umask of ["022", "000"]) {
    it(`umask ${umask}: every directory 0700, every file 0600 (a run, its locks and index, print --output)`, () => {
      const root = openProject()
      const storage = path.join(root, ".parley")
      const q = underUmask(umask, root, ["--storage", storage, "query", "--new", "hello", "--script", "served.json"])
      expect(q.status).toBe(0)
      const id = fs
        .readdirSync(path.join(storage, "conversations"))
        .find((n) => /^\d/.test(n))!
        .split("-")[0]!
      const out = path.join(root, "out.md")
      expect(underUmask(umask, root, ["--storage", storage, "conversation", "print", id, "--output", out]).status).toBe(
        0
      )
      expect(underUmask(umask, root, ["--storage", storage, "conversation", "ls"]).status).toBe(0)
      const seen = modes(storage)
      // What a run leaves: the conversation's files, the index, the locks and run directories.
      const names = seen.map(([p]) => p)
      expect(names).toContain("locks")
      expect(names).toContain("run")
      expect(names.some((p) => p.endsWith("events.json"))).toBe(true)
      expect(names.some((p) => p.endsWith("metadata.json"))).toBe(true)
      expect(seen.filter(([, m, isDir]) => m !== (isDir ? 0o700 : 0o600))).toStrictEqual([])
      expect(fs.statSync(out).mode & 0o7777).toBe(0o600)
    })
  }

  it.skipIf(!isRoot)("another local user can neither list the storage nor read a conversation file", () => {
    const root = openProject()
    const storage = path.join(root, ".parley")
    expect(
      underUmask("000", root, ["--storage", storage, "query", "--new", "hello", "--script", "done.json"]).status
    ).toBe(0)
    const conversation = fs.readdirSync(path.join(storage, "conversations")).find((n) => /^\d/.test(n))!
    const events = path.join(storage, "conversations", conversation, "events.json")
    // The control: the other user reaches the project directory and reads a file left open there.
    fs.writeFileSync(path.join(root, "open.txt"), "open\n", { mode: 0o644 })
    expect(asUser(["cat", path.join(root, "open.txt")])).toMatchObject({ status: 0, stdout: "open\n" })
    expect(asUser(["ls", storage]).status).not.toBe(0)
    expect(asUser(["cat", events]).status).not.toBe(0)
    // Even with the storage directory opened by hand, the files stay the user's alone.
    fs.chmodSync(storage, 0o755)
    fs.chmodSync(path.join(storage, "conversations"), 0o755)
    fs.chmodSync(path.join(storage, "conversations", conversation), 0o755)
    const cat = asUser(["cat", events])
    expect(cat.status).not.toBe(0)
    expect(cat.stderr).toContain("Permission denied")
  })

  it("an existing storage (0755, as JP makes it) keeps its mode; what parley adds is private", () => {
    const root = openProject()
    const storage = path.join(root, ".parley")
    fs.mkdirSync(storage, { mode: 0o755 })
    fs.chmodSync(storage, 0o755)
    expect(
      underUmask("022", root, ["--storage", storage, "query", "--new", "hello", "--script", "done.json"]).status
    ).toBe(0)
    expect(fs.statSync(storage).mode & 0o7777).toBe(0o755)
    expect(fs.statSync(path.join(storage, "conversations")).mode & 0o7777).toBe(0o700)
    expect(fs.statSync(path.join(storage, "locks")).mode & 0o7777).toBe(0o700)
  })
})

describe("conversation check warns about a storage others can reach", () => {
  it("once on stderr, exit code and JSON as without the warning; none for a private storage", () => {
    const storage = copyToTemp(fixtureCorpus.dir)
    dirs.push(storage)
    fs.chmodSync(storage, 0o755)
    fs.chmodSync(path.join(storage, "conversations"), 0o755)
    const open = runParley(["--storage", storage, "conversation", "check", "--format", "json"])
    const warning = `parley: warning: other users can read the conversations in ${storage} (mode 0755, conversations/ 0755); \`chmod 700 ${storage}\` makes it private.\n`
    expect(open.stderr).toBe(warning)
    fs.chmodSync(storage, 0o700)
    const closed = runParley(["--storage", storage, "conversation", "check", "--format", "json"])
    expect(closed.stderr).toBe("")
    expect(open.code).toBe(closed.code)
    expect(open.stdout).toBe(closed.stdout)
    expect(JSON.parse(open.stdout)).toHaveLength(fixtureCorpus.conversations)
    // conversations/ private behind an open storage: nothing for others to read.
    fs.chmodSync(storage, 0o755)
    fs.chmodSync(path.join(storage, "conversations"), 0o700)
    expect(runParley(["--storage", storage, "conversation", "check"]).stderr).toBe("")
  })
})
