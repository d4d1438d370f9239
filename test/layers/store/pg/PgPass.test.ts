// A database url without its password (what printed commands repeat, what keeps a password out of
// `ps`) still connects: the password comes from $PGPASSWORD or a private ~/.pgpass, as with libpq.
// End to end against a server that demands a password (scram-sha-256 on 127.0.0.1).
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as PgPass from "../../../../src/layers/store/pg/PgPass.ts"
import { runParley } from "../../../support/Cli.ts"
import { tempDir } from "../../../support/Fixtures.ts"
import { type PgServer, pgSkip, psql, startPg } from "../../../support/Pg.ts"

const target = { host: "db.internal", port: "5432", database: "parley", user: "alice" }

describe("PgPass.match", () => {
  it("the first matching line wins; * matches anything; \\: and \\\\ are unescaped; comments skipped", () => {
    const text = [
      "# a comment:*:*:*:nope",
      "other:5432:parley:alice:wrong-host",
      "db.internal:5432:parley:bob:wrong-user",
      "*:5432:*:alice:pa\\:ss\\\\word",
      "*:*:*:*:too-late"
    ].join("\n")
    expect(PgPass.match(text, target)).toBe("pa:ss\\word")
    expect(PgPass.match("short:line\n", target)).toBeUndefined()
    expect(PgPass.match("*:6543:*:*:x\n", target)).toBeUndefined()
  })

  it("passwordFor: none when the url has one; $PGPASSWORD first; a file others may read is ignored", () => {
    const home = tempDir("parley-pgpass-")
    const file = path.join(home, ".pgpass")
    fs.writeFileSync(file, "*:*:*:alice:from-file\n", { mode: 0o600 })
    const url = "postgres://alice@db.internal/parley"
    expect(PgPass.passwordFor("postgres://alice:given@db.internal/parley", { HOME: home })).toBeUndefined()
    expect(PgPass.passwordFor(url, { HOME: home, PGPASSWORD: "from-env" })).toBe("from-env")
    expect(PgPass.passwordFor(url, { HOME: home })).toBe("from-file")
    expect(PgPass.passwordFor(url, { HOME: "/nonexistent", PGPASSFILE: file })).toBe("from-file")
    fs.chmodSync(file, 0o644)
    expect(PgPass.passwordFor(url, { HOME: home })).toBeUndefined()
    fs.rmSync(home, { recursive: true, force: true })
  })
})

let server: PgServer | undefined
const home = tempDir("parley-pgpass-home-")
beforeAll(async () => {
  if (pgSkip !== undefined) return
  server = await startPg()
  psql(server.url, "ALTER ROLE parley PASSWORD 'db-pw-7c21'")
  // From the reload on, a TCP connection must prove the password (the reload itself still gets in on trust).
  fs.writeFileSync(
    path.join(server.dir, "data", "pg_hba.conf"),
    "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
  )
  psql(server.url, "SELECT pg_reload_conf()")
}, 60_000)
afterAll(() => {
  server?.stop()
  fs.rmSync(home, { recursive: true, force: true })
})

describe.skipIf(pgSkip !== undefined)(
  `a password outside the url${pgSkip === undefined ? "" : ` (skipped: ${pgSkip})`}`,
  () => {
    const parley = (args: ReadonlyArray<string>, env: Record<string, string | undefined>) =>
      runParley(args, {
        cwd: home,
        env: { HOME: home, PGPASSWORD: undefined, PGPASSFILE: undefined, PARLEY_STORAGE: undefined, ...env }
      })

    it("the hint printed for a url with a password omits it, and works pasted with PGPASSWORD or ~/.pgpass", () => {
      const bare = server!.url
      const withPassword = bare.replace("parley@", "parley:db-pw-7c21@")
      const printed = parley(["conversation", "print", "17953588145"], { PARLEY_STORAGE: withPassword })
      expect(printed.code).toBe(1)
      expect(printed.stderr).not.toContain("db-pw-7c21")
      const pasted = /`\S+ (conversation ls --archived --storage \S+)`/.exec(printed.stderr)?.[1]
      expect(pasted, printed.stderr).toBe(`conversation ls --archived --storage ${bare}`)
      const args = pasted!.split(" ")
      // Without a password anywhere, the server refuses.
      const refused = parley(args, {})
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("cannot use PostgreSQL")
      expect(parley(args, { PGPASSWORD: "db-pw-7c21" }).code).toBe(0)
      fs.writeFileSync(path.join(home, ".pgpass"), "127.0.0.1:*:parley:parley:db-pw-7c21\n", { mode: 0o600 })
      expect(parley(args, {}).code).toBe(0)
      fs.chmodSync(path.join(home, ".pgpass"), 0o644)
      expect(parley(args, {}).code).toBe(1)
    }, 120_000)
  }
)
