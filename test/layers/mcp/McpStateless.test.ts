// MCP 2026-07-28 (docs/mcp.md#rounds-2026-07-28) at the executor: a real MCP 2026-07-28 server (the SDK v2's own
// McpServer, fixtures/stateless-server.mjs) over stdio and streamable HTTP.
// Its tools ask by answering `input_required`; each request becomes the same
// questions a pushed elicitation does, the call is retried with the answers
// under the server's keys and its requestState verbatim, the open round
// travels with the first question of the round (NeedsInput.resume), and a
// new executor handed that state retries instead of starting over.
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as ExecutorLive from "../../../src/layers/executor/ExecutorLive.ts"
import { Config } from "../../../src/services/Config.ts"
import { type Answers, Executor, type ExecutorResult, type ToolCall } from "../../../src/services/Executor.ts"
import { killMarked, newMark, readTrace, waitGone } from "./everything.ts"

const STATELESS = path.join(import.meta.dirname, "fixtures", "stateless-server.mjs")
const STRICT = path.join(import.meta.dirname, "fixtures", "strict-server.mjs")

const marks: Array<string> = []
const dirs: Array<string> = []
const servers: Array<ChildProcess> = []
afterEach(() => {
  for (const c of servers.splice(0)) c.kill("SIGKILL")
  for (const m of marks.splice(0)) killMarked(m)
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

interface Setup {
  readonly mark: string
  readonly root: string
  /** What the server saw: one line per `tools/call`. */
  readonly log: string
  readonly trace: string
  readonly problems: Array<string>
}

const setup = (): Setup => {
  const mark = newMark()
  marks.push(mark)
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-mrtr-"))
  dirs.push(root)
  return { mark, root, log: path.join(root, "server.jsonl"), trace: path.join(root, "trace.jsonl"), problems: [] }
}

interface Seen {
  readonly tool: string
  readonly requestState: string | null
  readonly inputResponses: Record<string, unknown> | null
}
const seen = (s: Setup): Array<Seen> =>
  fs.existsSync(s.log)
    ? fs
        .readFileSync(s.log, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as Seen)
    : []

const stdio = (s: Setup, extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: [STATELESS],
  env: { PARLEY_MCP_TEST: s.mark, STATELESS_LOG: s.log },
  ...extra
})

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

const call = (id: string, name: string): ToolCall => ({ id, name, arguments: {} })

interface Asked {
  readonly id: string
  readonly text: string
  readonly resume: Schema.Json | undefined
}

/** Drives one call like the coordinator: answers each question, hands back the latest recorded state. */
const drive = (
  executor: Executor["Service"],
  s: Setup,
  c: ToolCall,
  answer: (q: Asked) => Schema.Json,
  initial: Answers = {},
  resume?: Schema.Json
) =>
  Effect.gen(function* () {
    const asked: Array<Asked> = []
    let answers = initial
    let state = resume
    for (;;) {
      const r: ExecutorResult = yield* executor.execute(c, answers, {
        conversationId: "17738399468",
        root: s.root,
        ...(state !== undefined ? { resume: state } : {})
      })
      if (r._tag === "Completed") return { response: r.response, asked }
      const q = { id: r.question.id, text: r.question.text, resume: r.resume }
      if (r.resume !== undefined) state = r.resume
      asked.push(q)
      answers = { ...r.answers, [q.id]: answer(q) }
    }
  })

const DEPLOY: Record<string, Schema.Json> = { elicitation: true, env: "staging", sure: true }

const startHttp = async (s: Setup): Promise<string> => {
  const child = spawn(process.execPath, [STATELESS, "http"], {
    env: { ...process.env, PARLEY_MCP_TEST: s.mark, STATELESS_LOG: s.log },
    stdio: ["ignore", "ignore", "pipe"]
  })
  servers.push(child)
  return new Promise((resolve, reject) => {
    let err = ""
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString()
      const m = /listening on (\S+)/.exec(err)
      if (m !== null) resolve(m[1]!)
    })
    child.on("exit", () => reject(new Error(`the HTTP server exited: ${err}`)))
  })
}

