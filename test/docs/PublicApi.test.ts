/**
 * The shape of the public API (issue 12 item 2): no generic names at the
 * root, helpers hanging off their service tags, and those tags still the
 * very services the programs ask for.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Parley from "../../src/index.ts"
import * as ParleyAi from "../../src/ai/index.ts"
import * as ConfigService from "../../src/services/Config.ts"
import * as ExecutorService from "../../src/services/Executor.ts"
import * as ProviderService from "../../src/services/Provider.ts"

describe("the public API", () => {
  it("exports no generic names at the root or in parley/ai", () => {
    const generic = ["ok", "error", "describe", "collect", "validate", "make", "layer", "parse", "render", "fieldsOf", "notAvailable", "fromOutcome", "withRetries", "parseModel"]
    expect(Object.keys(Parley).filter((k) => generic.includes(k))).toStrictEqual([])
    expect(Object.keys(ParleyAi).filter((k) => generic.includes(k))).toStrictEqual([])
    // Every root value is a capitalised module, tag, class or schema, or a specific predicate.
    expect(Object.keys(Parley).filter((k) => !/^[A-Z]/.test(k)).sort()).toStrictEqual([
      "isConversationEvent", "isInquiryEvent", "isProviderVisible", "isQuestionId", "toInquiryQuestion"
    ])
  })

  it("service helpers hang off the tags, and the tags are the services the programs ask for", () =>
    Effect.gen(function*() {
      expect(Parley.Executor.ok("x")).toStrictEqual(ExecutorService.ok("x"))
      expect(Parley.Executor.error("x").response).toStrictEqual({ content: "x", is_error: true })
      expect(Parley.Provider.collect).toBe(ProviderService.collect)
      expect(Parley.Config.validate).toBe(ConfigService.validate)
      expect([Parley.Executor.key, Parley.Provider.key, Parley.Config.key]).toStrictEqual(["parley/Executor", "parley/Provider", "parley/Config"])
      // A layer built with the root tag satisfies a program that asks for the module's tag, and the other way round.
      const service = ExecutorService.Executor.of({ definitions: [], execute: () => Effect.succeed(Parley.Executor.ok("ran")), permission: () => "ask", kind: () => undefined })
      const viaModule = yield* Effect.service(ExecutorService.Executor).pipe(Effect.provide(Layer.succeed(Parley.Executor, service)))
      const viaRoot = yield* Effect.service(Parley.Executor).pipe(Effect.provide(Layer.succeed(ExecutorService.Executor, service)))
      expect(viaModule).toBe(service)
      expect(viaRoot).toBe(service)
      const config = yield* Effect.service(Parley.Config).pipe(Effect.provide(Parley.Config.layerLiteral({ assistant: { model: "scripted" } })))
      expect(config.data).toStrictEqual({ assistant: { model: "scripted" } })
    }))
})
