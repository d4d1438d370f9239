/**
 * A conversation holding every RFD 082 shape, for the HTML viewer tests
 * (docs/cli.md#viewing-a-conversation-as-a-page): answers with values and `null`, a redacted secret, every known
 * cancellation reason and an unknown one, each inquiry source (tool,
 * assistant, user, other), a legacy two-segment id, a re-asked question,
 * a question outside any tool call, a failed call, hostile text in every
 * field, a long tool result, and an incomplete last turn waiting for input.
 */
import type { Json } from "effect/Schema"
import type { StreamEntry } from "../../../src/domain/event/ConversationEvent.ts"
import { InquiryAnswerType } from "../../../src/domain/event/InquiryAnswerType.ts"
import * as InquiryId from "../../../src/domain/event/InquiryId.ts"
import { InquiryRequest } from "../../../src/domain/event/InquiryRequest.ts"
import { InquirySource } from "../../../src/domain/event/InquirySource.ts"
import { streams } from "../_streams.ts"

/** A string that must show as text and never act: script, event handler, style, link. */
export const HOSTILE = `<script>window.__pwned = 1; document.title = "pwned"</script><img src="https://evil.example/x.png" onerror="window.__pwned = 2"><style>@import url(https://evil.example/a.css);</style>`

/** Every question of the fixture in page order, with its tool call and how it ended (as the page's badge reads). */
export const QUESTIONS = [
  { id: "c1.confirm.1", call: "c1", text: "Deploy to **prod**?", outcome: "answered", value: "true" },
  { id: "c1.region.1", call: "c1", text: "Which region?", outcome: "answered", value: '"us"' },
  { id: "c1.note.1", call: "c1", text: "Any note for the log?", outcome: "answered", value: "null" },
  { id: "c1.token.1", call: "c1", text: "API token for the deploy?", outcome: "redacted" },
  { id: "c1.pin.1", call: "c1", text: "PIN for the vault?", outcome: "answered" },
  { id: "c1.hostile.1", call: "c1", text: `Hostile ${HOSTILE}`, outcome: "answered", value: JSON.stringify(HOSTILE) },
  { id: "c2.confirm.1", call: "c2", text: "Delete 3 files?", outcome: "cancelled (user)" },
  { id: "c2.confirm.2", call: "c2", text: "Delete 3 files?", outcome: "cancelled (backend_error)" },
  { id: "c2.nobody.1", call: "c2", text: "Keep the backups?", outcome: "cancelled (no_prompt_backend)" },
  { id: "c2.route.1", call: "c2", text: "May the assistant decide?", outcome: "cancelled (assistant_routing_denied)" },
  { id: "c2.future.1", call: "c2", text: "A question from the future?", outcome: "cancelled (some_future_reason)" },
  { id: "c3.colour.1", call: "c3", text: "Which colour do you prefer?", outcome: "answered", value: '"blue"' },
  { id: "c4.who.1", call: "c4", text: "Who are you?", outcome: "answered", value: '"me"' },
  { id: "c4.bridge.1", call: "c4", text: "Bridge question?", outcome: "answered", value: "false" },
  {
    id: "toolu_legacy.apply_changes",
    call: "toolu_legacy",
    text: "Do you want to apply the following patch?",
    outcome: "answered",
    value: "true"
  },
  { id: "loose.1", call: null, text: "Shall I go on?", outcome: "answered", value: '"yes"' },
  { id: "c5.overwrite.1", call: "c5", text: "Overwrite a.txt?", outcome: "waiting for an answer" }
] as const

/** The secret answer that must never reach the page, even though this fixture (unlike any real writer) stores it. */
export const LEAKED_SECRET = "hunter2-never-shown"

