import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Ajv } from "ajv"
import * as BuiltinTools from "../../../src/layers/executor/BuiltinTools.ts"
import { completed, contextFor, executorFor, needsInput, tempRoot } from "./helpers.ts"

const call = (name: string, args: Record<string, string>) => ({ id: "call_1", name, arguments: args })

describe("read_file", () => {
  it.effect("reads a text file under the root", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      fs.mkdirSync(path.join(root, "docs"))
      fs.writeFileSync(path.join(root, "docs", "a.md"), "héllo\n")
      const executor = yield* executorFor({})
      expect(
        completed(yield* executor.execute(call("read_file", { path: "docs/a.md" }), {}, contextFor(root)))
      ).toStrictEqual({
        content: "héllo\n",
        is_error: false
      })
    })
  )

  it.effect("reports missing files, directories and oversized files as tool errors", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      fs.mkdirSync(path.join(root, "dir"))
      fs.writeFileSync(path.join(root, "big"), Buffer.alloc(BuiltinTools.READ_LIMIT_BYTES + 1))
      const executor = yield* executorFor({})
      const read = (p: string) =>
        Effect.map(executor.execute(call("read_file", { path: p }), {}, contextFor(root)), completed)
      expect(yield* read("nope.txt")).toStrictEqual({ content: "File not found: nope.txt", is_error: true })
      expect(yield* read("dir")).toStrictEqual({ content: "'dir' is not a regular file.", is_error: true })
      expect(yield* read("big")).toStrictEqual({
        content: `'big' is too large to read (${BuiltinTools.READ_LIMIT_BYTES + 1} bytes; the limit is ${BuiltinTools.READ_LIMIT_BYTES}).`,
        is_error: true
      })
    })
  )

  it.effect("refuses paths outside the root: '..', absolute paths and symlinks", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const outside = tempRoot()
      fs.writeFileSync(path.join(outside, "secret.txt"), "s")
      fs.symlinkSync(outside, path.join(root, "link"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "file-link"))
      const executor = yield* executorFor({})
      const read = (p: string) =>
        Effect.map(executor.execute(call("read_file", { path: p }), {}, contextFor(root)), completed)
      for (const p of ["../x", `${outside}/secret.txt`, "link/secret.txt", "file-link", "a/../../x"]) {
        expect(yield* read(p)).toStrictEqual({ content: `Path '${p}' is outside the project root.`, is_error: true })
      }
      expect(yield* read("")).toStrictEqual({ content: "The path is empty.", is_error: true })
    })
  )

  it.effect("checks arguments against its schema first", () =>
    Effect.gen(function* () {
      const executor = yield* executorFor({})
      const root = tempRoot()
      expect(completed(yield* executor.execute(call("read_file", {}), {}, contextFor(root)))).toStrictEqual({
        content:
          "Invalid arguments for read_file: the argument path is missing. Fix the arguments and call read_file again.",
        is_error: true
      })
      expect(
        completed(yield* executor.execute(call("read_file", { path: "a", mode: "x" }), {}, contextFor(root)))
      ).toStrictEqual({
        content:
          "Invalid arguments for read_file: there is no argument mode (the arguments are path). Fix the arguments and call read_file again.",
        is_error: true
      })
    })
  )
})

