/**
 * Executors that compose (docs/library.md#effectai-tools-as-parleys-executor-asking-questions-mid-run): one executor from built-ins, local tools, MCP servers and
 * any number of effect/ai toolkits, under one config file; a tool name
 * defined twice is an error naming both sources; config for a toolkit tool
 * is accepted (not "there is no built-in tool named …").
 */
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Tool, Toolkit } from "effect/ai"
import { executorFromToolkit } from "../../../src/ai/index.ts"
import * as Combine from "../../../src/layers/executor/Combine.ts"
import * as ExecutorLive from "../../../src/layers/executor/ExecutorLive.ts"
import { Config } from "../../../src/services/Config.ts"
import { Executor } from "../../../src/services/Executor.ts"
import { marked, newMark, stdioServer } from "../mcp/everything.ts"
import { FIXTURES, tempRoot } from "./helpers.ts"

const Params = Schema.Struct({ env: Schema.String })
const deployKit = Toolkit.make(
  Tool.make("deploy", { description: "Deploy.", parameters: Params, success: Schema.String, needsApproval: true }),
  Tool.make("rollback", { description: "Roll back.", parameters: Params, success: Schema.String })
)
const opsKit = Toolkit.make(Tool.make("status", { description: "Status.", parameters: Params, success: Schema.String }))

const deploy = executorFromToolkit(
  deployKit,
  {
    deploy: ({ env }) => Effect.succeed(`deployed to ${env}`),
    rollback: ({ env }) => Effect.succeed(`rolled back ${env}`)
  },
  { name: "deploys" }
)
const ops = executorFromToolkit(opsKit, { status: ({ env }) => Effect.succeed(`${env} is up`) })

const context = { conversationId: "17738399468", root: "/tmp" }

const built = <E>(layer: Layer.Layer<Executor, E, Config>, config: unknown) =>
  Effect.exit(Effect.service(Executor).pipe(Effect.provide(layer.pipe(Layer.provide(Config.layerLiteral(config))))))

const names = (e: Executor["Service"]) => e.definitions.map((d) => d.name)

