// A file of parley's own build missing as a command starts: one line naming it (src/cli/MissingChunk.ts).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { line } from "../../src/cli/MissingChunk.ts"
import { bundle } from "../support/Cli.ts"
import { tempDir } from "../support/Fixtures.ts"

const dir = tempDir("parley-missing-chunk-")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const entry = "file:///opt/parley/dist/parley.mjs"
const enoent = (file: string) =>
  Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: "ENOENT", path: file })

describe("which errors are a missing file of the build", () => {
  it("a file of the entry's directory, as read (ENOENT) or as resolved (ERR_MODULE_NOT_FOUND)", () => {
    expect(line(enoent("/opt/parley/dist/chunk-AB12.mjs"), entry)).toBe(
      "parley: this copy of parley is incomplete: /opt/parley/dist/chunk-AB12.mjs is missing. Install it again (npm install -g parley), or run npm run build in its checkout.\n"
    )
    const resolved = Object.assign(new Error("x"), {
      code: "ERR_MODULE_NOT_FOUND",
      url: "file:///opt/parley/dist/Run-X.mjs"
    })
    expect(line(resolved, entry)).toContain(" /opt/parley/dist/Run-X.mjs is missing.")
    const named = Object.assign(
      new Error("Cannot find module '/opt/parley/dist/Run-Y.mjs' imported from /opt/parley/dist/parley.mjs"),
      { code: "ERR_MODULE_NOT_FOUND" }
    )
    expect(line(named, entry)).toContain(" /opt/parley/dist/Run-Y.mjs is missing.")
  })

  it("anything else keeps its own error", () => {
    // Another directory (a user's file, a package), another error, not an error, an entry that is no file.
    expect(line(enoent("/home/me/.parley/config.toml"), entry)).toBeUndefined()
    expect(line(enoent("/opt/parley/dist/sub/chunk.mjs"), entry)).toBeUndefined()
    expect(
      line(Object.assign(new Error("x"), { code: "ERR_MODULE_NOT_FOUND", url: "node:nothing" }), entry)
    ).toBeUndefined()
    expect(
      line(Object.assign(new Error("x"), { code: "EACCES", path: "/opt/parley/dist/a.mjs" }), entry)
    ).toBeUndefined()
    expect(line(new Error("boom"), entry)).toBeUndefined()
    expect(line("ENOENT", entry)).toBeUndefined()
    expect(line(enoent("/opt/parley/dist/a.mjs"), "data:text/javascript,")).toBeUndefined()
    // URLs that name no local file.
    expect(line(enoent("/opt/parley/dist/a.mjs"), "file://host/opt/parley/dist/parley.mjs")).toBeUndefined()
    expect(
      line(
        Object.assign(new Error("x"), { code: "ERR_MODULE_NOT_FOUND", url: "file://host/opt/parley/dist/a.mjs" }),
        entry
      )
    ).toBeUndefined()
  })
})

describe("the built parley with a chunk missing", () => {
  it("says so in one line and exits 1, on the fast path and the command tree alike", () => {
    const copy = path.join(dir, "dist")
    fs.cpSync(path.dirname(bundle), copy, { recursive: true, filter: (f) => !f.includes(`${path.sep}.bin`) })
    // A fast path's script, the fast paths' command lines, the command tree.
    for (const [gone, argv] of [
      ["parley-ls.cjs", ["conversation", "ls"]],
      ["parley-reading.cjs", ["conversation", "print", "17758406187"]],
      ["parley-fast.mjs", ["conversation", "ls"]],
      ["parley-main.mjs", ["serve", "--help"]]
    ] as const) {
      fs.renameSync(path.join(copy, gone), path.join(copy, `${gone}.away`))
      const r = spawnSync(
        process.execPath,
        [path.join(copy, "parley.mjs"), "--storage", path.join(dir, "s"), ...argv],
        {
          encoding: "utf8",
          timeout: 60_000
        }
      )
      fs.renameSync(path.join(copy, `${gone}.away`), path.join(copy, gone))
      expect(r.status, r.stderr).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr).toBe(
        `parley: this copy of parley is incomplete: ${path.join(copy, gone)} is missing. Install it again (npm install -g parley), or run npm run build in its checkout.\n`
      )
    }
    // Whole again, it runs.
    const whole = spawnSync(
      process.execPath,
      [path.join(copy, "parley.mjs"), "--storage", path.join(dir, "s"), "conversation", "ls"],
      {
        encoding: "utf8",
        timeout: 60_000
      }
    )
    expect(whole.status, whole.stderr).toBe(0)
  })
})
