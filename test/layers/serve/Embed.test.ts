// parley serve's API embedded in a program of its own (docs/serve.md#the-api): the program's own
// HttpApi adds parley's group beside a group of its own, serves both on 127.0.0.1 behind parley's
// guard, and a question of a waiting turn is answered through it and recorded.
import * as fs from "node:fs"
import * as path from "node:path"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as Api from "../../../src/layers/serve/Api.ts"
import * as Guard from "../../../src/layers/serve/Guard.ts"
import * as Limits from "../../../src/layers/serve/Limits.ts"
import * as FileConversationStore from "../../../src/layers/store/FileConversationStore.ts"
import type { ConversationStore } from "../../../src/services/ConversationStore.ts"
import { ConversationsGroup } from "../../../src/services/ServeApi.ts"
import { addDeferrable, DEFERRABLE, makeProject, parley, persisted, writeScript } from "../../support/Project.ts"

/** The program's own group. */
class Mine extends HttpApiGroup.make("mine").add(HttpApiEndpoint.get("hello", "/hello", { success: Schema.String })) {}

/** The program's API: its own group and parley's. */
class MyApi extends HttpApi.make("mine").add(Mine).add(ConversationsGroup) {}

describe("parley serve's API in a program of its own", () => {
  it.effect(
    "serves its own route and parley's, and answers a waiting turn's question through parley's",
    () => {
      const p = makeProject()
      fs.appendFileSync(
        path.join(p.storage, "config.toml"),
        `${DEFERRABLE}\n[conversation.inquiry]\ndetached = "defer"\n`
      )
      addDeferrable(p.root)
      const script = writeScript(p, "first.json", [
        {
          message: "Working.",
          tool_calls: [{ id: "ask_1", name: "deferrable", arguments: { name: "prod", mode: "ask" } }]
        }
      ])
      expect(parley(p, ["query", "--new", "deploy", "--script", script]).code).toBe(3)
      const id = (JSON.parse(parley(p, ["conversation", "ls", "--format", "json"]).stdout) as Array<{ id: string }>)[0]!
        .id
      const token = "t".repeat(64)
      return Effect.scoped(
        Effect.gen(function* () {
          const listening = yield* Layer.build(
            NodeHttpServer.layer(Limits.httpServer(Limits.defaults), { host: "127.0.0.1", port: 0 })
          )
          const address = (yield* HttpServer.HttpServer.pipe(Effect.provideContext(listening))).address
          const port = address._tag === "UnixPathAddress" ? 0 : address.port
          const mine = HttpApiBuilder.group(MyApi, "mine", (h) => h.handle("hello", () => Effect.succeed("hi")))
          // parley's group is keyed by the group, not by the API that holds it: its layer serves MyApi's copy.
          const parleys = Api.group(p.storage) as unknown as Layer.Layer<
            HttpApiGroup.Service<"mine", "conversations">,
            never,
            ConversationStore
          >
          const routes = Layer.mergeAll(
            HttpApiBuilder.layer(MyApi).pipe(Layer.provide([mine, parleys])),
            Guard.layer({ token, hosts: Guard.hostsFor("127.0.0.1", port) })
          ).pipe(Layer.provide(FileConversationStore.layer({ storageDir: p.storage })))
          yield* Layer.build(
            Layer.provide(
              HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }),
              Layer.succeedContext(listening)
            )
          )
          const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" }
          const hello = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/hello`, { headers }))
          expect([hello.status, yield* Effect.promise(() => hello.json())]).toStrictEqual([200, "hi"])
          const answered = yield* Effect.promise(() =>
            fetch(`http://127.0.0.1:${port}/api/conversations/${id}/questions/ask_1.confirm.1`, {
              method: "POST",
              headers,
              body: JSON.stringify({ answer: true })
            })
          )
          expect([answered.status, yield* Effect.promise(() => answered.json())]).toStrictEqual([
            200,
            { id: "ask_1.confirm.1", outcome: "recorded" }
          ])
          const again = yield* Effect.promise(() =>
            fetch(`http://127.0.0.1:${port}/api/conversations/${id}/questions/ask_1.confirm.1`, {
              method: "POST",
              headers,
              body: JSON.stringify({ answer: false })
            })
          )
          expect(again.status).toBe(409)
        })
      ).pipe(
        Effect.tap(() =>
          Effect.sync(() => {
            const responses = persisted(p).filter((e) => e.type === "inquiry_response")
            expect(responses.map((e) => [e["id"], e["answer"]])).toStrictEqual([["ask_1.confirm.1", true]])
          })
        )
      )
    },
    120_000
  )
})
