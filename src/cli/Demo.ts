/**
 * `parley demo` (`npm start`): the whole mission offline, in a temporary
 * project — the scripted model asks the built-in `write_file` tool to
 * replace `notes.txt`, the tool asks whether to overwrite it, the question
 * is answered (at the prompt on a TTY; by the scripted model's structured
 * reply otherwise) and recorded, then the conversation is listed and
 * printed, and the files are shown.
 *
 * @example
 * ```sh
 * npx parley demo
 * ```
 */
import * as os from "node:os"
import * as path from "node:path"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Command from "effect/cli/Command"
import { renderMarkdown } from "../domain/render/Render.ts"
import * as DemoProject from "../layers/file/DemoProject.ts"
import * as PersonTerminal from "../layers/prompt/PersonTerminal.ts"
import * as FileConversationStore from "../layers/store/FileConversationStore.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import * as Query from "../programs/Query.ts"
import * as Hint from "./Hint.ts"
import * as Live from "./Live.ts"
import { runQuery } from "./QueryRun.ts"
import { toJsonRow } from "./conversation/Ls.ts"

export const demo = Command.make("demo", {}, () =>
  Effect.gen(function* () {
    const interactive = PersonTerminal.isInteractive()
    const { project, storage, script } = yield* Effect.sync(() => DemoProject.make(os.tmpdir(), interactive))

    yield* Console.error(`parley demo — a temporary project in ${project}`)
    yield* Console.error(
      interactive
        ? "The tool will ask you whether to overwrite notes.txt: answer at the prompt (y/n; Y/N remember for the turn).\n"
        : "No terminal: the tool's question goes to the (scripted) assistant, as JP does.\n"
    )
    yield* Console.error('$ parley query "Write today\'s note to notes.txt" --model scripted --script script.json')
    const result = yield* runQuery({
      message: "Write today's note to notes.txt",
      target: Query.Target.New(),
      continueTurn: false,
      discardTurn: false,
      format: "text"
    }).pipe(Effect.provide(Live.layer({ storage, storageGiven: storage, model: "scripted", script })))

    const store = FileConversationStore.layer({ storageDir: storage })
    const rows = (yield* ConversationStore.use((s) => s.list()).pipe(Effect.provide(store))).conversations
    yield* Console.error("\n$ parley conversation ls --format json")
    yield* Console.log(JSON.stringify(rows.map(toJsonRow), null, 2))
    const conversation = yield* ConversationStore.use((s) => s.load(result.conversationId)).pipe(Effect.provide(store))
    yield* Console.error(`\n$ parley conversation print ${result.conversationId}`)
    yield* Effect.sync(() =>
      process.stdout.write(
        renderMarkdown({ id: conversation.id, title: conversation.metadata.title, entries: conversation.entries })
      )
    )
    const dir = rows[0]?.path ?? storage
    yield* Console.error(
      [
        "",
        "Files:",
        `  project:       ${project}`,
        `  notes.txt:     ${path.join(project, "notes.txt")}`,
        `  conversation:  ${dir}/events.json (JP's format; also metadata.json, base_config.json)`,
        `  try:           ${Hint.command(["conversation", "print", result.conversationId, "--format", "json"], { storage })}`,
        "",
        `The project is kept for you to look at; the next \`parley demo\` removes demo projects over a day old (or now: rm -rf ${Hint.quote(project)}).`
      ].join("\n")
    )
  })
).pipe(Command.withDescription("Run the whole thing offline in a temporary project (scripted model, a tool that asks)"))
