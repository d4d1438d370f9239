/**
 * What `parley conversation print` does, once its command line is read
 * (docs/decisions.md#fast-start: no effect/cli here, so the fast path of `ReadingRun.ts` and
 * the effect/cli command of `Print.ts` run the same code). The page and
 * the Markdown library behind it are loaded only for `--format html`.
 *
 * @example
 * ```ts
 * import * as ConversationId from "../../domain/storage/ConversationId.ts"
 * import { printConversation } from "./PrintRun.ts"
 * printConversation({ id: ConversationId.parse("17738399468")!, format: "markdown", output: undefined }, { dir: "/work/.parley", given: undefined })
 * ```
 */
import * as Effect from "effect/Effect"
import { printable } from "../../domain/render/TerminalText.ts"
import * as Result from "effect/Result"
import { type EntryTooDeep, renderJson, renderMarkdown } from "../../domain/render/Render.ts"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import type { ConversationId } from "../../domain/storage/ConversationId.ts"
import { FILE_MODE } from "../../domain/storage/PrivateDir.ts"
import * as Labels from "../../domain/storage/Labels.ts"
import { project } from "../../domain/stream/Projection.ts"
import { OutputRefused, writeInto } from "../../layers/file/WriteInto.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { CliFailure } from "../CliFailure.ts"
import * as Hint from "../Hint.ts"
import * as Stdout from "../Stdout.ts"
import { type StorageAt, withStoreAt } from "./Store.ts"

/** The formats `print` writes. */
export type PrintFormat = "markdown" | "json" | "html"

const tooDeep = (c: Conversation, e: EntryTooDeep) =>
  `conversation ${c.id}: entry ${e.entry} is nested ${e.depth} levels deep, too deep to print as JSON; --format markdown or html shows the other entries.`

const render = (stored: Conversation, format: PrintFormat, hint: Hint.Context, compacted: boolean) =>
  Effect.gen(function* () {
    // RFD 064's `print --compacted`: the conversation as the model is sent it, compactions applied.
    const c = compacted ? { ...stored, entries: project(stored.entries) } : stored
    if (format === "json") {
      const text = renderJson(c.entries)
      if (Result.isFailure(text)) return yield* new CliFailure({ code: 1, message: tooDeep(c, text.failure) })
      return text.success
    }
    const labels = Labels.normalize(c.metadata.labels)
    if (format === "markdown") return renderMarkdown({ id: c.id, title: c.metadata.title, entries: c.entries, labels })
    // The page and its Markdown library only for a page: the other formats start without them.
    const [{ markdownToHtml }, { renderHtml }] = yield* Effect.promise(() =>
      Promise.all([import("../../layers/render/SafeMarkdown.ts"), import("../../domain/render/Html.ts")])
    )
    // The page shows the commands for its incomplete turn as they work when pasted in this shell.
    const commands = { resume: Hint.resume(c.id, hint), discard: Hint.discard(c.id, hint) }
    return renderHtml(
      { id: c.id, title: c.metadata.title, entries: c.entries, labels },
      { markdown: markdownToHtml, commands }
    )
  })

/**
 * Writes `text` into `file` (docs/security.md#other-users-on-the-machine): a regular file or a new one through a
 * temp sibling and a rename, so a reader never sees half a page; a symlink's
 * target, keeping the link; a FIFO, a device or `/dev/stdout` directly.
 */
const writeOutput = (file: string, text: string) =>
  Effect.tryPromise({
    // A new file is 0600 (a conversation is its owner's to share); an existing one keeps its mode.
    try: () => writeInto(file, text, { mode: FILE_MODE, forTerminal: (t) => printable(t, "\n\t") }),
    catch: (e) =>
      new CliFailure({
        code: 1,
        message:
          e instanceof OutputRefused
            ? `--output: cannot write ${file}: it is a ${e.kind === "other" ? "special file" : e.kind}; pass the path of a file.`
            : `--output: cannot write ${file} (${(e as NodeJS.ErrnoException).code ?? String(e)}); pass a path in a folder that exists and that you can write to.`
      })
  })

/** What `print` was asked. */
export interface PrintOptions {
  readonly id: ConversationId
  readonly format: PrintFormat
  /** Write here instead of stdout. */
  readonly output: string | undefined
  /** The compacted view (what the model sees) instead of the stored history. */
  readonly compacted?: boolean
}

/** Prints one conversation of `storage`. */
export const printConversation = (options: PrintOptions, storage: StorageAt) =>
  withStoreAt(
    storage,
    Effect.gen(function* () {
      const c = yield* ConversationStore.use((s) => s.load(options.id))
      const out = yield* render(
        c,
        options.format,
        { storage: storage.given, config: storage.configGiven },
        options.compacted === true
      )
      if (options.output !== undefined) yield* writeOutput(options.output, out)
      // On a terminal, what the conversation holds (model and tool text) is shown, never obeyed.
      else yield* Effect.sync(() => Stdout.write(out, (text) => printable(text, "\n\t")))
    })
  )
