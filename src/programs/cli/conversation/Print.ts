/**
 * `parley conversation print ID [--format markdown|json]`: the conversation
 * as read by a person (inquiries per RFD 082 "Reader behavior", the
 * incomplete turn with RFD 023's markers), or every stored entry as JSON with
 * the storage base64 removed.
 *
 * @example
 * ```sh
 * parley conversation print 17738399468 --format json | jq '.[0]'
 * ```
 */
import * as Effect from "effect/Effect"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { renderJson, renderMarkdown } from "../../../domain/render/Render.ts"
import { ConversationStore } from "../../../services/ConversationStore.ts"
import { parseIdArgument, withStore } from "./Shared.ts"

export const print = Command.make(
  "print",
  {
    id: Argument.String("id").pipe(Argument.withDescription("Conversation id (17738399468 or jp-c17738399468)")),
    format: Flag.Literals("format", ["markdown", "json"]).pipe(Flag.withDefault("markdown" as const))
  },
  ({ id, format }) =>
    withStore(Effect.gen(function*() {
      const cid = yield* parseIdArgument(id)
      const c = yield* ConversationStore.use((s) => s.load(cid))
      const out = format === "json"
        ? renderJson(c.entries)
        : renderMarkdown({ id: c.id, title: c.metadata.title, entries: c.entries })
      yield* Effect.sync(() => process.stdout.write(out))
    }))
).pipe(Command.withDescription("Print a conversation as Markdown or JSON"))