describe("MCP 2026-07-28: input_required as questions (the SDK v2 server)", () => {
  it.live(
    "stdio: the protocol is negotiated; a form comes back as questions, the retry carries the answers under the key and the requestState verbatim",
    () => {
      const s = setup()
      return withExecutor(s, { mcp: { servers: { st: stdio(s) } } }, (executor) =>
        Effect.gen(function* () {
          expect(executor.definitions.map((d) => d.name).filter((n) => executor.kind(n) === "mcp")).toStrictEqual([
            "again",
            "count",
            "deploy",
            "echo",
            "pair",
            "secret",
            "sign-in",
            "wizard"
          ])
          const { response, asked } = yield* drive(executor, s, call("c1", "deploy"), (q) => DEPLOY[q.id]!)
          expect(response).toStrictEqual({ content: "deployed to staging (sure: true)", is_error: false })
          expect(asked.map((q) => [q.id, q.text])).toStrictEqual([
            [
              "elicitation",
              'MCP server "st" asks: Deploy to production?\nFill in its form (2 fields)? No declines it.'
            ],
            ["env", "env"],
            ["sure", "sure"]
          ])
          const calls = seen(s)
          expect(calls.map((c) => [c.tool, c.inputResponses])).toStrictEqual([
            ["deploy", null],
            ["deploy", { confirm: { action: "accept", content: { env: "staging", sure: true } } }]
          ])
          const minted = calls[1]!.requestState
          expect(minted).toMatch(/^[A-Za-z0-9_-]{20,}$/)
          // The round goes with its first question only, so the coordinator records it once.
          expect(asked.map((q) => q.resume)).toStrictEqual([
            {
              mcp: {
                server: "st",
                round: 1,
                inputRequests: { confirm: expect.objectContaining({ method: "elicitation/create" }) },
                requestState: minted
              }
            },
            undefined,
            undefined
          ])
          // Stateless: no session, nothing pushed, and no initialize.
          const methods = readTrace(s.trace)
            .filter((t) => t.direction === "send")
            .map((t) => t.message["method"])
          expect(methods).toStrictEqual(["server/discover", "tools/list", "tools/call", "tools/call"])
        })
      ).pipe(
        Effect.andThen(Effect.promise(() => waitGone(s.mark))),
        Effect.map((left) => expect(left).toStrictEqual([]))
      )
    }
  )

  it.live("streamable HTTP: the same questions and retry", () => {
    const s = setup()
    return Effect.promise(() => startHttp(s)).pipe(
      Effect.flatMap((url) =>
        withExecutor(s, { mcp: { servers: { web: { url } } } }, (executor) =>
          Effect.gen(function* () {
            const { response, asked } = yield* drive(executor, s, call("c1", "deploy"), (q) =>
              q.id === "env" ? "production" : DEPLOY[q.id]!
            )
            expect(asked.map((q) => q.id)).toStrictEqual(["elicitation", "env", "sure"])
            expect(response).toStrictEqual({ content: "deployed to production (sure: true)", is_error: false })
            expect(seen(s).map((c) => c.inputResponses)).toStrictEqual([
              null,
              { confirm: { action: "accept", content: { env: "production", sure: true } } }
            ])
          })
        )
      )
    )
  })

  it.live(
    "rounds in sequence: each round's first question carries that round; two requests in one round are asked in the server's order",
    () => {
      const s = setup()
      return withExecutor(s, { mcp: { servers: { st: stdio(s) } } }, (executor) =>
        Effect.gen(function* () {
          const answers: Record<string, Schema.Json> = { elicitation: true, name: "Ada", color: "blue", x: "1", y: "2" }
          const wizard = yield* drive(executor, s, call("c1", "wizard"), (q) => answers[q.id]!)
          expect(wizard.response.content).toBe("Ada likes blue")
          expect(
            wizard.asked.map((q) => [
              q.id,
              q.resume === undefined ? null : (q.resume as { mcp: { round: number } }).mcp.round
            ])
          ).toStrictEqual([
            ["elicitation", 1],
            ["name", null],
            ["elicitation", 2],
            ["color", null]
          ])
          expect(wizard.asked[2]!.text).toBe(
            'MCP server "st" asks: Hi Ada. Favourite color?\nFill in its form (1 field)? No declines it.'
          )
          const pair = yield* drive(executor, s, call("c2", "pair"), (q) => answers[q.id]!)
          expect(pair.asked.map((q) => q.id)).toStrictEqual(["elicitation", "x", "elicitation", "y"])
          expect(pair.response.content).toBe("1+2")
          expect(
            seen(s)
              .filter((c) => c.tool === "pair")
              .map((c) => c.inputResponses)
          ).toStrictEqual([
            null,
            { a: { action: "accept", content: { x: "1" } }, b: { action: "accept", content: { y: "2" } } }
          ])
        })
      )
    }
  )

  it.live("no declines: the retry carries decline; URL mode asks a person and is declined unasked without one", () => {
    const s = setup()
    const config = { mcp: { servers: { st: stdio(s) } } }
    return Effect.gen(function* () {
      yield* withExecutor(
        s,
        config,
        (executor) =>
          Effect.gen(function* () {
            const no = yield* drive(executor, s, call("c1", "deploy"), () => false)
            expect(no).toStrictEqual({
              response: { content: "not deployed: decline", is_error: false },
              asked: [expect.objectContaining({ id: "elicitation" })]
            })
            const page = yield* drive(executor, s, call("c2", "sign-in"), () => true)
            expect(page.asked.map((q) => q.id)).toStrictEqual(["url"])
            expect(page.asked[0]!.text).toBe(
              'MCP server "st" asks you to open a page on auth.example.com: Sign in first.\n  https://auth.example.com/start\nDone there? No declines.'
            )
            expect(page.response.content).toBe("page: accept")
          }),
        true
      )
      yield* withExecutor(
        s,
        config,
        (executor) =>
          Effect.gen(function* () {
            const nobody = yield* drive(executor, s, call("c3", "sign-in"), () => true)
            expect(nobody).toStrictEqual({ response: { content: "page: decline", is_error: false }, asked: [] })
          }),
        false
      )
    })
  })

  it.live(
    "rounds are bounded by max_attempts: a server that never settles ends the call with a tool error; state-only rounds count too",
    () => {
      const s = setup()
      const config = { mcp: { servers: { st: stdio(s) } }, conversation: { tools: { count: { max_attempts: 2 } } } }
      return withExecutor(s, config, (executor) =>
        Effect.gen(function* () {
          const again = yield* drive(executor, s, call("c1", "again"), () => true)
          expect(again.response).toStrictEqual({
            content:
              "Tool 'again' stopped: MCP server \"st\" asked for input 6 times in one call (max_attempts is 5). Raise max_attempts under [conversation.tools.again] to allow more rounds.",
            is_error: true
          })
          expect(again.asked.length).toBe(10) // 5 rounds of the form question and its one field
          const count = yield* drive(executor, s, call("c2", "count"), () => null)
          expect(count.response.content).toBe(
            "Tool 'count' stopped: MCP server \"st\" asked for input 3 times in one call (max_attempts is 2). Raise max_attempts under [conversation.tools.count] to allow more rounds."
          )
          expect(count.asked).toStrictEqual([])
        })
      )
    }
  )

  it.live("a state-only round is retried at once with the state and no answers", () => {
    const s = setup()
    return withExecutor(s, { mcp: { servers: { st: stdio(s) } } }, (executor) =>
      Effect.gen(function* () {
        const count = yield* drive(executor, s, call("c1", "count"), () => null)
        expect(count).toStrictEqual({ response: { content: "counted to 3", is_error: false }, asked: [] })
        const calls = seen(s)
        expect(calls.map((c) => [c.requestState === null, c.inputResponses])).toStrictEqual([
          [true, null],
          [false, {}],
          [false, {}],
          [false, {}]
        ])
      })
    )
  })

  it.live(
    "a new executor handed the recorded round retries with the recorded answers and the same requestState, asking nothing",
    () => {
      const s = setup()
      const config = { mcp: { servers: { st: stdio(s) } } }
      return Effect.gen(function* () {
        // The first run: the questions are asked and answered, then the run ends before the retry is sent.
        let recorded: Schema.Json | undefined
        yield* withExecutor(s, config, (executor) =>
          Effect.gen(function* () {
            let answers: Answers = {}
            for (;;) {
              const r = yield* executor.execute(call("c1", "deploy"), answers, {
                conversationId: "17738399468",
                root: s.root
              })
              if (r._tag !== "NeedsInput") throw new Error("expected a question")
              if (r.resume !== undefined) recorded = r.resume
              answers = { ...r.answers, [r.question.id]: DEPLOY[r.question.id]! }
              if (r.question.id === "sure") return
            }
          })
        )
        expect(seen(s).length).toBe(1)
        const minted = (recorded as { mcp: { requestState: string } }).mcp.requestState
        // The second run, in a new executor (a new server): the recorded answers and state.
        yield* withExecutor(s, config, (executor) =>
          Effect.gen(function* () {
            const { response, asked } = yield* drive(
              executor,
              s,
              call("c1", "deploy"),
              () => "never asked",
              DEPLOY,
              recorded
            )
            expect(asked).toStrictEqual([])
            expect(response.content).toBe("deployed to staging (sure: true)")
          })
        )
        expect(seen(s).map((c) => [c.requestState, c.inputResponses])).toStrictEqual([
          [null, null],
          [minted, { confirm: { action: "accept", content: { env: "staging", sure: true } } }]
        ])
        // State recorded for another server, or a 2025 server, starts the call afresh.
        yield* withExecutor(s, config, (executor) =>
          Effect.gen(function* () {
            const other = { mcp: { ...(recorded as { mcp: object }).mcp, server: "elsewhere" } }
            const { asked } = yield* drive(executor, s, call("c2", "deploy"), (q) => DEPLOY[q.id]!, {}, other)
            expect(asked.map((q) => q.id)).toStrictEqual(["elicitation", "env", "sure"])
          })
        )
      })
    }
  )

  it.live(
    'protocol = "2025-11-25": the same server, through its 2025 shim — elicitations pushed while the call is open, the same questions',
    () => {
      const s = setup()
      return withExecutor(s, { mcp: { servers: { st: stdio(s, { protocol: "2025-11-25" }) } } }, (executor) =>
        Effect.gen(function* () {
          const { response, asked } = yield* drive(executor, s, call("c1", "deploy"), (q) => DEPLOY[q.id]!)
          expect(asked.map((q) => [q.id, q.resume])).toStrictEqual([
            ["elicitation", undefined],
            ["env", undefined],
            ["sure", undefined]
          ])
          expect(response.content).toBe("deployed to staging (sure: true)")
          const t = readTrace(s.trace)
          expect(
            t
              .filter((m) => m.direction === "send")
              .map((m) => m.message["method"])
              .filter((m) => m !== undefined)
          ).toStrictEqual(["initialize", "notifications/initialized", "tools/list", "tools/call"])
          expect(t.some((m) => m.direction === "receive" && m.message["method"] === "elicitation/create")).toBe(true)
        })
      )
    }
  )

  it.live("a 2025 server that exits on the protocol question is started again and spoken to in 2025-11-25", () => {
    const s = setup()
    const config = {
      mcp: { servers: { strict: { command: process.execPath, args: [STRICT], env: { PARLEY_MCP_TEST: s.mark } } } }
    }
    return withExecutor(s, config, (executor) =>
      Effect.gen(function* () {
        expect(s.problems).toStrictEqual([])
        const { response } = yield* drive(executor, s, call("c1", "ping"), () => null)
        expect(response).toStrictEqual({ content: "pong", is_error: false })
        // The first copy got the question and exited; the second was never asked it.
        expect(
          readTrace(s.trace)
            .filter((t) => t.direction === "send")
            .map((t) => t.message["method"])
        ).toStrictEqual(["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"])
      })
    ).pipe(
      Effect.andThen(Effect.promise(() => waitGone(s.mark))),
      Effect.map((left) => expect(left).toStrictEqual([]))
    )
  })
})

