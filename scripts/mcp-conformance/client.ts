// The client the MCP conformance suite drives (issue 28): parley's own MCP
// path, nothing written for the suite — the live executor (ExecutorLive with
// [mcp.servers]) connects, lists, calls tools and answers their questions;
// only who answers is scripted here (each question gets its default, else a
// plain yes or a word, as a person pressing Enter would). OAuth sign-ins are
// completed by following the authorization page's redirect, as the suite's
// own clients do.
//
// `node client.mjs <server-url>`, with MCP_CONFORMANCE_SCENARIO and
// MCP_CONFORMANCE_PROTOCOL_VERSION set by the suite; `scripts/mcp-conformance/run.mjs`
// bundles this file and runs the suites. Exit 0 when the scenario's calls ran
// (tool errors included: they are answers); 1 when parley could not even start.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import * as ExecutorLive from "../../src/layers/executor/ExecutorLive.ts"
import { Config } from "../../src/services/Config.ts"
import { type Answers, Executor, type ExecutorResult } from "../../src/services/Executor.ts"
import type { Question } from "../../src/domain/tool/Question.ts"

const url = process.argv.at(-1)!
const scenario = process.env["MCP_CONFORMANCE_SCENARIO"] ?? ""
const version = process.env["MCP_CONFORMANCE_PROTOCOL_VERSION"]
const log = (line: string) => process.stderr.write(`conformance client: ${line}\n`)

/** A person pressing Enter: the default, else yes, the first option, a word. */
const answer = (q: Question): Schema.Json => {
  if (q.default !== undefined) return q.default
  switch (q.answer_type.type) {
    case "boolean":
      return true
    case "select":
      return q.answer_type.options[0] ?? ""
    default:
      return "conformance"
  }
}

/** Arguments that fit a tool's input schema: every property, a plain value of its type. */
const sample = (schema: unknown): Record<string, Schema.Json> => {
  const properties =
    (schema as { properties?: Record<string, { type?: string; enum?: Array<Schema.Json> }> }).properties ?? {}
  let n = 1
  const value = (p: { type?: string; enum?: Array<Schema.Json> }): Schema.Json => {
    if (p.enum !== undefined && p.enum.length > 0) return p.enum[0]!
    switch (p.type) {
      case "number":
      case "integer":
        return ++n
      case "boolean":
        return true
      case "array":
        return []
      case "object":
        return {}
      default:
        return "conformance"
    }
  }
  return Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, value(p)]))
}

/** The person at the browser: opens the page, follows the authorization server's redirect back to parley. */
const signIn = (_server: string, page: URL) =>
  void (async () => {
    const answered = await fetch(page, { redirect: "manual" })
    const back = answered.headers.get("location")
    if (back !== null) await fetch(back)
  })().catch((e: unknown) => log(`sign-in: ${String(e)}`))

interface Call {
  readonly name: string
  readonly args: Record<string, Schema.Json>
}

/** Calls the scenario spells out (`MCP_CONFORMANCE_CONTEXT.toolCalls`), as the model would make them. */
const contextCalls = (): ReadonlyArray<Call> | undefined => {
  try {
    const context = JSON.parse(process.env["MCP_CONFORMANCE_CONTEXT"] ?? "{}") as {
      toolCalls?: Array<{ name: string; arguments?: Record<string, Schema.Json> }>
    }
    return context.toolCalls?.map((c) => ({ name: c.name, args: c.arguments ?? {} }))
  } catch {
    return undefined
  }
}

/** The calls a scenario's server expects; the default calls every tool once. */
const plan = (tools: ReadonlyMap<string, Schema.JsonObject>): ReadonlyArray<Call> => {
  const given = contextCalls()
  if (given !== undefined) return given
  switch (scenario) {
    case "json-schema-ref-no-deref":
      return []
    case "json-schema-2020-12-preservation":
      // The schema as parley offers it to the model, echoed back.
      return [{ name: "json_schema_echo", args: { schema: tools.get("json_schema_2020_12_tool") ?? {} } }]
    default:
      return [...tools].map(([name, schema]) => ({ name, args: sample(schema) }))
  }
}

const drive = (executor: Executor["Service"], call: Call, id: string, initial: Answers = {}) =>
  Effect.gen(function* () {
    let answers = initial
    for (;;) {
      const r: ExecutorResult = yield* executor.execute({ id, name: call.name, arguments: call.args }, answers, {
        conversationId: "conformance",
        root: process.cwd()
      })
      if (r._tag === "Completed") return r.response
      log(`${call.name} asks ${r.question.id}`)
      answers = { ...r.answers, [r.question.id]: answer(r.question) }
    }
  })

const storage = fs.mkdtempSync(path.join(os.tmpdir(), "parley-conformance-"))
const protocol = version === "2026-07-28" || version === "2025-11-25" ? version : "auto"
// The suite runs its scenarios side by side: on a busy machine starting takes longer than parley's default 10 s.
const config = { mcp: { servers: { conformance: { url, protocol, startup_timeout_ms: 90_000 } } } }

const program = Effect.gen(function* () {
  const executor = yield* Executor
  const tools = new Map(
    executor.definitions.filter((d) => executor.kind(d.name) === "mcp").map((d) => [d.name, d.parameters])
  )
  log(`tools: ${[...tools.keys()].join(", ") || "none"}`)
  let i = 0
  for (const call of plan(tools)) {
    const response = yield* drive(executor, call, `call_${++i}`)
    log(`${call.name}: ${response.is_error ? "error: " : ""}${response.content.slice(0, 200)}`)
  }
  return tools.size > 0 || plan(tools).length === 0
})

const problems: Array<string> = []
const ok = await Effect.runPromise(
  program.pipe(
    Effect.provide(
      ExecutorLive.layerWith({
        mcp: { root: process.cwd(), interactive: true, storage, signIn, onProblem: (m) => void problems.push(m) }
      }).pipe(Layer.provide(Config.layerLiteral(config)))
    ),
    Effect.catch((e) => Effect.sync(() => (problems.push(String(e)), false)))
  )
).finally(() => fs.rmSync(storage, { recursive: true, force: true }))
for (const p of problems) log(p)
process.exit(ok && problems.length === 0 ? 0 : 1)
