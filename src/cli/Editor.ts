/**
 * `e` at the incomplete-turn menu (RFD 023 "edit"): the pending query opens
 * in `$VISUAL` / `$EDITOR` (else `vi`). The edit counts only when the editor
 * exits 0 and leaves a non-empty file (issue 14 item 4, as `git commit`
 * does); otherwise the pending query is kept exactly as it was and nothing
 * is sent.
 *
 * @example
 * ```ts
 * import * as Editor from "./Editor.ts"
 * const result = yield* Editor.edit("the pending query")
 * // { _tag: "Edited", text } | { _tag: "Kept", why: "the editor exited with status 1" }
 * ```
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"

export type Edit =
  | { readonly _tag: "Edited"; readonly text: string }
  | { readonly _tag: "Kept"; readonly why: string }

/** The editor command: `$VISUAL`, else `$EDITOR`, else `vi`. */
export const editorOf = (env: Readonly<Record<string, string | undefined>>): string =>
  [env["VISUAL"], env["EDITOR"]].find((e) => e !== undefined && e.trim() !== "") ?? "vi"

/** Opens `text` in the editor and says what came of it. */
export const edit = (text: string, env: Readonly<Record<string, string | undefined>> = process.env): Effect.Effect<Edit> =>
  Effect.sync(() => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-edit-"))
    try {
      const file = path.join(dir, "QUERY_MESSAGE.md")
      fs.writeFileSync(file, text)
      const editor = editorOf(env)
      // Through the shell, so `EDITOR="code --wait"` works; the file is "$1", never interpolated.
      const run = spawnSync("sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" })
      if (run.error !== undefined) return { _tag: "Kept", why: `the editor (${editor}) could not be started: ${run.error.message}` }
      if (run.status !== 0) {
        return { _tag: "Kept", why: run.status === null ? `the editor (${editor}) was stopped by ${run.signal}` : `the editor (${editor}) exited with status ${run.status}` }
      }
      const edited = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trimEnd() : ""
      return edited.trim() === "" ? { _tag: "Kept", why: "the edited query is empty" } : { _tag: "Edited", text: edited }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
