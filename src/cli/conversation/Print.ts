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
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { printable } from "../../domain/render/TerminalText.ts"
import { renderHtml } from "../../domain/render/Html.ts"
import { renderJson, renderMarkdown } from "../../domain/render/Render.ts"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import { ConversationStore } from "../../services/ConversationStore.ts"
import { CliFailure } from "../CliFailure.ts"
import * as Hint from "../Hint.ts"
import { storage } from "../Root.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

const render = (c: Conversation, format: "markdown" | "json" | "html", hint: Hint.Context) =>
  Effect.gen(function*() {
    if (format === "json") return renderJson(c.entries)
    if (format === "markdown") return renderMarkdown({ id: c.id, title: c.metadata.title, entries: c.entries })
    const { markdownToHtml } = yield* Effect.promise(() => import("../../layers/render/SafeMarkdown.ts"))
    // The page shows the commands for its incomplete turn as they work when pasted in this shell.
    const commands = { resume: Hint.resume(c.id, hint), discard: Hint.discard(c.id, hint) }
    return renderHtml({ id: c.id, title: c.metadata.title, entries: c.entries }, { markdown: markdownToHtml, commands })
  })

/** Writes `text` to `file` through a temporary sibling and a rename, so a reader never sees half a page. */
const writeOutput = (file: string, text: string) =>
  Effect.try({
    try: () => {
      const target = path.resolve(file)
      const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`)
      try {
        fs.writeFileSync(temp, text)
        fs.renameSync(temp, target)
      } finally {
        fs.rmSync(temp, { force: true })
      }
    },
    catch: (e) =>
      new CliFailure({
        code: 1,
        message: `--output: cannot write ${file} (${(e as NodeJS.ErrnoException).code ?? String(e)}); pass a path in a folder that exists and that you can write to.`
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
