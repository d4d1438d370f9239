import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import * as BuiltinTools from "../../../src/layers/executor/BuiltinTools.ts"
import * as ExecutorLive from "../../../src/layers/executor/ExecutorLive.ts"
import { Config } from "../../../src/services/Config.ts"
import { Executor } from "../../../src/services/Executor.ts"
import { completed, contextFor, EXAMPLES, executorFor, FIXTURES, needsInput, tempRoot } from "./helpers.ts"

const NOT_AVAILABLE =
  "Tool 'nope' is not available. It may have been available earlier in this conversation but is no longer enabled. Do not retry this tool until it it is available again in the list of enabled tools."

describe("ExecutorLive", () => {
  it.effect("definitions: built-ins and configured local tools, sorted by name", () =>
    Effect.gen(function* () {
      const executor = yield* executorFor({
        "*": { run: "ask" },
        zeta: {
          command: "true",
          description: "Last.",
          parameters: { type: "object", properties: { a: { type: "string" } } }
        },
        alpha: { command: "true" },
        read_file: { description: "Read a file (custom text)." }
      })
      expect(executor.definitions.map((d) => d.name)).toStrictEqual([
        "alpha",
        "ask_user",
        "read_file",
        "use_token",
        "write_file",
        "zeta"
      ])
      expect(executor.definitions[0]).toStrictEqual({
        name: "alpha",
        description: "",
        parameters: { type: "object", properties: {} }
      })
      expect(executor.definitions[2]).toStrictEqual({
        name: "read_file",
        description: "Read a file (custom text).",
        parameters: BuiltinTools.readFile.parameters
      })
      expect(executor.definitions[5]).toStrictEqual({
        name: "zeta",
        description: "Last.",
        parameters: { type: "object", properties: { a: { type: "string" } } }
      })
      expect(executor.kind("alpha")).toBe("local")
      expect(executor.kind("read_file")).toBe("builtin")
      expect(executor.kind("nope")).toBeUndefined()
    })
  )

  it.effect("permission: configured run mode, else `*`, else unattended for built-ins and ask for local tools", () =>
    Effect.gen(function* () {
      const plain = yield* executorFor({ note: { command: "true" }, skipped: { command: "true", run: "skip" } })
      expect(plain.permission("read_file")).toBe("unattended")
      expect(plain.permission("note")).toBe("ask")
      expect(plain.permission("skipped")).toBe("skip")
      expect(plain.permission("nope")).toBe("unattended")
      const starred = yield* executorFor({
        "*": { run: "skip" },
        note: { command: "true" },
        write_file: { run: "ask" }
      })
      expect(starred.permission("read_file")).toBe("skip")
      expect(starred.permission("note")).toBe("skip")
      expect(starred.permission("write_file")).toBe("ask")
    })
  )

  it.effect("an unknown or disabled tool gets JP's 'not available' response", () =>
    Effect.gen(function* () {
      const executor = yield* executorFor({ write_file: { enable: false }, off: { command: "true", enable: false } })
      const root = tempRoot()
      expect(
        completed(yield* executor.execute({ id: "c", name: "nope", arguments: {} }, {}, contextFor(root)))
      ).toStrictEqual({
        content: NOT_AVAILABLE,
        is_error: true
      })
      const disabled = completed(
        yield* executor.execute(
          { id: "c", name: "write_file", arguments: { path: "a", content: "" } },
          {},
          contextFor(root)
        )
      )
      expect(disabled.content).toBe(NOT_AVAILABLE.replace("'nope'", "'write_file'"))
      expect(executor.definitions.map((d) => d.name)).toStrictEqual(["ask_user", "read_file", "use_token"])
      expect(executor.kind("off")).toBeUndefined()
      expect(fs.readdirSync(root)).toStrictEqual([])
    })
  )

  it.effect("parameter defaults are applied before the tool sees the arguments", () =>
    Effect.gen(function* () {
      const executor = yield* executorFor({
        echo_args: {
          command: `sh ${FIXTURES}/echo_args.sh {{context}} {{tool}}`,
          parameters: { type: "object", properties: { n: { type: "integer", default: 3 } } }
        }
      })
      const args = {}
      const result = completed(
        yield* executor.execute({ id: "c", name: "echo_args", arguments: args }, {}, contextFor(tempRoot()))
      )
      expect(JSON.parse(result.content.split("\n")[1]!).arguments).toStrictEqual({ n: 3 })
      expect(args).toStrictEqual({}) // the caller's arguments are not mutated
    })
  )

  it.effect("config problems the schema cannot see fail the layer, naming file and key", () =>
    Effect.gen(function* () {
      const fails = (tools: Record<string, unknown>) =>
        ExecutorLive.layer.pipe(
          Layer.provide(Config.layerLiteral({ conversation: { tools } }, "/s/config.toml")),
          Layer.build,
          Effect.scoped,
          Effect.flip,
          Effect.map((e) => e.message)
        )
      expect(yield* fails({ grep: { run: "ask" } })).toBe(
        `/s/config.toml: conversation.tools.grep: there is no built-in tool named "grep" (built-ins: read_file, write_file, use_token, ask_user); a local tool needs source = "local" and a command`
      )
      expect(yield* fails({ read_file: { parameters: { type: "object" } } })).toBe(
        "/s/config.toml: conversation.tools.read_file.parameters: the parameters of a built-in tool cannot be changed"
      )
      expect(yield* fails({ t: { command: "true", parameters: { type: "bogus" } } })).toMatch(
        /^\/s\/config\.toml: conversation\.tools\.t\.parameters: not a usable JSON Schema: /
      )
      expect(yield* fails({ t: { command: "true", inquiry_source: "assistant" } })).toBe(
        "/s/config.toml: conversation.tools.t.inquiry_source: the inquiry source cannot be configured: it is decided by the tool kind (local tools always ask as tool{name})"
      )
    })
  )

  it.live(
    "through the layers: a local tool's question is tool{name} even with target = assistant; ask_user's is assistant",
    () =>
      Effect.gen(function* () {
        const root = tempRoot()
        const executor = yield* Executor
        const local = needsInput(
          yield* executor.execute(
            { id: "c1", name: "modes", arguments: { mode: "claims_assistant" } },
            {},
            contextFor(root)
          )
        )
        expect(local.source).toStrictEqual({ source: "tool", name: "modes" })
        const builtin = needsInput(
          yield* executor.execute({ id: "c2", name: "ask_user", arguments: { question: "Why?" } }, {}, contextFor(root))
        )
        expect(builtin.source).toStrictEqual({ source: "assistant" })
      }).pipe(
        Effect.provide(
          ExecutorLive.layerWith({ builtins: [...BuiltinTools.standard, BuiltinTools.askUser] }).pipe(
            Layer.provide(
              Config.layerLiteral({
                conversation: {
                  tools: {
                    modes: {
                      source: "local",
                      command: `python3 ${FIXTURES}/modes.py`,
                      questions: { confirm: { target: "assistant" } }
                    },
                    ask_user: { questions: { answer: { target: "user" } } }
                  }
                }
              })
            )
          )
        )
      )
  )

  it.live("the example write_note.py tool: asks before overwriting, then writes", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({
        write_note: {
          source: "local",
          command: `python3 ${EXAMPLES}/write_note.py`,
          parameters: {
            type: "object",
            properties: { path: { type: "string" }, text: { type: "string" } },
            required: ["path"]
          }
        }
      })
      const write = { id: "c", name: "write_note", arguments: { path: "notes/a.md", text: "first" } }
      expect(completed(yield* executor.execute(write, {}, contextFor(root)))).toStrictEqual({
        content: "Wrote 5 characters to notes/a.md.",
        is_error: false
      })
      const again = { ...write, arguments: { path: "notes/a.md", text: "second" } }
      const asked = needsInput(yield* executor.execute(again, {}, contextFor(root)))
      expect({ ...asked.question }).toStrictEqual({
        id: "overwrite",
        text: "Overwrite notes/a.md?",
        context: "notes/a.md already exists (5 bytes).",
        answer_type: { type: "boolean" },
        default: false
      })
      expect(completed(yield* executor.execute(again, { overwrite: false }, contextFor(root)))).toStrictEqual({
        content: "Overwriting notes/a.md was rejected; the note was not written.",
        is_error: true
      })
      expect(fs.readFileSync(path.join(root, "notes/a.md"), "utf8")).toBe("first")
      expect(completed(yield* executor.execute(again, { overwrite: true }, contextFor(root))).is_error).toBe(false)
      expect(fs.readFileSync(path.join(root, "notes/a.md"), "utf8")).toBe("second")
      expect(
        completed(yield* executor.execute({ ...write, arguments: { path: "../x" } }, {}, contextFor(root)))
      ).toStrictEqual({
        content: "Path '../x' is outside the project root.",
        is_error: true
      })
    })
  )
})
