/**
 * The one rule for the places parley keeps what only its user may reach:
 * the directories of host sockets and detached logs (`<storage>/run`,
 * `$XDG_RUNTIME_DIR/parley`, `<tmp>/parley-<uid>/parley`), a database's
 * state directory (the serve token), and the socket files in them. A path
 * is used only when `lstat` shows it is what it should be (a directory, a
 * socket), not a symbolic link, owned by this user, and — a directory — with
 * no group or other permission bits; else it is refused with the
 * `NotPrivate` error (`NotPrivate.ts`), never changed (`mkdir`'s mode does nothing to a
 * directory another user made first). A socket's own bits are not judged: it
 * is reached only through its 0700 directory, and the host sets them to 0600
 * a moment after it listens.
 *
 * No effect/Schema here: `conversation ls` reads the modes and the rule, and
 * loads no Schema code when nothing fails (start-up).
 *
 * Also here: the modes parley creates storage with (`~/.ssh`'s: 0700 and
 * 0600) and when an existing storage directory is open to other users.
 *
 * @example
 * ```ts
 * import * as PrivateDir from "parley/domain/storage/PrivateDir"
 * PrivateDir.problemOf({ kind: "directory", uid: 1001, mode: 0o777 }, "directory", 0) // "owner"
 * PrivateDir.chainOf("/tmp/parley-0/parley", 0) // ["/tmp/parley-0", "/tmp/parley-0/parley"]
 * PrivateDir.ancestorsOf("/tmp/parley-0/parley", 0) // ["/", "/tmp"]
 * PrivateDir.ancestorProblem({ kind: "directory", uid: 0, mode: 0o777 }, 1000) // "shared"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
/** The mode of every directory parley creates in a storage or a runtime directory (less what the umask removes). */
export const DIR_MODE = 0o700

/** The mode of every file parley creates there (conversation files, journals, indexes, locks, logs, exports). */
export const FILE_MODE = 0o600

/** What `lstat` saw at a path. */
export interface Seen {
  readonly kind: "directory" | "socket" | "file" | "symlink" | "other"
  readonly uid: number
  /** The permission bits (`st_mode & 0o7777`). */
  readonly mode: number
}

/** What a private path should be. */
export const wants = ["directory", "socket"] as const
export type Want = (typeof wants)[number]

/**
 * Why a path is refused: a link, the wrong kind of file, another user's, open
 * to others, or (an ancestor of the temp-dir fallback) writable by others
 * without the sticky bit.
 */
export const problems = ["symlink", "kind", "owner", "open", "shared"] as const
export type Problem = (typeof problems)[number]

/** Why `seen` may not be used as a private `want` of user `uid`; `undefined` when it may. */
export const problemOf = (seen: Seen, want: Want, uid: number): Problem | undefined => {
  if (seen.kind === "symlink") return "symlink"
  if (seen.kind !== want) return "kind"
  if (seen.uid !== uid) return "owner"
  if (want === "directory" && (seen.mode & 0o077) !== 0) return "open"
  return undefined
}

/**
 * The directories that must be private for `dir` to be: `dir` itself, and
 * — for the temp-dir fallback `<tmp>/parley-<uid>/parley` — its parent too,
 * whose owner could otherwise swap `parley` for a directory of theirs
 * between the check and the use. Outermost first (the order to create and
 * check them in).
 */
export const chainOf = (dir: string, uid: number): ReadonlyArray<string> => {
  const trimmed = dir.replace(/\/+$/, "")
  const cut = trimmed.lastIndexOf("/")
  const parent = trimmed.slice(0, cut)
  return trimmed.slice(cut + 1) === "parley" && parent.endsWith(`/parley-${uid}`) ? [parent, trimmed] : [trimmed]
}

/**
 * Why `seen`, an ancestor of the temp-dir fallback `<tmp>/parley-<uid>`, may
 * not be trusted by user `uid`; `undefined` when it may. ssh's rule for the
 * paths above its keys: a directory (not a link), owned by this user or
 * root, and — when group or others may write in it — sticky, so nobody else
 * can rename or replace what we made in it.
 */
export const ancestorProblem = (seen: Seen, uid: number): Problem | undefined => {
  if (seen.kind === "symlink") return "symlink"
  if (seen.kind !== "directory") return "kind"
  if (seen.uid !== uid && seen.uid !== 0) return "owner"
  if ((seen.mode & 0o022) !== 0 && (seen.mode & 0o1000) === 0) return "shared"
  return undefined
}

/**
 * The directories above the temp-dir fallback of the absolute `dir`
 * (`<tmp>/parley-<uid>/parley`): `/` down to `<tmp>`, outermost first, each
 * to pass {@link ancestorProblem}. None for other directories: a storage is
 * its user's, and `$XDG_RUNTIME_DIR` is used only when it is private.
 */
export const ancestorsOf = (dir: string, uid: number): ReadonlyArray<string> => {
  const chain = chainOf(dir, uid)
  if (chain.length < 2) return []
  const found: Array<string> = []
  for (let d = chain[0]!; d !== "/"; ) {
    d = d.slice(0, d.lastIndexOf("/")) || "/"
    found.unshift(d)
  }
  return found
}

/**
 * Whether other users can reach the conversations under the directories
 * `modes` (the storage's, then `conversations/`'s): both exist and each
 * grants group or other search permission, so files JP or an older parley
 * made 0644 are readable by name. A storage without `conversations/` has
 * nothing to read yet, and is not warned about.
 */
export const openToOthers = (modes: ReadonlyArray<number>): boolean =>
  modes.length === 2 && modes.every((m) => (m & 0o011) !== 0)

/** `mode` as `ls`-style octal: `0755`. */
export const octal = (mode: number): string => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`