describe("write_file", () => {
  it.effect("creates a new file (and its directories) without asking", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({})
      const result = completed(
        yield* executor.execute(call("write_file", { path: "a/b/c.txt", content: "héllo" }), {}, contextFor(root))
      )
      expect(result).toStrictEqual({ content: "Wrote 6 bytes to a/b/c.txt.", is_error: false })
      expect(fs.readFileSync(path.join(root, "a/b/c.txt"), "utf8")).toBe("héllo")
      expect(fs.readdirSync(path.join(root, "a/b"))).toStrictEqual(["c.txt"])
    })
  )

  it.effect("asks `overwrite` for an existing file; false rejects, true writes", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const file = path.join(root, "a.txt")
      fs.writeFileSync(file, "old")
      const executor = yield* executorFor({})
      const write = call("write_file", { path: "a.txt", content: "new" })

      const asked = needsInput(yield* executor.execute(write, {}, contextFor(root)))
      expect({ ...asked.question }).toStrictEqual({
        id: "overwrite",
        text: "Overwrite a.txt?",
        context: "a.txt already exists (3 bytes).",
        answer_type: { type: "boolean" },
        default: false
      })
      expect(asked.source).toStrictEqual({ source: "tool", name: "write_file" })

      expect(completed(yield* executor.execute(write, { overwrite: false }, contextFor(root)))).toStrictEqual({
        content: "Overwriting a.txt was rejected; the file was left unchanged.",
        is_error: true
      })
      expect(fs.readFileSync(file, "utf8")).toBe("old")

      expect(completed(yield* executor.execute(write, { overwrite: "yes" }, contextFor(root)))).toStrictEqual({
        content: `Expected a yes/no answer to 'overwrite', got "yes".`,
        is_error: true
      })
      expect(fs.readFileSync(file, "utf8")).toBe("old")

      expect(completed(yield* executor.execute(write, { overwrite: true }, contextFor(root)))).toStrictEqual({
        content: "Wrote 3 bytes to a.txt.",
        is_error: false
      })
      expect(fs.readFileSync(file, "utf8")).toBe("new")
      expect(fs.readdirSync(root)).toStrictEqual(["a.txt"])
    })
  )

  it.effect(
    "writes through a symlink into the file it names, keeping the link (docs/security.md#other-users-on-the-machine)",
    () =>
      Effect.gen(function* () {
        const root = tempRoot()
        fs.mkdirSync(path.join(root, "real"))
        fs.writeFileSync(path.join(root, "real", "a.txt"), "old", { mode: 0o640 })
        fs.symlinkSync("real/a.txt", path.join(root, "a.txt"))
        const executor = yield* executorFor({})
        expect(
          completed(
            yield* executor.execute(
              call("write_file", { path: "a.txt", content: "new" }),
              { overwrite: true },
              contextFor(root)
            )
          )
        ).toStrictEqual({
          content: "Wrote 3 bytes to a.txt.",
          is_error: false
        })
        expect(fs.lstatSync(path.join(root, "a.txt")).isSymbolicLink()).toBe(true)
        expect(fs.readFileSync(path.join(root, "real", "a.txt"), "utf8")).toBe("new")
        expect(fs.statSync(path.join(root, "real", "a.txt")).mode & 0o777).toBe(0o640)
        expect(fs.readdirSync(path.join(root, "real"))).toStrictEqual(["a.txt"])
      })
  )

  it.effect("never writes outside the root, even through a symlinked directory", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const outside = tempRoot()
      fs.symlinkSync(outside, path.join(root, "link"))
      const executor = yield* executorFor({})
      for (const p of ["link/new/x.txt", "../x.txt"]) {
        expect(
          completed(yield* executor.execute(call("write_file", { path: p, content: "x" }), {}, contextFor(root)))
        ).toStrictEqual({
          content: `Path '${p}' is outside the project root.`,
          is_error: true
        })
      }
      expect(fs.readdirSync(outside)).toStrictEqual([])
    })
  )
})

describe("use_token", () => {
  it.effect("asks a secret question and reports only the length of the answer", () =>
    Effect.gen(function* () {
      const root = tempRoot()
      const executor = yield* executorFor({})
      const asked = needsInput(yield* executor.execute(call("use_token", { purpose: "GitHub" }), {}, contextFor(root)))
      expect({ ...asked.question }).toStrictEqual({
        id: "token",
        text: "Enter the access token for GitHub.",
        answer_type: { type: "secret" }
      })
      const secret = "ghp_s3cr3t-válue"
      const result = completed(
        yield* executor.execute(call("use_token", { purpose: "GitHub" }), { token: secret }, contextFor(root))
      )
      expect(result).toStrictEqual({ content: "Received a token of 16 characters.", is_error: false })
      expect(result.content).not.toContain("s3cr3t")
    })
  )
})

