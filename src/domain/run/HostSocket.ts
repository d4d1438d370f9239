/**
 * Where a running turn's host listens (docs/questions-and-approvals.md#runs-beyond-the-terminal): `<storage>/run/<id>.sock`
 * when that path fits a unix socket's address (about 107 bytes on Linux);
 * otherwise — a deep storage directory, or a store with no directory (the
 * PostgreSQL store, docs/postgres.md) — a per-user runtime directory
 * (`$XDG_RUNTIME_DIR`, else one of the user's own in the temp dir) under a name derived from the
 * storage and the conversation id, so every client finds the same path.
 *
 * @example
 * ```ts
 * import * as HostSocket from "parley/domain/run/HostSocket"
 * HostSocket.path({ storage: "/home/me/.parley", id: "17738399468", runtimeDir: "/run/user/1000", hash: (s) => "abc" })
 * // "/home/me/.parley/run/17738399468.sock"
 * ```
 *
 * @since 0.1.0
 */

/** The environment variable naming the file a detached run writes its conversation id into. */
export const ANNOUNCE = "PARLEY_ANNOUNCE"

/** The longest unix socket path this module hands out (sun_path is 108 bytes with its NUL on Linux). */
export const MAX_PATH_BYTES = 100

/** What the path depends on; `hash` is a stable digest of the storage (injected: the domain does no I/O). */
export interface Where {
  /** The storage directory (absolute), or a storage URL for a store without one. */
  readonly storage: string
  readonly id: string
  /** The per-user runtime directory (`$XDG_RUNTIME_DIR`, else the temp dir). */
  readonly runtimeDir: string
  readonly hash: (text: string) => string
  /** Whether `storage` is a directory (false for a database URL). */
  readonly isDirectory?: boolean
}

/** The directory of the hosts of a storage directory. */
export const runDir = (storage: string): string => `${storage.replace(/\/+$/, "")}/run`

/** The fallback directory (one per user): `<runtime>/parley`. */
export const fallbackDir = (runtimeDir: string): string => `${runtimeDir.replace(/\/+$/, "")}/parley`

/** The socket of conversation `id`'s running turn. */
export const path = (where: Where): string => {
  if (where.isDirectory !== false) {
    const inStorage = `${runDir(where.storage)}/${where.id}.sock`
    if (new TextEncoder().encode(inStorage).length <= MAX_PATH_BYTES) return inStorage
  }
  return `${fallbackDir(where.runtimeDir)}/${where.hash(where.storage).slice(0, 16)}-${where.id}.sock`
}

/** The conversation id of a socket file name in a run directory (`17738399468.sock`), if it is one. */
export const idOf = (fileName: string): string | undefined => /^(?:[0-9a-f]{16}-)?(\d+)\.sock$/.exec(fileName)?.[1]
