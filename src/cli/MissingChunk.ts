/**
 * A file of parley's own build missing as a command starts (a rebuild or an
 * update replaced `dist/` under it, a copy left one out): one line that names
 * the file and what to do, instead of Node's loader stack. With parley's
 * resolve hook (`layers/file/SiblingChunks.ts`) Node 22 and 24 say `ENOENT …
 * open '…'` as they read it; without it, `ERR_MODULE_NOT_FOUND` as they
 * resolve it.
 *
 * @internal
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The file `error` says is missing, when it is one. */
const missingFile = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("code" in error)) return undefined
  const { code } = error
  if (code === "ENOENT" && "path" in error && typeof error.path === "string") return error.path
  if (code !== "ERR_MODULE_NOT_FOUND") return undefined
  if ("url" in error && typeof error.url === "string" && error.url.startsWith("file:")) return fileURLToPath(error.url)
  const named = "message" in error && typeof error.message === "string" ? /module '([^']+)'/.exec(error.message) : null
  return named?.[1]
}

/**
 * The line to say when `error` is a file of the build in `entry`'s directory
 * that is missing; undefined for anything else (a missing package or input
 * file is not the installation's fault, and keeps its own error).
 */
export const line = (error: unknown, entry: string): string | undefined => {
  let file: string | undefined
  let dir: string
  try {
    file = missingFile(error)
    if (file === undefined || !entry.startsWith("file:")) return undefined
    dir = path.dirname(fileURLToPath(entry))
  } catch {
    // A URL that names no local file (`file://host/…`): not ours to say.
    return undefined
  }
  if (path.dirname(file) !== dir) return undefined
  return `parley: this copy of parley is incomplete: ${file} is missing. Install it again (npm install -g parley), or run npm run build in its checkout.\n`
}
