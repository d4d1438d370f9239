/**
 * The shape of the public API (docs/library.md): no generic names at the
 * root, helpers hanging off their service tags, and those tags still the
 * very services the programs ask for.
 */
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Parley from "../../src/index.ts"
import * as ParleyAi from "../../src/ai/index.ts"
import * as ConfigService from "../../src/services/Config.ts"
import * as ExecutorService from "../../src/services/Executor.ts"
import * as Reply from "../../src/domain/model/Reply.ts"
import * as Retry from "../../src/layers/provider/Retry.ts"
import ts from "typescript"
import { repoRoot } from "../support/Fixtures.ts"

/**
 * What an IDE shows on hover, read with TypeScript's own checker: the names
 * (under `parley/ai`, its `Inquiry` namespace, and the helpers hung off the
 * root tags) whose declaration carries no JSDoc.
 */
const undocumented = (): Array<string> => {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(repoRoot, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: () => {}
    }
  )!
  const root = path.join(repoRoot, "src", "index.ts")
  const ai = path.join(repoRoot, "src", "ai", "index.ts")
  const program = ts.createProgram([root, ai], parsed.options)
  const checker = program.getTypeChecker()
  const resolve = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s)
  const documented = (s: ts.Symbol) =>
    ts.displayPartsToString(s.getDocumentationComment(checker)).trim().length > 0 ||
    ts.displayPartsToString(resolve(s).getDocumentationComment(checker)).trim().length > 0
  const exportsOf = (file: string) =>
    checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(file)!)!)
  const missing: Array<string> = []
  for (const s of exportsOf(ai)) {
    const target = resolve(s)
    // A namespace (scripts/namespaces.ts): a const whose value is the module's namespace object.
    const module = target.flags & ts.SymbolFlags.ValueModule ? target : checker.getTypeOfSymbol(target).getSymbol()
    if (module !== undefined && module.flags & ts.SymbolFlags.ValueModule) {
      if (!documented(s)) missing.push(`parley/ai ${s.name}`)
      for (const m of checker.getExportsOfModule(module))
        if (!documented(m)) missing.push(`parley/ai ${s.name}.${m.name}`)
    } else if (!documented(s)) missing.push(`parley/ai ${s.name}`)
  }
  const tags = exportsOf(root).filter((s) => ["Config", "Executor", "Provider"].includes(s.name))
  for (const tag of tags) {
    // The members `withMembers` adds (the tag's own, inherited members are Effect's).
    const members = checker
      .getTypeOfSymbol(resolve(tag))
      .getProperties()
      .filter(
        (p) =>
          p.valueDeclaration !== undefined &&
          ts.isPropertyAssignment(p.valueDeclaration) &&
          p.valueDeclaration.getSourceFile().fileName === root
      )
    expect(members.length).toBeGreaterThan(1)
    for (const m of members) if (!documented(m)) missing.push(`parley ${tag.name}.${m.name}`)
  }
  return missing
}

describe("the public API", () => {
  it("exports no generic names at the root or in parley/ai", () => {
    const generic = [
      "ok",
      "error",
      "describe",
      "collect",
      "validate",
      "make",
      "layer",
      "parse",
      "render",
      "fieldsOf",
      "notAvailable",
      "fromOutcome",
      "withRetries",
      "parseModel"
    ]
    expect(Object.keys(Parley).filter((k) => generic.includes(k))).toStrictEqual([])
    expect(Object.keys(ParleyAi).filter((k) => generic.includes(k))).toStrictEqual([])
    // Every root value is a capitalised module, tag, class or schema, or a specific predicate.
    expect(
      Object.keys(Parley)
        .filter((k) => !/^[A-Z]/.test(k))
        .sort()
    ).toStrictEqual(["isConversationEvent", "isInquiryEvent", "isProviderVisible", "isQuestionId", "toInquiryQuestion"])
  })

  it("service helpers hang off the tags, and the tags are the services the programs ask for", () =>
    Effect.gen(function* () {
      expect(Parley.Executor.ok("x")).toStrictEqual(ExecutorService.ok("x"))
      expect(Parley.Executor.error("x").response).toStrictEqual({ content: "x", is_error: true })
      expect(Parley.Provider.collect).toBe(Reply.collect)
      expect(Parley.Reply.collect).toBe(Reply.collect)
      expect(Parley.Provider.withRetries).toBe(Retry.withRetries)
      expect(Parley.Config.validate).toBe(ConfigService.validate)
      expect([Parley.Executor.key, Parley.Provider.key, Parley.Config.key]).toStrictEqual([
        "parley/Executor",
        "parley/Provider",
        "parley/Config"
      ])
      // A layer built with the root tag satisfies a program that asks for the module's tag, and the other way round.
      const service = ExecutorService.Executor.of({
        definitions: [],
        execute: () => Effect.succeed(Parley.Executor.ok("ran")),
        permission: () => "ask",
        kind: () => undefined
      })
      const viaModule = yield* Effect.service(ExecutorService.Executor).pipe(
        Effect.provide(Layer.succeed(Parley.Executor, service))
      )
      const viaRoot = yield* Effect.service(Parley.Executor).pipe(
        Effect.provide(Layer.succeed(ExecutorService.Executor, service))
      )
      expect(viaModule).toBe(service)
      expect(viaRoot).toBe(service)
      const config = yield* Effect.service(Parley.Config).pipe(
        Effect.provide(Parley.Config.layerLiteral({ assistant: { model: "scripted" } }))
      )
      expect(config.data).toStrictEqual({ assistant: { model: "scripted" } })
    }))

  it("every export of parley/ai and every helper hung off a root tag has JSDoc, so an IDE shows it on hover", () => {
    expect(undocumented()).toStrictEqual([])
  }, 120_000)
})
