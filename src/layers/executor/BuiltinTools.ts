/**
 * The built-in tool registry and the built-ins themselves.
 *
 * A built-in gets validated arguments and the answers so far, and returns an
 * `Outcome`. It may declare the `InquirySource` of its questions (RFD 082
 * `BuiltinTool::inquiry_source`, default `tool{name}`); `ask_user` declares
 * `assistant` because its questions are the assistant's. Paths are resolved
 * against the project root and may not leave it (symlinks included).
 *
 * @example
 * ```ts
 * import * as BuiltinTools from "parley/layers/executor/BuiltinTools"
 * BuiltinTools.standard.map((t) => t.name) // ["read_file", "write_file", "use_token", "ask_user"]
 * BuiltinTools.inquirySourceOf(BuiltinTools.askUser) // { source: "assistant" }
 * ```
 *
 * @since 0.1.0
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as WriteInto from "../file/WriteInto.ts"
import { AnswerType } from "../../domain/tool/AnswerType.ts"
import * as Outcome from "../../domain/tool/Outcome.ts"
import { Question, QuestionId } from "../../domain/tool/Question.ts"
import { askUser } from "./AskUser.ts"
import type { BuiltinTool } from "./BuiltinTool.ts"

export { askUser } from "./AskUser.ts"

export { type Arguments, type BuiltinTool, inquirySourceOf } from "./BuiltinTool.ts"

/** A problem the tool reports to the model (becomes an error outcome). */
class ToolProblem extends Error {}

// Async bodies may throw ToolProblem (expected) or anything else (I/O): both
// become an error outcome, so a built-in never fails the executor.
const fromAsync = (body: () => Promise<Outcome.Outcome>): Effect.Effect<Outcome.Outcome> =>
  Effect.tryPromise({ try: body, catch: (e) => (e instanceof Error ? e.message : String(e)) }).pipe(
    Effect.catch((message) => Effect.succeed(Outcome.failure(message)))
  )

const exists = (p: string) =>
  fs.lstat(p).then(
    () => true,
    () => false
  )

/**
 * The absolute path of `relative` under `root`, or a `ToolProblem` when it
 * would leave the root, lexically or through a symlink.
 */
export const resolveInside = async (root: string, relative: string): Promise<string> => {
  if (relative.length === 0) throw new ToolProblem("The path is empty.")
  const absRoot = path.resolve(root)
  const target = path.resolve(absRoot, relative)
  const outside = (from: string, to: string) => {
    const rel = path.relative(from, to)
    return rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)
  }
  if (outside(absRoot, target)) throw new ToolProblem(`Path '${relative}' is outside the project root.`)
  // Follow symlinks on the part that exists; the rest is created under it.
  let existing = target
  while (!(await exists(existing)) && existing !== absRoot) existing = path.dirname(existing)
  const realRoot = await fs.realpath(absRoot)
  const realExisting = await fs.realpath(existing)
  if (outside(realRoot, path.join(realExisting, path.relative(existing, target)))) {
    throw new ToolProblem(`Path '${relative}' is outside the project root.`)
  }
  return target
}

const pathParameter = { type: "string", description: "Path relative to the project root." } as const

/** Files larger than this are refused rather than flooding the context. */
export const READ_LIMIT_BYTES = 1024 * 1024

/** `read_file`: reads a text file under the project directory. */
export const readFile: BuiltinTool = {
  name: "read_file",
  description: "Read a UTF-8 text file under the project root.",
  parameters: { type: "object", properties: { path: pathParameter }, required: ["path"], additionalProperties: false },
  run: (args, _answers, context) =>
    fromAsync(async () => {
      // The arguments were checked against `parameters` before the run: a string.
      const relative = String(args["path"])
      const file = await resolveInside(context.root, relative)
      const stat = await fs.stat(file).catch(() => undefined)
      if (stat === undefined) return Outcome.failure(`File not found: ${relative}`)
      if (!stat.isFile()) return Outcome.failure(`'${relative}' is not a regular file.`)
      if (stat.size > READ_LIMIT_BYTES) {
        return Outcome.failure(
          `'${relative}' is too large to read (${stat.size} bytes; the limit is ${READ_LIMIT_BYTES}).`
        )
      }
      return Outcome.success(await fs.readFile(file, "utf8"))
    })
}

