import { describe, expect, it } from "@effect/vitest"
import * as Storage from "../../../src/domain/storage/Storage.ts"

describe("Storage", () => {
  it("a postgres:// or postgresql:// url (any case) is a database, kept as given; anything else a directory", () => {
    expect(Storage.of("postgres://u:p@db/parley")).toStrictEqual(Storage.Database({ url: "postgres://u:p@db/parley" }))
    expect(Storage.of("POSTGRESQL://db/x")._tag).toBe("Database")
    expect(Storage.of("/home/me/.parley")).toStrictEqual(Storage.Directory({ path: "/home/me/.parley" }))
    // Not a url: a directory of that name (the CLI refuses `postgres:/bad` before it gets here).
    expect(Storage.of("postgres:/bad")._tag).toBe("Directory")
    expect(Storage.of("./postgres://x")._tag).toBe("Directory")
  })

  it("text gives back what of was given; match runs the case of the kind", () => {
    for (const t of ["postgres://db/p", "/s/.parley"]) expect(Storage.text(Storage.of(t))).toBe(t)
    const shown = (s: Storage.Storage) => Storage.match(s, { Database: () => "the database", Directory: (d) => d.path })
    expect(shown(Storage.of("postgres://db/p"))).toBe("the database")
    expect(shown(Storage.of("/s/.parley"))).toBe("/s/.parley")
  })
})