/** A tool result long enough to be clipped. */
export const LONG_RESULT = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} of the build log`).join("\n")

/** The conversation, as decoded entries. */
export const everyShape = (): Array<StreamEntry> => {
  const b = streams()
  const ask = (
    id: string,
    source: InquirySource,
    text: string,
    answerType: InquiryAnswerType = InquiryAnswerType.boolean,
    def?: Json
  ) =>
    new InquiryRequest({
      timestamp: b.peek(),
      id: InquiryId.make(id),
      source,
      question: { text, answer_type: answerType, ...(def === undefined ? {} : { default: def }) }
    })
  const tick = <A>(a: A): A => (b.ts(), a) // consumes one clock step for `ask`
  return [
    b.ts(),
    b.cr(`Deploy the site, then tidy up. ${HOSTILE}`),
    b.reasoning("First deploy, then clean."),
    b.msg("I'll deploy first."),
    b.call("c1", "deploy", { env: "prod", script: `echo ${HOSTILE}` }),
    tick(ask("c1.confirm.1", InquirySource.tool("deploy"), "Deploy to **prod**?", InquiryAnswerType.boolean, true)),
    b.answer("c1.confirm.1", true),
    tick(
      ask(
        "c1.region.1",
        InquirySource.tool("deploy"),
        "Which region?",
        InquiryAnswerType.select([{ value: "eu", description: "Europe" }, { value: "us" }]),
        "eu"
      )
    ),
    b.answer("c1.region.1", "us"),
    tick(ask("c1.note.1", InquirySource.tool("deploy"), "Any note for the log?", InquiryAnswerType.text)),
    b.answer("c1.note.1", null),
    tick(ask("c1.token.1", InquirySource.tool("deploy"), "API token for the deploy?", InquiryAnswerType.secret)),
    b.redact("c1.token.1"),
    tick(ask("c1.pin.1", InquirySource.tool("deploy"), "PIN for the vault?", InquiryAnswerType.secret)),
    b.answer("c1.pin.1", LEAKED_SECRET),
    tick(ask("c1.hostile.1", InquirySource.tool("deploy"), `Hostile ${HOSTILE}`, InquiryAnswerType.text)),
    b.answer("c1.hostile.1", HOSTILE),
    b.result("c1", `deployed\n${HOSTILE}`),
    b.call("c2", "cleanup", { glob: "*.tmp" }),
    tick(ask("c2.confirm.1", InquirySource.tool("cleanup"), "Delete 3 files?")),
    b.cancel("c2.confirm.1", "user"),
    tick(ask("c2.confirm.2", InquirySource.tool("cleanup"), "Delete 3 files?")),
    b.cancel("c2.confirm.2", "backend_error"),
    tick(ask("c2.nobody.1", InquirySource.tool("cleanup"), "Keep the backups?")),
    b.cancel("c2.nobody.1", "no_prompt_backend"),
    tick(ask("c2.route.1", InquirySource.tool("cleanup"), "May the assistant decide?")),
    b.cancel("c2.route.1", "assistant_routing_denied"),
    tick(ask("c2.future.1", InquirySource.tool("cleanup"), "A question from the future?")),
    b.cancel("c2.future.1", "some_future_reason"),
    b.result("c2", `permission denied: ${HOSTILE}`, true),
    // A visible tool whose question the assistant answers (`ask_user` itself is hidden: test/cli/AskUserHidden.test.ts).
    b.call("c3", "pick_colour", { topic: "colour" }),
    tick(ask("c3.colour.1", InquirySource.assistant, "Which colour do you prefer?", InquiryAnswerType.text)),
    b.answer("c3.colour.1", "blue"),
    b.result("c3", "blue"),
    b.call("c4", "bridge", {}),
    tick(ask("c4.who.1", InquirySource.user, "Who are you?", InquiryAnswerType.text)),
    b.answer("c4.who.1", "me"),
    tick(ask("c4.bridge.1", InquirySource.other("mcp-bridge"), "Bridge question?")),
    b.answer("c4.bridge.1", false),
    b.result("c4", ""),
    b.call("toolu_legacy", "fs_modify_file", { path: "README.md", patch: "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n" }),
    tick(
      ask(
        "toolu_legacy.apply_changes",
        InquirySource.tool("fs_modify_file"),
        "Do you want to apply the following patch?\n\n```diff\n-old\n+new\n```",
        InquiryAnswerType.boolean,
        true
      )
    ),
    b.answer("toolu_legacy.apply_changes", true),
    b.result("toolu_legacy", LONG_RESULT),
    tick(ask("loose.1", InquirySource.assistant, "Shall I go on?", InquiryAnswerType.text)),
    b.answer("loose.1", "yes"),
    b.msg(`Done. See [the docs](https://example.com/docs) and ![logo](https://example.com/logo.png). ${HOSTILE}`),
    b.ts(),
    b.cr("Write a note"),
    b.call("c5", "write_note", { path: "a.txt" }),
    b.call("c6", "read_file", { path: "b.txt" }),
    b.result("c6", "contents of b"),
    tick(ask("c5.overwrite.1", InquirySource.tool("write_note"), "Overwrite a.txt?", InquiryAnswerType.boolean, false))
  ]
}
