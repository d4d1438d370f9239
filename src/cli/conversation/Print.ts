/**
 * `parley conversation print ID [--format markdown|json|html] [--output FILE] [--compacted]`:
 * the conversation as read by a person (inquiries per RFD 082 "Reader
 * behavior", the incomplete turn with RFD 023's markers), every stored entry
 * as JSON with the storage base64 removed, or one self-contained HTML page
 * with each question inside its tool call (docs/cli.md#viewing-a-conversation-as-a-page).
 *
 * The Markdown library behind the page is loaded only for `--format html`, so
 * the other formats start as fast as before.
 *
 * @example
 * ```sh
 * parley conversation print 17738399468 --format json | jq '.[0]'
 * parley conversation print 17738399468 --format html --output page.html
 * parley conversation print 17738399468 --compacted
 * ```
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { storage } from "../Root.ts"
import { printConversation } from "./PrintRun.ts"
import { parseIdArgument } from "./Shared.ts"

export const print = Command.make(
  "print",
  {
    id: Argument.String("id").pipe(Argument.withDescription("Conversation id (17738399468 or jp-c17738399468)")),
    format: Flag.Literals("format", ["markdown", "json", "html"]).pipe(
      Flag.withDescription("markdown (default), json (every stored entry) or html (one self-contained page)"),
      Flag.withDefault("markdown" as const)
    ),
    output: Flag.String("output").pipe(Flag.withDescription("Write to this file instead of stdout"), Flag.optional),
    compacted: Flag.Boolean("compacted").pipe(
      Flag.withDescription("Print what the model is sent (compactions applied) instead of the stored history"),
      Flag.withDefault(false)
    )
  },
  ({ id, format, output, compacted }) =>
    Effect.gen(function* () {
      const cid = yield* parseIdArgument(id, "print")
      const at = yield* storage
      return yield* printConversation({ id: cid, format, output: Option.getOrUndefined(output), compacted }, at)
    })
).pipe(Command.withDescription("Print a conversation as Markdown, JSON or an HTML page"))
