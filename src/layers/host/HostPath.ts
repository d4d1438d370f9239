/**
 * The socket of a conversation's running turn, for this machine
 * (docs/security.md#runtime-directories-and-sockets):
 * the domain's rule (`HostSocket.path`) with this user's runtime
 * directory (`$XDG_RUNTIME_DIR` when it is this user's alone, else `parley-<uid>` in the temp dir: never a
 * directory another user made — `PrivateDir` checks each, and the temp dir's ancestors, before use) and a SHA-256 of the storage's absolute path
 * — for a database (docs/decisions.md#database-storage-beside-the-directory), of its url without the password
 * (`databaseKey`), so every `query --detach`, `attach`, `answer`, `kill` and
 * `serve` on that database on this machine finds the same sockets.
 *
 * @example
 * ```ts
 * import * as HostPath from "parley/layers/host/HostPath"
 * HostPath.of("/home/me/.parley", "17738399468") // "/home/me/.parley/run/17738399468.sock"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as HostSocket from "../../domain/run/HostSocket.ts"
import { problemOf } from "../../domain/storage/PrivateDir.ts"
import { sha256 } from "../../domain/storage/Sha256.ts"
import { databaseKey } from "../../programs/StorageDir.ts"
import * as Storage from "../../domain/storage/Storage.ts"
import * as ErrorCode from "../ErrorCode.ts"

/**
 * Whether `dir` (`$XDG_RUNTIME_DIR`) is this user's alone — a directory, not
 * a link, ours, no group/other bits — and so may hold our runtime directory.
 * After `su` without `-` or `sudo -E` it is another user's, who could swap
 * our `parley` in it for theirs: then the temp dir is used instead. A
 * missing one is used as named (the host makes it 0700, as before; the
 * login manager normally has).
 */
const privateXdg = (dir: string, uid: number | undefined): boolean => {
  if (uid === undefined) return true
  try {
    const stat = fs.lstatSync(dir)
    const kind = stat.isSymbolicLink() ? "symlink" : stat.isDirectory() ? "directory" : "other"
    return problemOf({ kind, uid: stat.uid, mode: stat.mode & 0o7777 }, "directory", uid) === undefined
  } catch (error) {
    return ErrorCode.of(error) === "ENOENT"
  }
}

/**
 * The temp dir with its links resolved: every directory above
 * `parley-<uid>` is judged with `lstat` (`PrivateDir.ancestorsOf`), so the
 * path must have none (macOS's `/var` is one).
 */
const realTmp = (): string => {
  try {
    return fs.realpathSync(os.tmpdir())
  } catch {
    return os.tmpdir()
  }
}

/** This user's runtime directory: `$XDG_RUNTIME_DIR` when it is private, else one of ours in the temp dir. */
const runtimeDir = (): string => {
  const uid = process.getuid?.()
  const xdg = process.env["XDG_RUNTIME_DIR"]
  return xdg && privateXdg(xdg, uid) ? xdg : path.join(realTmp(), `parley-${uid ?? os.userInfo().username}`)
}

/** The host socket of conversation `id` in the storage directory `storage`. */
export const of = (storage: string, id: string): string =>
  Storage.match(Storage.of(storage), {
    // A database has no directory of its own: the per-user runtime directory, keyed by the url's hash
    // (docs/decisions.md#database-storage-beside-the-directory).
    Database: ({ url }) =>
      HostSocket.path({ storage: databaseKey(url), id, runtimeDir: runtimeDir(), hash: sha256, isDirectory: false }),
    // The runtime directory only when the storage's own path is too long for a socket: finding it
    // loads node:os (~0.5 ms of a scripted turn, issue 50), which a storage's own run/ never needs.
    Directory: (dir) =>
      HostSocket.path({
        storage: path.resolve(dir.path),
        id,
        get runtimeDir() {
          return runtimeDir()
        },
        hash: sha256
      })
  })

/** The directory a run of `storage` keeps its files in (detached logs): the storage's run/, or the per-user one for a database. */
export const runDir = (storage: string): string =>
  Storage.match(Storage.of(storage), {
    Database: () => HostSocket.fallbackDir(runtimeDir()),
    Directory: (dir) => HostSocket.runDir(path.resolve(dir.path))
  })

/** The directories the hosts of `storage` may listen in (its own, and the per-user fallback). */
export const dirs = (storage: string): ReadonlyArray<string> =>
  Storage.match(Storage.of(storage), {
    Database: () => [HostSocket.fallbackDir(runtimeDir())],
    Directory: (dir) => [HostSocket.runDir(path.resolve(dir.path)), HostSocket.fallbackDir(runtimeDir())]
  })

/** A host socket file of a storage: its conversation id and path. */
export interface SocketFile {
  readonly id: string
  readonly path: string
}

/**
 * The host socket files of `storage`'s conversations, one directory read
 * each (a killed host's file too: ask it before trusting it). The per-user
 * directory holds other storages' hosts as well: only files at the path
 * `of` gives for their id are ours.
 */
export const sockets = (storage: string): ReadonlyArray<SocketFile> => {
  const found: Array<SocketFile> = []
  for (const dir of dirs(storage)) {
    let names: Array<string> = []
    try {
      names = fs.readdirSync(dir)
    } catch {
      continue
    }
    for (const name of names) {
      const id = HostSocket.idOf(name)
      const file = path.join(dir, name)
      if (id !== undefined && of(storage, id) === file) found.push({ id, path: file })
    }
  }
  return found
}