const OVERWRITE = QuestionId.make("overwrite")

/** `write_file`: writes a file under the project directory, asking `overwrite` first when it exists. */
export const writeFile: BuiltinTool = {
  name: "write_file",
  questions: { overwrite: { answerType: AnswerType.boolean } },
  description:
    "Write a UTF-8 text file under the project root, creating parent directories. Asks before replacing an existing file.",
  parameters: {
    type: "object",
    properties: { path: pathParameter, content: { type: "string", description: "The complete new file content." } },
    required: ["path", "content"],
    additionalProperties: false
  },
  run: (args, answers, context) =>
    fromAsync(async () => {
      // The arguments were checked against `parameters` before the run: strings.
      const relative = String(args["path"])
      const content = String(args["content"])
      const file = await resolveInside(context.root, relative)
      const stat = await fs.stat(file).catch(() => undefined)
      if (stat !== undefined && !stat.isFile())
        return Outcome.failure(`'${relative}' exists and is not a regular file.`)
      if (stat !== undefined) {
        const answer = answers[OVERWRITE]
        if (answer === undefined) {
          return Outcome.needsInput(
            new Question({
              id: OVERWRITE,
              text: `Overwrite ${relative}?`,
              context: `${relative} already exists (${stat.size} bytes).`,
              answer_type: AnswerType.boolean,
              default: false
            })
          )
        }
        if (answer === false) {
          return Outcome.failure(`Overwriting ${relative} was rejected; the file was left unchanged.`)
        }
        if (answer !== true)
          return Outcome.failure(`Expected a yes/no answer to 'overwrite', got ${JSON.stringify(answer)}.`)
      }
      await fs.mkdir(path.dirname(file), { recursive: true })
      // Through a symlink the file it names is replaced and the link kept
      // (docs/security.md#other-users-on-the-machine); resolveInside has already checked that it stays inside.
      const target = await WriteInto.resolveTarget(file)
      const dest = target._tag === "Replace" ? target.file : file
      // Temp file + rename: a reader never sees a half-written file. The temp
      // name is unique per write (parallel calls may write the same path), and
      // an existing file keeps its permission bits.
      const temp = `${dest}.parley-${process.pid}-${Math.random().toString(36).slice(2)}.tmp`
      await fs.writeFile(temp, content, {
        encoding: "utf8",
        flag: "wx",
        ...(stat !== undefined ? { mode: stat.mode & 0o7777 } : {})
      })
      if (stat !== undefined) await fs.chmod(temp, stat.mode & 0o7777)
      await fs.rename(temp, dest).catch(async (error: unknown) => {
        await fs.rm(temp, { force: true })
        throw error
      })
      return Outcome.success(`Wrote ${Buffer.byteLength(content, "utf8")} bytes to ${relative}.`)
    })
}

const TOKEN = QuestionId.make("token")

/** `use_token`: asks for a secret (`token`) and reports its length; it shows that secrets are redacted and scrubbed. */
export const useToken: BuiltinTool = {
  name: "use_token",
  questions: { token: { answerType: AnswerType.secret } },
  description:
    "Ask the user for an access token (never stored or shown) and confirm it was received by reporting its length.",
  parameters: {
    type: "object",
    properties: { purpose: { type: "string", description: "What the token is for, shown to the user." } },
    additionalProperties: false
  },
  run: (args, answers) =>
    Effect.sync(() => {
      const answer = answers[TOKEN]
      if (answer === undefined) {
        const purpose = typeof args["purpose"] === "string" ? ` for ${args["purpose"]}` : ""
        return Outcome.needsInput(
          new Question({ id: TOKEN, text: `Enter the access token${purpose}.`, answer_type: AnswerType.secret })
        )
      }
      // Only the length leaves this tool: the value must never reach the model.
      if (typeof answer !== "string") return Outcome.failure("Expected a text answer to 'token'.")
      return Outcome.success(`Received a token of ${Array.from(answer).length} characters.`)
    })
}

/** The built-ins enabled by default (RFD 083: `ask_user` too; `enable = false` under its table turns it off). */
export const standard: ReadonlyArray<BuiltinTool> = [readFile, writeFile, useToken, askUser]