describe("secrets out of config: ${env:NAME} in env and headers (docs/mcp.md#secrets-out-of-config)", () => {
  it.live(
    "a copy of $PARLEY_TOKEN under another name: neither server starts, and the problem names server and key",
    () => {
      const s = setup()
      const token = "cluster-token-0123456789abcdef0123456789abcdef"
      process.env["PARLEY_TOKEN"] = token
      process.env["MCP_TEST_COPY"] = token
      // Nothing listens at this URL: the start must stop before any request carries the header.
      const config = {
        mcp: {
          servers: {
            st: stdio(s, { env: { PARLEY_MCP_TEST: s.mark, T: "${env:MCP_TEST_COPY}" } }),
            web: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: "Bearer ${env:MCP_TEST_COPY}" } }
          }
        }
      }
      return withExecutor(s, config, (executor) =>
        Effect.sync(() => {
          expect(executor.definitions.some((d) => executor.kind(d.name) === "mcp")).toBe(false)
          expect([...s.problems].sort()).toStrictEqual([
            'MCP server "st": env.T carries the value of $PARLEY_TOKEN, which parley never hands to a server.\nIts tools are unavailable in this run; give the server its own credential in [mcp.servers.st] in config.toml.',
            'MCP server "web": headers.Authorization carries the value of $PARLEY_TOKEN, which parley never hands to a server.\nIts tools are unavailable in this run; give the server its own credential in [mcp.servers.web] in config.toml.'
          ])
        })
      ).pipe(
        Effect.andThen(Effect.promise(() => waitGone(s.mark))),
        Effect.map((left) => expect(left).toStrictEqual([])),
        Effect.ensuring(
          Effect.sync(() => {
            delete process.env["PARLEY_TOKEN"]
            delete process.env["MCP_TEST_COPY"]
          })
        )
      )
    }
  )

  it.live("stdio env and HTTP headers name parley's variables; the values reach the server, not config.toml", () => {
    const s = setup()
    process.env["MCP_TEST_SECRET"] = "s3cret"
    process.env["MCP_TEST_BEARER"] = "t0ken"
    const stdioConfig = {
      mcp: {
        servers: { st: stdio(s, { env: { PARLEY_MCP_TEST: s.mark, STATELESS_SECRET: "<${env:MCP_TEST_SECRET}>" } }) }
      }
    }
    const httpConfig = (url: string) => ({
      mcp: { servers: { web: { url, headers: { Authorization: "Bearer ${env:MCP_TEST_BEARER}" } } } }
    })
    const child = spawn(process.execPath, [STATELESS, "http"], {
      env: { ...process.env, PARLEY_MCP_TEST: s.mark, STATELESS_BEARER: "t0ken" },
      stdio: ["ignore", "ignore", "pipe"]
    })
    servers.push(child)
    const url = new Promise<string>((resolve) => {
      let err = ""
      child.stderr!.on("data", (d: Buffer) => {
        err += d.toString()
        const m = /listening on (\S+)/.exec(err)
        if (m !== null) resolve(m[1]!)
      })
    })
    return Effect.gen(function* () {
      yield* withExecutor(s, stdioConfig, (executor) =>
        Effect.gen(function* () {
          expect((yield* drive(executor, s, call("c1", "secret"), () => null)).response.content).toBe("<s3cret>")
        })
      )
      // The server answers 401 to anything without the bearer token.
      yield* withExecutor(s, httpConfig(yield* Effect.promise(() => url)), (executor) =>
        Effect.gen(function* () {
          expect((yield* drive(executor, s, call("c2", "echo"), () => null)).response.content).toBe("hello")
        })
      )
      expect(s.problems).toStrictEqual([])
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          delete process.env["MCP_TEST_SECRET"]
          delete process.env["MCP_TEST_BEARER"]
        })
      )
    )
  })

  it.live(
    "a variable that is not set: the server is not started, and the problem names the key and the variable",
    () => {
      const s = setup()
      const config = {
        mcp: {
          servers: {
            st: stdio(s, { env: { PARLEY_MCP_TEST: s.mark, STATELESS_SECRET: "${env:MCP_TEST_UNSET_VARIABLE}" } })
          }
        }
      }
      return withExecutor(s, config, (executor) =>
        Effect.sync(() => {
          expect(executor.definitions.some((d) => executor.kind(d.name) === "mcp")).toBe(false)
          expect(s.problems).toStrictEqual([
            'MCP server "st": env.STATELESS_SECRET names ${env:MCP_TEST_UNSET_VARIABLE}, which is not set in parley\'s environment.\nIts tools are unavailable in this run; set MCP_TEST_UNSET_VARIABLE or change [mcp.servers.st] in config.toml.'
          ])
        })
      ).pipe(
        Effect.andThen(Effect.promise(() => waitGone(s.mark))),
        Effect.map((left) => expect(left).toStrictEqual([]))
      )
    }
  )
})
