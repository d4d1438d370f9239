// MCP servers (docs/mcp.md) at the executor: the live executor with [mcp.servers] pointing at
// the real server-everything (stdio, started by parley). Each test checks the
// exact results and questions, and that no server process outlives the
// executor's scope.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as ExecutorLive from "../../../src/layers/executor/ExecutorLive.ts"
import { Config } from "../../../src/services/Config.ts"
import { type Answers, Executor, type ExecutorResult, type ToolCall } from "../../../src/services/Executor.ts"
import {
  ACCEPTED_CONTENT,
  callResults,
  elicitResults,
  killMarked,
  marked,
  newMark,
  readTrace,
  stdioServer,
  type Traced,
  waitGone
} from "./everything.ts"

const marks: Array<string> = []
const dirs: Array<string> = []
afterEach(() => {
  for (const m of marks.splice(0)) killMarked(m)
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

interface Setup {
  readonly mark: string
  readonly trace: string
  readonly problems: Array<string>
  readonly root: string
}

const setup = (): Setup => {
  const mark = newMark()
  marks.push(mark)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-mcp-"))
  dirs.push(root)
  return { mark, trace: path.join(root, "trace.jsonl"), problems: [], root }
}

/** Runs `program` with a live executor built from `config`; the servers stop when it returns. */
const withExecutor = <A>(
  s: Setup,
  config: unknown,
  program: (executor: Executor["Service"]) => Effect.Effect<A>,
  interactive = false
) =>
  Effect.flatMap(Executor, program).pipe(
    Effect.provide(
      ExecutorLive.layerWith({
        mcp: { root: s.root, interactive, traceFile: s.trace, onProblem: (m) => void s.problems.push(m) }
      }).pipe(Layer.provide(Config.layerLiteral(config)))
    )
  )

const context = (s: Setup) => ({ conversationId: "17738399468", root: s.root })
const call = (id: string, name: string, args: Record<string, Schema.Json> = {}): ToolCall => ({
  id,
  name,
  arguments: args
})

interface Asked {
  readonly id: string
  readonly text: string
  readonly source: unknown
}

/** Drives one call to completion like the coordinator does, answering each question with `answer`. */
const drive = (
  executor: Executor["Service"],
  s: Setup,
  c: ToolCall,
  answer: (q: Asked) => Schema.Json,
  initial: Answers = {}
) =>
  Effect.gen(function* () {
    const asked: Array<Asked> = []
    let answers = initial
    for (;;) {
      const r: ExecutorResult = yield* executor.execute(c, answers, context(s))
      if (r._tag === "Completed") return { response: r.response, asked }
      const q = { id: r.question.id, text: r.question.text, source: r.source }
      asked.push(q)
      answers = { ...r.answers, [q.id]: answer(q) }
    }
  })

const waitUntil = async (check: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out")
    await new Promise((r) => setTimeout(r, 20))
  }
}
const waitForTrace = (s: Setup, check: (t: Array<Traced>) => boolean) => waitUntil(() => check(readTrace(s.trace)))

const everything = (s: Setup, extra: Record<string, unknown> = {}) => ({
  mcp: { servers: { everything: stdioServer(s.mark) } },
  ...extra
})

// Every field of server-everything's form, answered (as the person or config would).
const FORM_ANSWERS: Record<string, Schema.Json> = {
  elicitation: true,
  name: "Ada Lovelace",
  check: true,
  firstLine: "",
  email: "ada@example.com",
  homepage: "https://ada.dev",
  birthdate: "1815-12-10",
  integer: "7",
  number: 3.5,
  untitledSingleSelectEnum: "Joey",
  untitledMultipleSelectEnum: "Piano, Drums",
  titledSingleSelectEnum: "hero-2",
  titledMultipleSelectEnum: ["fish-1"],
  legacyTitledEnum: "pet-2"
}
const FIELDS = Object.keys(FORM_ANSWERS).slice(1)

describe("MCP tools in the live executor (server-everything over stdio)", () => {
  it.live("offers the server's tools under their MCP names with their schemas, and calls them", () => {
    const s = setup()
    return withExecutor(s, everything(s), (executor) =>
      Effect.gen(function* () {
        const names = executor.definitions.map((d) => d.name)
        for (const n of ["echo", "get-sum", "trigger-elicitation-request", "get-tiny-image"]) expect(names).toContain(n)
        expect(names).toContain("trigger-url-elicitation") // parley declares URL mode
        expect(executor.definitions.find((d) => d.name === "get-sum")).toStrictEqual({
          name: "get-sum",
          description: "Returns the sum of two numbers",
          parameters: {
            type: "object",
            properties: {
              a: { type: "number", description: "First number" },
              b: { type: "number", description: "Second number" }
            },
            required: ["a", "b"]
          }
        })
        expect(executor.kind("echo")).toBe("mcp")
        expect(executor.permission("echo")).toBe("ask")
        const sum = yield* drive(executor, s, call("c1", "get-sum", { a: 2, b: 3 }), () => null)
        expect(sum).toStrictEqual({ response: { content: "The sum of 2 and 3 is 5.", is_error: false }, asked: [] })
        const echo = yield* drive(executor, s, call("c2", "echo", { message: "hi" }), () => null)
        expect(echo.response).toStrictEqual({ content: "Echo: hi", is_error: false })
        // Arguments are checked against the server's schema before anything is sent.
        const bad = yield* drive(executor, s, call("c3", "get-sum", { a: "two" }), () => null)
        expect(bad.response).toStrictEqual({
          content:
            'Invalid arguments for get-sum: the argument b is missing; a must be a number (got "two"). Fix the arguments and call get-sum again.',
          is_error: true
        })
      })
    ).pipe(
      Effect.andThen(Effect.promise(() => waitGone(s.mark))),
      Effect.map((left) => expect(left).toStrictEqual([]))
    )
  })

  it.live("results: other content kinds are summarised, isError becomes is_error", () => {
    const s = setup()
    return withExecutor(s, everything(s), (executor) =>
      Effect.gen(function* () {
        const image = yield* drive(executor, s, call("c1", "get-tiny-image"), () => null)
        expect(image.response.is_error).toBe(false)
        expect(image.response.content).toMatch(
          /^Here's the image you requested:\n\[image: image\/png, \d+ bytes\]\nThe image above is the MCP logo\.$/
        )
        const resource = yield* drive(
          executor,
          s,
          call("c2", "get-resource-reference", { resourceType: "Text", resourceId: 1 }),
          () => null
        )
        expect(resource.response.content.split("\n").slice(0, 2)).toStrictEqual([
          "Returning resource reference for Resource 1:",
          "[resource demo://resource/dynamic/text/1 (text/plain)]"
        ])
        const failed = yield* drive(
          executor,
          s,
          call("c3", "get-resource-reference", { resourceType: "Text", resourceId: 0 }),
          () => null
        )
        expect(failed.response).toStrictEqual({
          content: "Invalid resourceId: 0. Must be a finite positive integer.",
          is_error: true
        })
      })
    )
  })

  it.live(
    "an elicitation: the form question, then one question per field in schema order, source the tool; the server gets accept with the values",
    () => {
      const s = setup()
      return withExecutor(s, everything(s), (executor) =>
        Effect.gen(function* () {
          const { response, asked } = yield* drive(
            executor,
            s,
            call("call_3", "trigger-elicitation-request"),
            (q) => FORM_ANSWERS[q.id]!
          )
          expect(asked.map((q) => q.id)).toStrictEqual(["elicitation", ...FIELDS])
          for (const q of asked) expect(q.source).toStrictEqual({ source: "tool", name: "trigger-elicitation-request" })
          expect(asked[0]!.text).toBe(
            'MCP server "everything" asks: Please provide inputs for the following fields:\nFill in its form (13 fields)? No declines it.'
          )
          expect(response.is_error).toBe(false)
          expect(response.content).toContain(
            "✅ User provided the requested information!\nUser inputs:\n- Name: Ada Lovelace\n- Agreed to terms: true\n"
          )
          expect(elicitResults(readTrace(s.trace))).toStrictEqual([{ action: "accept", content: ACCEPTED_CONTENT }])
        })
      )
    }
  )

  it.live(
    "a rejected answer is asked again with the reason; five rejections end the call and the server gets cancel",
    () => {
      const s = setup()
      return withExecutor(s, everything(s), (executor) =>
        Effect.gen(function* () {
          let integerAsked = 0
          const once = yield* drive(executor, s, call("c1", "trigger-elicitation-request"), (q) =>
            q.id === "integer" && integerAsked++ === 0 ? "500" : FORM_ANSWERS[q.id]!
          )
          const integers = once.asked.filter((q) => q.id === "integer")
          expect(integers.map((q) => q.text.split("\n")[0])).toStrictEqual([
            "Integer: Your favorite integer (do not give us your phone number, pin, or other sensitive info) (a whole number from 1 to 100; optional: leave empty to skip)",
            'The previous answer was rejected: "500" is rejected: the number must be from 1 to 100.'
          ])
          expect(once.response.is_error).toBe(false)

          const never = yield* drive(executor, s, call("c2", "trigger-elicitation-request"), (q) =>
            q.id === "email" ? "nope" : FORM_ANSWERS[q.id]!
          )
          expect(never.asked.filter((q) => q.id === "email").length).toBe(5)
          expect(never.response).toStrictEqual({
            content:
              'Tool \'trigger-elicitation-request\' asked "email" 5 times without getting a valid answer (the last one: "nope" is not an email address).',
            is_error: true
          })
          yield* Effect.promise(() =>
            waitForTrace(s, (t) => elicitResults(t).length === 2 && callResults(t).length === 2)
          )
          const trace = readTrace(s.trace)
          expect(elicitResults(trace)[1]).toStrictEqual({ action: "cancel" })
          expect(callResults(trace)[1]).toContain("⚠️ User cancelled the elicitation dialog.")
        })
      )
    }
  )

  it.live("no to the form question declines it: the server gets decline", () => {
    const s = setup()
    return withExecutor(s, everything(s), (executor) =>
      Effect.gen(function* () {
        const { response, asked } = yield* drive(executor, s, call("c1", "trigger-elicitation-request"), () => false)
        expect(asked.map((q) => q.id)).toStrictEqual(["elicitation"])
        expect(response.content).toMatch(/^❌ User declined to provide the requested information\./)
        expect(elicitResults(readTrace(s.trace))).toStrictEqual([{ action: "decline" }])
      })
    )
  })

  it.live(
    "answers given back to the first round (a resumed turn) are used without asking; only the missing field is asked",
    () => {
      const s = setup()
      return withExecutor(s, everything(s), (executor) =>
        Effect.gen(function* () {
          const { name: _, ...recorded } = FORM_ANSWERS
          const { response, asked } = yield* drive(
            executor,
            s,
            call("c1", "trigger-elicitation-request"),
            (q) => FORM_ANSWERS[q.id]!,
            recorded
          )
          expect(asked.map((q) => q.id)).toStrictEqual(["name"])
          expect(elicitResults(readTrace(s.trace))).toStrictEqual([{ action: "accept", content: ACCEPTED_CONTENT }])
          expect(response.is_error).toBe(false)
        })
      )
    }
  )

  it.live(
    "a call whose question is never answered (its fiber ends) is abandoned: the server gets cancel and finishes",
    () => {
      const s = setup()
      return withExecutor(s, everything(s), (executor) =>
        Effect.gen(function* () {
          // The coordinator ends a call this way after Ctrl-C at the prompt: it records the
          // response itself and never calls the executor again.
          const first = yield* Effect.forkChild(
            executor.execute(call("c1", "trigger-elicitation-request"), {}, context(s))
          )
          const result = yield* Fiber.join(first)
          expect(result._tag).toBe("NeedsInput")
          yield* Effect.promise(() => waitForTrace(s, (t) => callResults(t).length === 1))
          const trace = readTrace(s.trace)
          expect(elicitResults(trace)).toStrictEqual([{ action: "cancel" }])
          expect(callResults(trace)[0]).toContain("⚠️ User cancelled the elicitation dialog.")
          // The server is free again for the next call.
          expect(
            (yield* drive(executor, s, call("c2", "echo", { message: "after" }), () => null)).response.content
          ).toBe("Echo: after")
        })
      )
    }
  )

  it.live("interrupting a call in flight cancels the request; the scope's end stops the server", () => {
    const s = setup()
    const config = everything(s, {
      conversation: { tools: { "trigger-long-running-operation": { timeout_ms: 60_000 } } }
    })
    return withExecutor(s, config, (executor) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(
          executor.execute(call("c1", "trigger-long-running-operation", { duration: 30, steps: 3 }), {}, context(s))
        )
        yield* Effect.promise(() => waitForTrace(s, (t) => t.some((m) => m.message["method"] === "tools/call")))
        const exit = yield* Fiber.interrupt(fiber).pipe(Effect.andThen(Fiber.await(fiber)))
        expect(Exit.hasInterrupts(exit)).toBe(true)
        yield* Effect.promise(() =>
          waitForTrace(s, (t) => t.some((m) => m.message["method"] === "notifications/cancelled"))
        )
        expect((yield* drive(executor, s, call("c2", "echo", { message: "next" }), () => null)).response.content).toBe(
          "Echo: next"
        )
      })
    ).pipe(
      Effect.andThen(Effect.promise(() => waitGone(s.mark))),
      Effect.map((left) => expect(left).toStrictEqual([]))
    )
  })

  it.live("timeout_ms bounds the server's time: the call is cancelled with a tool error", () => {
    const s = setup()
    const config = everything(s, { conversation: { tools: { "trigger-long-running-operation": { timeout_ms: 300 } } } })
    return withExecutor(s, config, (executor) =>
      Effect.gen(function* () {
        const { response } = yield* drive(
          executor,
          s,
          call("c1", "trigger-long-running-operation", { duration: 30, steps: 3 }),
          () => null
        )
        expect(response).toStrictEqual({
          content: "Tool 'trigger-long-running-operation' timed out after 300 ms and was cancelled.",
          is_error: true
        })
      })
    )
  })

  it.live(
    "URL mode: with a person, one yes/no question naming the host (yes accepts); without one, declined unasked",
    () => {
      const s = setup()
      const args = { url: "https://auth.example.com/start?x=1", message: "Sign in to continue." }
      const withPerson = withExecutor(
        s,
        everything(s),
        (executor) =>
          Effect.gen(function* () {
            const { response, asked } = yield* drive(
              executor,
              s,
              call("c1", "trigger-url-elicitation", args),
              () => true
            )
            expect(asked).toStrictEqual([
              {
                id: "url",
                text: 'MCP server "everything" asks you to open a page on auth.example.com: Sign in to continue.\n  https://auth.example.com/start?x=1\nDone there? No declines.',
                source: { source: "tool", name: "trigger-url-elicitation" }
              }
            ])
            expect(response.content).toMatch(/^✅ User completed the URL elicitation flow\./)
          }),
        true
      )
      const nobody = withExecutor(
        s,
        everything(s),
        (executor) =>
          Effect.gen(function* () {
            const { response, asked } = yield* drive(
              executor,
              s,
              call("c2", "trigger-url-elicitation", args),
              () => true
            )
            expect(asked).toStrictEqual([])
            expect(response.content).toMatch(/^❌ User declined to open the URL/)
          }),
        false
      )
      return Effect.andThen(withPerson, nobody)
    }
  )
})

