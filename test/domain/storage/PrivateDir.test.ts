// The rule for runtime paths: a directory is private when it is a directory (not a link), this user's, with no
// group/other bits; a socket when it is a socket and this user's; the temp-dir fallback's parent is judged too.
import { describe, expect, it } from "@effect/vitest"
import { NotPrivate } from "../../../src/domain/storage/NotPrivate.ts"
import * as PrivateDir from "../../../src/domain/storage/PrivateDir.ts"

const dir = (uid: number, mode: number): PrivateDir.Seen => ({ kind: "directory", uid, mode })

describe("PrivateDir.problemOf", () => {
  it("a directory of ours with no group/other bits passes; each other case names its problem", () => {
    expect(PrivateDir.problemOf(dir(1000, 0o700), "directory", 1000)).toBeUndefined()
    expect(PrivateDir.problemOf(dir(1000, 0o1700), "directory", 1000)).toBeUndefined()
    expect(PrivateDir.problemOf(dir(1001, 0o700), "directory", 1000)).toBe("owner")
    expect(PrivateDir.problemOf(dir(1001, 0o777), "directory", 1000)).toBe("owner")
    for (const open of [0o770, 0o707, 0o750, 0o701, 0o710, 0o755, 0o777])
      expect(PrivateDir.problemOf(dir(1000, open), "directory", 1000)).toBe("open")
    expect(PrivateDir.problemOf({ kind: "symlink", uid: 1000, mode: 0o777 }, "directory", 1000)).toBe("symlink")
    expect(PrivateDir.problemOf({ kind: "file", uid: 1000, mode: 0o600 }, "directory", 1000)).toBe("kind")
  })

  it("a socket: ours and a socket; its bits are not judged (its 0700 directory keeps others out)", () => {
    expect(PrivateDir.problemOf({ kind: "socket", uid: 0, mode: 0o755 }, "socket", 0)).toBeUndefined()
    expect(PrivateDir.problemOf({ kind: "socket", uid: 1001, mode: 0o600 }, "socket", 0)).toBe("owner")
    expect(PrivateDir.problemOf({ kind: "symlink", uid: 0, mode: 0o777 }, "socket", 0)).toBe("symlink")
    expect(PrivateDir.problemOf({ kind: "file", uid: 0, mode: 0o600 }, "socket", 0)).toBe("kind")
  })
})

describe("PrivateDir.chainOf", () => {
  it("the temp-dir fallback <tmp>/parley-<uid>/parley brings its parent; other directories stand alone", () => {
    expect(PrivateDir.chainOf("/tmp/parley-1000/parley", 1000)).toStrictEqual([
      "/tmp/parley-1000",
      "/tmp/parley-1000/parley"
    ])
    expect(PrivateDir.chainOf("/tmp/parley-1000/parley/", 1000)).toStrictEqual([
      "/tmp/parley-1000",
      "/tmp/parley-1000/parley"
    ])
    expect(PrivateDir.chainOf("/tmp/parley-1001/parley", 1000)).toStrictEqual(["/tmp/parley-1001/parley"])
    expect(PrivateDir.chainOf("/run/user/1000/parley", 1000)).toStrictEqual(["/run/user/1000/parley"])
    expect(PrivateDir.chainOf("/home/me/.parley/run", 1000)).toStrictEqual(["/home/me/.parley/run"])
  })
})

describe("PrivateDir.ancestorProblem (ssh's rule for the directories above <tmp>/parley-<uid>)", () => {
  it("ours or root's, and sticky when others may write: passes; each other case names its problem", () => {
    for (const ok of [0o755, 0o700, 0o1777, 0o1770, 0o1757, 0o711])
      for (const owner of [0, 1000]) expect(PrivateDir.ancestorProblem(dir(owner, ok), 1000)).toBeUndefined()
    for (const shared of [0o777, 0o775, 0o757, 0o770, 0o707, 0o720, 0o702])
      for (const owner of [0, 1000]) expect(PrivateDir.ancestorProblem(dir(owner, shared), 1000)).toBe("shared")
    expect(PrivateDir.ancestorProblem(dir(1001, 0o755), 1000)).toBe("owner")
    expect(PrivateDir.ancestorProblem(dir(1001, 0o1777), 1000)).toBe("owner")
    expect(PrivateDir.ancestorProblem({ kind: "symlink", uid: 0, mode: 0o777 }, 1000)).toBe("symlink")
    expect(PrivateDir.ancestorProblem({ kind: "file", uid: 0, mode: 0o755 }, 1000)).toBe("kind")
  })

  it("the ancestors of the temp-dir fallback are / down to the temp dir; other directories have none to judge", () => {
    expect(PrivateDir.ancestorsOf("/tmp/parley-1000/parley", 1000)).toStrictEqual(["/", "/tmp"])
    expect(PrivateDir.ancestorsOf("/var/tmp/x/parley-1000/parley/", 1000)).toStrictEqual([
      "/",
      "/var",
      "/var/tmp",
      "/var/tmp/x"
    ])
    expect(PrivateDir.ancestorsOf("/parley-0/parley", 0)).toStrictEqual(["/"])
    expect(PrivateDir.ancestorsOf("/run/user/1000/parley", 1000)).toStrictEqual([])
    expect(PrivateDir.ancestorsOf("/tmp/parley-1001/parley", 1000)).toStrictEqual([])
  })
})

describe("PrivateDir.openToOthers", () => {
  it("others reach the conversations when every directory on the way lets them search it", () => {
    expect(PrivateDir.openToOthers([0o755])).toBe(false) // no conversations/ yet: nothing to read
    expect(PrivateDir.openToOthers([0o755, 0o755])).toBe(true)
    expect(PrivateDir.openToOthers([0o711, 0o701])).toBe(true)
    expect(PrivateDir.openToOthers([0o700, 0o755])).toBe(false)
    expect(PrivateDir.openToOthers([0o755, 0o700])).toBe(false)
    expect(PrivateDir.openToOthers([0o744])).toBe(false)
    expect(PrivateDir.openToOthers([])).toBe(false)
  })
})

describe("NotPrivate", () => {
  it("names the path, the owner and the mode", () => {
    const e = new NotPrivate({
      path: "/tmp/parley-0",
      want: "directory",
      problem: "owner",
      owner: 1001,
      mode: 0o777,
      uid: 0
    })
    expect(e.message).toBe(
      "Refusing to use /tmp/parley-0: it belongs to uid 1001, not to you (uid 0) (owner uid 1001, mode 0777)."
    )
    expect(
      new NotPrivate({ path: "/r", want: "directory", problem: "open", owner: 0, mode: 0o755, uid: 0 }).message
    ).toBe("Refusing to use /r: other users have access to it (owner uid 0, mode 0755).")
    expect(
      new NotPrivate({ path: "/t", want: "directory", problem: "shared", owner: 0, mode: 0o777, uid: 1000 }).message
    ).toBe("Refusing to use /t: other users may write in it and it has no sticky bit (owner uid 0, mode 0777).")
  })
})
