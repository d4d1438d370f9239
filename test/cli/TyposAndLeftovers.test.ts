// Typos are not taken silently, and nothing is left behind unsaid (docs/cli.md#commands): a `--storage` that
// starts like a PostgreSQL url but is not one is a usage error (it was a directory named `postgres:/bad`), a
// `conversation` subcommand typed at the top is suggested with its parent, the empty listing's hint repeats
// the storage it was given, `conversation kill` of an unknown id says so, and `parley demo` says it keeps its
// project and removes those over a day old.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { binary, runParley } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})
const temp = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}
const lines = (text: string) => text.split("\n").filter((l) => l !== "")

describe("typos are refused with what was meant", () => {
  it("--storage postgres:/bad (flag or $PARLEY_STORAGE) is a usage error naming the expected form; nothing is created; a password is not repeated", () => {
    const cwd = temp()
    for (const args of [
      ["--storage", "postgres:/bad", "conversation", "ls"],
      ["--storage", "postgres:/bad", "conversation", "print", "17000000001"],
      ["--storage", "postgresql:bad", "query", "--new", "hi"]
    ]) {
      const r = runParley(args, { cwd })
      expect(r.code).toBe(2)
      expect(r.stdout).toBe("")
      expect(lines(r.stderr)[0]).toMatch(
        /^parley: --storage postgres(ql)?:\/?bad is not a PostgreSQL connection url: expected postgres:\/\/\[user\[:password\]@\]host\[:port\]\/database/
      )
      expect(lines(r.stderr)[1]).toBe("Run `parley --help` for usage.")
    }
    // A url with one slash, and one that names neither a server nor a database.
    for (const url of ["postgresql:/x", "postgres://"]) {
      const r = runParley(["--storage", url, "conversation", "ls"], { cwd })
      expect(r.code, r.stderr).toBe(2)
      expect(lines(r.stderr)[0]).toBe(
        `parley: --storage ${url} is not a PostgreSQL connection url: expected postgres://[user[:password]@]host[:port]/database (a directory of that name is written ./${url})`
      )
    }
    const secret = runParley(["conversation", "ls"], { cwd, env: { PARLEY_STORAGE: "postgres://me:hunter22@[bad/db" } })
    expect(secret.code).toBe(2)
    expect(secret.stderr).toContain("postgres://me:***@[bad/db is not a PostgreSQL connection url")
    expect(secret.stderr).not.toContain("hunter22")
    expect(fs.readdirSync(cwd)).toStrictEqual([])
    // Other names with a colon stay directories.
    const other = runParley(["--storage", "backup:old", "conversation", "ls"], { cwd })
    expect(other.code).toBe(0)
  })

  it("a conversation subcommand typed at the top is suggested with its parent; other unknown words are not", () => {
    for (const sub of ["ls", "answer", "attach", "kill"]) {
      const r = runParley([sub])
      expect(r.code).toBe(2)
      expect(lines(r.stderr)[0]).toBe(
        `parley: unknown subcommand "${sub}" for \`parley\` (did you mean \`parley conversation ${sub}\`?)`
      )
    }
    expect(lines(runParley(["frobnicate"]).stderr)[0]).toBe('parley: unknown subcommand "frobnicate" for `parley`')
  })

  it("the empty listing's 'Start one with' repeats the storage it was given, and works when pasted from elsewhere", () => {
    const cwd = temp()
    const storage = path.join(cwd, "my store")
    const r = runParley(["--storage", storage, "conversation", "ls"], { cwd })
    expect(r.code).toBe(0)
    const hint = /Start one with `(.+)`\./.exec(r.stdout)![1]!
    expect(hint).toBe(`parley query "…" --storage '${storage}'`)
    const script = path.join(cwd, "s.json")
    fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "Hello." }] }))
    const pasted = hint.replace("parley", `${process.execPath} ${binary}`).replace('"…"', `--script ${script} hi`)
    const elsewhere = temp()
    const ran = spawnSync("sh", ["-c", pasted], { cwd: elsewhere, encoding: "utf8" })
    expect(ran.status).toBe(0)
    expect(fs.readdirSync(path.join(storage, "conversations"))).toHaveLength(1)
    expect(fs.readdirSync(elsewhere)).toStrictEqual([])
  })
})

describe("conversation kill of an id that names nothing", () => {
  it("says there is no such conversation (not that it has no running turn), exits 1 and creates nothing; a real one without a run says it has none", () => {
    const cwd = temp()
    const unknown = runParley(["conversation", "kill", "17000000001"], { cwd, env: { PARLEY_STORAGE: undefined } })
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe(
      "parley: No conversation with id 17000000001. Run `parley conversation ls --archived` to see the ids.\n"
    )
    expect(fs.readdirSync(cwd)).toStrictEqual([])
    const script = path.join(cwd, "s.json")
    fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "Hello." }] }))
    expect(
      runParley(["query", "--new", "--script", script, "hi"], { cwd, env: { PARLEY_STORAGE: undefined } }).code
    ).toBe(0)
    const id = fs.readdirSync(path.join(cwd, ".parley", "conversations"))[0]!.split("-")[0]!
    const idle = runParley(["conversation", "kill", id], { cwd, env: { PARLEY_STORAGE: undefined } })
    expect([idle.code, idle.stderr]).toStrictEqual([1, `parley: jp-c${id} has no running turn.\n`])
  })
})

describe("parley demo's project", () => {
  it("is said to be kept; the next demo removes this user's demo projects over a day old, not newer ones, not links", () => {
    const tmp = temp()
    const old = path.join(tmp, "parley-demo-old")
    const fresh = path.join(tmp, "parley-demo-fresh")
    const target = path.join(tmp, "elsewhere")
    for (const d of [old, fresh, target]) fs.mkdirSync(d)
    fs.writeFileSync(path.join(target, "keep.txt"), "mine")
    const link = path.join(tmp, "parley-demo-link")
    fs.symlinkSync(target, link)
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000)
    for (const p of [old, target]) fs.utimesSync(p, twoDaysAgo, twoDaysAgo)
    fs.lutimesSync(link, twoDaysAgo, twoDaysAgo)

    const r = runParley(["demo"], { cwd: tmp, env: { TMPDIR: tmp, ANTHROPIC_API_KEY: undefined } })
    expect(r.code).toBe(0)
    expect(fs.existsSync(old)).toBe(false)
    expect(fs.existsSync(fresh)).toBe(true)
    expect(fs.readFileSync(path.join(link, "keep.txt"), "utf8")).toBe("mine")
    const project = /project:\s+(\S+)/.exec(r.stderr)![1]!
    expect(path.dirname(project)).toBe(tmp)
    const remove = /or now: (rm -rf \S+)\)/.exec(r.stderr)![1]!
    expect(r.stderr).toContain(
      "The project is kept for you to look at; the next `parley demo` removes demo projects over a day old"
    )
    expect(spawnSync("sh", ["-c", remove], { encoding: "utf8" }).status).toBe(0)
    expect(fs.existsSync(project)).toBe(false)
  })
})