describe("MCP servers: start, failure, collisions", () => {
  it.live("a server that cannot start is one problem; the other servers' tools are offered", () => {
    const s = setup()
    const config = {
      mcp: {
        servers: {
          broken: { command: "node", args: ["-e", "console.error('no config here'); process.exit(3)"] },
          everything: stdioServer(s.mark)
        }
      }
    }
    return withExecutor(s, config, (executor) =>
      Effect.sync(() => {
        expect(executor.definitions.map((d) => d.name)).toContain("echo")
        expect(s.problems.length).toBe(1)
        expect(s.problems[0]).toMatch(
          /^MCP server "broken" \(node -e .*\) could not be started: .*; it said:\nno config here\nIts tools are unavailable in this run; check \[mcp\.servers\.broken\] in config\.toml\.$/s
        )
      })
    )
  })

  it.live(
    "a server that dies mid-run: one problem, and its tools answer with an error instead of crashing the turn",
    () => {
      const s = setup()
      return withExecutor(s, everything(s), (executor) =>
        Effect.gen(function* () {
          for (const pid of marked(s.mark)) process.kill(pid, "SIGKILL")
          yield* Effect.promise(() => waitUntil(() => s.problems.length === 1))
          expect(s.problems[0]).toMatch(
            /^MCP server "everything" stopped(; it said:\n[^]*)?\nIts tools are unavailable for the rest of this run\.$/
          )
          const { response } = yield* drive(executor, s, call("c1", "echo", { message: "hi" }), () => null)
          expect(response.is_error).toBe(true)
          expect(response.content).toMatch(/^Tool 'echo' is unavailable: MCP server "everything" stopped/)
        })
      )
    }
  )

  it.live('two servers offering one name is a config error naming both; source = "mcp.NAME" picks one', () => {
    const s = setup()
    const twice = { mcp: { servers: { a: stdioServer(s.mark), b: stdioServer(s.mark) } } }
    const failed = withExecutor(s, twice, () => Effect.void).pipe(Effect.flip)
    return Effect.gen(function* () {
      const error = yield* failed
      expect(error.message).toContain(
        'config.toml: conversation.tools.echo: the tool name "echo" is offered by MCP server "a" and MCP server "b"; pick one with source = "mcp.a" or source = "mcp.b" under [conversation.tools."echo"]'
      )
      expect(yield* Effect.promise(() => waitGone(s.mark))).toStrictEqual([])
    })
  })
})