describe("ask_user (RFD 083)", () => {
  const ask = (args: Record<string, unknown>, answers: Record<string, unknown> = {}) =>
    Effect.gen(function* () {
      const executor = yield* executorFor({})
      return yield* executor.execute(call("ask_user", args as never), answers as never, contextFor(tempRoot()))
    })

  it.effect("asks one exclusive question 'answer', never remembered, as the assistant; answers as typed JSON", () =>
    Effect.gen(function* () {
      const args = {
        question: "Apply how?",
        context: "It edits production config.",
        answer_type: "select",
        options: ["backup", "overwrite", "abort"],
        default: "backup"
      }
      const asked = needsInput(yield* ask(args))
      expect(asked.source).toStrictEqual({ source: "assistant" })
      expect({ ...asked.question }).toStrictEqual({
        id: "answer",
        text: "Apply how?",
        context: "It edits production config.",
        answer_type: { type: "select", options: ["backup", "overwrite", "abort"] },
        default: "backup",
        exclusive: true,
        persistence: "none"
      })
      expect(completed(yield* ask(args, { answer: "backup" }))).toStrictEqual({
        content: `{"answer_type":"select","answer":"backup"}`,
        is_error: false
      })
      expect(completed(yield* ask({ question: "Go?", answer_type: "boolean" }, { answer: true }))).toStrictEqual({
        content: `{"answer_type":"boolean","answer":true}`,
        is_error: false
      })
      expect(completed(yield* ask({ question: "Where?" }, { answer: "/tmp/out" }))).toStrictEqual({
        content: `{"answer_type":"text","answer":"/tmp/out"}`,
        is_error: false
      })
      // Re-validated: an answer that does not fit is a generic error.
      expect(completed(yield* ask(args, { answer: "delete" }))).toStrictEqual({
        content: "ask_user: the accumulated answer does not match the requested answer type.",
        is_error: true
      })
    })
  )

  it.effect("argument mistakes are tool errors saying what to fix", () =>
    Effect.gen(function* () {
      const error = (args: Record<string, unknown>) => Effect.map(ask(args), (r) => completed(r).content)
      expect(yield* error({ question: "" })).toBe(
        "ask_user: question is missing or empty: pass the question to ask as one line of text."
      )
      expect(yield* error({ question: "a\nb" })).toBe(
        "ask_user: question contains a line break: keep the question to one line and put anything longer in context."
      )
      expect(yield* error({ question: "Which?", answer_type: "select" })).toBe(
        'ask_user: answer_type is "select" but options is missing or empty: pass the choices as a list of strings.'
      )
      expect(yield* error({ question: "Which?", answer_type: "select", options: [] })).toContain(
        "options is missing or empty"
      )
      expect(yield* error({ question: "Go?", answer_type: "boolean", options: ["a"] })).toBe(
        'ask_user: options is only for answer_type "select" (answer_type is "boolean"): leave options out or use "select".'
      )
      expect(yield* error({ question: "Go?", answer_type: "boolean", default: "yes" })).toBe(
        'ask_user: default "yes" does not fit answer_type "boolean" (true or false).'
      )
      expect(yield* error({ question: "Which?", answer_type: "select", options: ["a", "b"], default: "c" })).toBe(
        'ask_user: default "c" is not one of the options (a, b).'
      )
      // The schema catches what it can say (a missing question, an unknown answer type), naming the argument, what fits, and what came.
      expect(yield* error({})).toBe(
        "Invalid arguments for ask_user: the argument question is missing. Fix the arguments and call ask_user again."
      )
      expect(yield* error({ question: "Q", answer_type: "number" })).toBe(
        'Invalid arguments for ask_user: answer_type must be one of "boolean", "select", "text" (got "number"). Fix the arguments and call ask_user again.'
      )
      // One line per argument: a wrong type under an enum is said by the enum.
      expect(yield* error({ question: 7, answer_type: 3 })).toBe(
        'Invalid arguments for ask_user: question must be a string (got 7); answer_type must be one of "boolean", "select", "text" (got 3). Fix the arguments and call ask_user again.'
      )
    })
  )

  it("every standard built-in's schema compiles (the executor compiles them only on their first call)", () => {
    for (const tool of BuiltinTools.standard) {
      const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false })
      expect(() => ajv.compile(tool.parameters), tool.name).not.toThrow()
    }
  })

  it.effect("is a standard built-in, offered with RFD 083's description and schema; enable = false turns it off", () =>
    Effect.gen(function* () {
      expect(BuiltinTools.standard.map((t) => t.name)).toStrictEqual([
        "read_file",
        "write_file",
        "use_token",
        "ask_user"
      ])
      expect(BuiltinTools.standard.map(BuiltinTools.inquirySourceOf).at(-1)).toStrictEqual({ source: "assistant" })
      const executor = yield* executorFor({})
      const definition = executor.definitions.find((d) => d.name === "ask_user")!
      expect(definition.description).toContain("Do not use `ask_user` to collect secrets")
      expect(Object.keys((definition.parameters as { properties: object }).properties)).toStrictEqual([
        "question",
        "context",
        "answer_type",
        "options",
        "default"
      ])
      expect(executor.permission("ask_user")).toBe("unattended")
      expect(executor.promptLabel?.("ask_user", "answer")).toBe("Assistant")
      expect(executor.promptLabel?.("write_file", "overwrite")).toBeUndefined()
      const off = yield* executorFor({ ask_user: { enable: false } })
      expect(off.definitions.map((d) => d.name)).not.toContain("ask_user")
    })
  )

  it.effect(
    "a static answer of a built-in question whose type is known is checked when config loads, naming the key",
    () =>
      Effect.gen(function* () {
        const failed = yield* Effect.flip(executorFor({ write_file: { questions: { overwrite: { answer: "sure" } } } }))
        expect(failed.message).toBe(
          'config.toml: conversation.tools.write_file.questions.overwrite.answer: "sure" is not yes or no: the question wants yes or no'
        )
        yield* executorFor({ write_file: { questions: { overwrite: { answer: "yes" } } } })
        yield* executorFor({ write_file: { questions: { overwrite: { answer: true } } } })
      })
  )
})
