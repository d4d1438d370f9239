// A light install (docs/decisions.md#optional-peer-dependencies): the SDKs are optional peer dependencies, loaded
// by the layers that need them; a missing one is a MissingPackage naming it,
// and the CLI renders the command that installs it.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { execFileSync } from "node:child_process"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as MissingPackage from "../../src/domain/package/MissingPackage.ts"
import * as LoadPackage from "../../src/layers/LoadPackage.ts"
import { loadError } from "../../src/layers/provider/Transport.ts"
import * as Hint from "../../src/cli/Hint.ts"
import { repoRoot } from "../support/Fixtures.ts"

/**
 * Node's own error for importing `name` where it is not installed (a child
 * node in an empty temp dir: vitest's module runner resolves bare imports
 * itself, so the failure is produced where the CLI and consumers see it).
 */
const notFound = (name: string) => async (): Promise<never> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-loadpkg-"))
  try {
    const script = `import(${JSON.stringify(name)}).then(() => console.log("null"), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: dir, timeout: 20_000 })
    const error = JSON.parse(out.toString()) as { code: string; message: string } | null
    if (error === null) throw new Error(`${name} was found from ${dir}`)
    throw Object.assign(new Error(error.message), { code: error.code })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Runs `code` (an ES module, TypeScript through tsx) in a child node where
 * importing `name` fails as it does when the package is not installed: a
 * resolve hook answers Node's own ERR_MODULE_NOT_FOUND for it (the
 * repository has every optional peer installed). Its stdout, trimmed.
 */
const withoutPackage = (name: string, code: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-nopkg-"))
  try {
    fs.writeFileSync(
      path.join(dir, "hide.mjs"),
      `export const resolve = async (specifier, context, next) => {
  if (specifier === ${JSON.stringify(name)} || specifier.startsWith(${JSON.stringify(`${name}/`)}))
    throw Object.assign(new Error(\`Cannot find package '\${specifier}' imported from \${context.parentURL}\`), { code: "ERR_MODULE_NOT_FOUND" })
  return next(specifier, context)
}\n`
    )
    fs.writeFileSync(
      path.join(dir, "register.mjs"),
      `import { register } from "node:module"\nregister(new URL("./hide.mjs", import.meta.url))\n`
    )
    const args = ["--import", "tsx", "--import", path.join(dir, "register.mjs"), "--input-type=module", "-e", code]
    return execFileSync(process.execPath, args, { cwd: repoRoot, timeout: 60_000 }).toString().trim()
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("LoadPackage", () => {
  it("the PostgreSQL store imports without @effect/sql-pg; building its layer fails with MissingPackage naming it", () => {
    const module = path.join(repoRoot, "src", "layers", "store", "pg", "PgConversationStore.ts")
    const out = withoutPackage(
      "@effect/sql-pg",
      `import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
// The hook is real: the package itself does not load.
const direct = await import("@effect/sql-pg").then(() => "loaded", (e) => e.code)
const Pg = await import(${JSON.stringify(module)})
const error = await Effect.runPromise(Effect.flip(Effect.scoped(Layer.build(Pg.layer({ url: "postgres://127.0.0.1:1/none" })))))
console.log(JSON.stringify({ direct, error: { ...error }, message: error.message }))`
    )
    expect(JSON.parse(out)).toStrictEqual({
      direct: "ERR_MODULE_NOT_FOUND",
      error: { ...MissingPackage.of("@effect/sql-pg") },
      message: "PostgreSQL storage needs the package @effect/sql-pg (^4.0.5), which is not installed."
    })
  }, 90_000)

  it.effect("a package that is not installed is a MissingPackage naming it and its range", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(LoadPackage.load("openai", notFound("openai")))
      expect(error).toStrictEqual(MissingPackage.of("openai"))
      expect(error.message).toBe("The OpenAI provider needs the package openai (^7.57.0), which is not installed.")
      expect(Hint.withInstall(error)).toBe(`${error.message}\n    npm install 'openai@^7.57.0'    Install it.`)
    })
  )

  it.effect("an installed package loads", () =>
    Effect.gen(function* () {
      const sdk = yield* LoadPackage.load("openai", () => import("openai"))
      expect(typeof sdk.default).toBe("function")
    })
  )

  it.effect("another failure to load (a broken install) is a defect, not a missing package", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(LoadPackage.load("openai", () => Promise.reject(new Error("boom"))))
      expect(Exit.isFailure(exit) && exit.cause.reasons.some((r) => r._tag === "Die")).toBe(true)
    })
  )

  it("a provider whose SDK is missing fails with a ProviderError that carries the package", async () => {
    const cause = await notFound("@anthropic-ai/sdk")().catch((e: unknown) => e)
    const error = loadError("anthropic", "@anthropic-ai/sdk")(cause)
    expect(error.missing).toStrictEqual(MissingPackage.of("@anthropic-ai/sdk"))
    expect(error.message).toBe(
      "The Anthropic provider needs the package @anthropic-ai/sdk (^1.12.0), which is not installed."
    )
    expect(Hint.withInstall(error)).toContain("npm install '@anthropic-ai/sdk@^1.12.0'")
  })

  it("the optional packages are package.json's optional peer dependencies, with the same ranges, and dev dependencies", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
      dependencies: Record<string, string>
      devDependencies: Record<string, string>
      peerDependencies: Record<string, string>
      peerDependenciesMeta: Record<string, { optional?: boolean }>
    }
    for (const [name, { range }] of Object.entries(MissingPackage.optional)) {
      expect([name, pkg.peerDependencies[name]]).toStrictEqual([name, range])
      expect([name, pkg.peerDependenciesMeta[name]?.optional]).toStrictEqual([name, true])
      expect([name, pkg.devDependencies[name] !== undefined]).toStrictEqual([name, true])
      expect([name, pkg.dependencies[name]]).toStrictEqual([name, undefined])
    }
  })
})
