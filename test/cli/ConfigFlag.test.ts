// PostgreSQL storage (docs/postgres.md#what-lives-beside-the-database): where config.toml and a storage's machine-local files are.
// `--config FILE`, else `$PARLEY_CONFIG`, else the storage's own
// config.toml — for a directory storage too (checked end to end: its
// tools come from the named file, and the resume command repeats
// --config); a database's sockets and serve token are keyed by its url
// without the password, whichever way it is spelled, in this user's
// directories.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as HostPath from "../../src/layers/host/HostPath.ts"
import * as StorageStore from "../../src/layers/store/StorageStore.ts"
import { databaseKey } from "../../src/programs/StorageDir.ts"
import { addDeferrable, effectsOf, makeProject, parley, WAITING, writeScript } from "../support/Project.ts"

describe("configFileOf", () => {
  it("--config, else $PARLEY_CONFIG, else the storage's (a database's: ./.parley/config.toml); relative to the working directory", () => {
    expect(StorageStore.configFileOf("/s/.parley", "team.toml", {}, "/w")).toBe("/w/team.toml")
    expect(StorageStore.configFileOf("/s/.parley", "/etc/p.toml", { PARLEY_CONFIG: "x.toml" }, "/w")).toBe(
      "/etc/p.toml"
    )
    expect(StorageStore.configFileOf("/s/.parley", undefined, { PARLEY_CONFIG: "x.toml" }, "/w")).toBe("/w/x.toml")
    expect(StorageStore.configFileOf("/s/.parley", undefined, {}, "/w")).toBe("/s/.parley/config.toml")
    expect(StorageStore.configFileOf("postgres://h/db", undefined, { PARLEY_CONFIG: "" }, "/w")).toBe(
      "/w/.parley/config.toml"
    )
  })
})

describe("a database's machine-local files", () => {
  it("one key per database: the password, postgresql: and the default port do not change it", () => {
    const key = databaseKey("postgres://me@db.internal:5432/parley")
    for (const spelling of [
      "postgres://me:secret@db.internal/parley",
      "postgresql://me@db.internal:5432/parley",
      "POSTGRES://me@DB.internal/parley"
    ]) {
      expect(databaseKey(spelling), spelling).toBe(key)
      expect(HostPath.of(spelling, "17738399468")).toBe(
        HostPath.of("postgres://me@db.internal:5432/parley", "17738399468")
      )
      expect(StorageStore.stateDirOf(spelling, {})).toBe(
        StorageStore.stateDirOf("postgres://me@db.internal/parley", {})
      )
    }
    expect(key).not.toContain("secret")
    expect(databaseKey("postgres://me@db.internal/other")).not.toBe(key)
    expect(HostPath.of("postgres://me@db.internal/other", "17738399468")).not.toBe(
      HostPath.of("postgres://me@db.internal/parley", "17738399468")
    )
  })

  it("sockets in $XDG_RUNTIME_DIR, else this user's directory in the temp dir; the token under $XDG_CONFIG_HOME, else ~/.config", () => {
    const saved = process.env["XDG_RUNTIME_DIR"]
    try {
      process.env["XDG_RUNTIME_DIR"] = "/run/user/1000"
      expect(HostPath.of("postgres://h/db", "1")).toMatch(/^\/run\/user\/1000\/parley\/[0-9a-f]{16}-1\.sock$/)
      delete process.env["XDG_RUNTIME_DIR"]
      expect(HostPath.of("postgres://h/db", "1")).toMatch(
        new RegExp(`^${os.tmpdir()}/parley-${process.getuid!()}/parley/[0-9a-f]{16}-1\\.sock$`)
      )
      expect(HostPath.runDir("postgres://h/db")).toBe(path.join(os.tmpdir(), `parley-${process.getuid!()}`, "parley"))
    } finally {
      if (saved === undefined) delete process.env["XDG_RUNTIME_DIR"]
      else process.env["XDG_RUNTIME_DIR"] = saved
    }
    expect(StorageStore.stateDirOf("postgres://h/db", { XDG_CONFIG_HOME: "/c" })).toMatch(
      /^\/c\/parley\/postgres\/[0-9a-f]{16}$/
    )
    expect(StorageStore.stateDirOf("postgres://h/db", {})).toMatch(
      new RegExp(`^${os.homedir()}/\\.config/parley/postgres/[0-9a-f]{16}$`)
    )
    // A directory storage keeps them in itself.
    expect(StorageStore.stateDirOf("/s/.parley", {})).toBe("/s/.parley")
  })
})

describe("--config with a directory storage", () => {
  it("the tools come from the named file, not the storage's config.toml; the resume command repeats --config", () => {
    const p = makeProject()
    addDeferrable(p.root)
    const team = path.join(p.root, "team.toml")
    fs.writeFileSync(team, WAITING)
    const call = { id: "a1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }
    const script = writeScript(p, "s.json", [{ message: "Working.", tool_calls: [call] }, { message: "Done." }])
    // The storage's own config.toml does not know the tool: with it, nothing asks.
    const without = parley(p, ["query", "--new", "go", "--script", script, "--detached-policy", "defer"])
    expect(without.code).not.toBe(3)
    const r = parley(p, [
      "--config",
      "team.toml",
      "query",
      "--new",
      "go",
      "--script",
      script,
      "--detached-policy",
      "defer"
    ])
    expect(r.code, r.stderr).toBe(3)
    const id = /conversation (\d+) \(new\)/.exec(r.stderr)![1]!
    expect(r.stderr).toContain(
      `Then resume the turn: parley query --continue-turn --id ${id} --script ${script} --detached-policy defer --storage ${p.storage} --config ${team}`
    )
    expect(parley(p, ["conversation", "answer", id, "a1.confirm.1", "yes"]).code).toBe(0)
    const done = parley(p, [
      "query",
      "--continue-turn",
      "--id",
      id,
      "--script",
      writeScript(p, "r.json", [{ message: "Done." }]),
      "--config",
      team
    ])
    expect(done.code, done.stderr).toBe(0)
    expect(effectsOf(p, "prod")).toBe("true\n")
  })
})
