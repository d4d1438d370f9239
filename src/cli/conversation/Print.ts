/**
 * `parley conversation print ID [--format markdown|json|html] [--output FILE]`:
 * the conversation as read by a person (inquiries per RFD 082 "Reader
 * behavior", the incomplete turn with RFD 023's markers), every stored entry
 * as JSON with the storage base64 removed, or one self-contained HTML page
 * with each question inside its tool call (issue 15).
 *
 * The Markdown library behind the page is loaded only for `--format html`, so
 * the other formats start as fast as before.
 *
 * @example
 * ```sh
 * parley conversation print 17738399468 --format json | jq '.[0]'
 * parley conversation print 17738399468 --format html --output page.html
 * ```
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { printable } from "../../domain/render/TerminalText.ts"
import { renderHtml } from "../../domain/render/Html.ts"
import { EntryTooDeep, renderJson, renderMarkdown } from "../../domain/render/Render.ts"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { OutputRefused, writeInto } from "../../layers/file/WriteInto.ts"
import { CliFailure } from "../CliFailure.ts"
import * as Hint from "../Hint.ts"
import { storage } from "../Root.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

const tooDeep = (c: Conversation, e: EntryTooDeep) =>
  `conversation ${c.id}: entry ${e.entry} is nested ${e.depth} levels deep, too deep to print as JSON; --format markdown or html shows the other entries.`

const render = (c: Conversation, format: "markdown" | "json" | "html", hint: Hint.Context) =>
  Effect.gen(function*() {
    if (format === "json") {
      return yield* Effect.suspend(() => {
        try {
          return Effect.succeed(renderJson(c.entries))
        } catch (e) {
          if (!(e instanceof EntryTooDeep)) throw e
          return Effect.fail(new CliFailure({ code: 1, message: tooDeep(c, e) }))
        }
      })
    }
    if (format === "markdown") return renderMarkdown({ id: c.id, title: c.metadata.title, entries: c.entries })
    const { markdownToHtml } = yield* Effect.promise(() => import("../../layers/render/SafeMarkdown.ts"))
    // The page shows the commands for its incomplete turn as they work when pasted in this shell.
    const commands = { resume: Hint.resume(c.id, hint), discard: Hint.discard(c.id, hint) }
    return renderHtml({ id: c.id, title: c.metadata.title, entries: c.entries }, { markdown: markdownToHtml, commands })
  })

/**
 * Writes `text` into `file` (issue 30): a regular file or a new one through a
 * temp sibling and a rename, so a reader never sees half a page; a symlink's
 * target, keeping the link; a FIFO, a device or `/dev/stdout` directly.
 */
const writeOutput = (file: string, text: string) =>
  Effect.tryPromise({
    try: () => writeInto(file, text, { forTerminal: (t) => printable(t, "\n\t") }),
    catch: (e) =>
      new CliFailure({
        code: 1,
        message: e instanceof OutputRefused
          ? `--output: cannot write ${file}: it is a ${e.kind === "other" ? "special file" : e.kind}; pass the path of a file.`
          : `--output: cannot write ${file} (${(e as NodeJS.ErrnoException).code ?? String(e)}); pass a path in a folder that exists and that you can write to.`
      })
  })

export const print = Command.make(
  "print",
  {
    id: Argument.String("id").pipe(Argument.withDescription("Conversation id (17738399468 or jp-c17738399468)")),
    format: Flag.Literals("format", ["markdown", "json", "html"]).pipe(
      Flag.withDescription("markdown (default), json (every stored entry) or html (one self-contained page)"),
      Flag.withDefault("markdown" as const)
    ),
    output: Flag.String("output").pipe(Flag.withDescription("Write to this file instead of stdout"), Flag.optional)
  },
  ({ id, format, output }) =>
    withStore(Effect.gen(function*() {
      const cid = yield* parseIdArgument(id, "print")
      const c = yield* ConversationStore.use((s) => s.load(cid))
      const out = yield* render(c, format, { storage: (yield* storage).given })
      if (Option.isSome(output)) yield* writeOutput(output.value, out)
      // On a terminal, what the conversation holds (model and tool text) is shown, never obeyed.
      else yield* Effect.sync(() => process.stdout.write(process.stdout.isTTY === true ? printable(out, "\n\t") : out))
    }))
).pipe(Command.withDescription("Print a conversation as Markdown, JSON or an HTML page"))