// A real MCP server built with the SDK (fixtures/odd-server.mjs) for what server-everything does not do.
describe("MCP elicitation edge cases (the SDK's own server)", () => {
  const ODD = path.join(import.meta.dirname, "fixtures", "odd-server.mjs")
  const odd = (s: Setup) => ({
    mcp: { servers: { odd: { command: process.execPath, args: [ODD], env: { PARLEY_MCP_TEST: s.mark } } } }
  })

  it.live("a form parley cannot ask is refused with a JSON-RPC error, nothing is asked", () => {
    const s = setup()
    return withExecutor(s, odd(s), (executor) =>
      Effect.gen(function* () {
        // Outside the spec's flat form: the SDK itself refuses it, as invalid params.
        const nested = yield* drive(executor, s, call("c1", "nested"), () => null)
        expect(nested.asked).toStrictEqual([])
        expect(nested.response.content).toMatch(/^elicitation refused: MCP error -32602: Invalid elicitation request: /)
        // Valid for the spec, but a field name that cannot be a question id: parley refuses it.
        const dotted = yield* drive(executor, s, call("c2", "dotted"), () => null)
        expect(dotted).toStrictEqual({
          asked: [],
          response: {
            content:
              "elicitation refused: MCP error -32602: parley cannot ask this: field \"a.b\": question ids must not contain '.'",
            is_error: false
          }
        })
      })
    )
  })

  it.live("two forms in one call: each is asked in full; the second form question is attempt 2 of its id", () => {
    const s = setup()
    return withExecutor(s, odd(s), (executor) =>
      Effect.gen(function* () {
        const colors = ["red", "blue"]
        const { response, asked } = yield* drive(executor, s, call("c1", "twice"), (q) =>
          q.id === "elicitation" ? true : colors.shift()!
        )
        expect(asked.map((q) => q.id)).toStrictEqual(["elicitation", "color", "elicitation", "color"])
        expect(asked[2]!.text).toBe('MCP server "odd" asks: Second color?\nFill in its form (1 field)? No declines it.')
        expect(JSON.parse(response.content)).toStrictEqual([
          { action: "accept", content: { color: "red" } },
          { action: "accept", content: { color: "blue" } }
        ])
      })
    )
  })

  it.live(
    "a question the server withdraws: a late answer is dropped and the call ends with the server's result",
    () => {
      const s = setup()
      return withExecutor(s, odd(s), (executor) =>
        Effect.gen(function* () {
          const first = yield* executor.execute(call("c1", "withdraw"), {}, context(s))
          expect(first._tag).toBe("NeedsInput")
          yield* Effect.sleep("400 millis")
          const second = yield* executor.execute(call("c1", "withdraw"), { elicitation: true }, context(s))
          expect(second._tag).toBe("Completed")
          expect(second._tag === "Completed" ? second.response : undefined).toStrictEqual({
            content: "gave up: MCP error -32001: Request timed out",
            is_error: false
          })
        })
      )
    }
  )

  it.live("a server that exits mid-call: a tool error that says so, and one problem", () => {
    const s = setup()
    return withExecutor(s, odd(s), (executor) =>
      Effect.gen(function* () {
        const { response } = yield* drive(executor, s, call("c1", "die"), () => null)
        expect(response.is_error).toBe(true)
        expect(response.content).toMatch(
          /^Tool 'die' failed: MCP server "odd" stopped\. Its tools are unavailable for the rest of this run\.$|^Tool 'die' failed: MCP server "odd": Connection closed$/
        )
        yield* Effect.promise(() => waitUntil(() => s.problems.length === 1))
        expect(s.problems).toStrictEqual([
          'MCP server "odd" stopped\nIts tools are unavailable for the rest of this run.'
        ])
        expect((yield* drive(executor, s, call("c2", "twice"), () => null)).response).toStrictEqual({
          content: "Tool 'twice' is unavailable: MCP server \"odd\" stopped.",
          is_error: true
        })
      })
    )
  })
})