describe("ExecutorLive.layerWith({ executors }): one executor for every kind of tool", () => {
  it.effect(
    "built-ins, a local tool and two toolkits; config tables for toolkit tools apply (description, enable, run)",
    () =>
      Effect.gen(function* () {
        const root = tempRoot()
        const config = {
          conversation: {
            tools: {
              greet: { source: "local", command: `sh ${FIXTURES}/echo_args.sh`, description: "Greets." },
              rollback: { enable: false },
              status: { description: "Is it up?", run: "ask" },
              deploy: { run: "unattended" }
            }
          }
        }
        const exit = yield* built(ExecutorLive.layerWith({ executors: [deploy, ops] }), config)
        expect(Exit.isSuccess(exit), String(exit)).toBe(true)
        const executor = (exit as Exit.Success<Executor["Service"]>).value
        expect(names(executor)).toStrictEqual([
          "ask_user",
          "deploy",
          "greet",
          "read_file",
          "status",
          "use_token",
          "write_file"
        ])
        expect(executor.definitions.find((d) => d.name === "status")?.description).toBe("Is it up?")
        expect([
          executor.kind("deploy"),
          executor.kind("greet"),
          executor.kind("read_file"),
          executor.kind("rollback")
        ]).toStrictEqual(["builtin", "local", "builtin", undefined])
        expect([
          executor.permission("deploy"),
          executor.permission("status"),
          executor.permission("greet"),
          executor.permission("read_file")
        ]).toStrictEqual(["unattended", "ask", "ask", "unattended"])
        expect(yield* executor.callPermission!({ id: "c", name: "deploy", arguments: { env: "prod" } })).toStrictEqual({
          mode: "unattended",
          approval: false
        })
        expect(yield* executor.callPermission!({ id: "c", name: "read_file", arguments: {} })).toStrictEqual({
          mode: "unattended",
          approval: false
        })
        const run = (name: string) =>
          Effect.map(executor.execute({ id: "c", name, arguments: { env: "prod" } }, {}, { ...context, root }), (r) =>
            r._tag === "Completed" ? r.response.content : r._tag
          )
        expect(yield* run("deploy")).toBe("deployed to prod")
        expect(yield* run("status")).toBe("prod is up")
        expect(yield* run("rollback")).toMatch(/^Tool 'rollback' is not available\./)
        expect([
          executor.source?.("deploy"),
          executor.source?.("status"),
          executor.source?.("read_file")
        ]).toStrictEqual([`toolkit "deploys"`, "an effect/ai toolkit", "the built-in tools"])
      })
  )

  it.effect("a toolkit tool named like a built-in, a local tool or another toolkit's: DuplicateTool naming both", () =>
    Effect.gen(function* () {
      const named = (name: string, label?: string) =>
        executorFromToolkit(
          Toolkit.make(Tool.make(name, { parameters: Params, success: Schema.String })),
          { [name]: () => Effect.succeed("") } as never,
          label === undefined ? {} : { name: label }
        )
      const failure = (exit: Exit.Exit<unknown, unknown>) => (Exit.isFailure(exit) ? String(exit.cause) : "built")
      expect(failure(yield* built(ExecutorLive.layerWith({ executors: [named("read_file", "files")] }), {}))).toContain(
        `Tool "read_file" is defined twice: by the built-in tools and by toolkit "files". Give one of them another name.`
      )
      expect(
        failure(
          yield* built(ExecutorLive.layerWith({ executors: [named("greet")] }), {
            conversation: { tools: { greet: { source: "local", command: "true" } } }
          })
        )
      ).toContain(
        `Tool "greet" is defined twice: by the local tool of conversation.tools.greet in config.toml and by an effect/ai toolkit.`
      )
      expect(
        failure(yield* built(ExecutorLive.layerWith({ executors: [ops, named("status", "second")] }), {}))
      ).toContain(`Tool "status" is defined twice: by an effect/ai toolkit and by toolkit "second".`)
      expect(failure(yield* built(Combine.layer(ops, named("status")), {}))).toContain(
        `Tool "status" is defined twice: by an effect/ai toolkit (executor 1) and by an effect/ai toolkit (executor 2).`
      )
      // Under the live tools, the positions are the `executors` option's entries.
      expect(failure(yield* built(ExecutorLive.layerWith({ executors: [ops, named("status")] }), {}))).toContain(
        `Tool "status" is defined twice: by an effect/ai toolkit (executors[0]) and by an effect/ai toolkit (executors[1]).`
      )
    })
  )

  it.effect("without executors, config for an unknown tool is still an error", () =>
    Effect.gen(function* () {
      const exit = yield* built(ExecutorLive.layerWith(), { conversation: { tools: { status: { run: "ask" } } } })
      expect(Exit.isFailure(exit) ? String(exit.cause) : "built").toContain(`there is no built-in tool named "status"`)
      const accepted = yield* built(ExecutorLive.layerWith({ executors: [ops] }), {
        conversation: { tools: { status: { run: "ask" } } }
      })
      expect(Exit.isSuccess(accepted)).toBe(true)
    })
  )

  it.live(
    "an MCP server (server-everything) beside built-ins and a toolkit; its tools and the toolkit's run; the server stops with the scope",
    () => {
      const mark = newMark()
      return Effect.gen(function* () {
        yield* Effect.scoped(
          Effect.gen(function* () {
            const context_ = yield* Layer.build(
              ExecutorLive.layerWith({ executors: [deploy], mcp: { root: "/tmp", onProblem: () => {} } }).pipe(
                Layer.provide(Config.layerLiteral({ mcp: { servers: { everything: stdioServer(mark) } } }))
              )
            )
            const executor = Context.get(context_, Executor)
            expect(names(executor)).toEqual(expect.arrayContaining(["deploy", "echo", "read_file", "rollback"]))
            expect(executor.source?.("echo")).toBe(`MCP server "everything"`)
            const echo = yield* executor.execute({ id: "c", name: "echo", arguments: { message: "hi" } }, {}, context)
            expect(echo._tag === "Completed" ? echo.response.content : echo._tag).toContain("hi")
            expect(marked(mark).length).toBeGreaterThan(0)
          })
        )
        expect(marked(mark)).toStrictEqual([])
      })
    },
    60_000
  )
})
