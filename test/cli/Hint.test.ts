// Printed commands repeat the storage; a database url's password must not go
// with it (stderr, detached-*.log, pasted commands), while a command without
// it still names the same database.
import { describe, expect, it } from "@effect/vitest"
import * as Hint from "../../src/cli/Hint.ts"

const withoutInvocation = (command: string) => command.slice(command.indexOf(" conversation") + 1)

describe("Hint: the storage a printed command repeats", () => {
  it("a database url loses its password and keeps user, host, port, database and parameters", () => {
    expect(
      withoutInvocation(Hint.check("17953588145", { storage: "postgres://alice:s3cr%40t@DB.internal/parley" }))
    ).toBe("conversation check 17953588145 --storage postgres://alice@db.internal:5432/parley")
    expect(
      withoutInvocation(
        Hint.answer(
          "17953588145",
          "a1.q",
          { placeholder: "yes|no" },
          { storage: "postgresql://bob:pw@10.0.0.5:6543/p?sslmode=require" }
        )
      )
    ).toBe("conversation answer 17953588145 a1.q <yes|no> --storage 'postgres://bob@10.0.0.5:6543/p?sslmode=require'")
  })

  it("a url without a password and a directory are repeated as given", () => {
    expect(Hint.shownStorage("postgres://alice@127.0.0.1:5432/parley")).toBe("postgres://alice@127.0.0.1:5432/parley")
    expect(withoutInvocation(Hint.listArchived({ storage: "/tmp/my dir/.parley" }))).toBe(
      "conversation ls --archived --storage '/tmp/my dir/.parley'"
    )
  })
})

describe("Hint.sameContext: one rule for what a printed command repeats", () => {
  const ctx = { storage: "/s", config: "/c.toml", model: "openai/x", script: "/s.json", detachedPolicy: "defer" }
  it("--storage and --config on every command; the run's flags only on the commands that take them", () => {
    expect(Hint.sameContext(["conversation", "ls"], ctx)).toStrictEqual(["--storage", "/s", "--config", "/c.toml"])
    expect(Hint.sameContext(["conversation", "kill", "1"], ctx)).toStrictEqual([
      "--storage",
      "/s",
      "--config",
      "/c.toml"
    ])
    expect(Hint.sameContext(["query", "--continue-turn"], ctx)).toStrictEqual([
      "--model",
      "openai/x",
      "--script",
      "/s.json",
      "--detached-policy",
      "defer",
      "--storage",
      "/s",
      "--config",
      "/c.toml"
    ])
    expect(Hint.sameContext(["conversation", "answer", "1", "q"], ctx)).toStrictEqual([
      "--script",
      "/s.json",
      "--detached-policy",
      "defer",
      "--storage",
      "/s",
      "--config",
      "/c.toml"
    ])
    expect(Hint.sameContext(["conversation", "compact", "1"], ctx)).toStrictEqual([
      "--model",
      "openai/x",
      "--script",
      "/s.json",
      "--storage",
      "/s",
      "--config",
      "/c.toml"
    ])
    expect(Hint.sameContext(["query"], {})).toStrictEqual([])
  })
})
