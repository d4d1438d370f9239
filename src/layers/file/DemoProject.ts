/**
 * The temporary project of `parley demo`: a `notes.txt` the scripted model
 * asks `write_file` to replace (so the tool asks whether to overwrite it),
 * the model's steps, and an empty storage. Each new demo removes earlier
 * demos' projects over a day old.
 *
 * @internal
 * @example
 * ```ts
 * import * as os from "node:os"
 * import * as DemoProject from "parley/layers/file/DemoProject"
 * const { project, storage, script } = DemoProject.make(os.tmpdir(), false)
 * ```
 */
import * as fs from "node:fs"
import * as path from "node:path"

const NOTE = "Demo note: parley recorded the question the tool asked, and its answer.\n"

/** The scripted model's steps; without a TTY it also answers the tool's question. */
export const demoScript = (interactive: boolean) => ({
  steps: [
    {
      reasoning: "notes.txt exists, so write_file will ask before replacing it.",
      message: "I'll write today's note to notes.txt.",
      tool_calls: [{ id: "call_1", name: "write_file", arguments: { path: "notes.txt", content: NOTE } }]
    },
    ...(interactive ? [] : [{ structured: { answer: true } }]),
    { message: "Done: notes.txt holds the new note, and the overwrite question is in the conversation." }
  ]
})

/** How long a demo's project is kept for you to look at. */
const KEPT_MS = 24 * 60 * 60 * 1000

/**
 * Removes earlier demos' projects from `tmp` that are over a day old, as
 * detached runs' logs are: only directories of this user's (not links, not
 * another user's); one that cannot be removed is left as it is.
 */
export const sweepOldDemos = (tmp: string, now: number = Date.now()): void => {
  let names: Array<string>
  try {
    names = fs.readdirSync(tmp).filter((n) => n.startsWith("parley-demo-"))
  } catch {
    return
  }
  const uid = process.getuid?.()
  for (const name of names) {
    const dir = path.join(tmp, name)
    try {
      const st = fs.lstatSync(dir)
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || now - st.mtimeMs < KEPT_MS) continue
      fs.rmSync(dir, { recursive: true, force: true })
    } catch {
      // Gone meanwhile, or not ours to remove: nothing to do.
    }
  }
}

/** A demo's project, made under `tmp`: where it is, its storage and the scripted model's steps. */
export const make = (
  tmp: string,
  interactive: boolean
): { readonly project: string; readonly storage: string; readonly script: string } => {
  sweepOldDemos(tmp)
  const project = fs.mkdtempSync(path.join(tmp, "parley-demo-"))
  const storage = path.join(project, ".parley")
  fs.mkdirSync(storage, { recursive: true, mode: 0o700 })
  fs.writeFileSync(path.join(project, "notes.txt"), "An older note.\n")
  const script = path.join(project, "script.json")
  fs.writeFileSync(script, JSON.stringify(demoScript(interactive), null, 2) + "\n")
  return { project, storage, script }
}
