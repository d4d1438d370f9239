/**
 * parley as an npm package, judged from a clean consumer project (docs/library.md#installing,
 * items 1 and 4): `npm pack` (which runs `prepack`: the CLI bundle and the
 * library emit), then a temporary project with its own `effect`, strict
 * NodeNext settings and `skipLibCheck`, installed from the tarball, checked
 * with plain `tsc` and run with plain `node`.
 *
 * Importing `parley` or `parley/ai` must not load the Anthropic, OpenAI or
 * MCP SDKs (a load hook lists every module plain node loads); they are not
 * even installed (optional peers; docs/decisions.md#optional-peer-dependencies). arethetypeswrong (esm-only) and
 * publint check the tarball, and a hover probe (test/support/Hover.ts) reads
 * each namespace's doc through the installed .d.ts as an editor would. `npm install -g --prefix` of
 * the tarball alone runs `parley demo`. Then the acceptance of a light install (docs/decisions.md#optional-peer-dependencies), a
 * test of its own (skipped, and counted so, without tmux): a second consumer
 * installs the MCP client and the platform layers too, compiles
 * test/fixtures/consumer-agent/agent.mts and runs it under tmux (an effect/ai
 * tool with `needsApproval`, server-everything and a built-in, one config
 * file, one turn; "n" at the approval). Slow (it packs, installs three times
 * and runs tsc twice) but bounded: every child has a timeout, and the temp
 * dir, tmux sessions and MCP server are gone at the end.
 *
 * The consumer installs offline: its lockfile is cut from parley's own
 * package-lock.json (same versions, same integrity hashes), so every tarball
 * comes from the npm cache that `npm ci` of this repository filled. Only if
 * the cache lacks one does it fall back to the registry, and says so.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { onTestFailed } from "vitest"
import ts from "typescript"
import * as Parley from "../../src/index.ts"
import * as ParleyAi from "../../src/ai/index.ts"
import { killMarked, newMark, stdioToml, waitGone } from "../layers/mcp/everything.ts"
import { fixtureCorpus, repoRoot, tempDir } from "../support/Fixtures.ts"
import { genericUses, hoverProbe, namespacesOf } from "../support/Hover.ts"
import * as Tmux from "../support/Tmux.ts"

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

// Each child bounded at 7 minutes: `npm pack` builds the CLI and the library's emit (prepack), which took
// 4m54s on this 2-core machine under a parallel suite; a kill by the bound says so instead of a bare null.
const run = (command: string, args: ReadonlyArray<string>, cwd: string): Run => {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 420_000 })
  const killed =
    r.signal === null ? "" : `\n(${command} ${args[0] ?? ""} ended by ${r.signal}: the 7-minute bound, or killed)`
  return { code: r.status, stdout: r.stdout, stderr: r.stderr + killed }
}

const readJson = <A>(file: string): A => JSON.parse(fs.readFileSync(file, "utf8")) as A

interface LockEntry {
  readonly version: string
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
  readonly [key: string]: unknown
}

interface PackageJson {
  readonly version: string
  readonly license: string
  readonly bin: Record<string, string>
  readonly dependencies: Record<string, string>
  readonly peerDependencies: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
  readonly exports: Record<string, string | { readonly types: string; readonly default: string }>
}

/** The lock entry `name` resolves to from `from`, walking up nested node_modules as Node does. */
const resolveIn = (lock: Record<string, LockEntry>, from: string, name: string): string => {
  for (let dir = from; ; dir = dir.includes("/node_modules/") ? dir.slice(0, dir.lastIndexOf("/node_modules/")) : "") {
    const at = `${dir === "" ? "" : `${dir}/`}node_modules/${name}`
    if (lock[at] !== undefined) return at
    if (dir === "")
      throw new Error(`${name} (needed by ${from || "the consumer"}) is not in parley's package-lock.json`)
  }
}

/**
 * package.json and package-lock.json for a consumer of `tarball` that also
 * depends on `effect` and `@types/node` itself: the transitive closure of those
 * and of parley's dependencies, copied from parley's lockfile.
 */
const consumerManifests = (tarball: string, optional: ReadonlyArray<string> = []) => {
  const lock = readJson<{ packages: Record<string, LockEntry> }>(path.join(repoRoot, "package-lock.json")).packages
  const parley = readJson<PackageJson>(path.join(repoRoot, "package.json"))
  // `optional`: parley's optional peers this consumer installs too (at the versions parley is tested with).
  const own = Object.fromEntries(
    ["effect", "@types/node", ...optional].map((name) => [name, lock[`node_modules/${name}`]!.version])
  )
  const dependencies = { ...own, parley: `file:${tarball}` }
  const packages: Record<string, unknown> = {
    "": { name: "consumer", version: "0.0.0", dependencies },
    "node_modules/parley": {
      version: parley.version,
      resolved: `file:${tarball}`,
      license: parley.license,
      bin: parley.bin,
      dependencies: parley.dependencies,
      peerDependencies: parley.peerDependencies,
      ...(parley.peerDependenciesMeta !== undefined ? { peerDependenciesMeta: parley.peerDependenciesMeta } : {})
    }
  }
  const queue: Array<[string, string]> = [...Object.keys(own), ...Object.keys(parley.dependencies)].map((n) => ["", n])
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const at = resolveIn(lock, next[0], next[1])
    if (packages[at] !== undefined) continue
    const { dev: _dev, peer: _peer, devOptional: _devOptional, ...entry } = lock[at]!
    packages[at] = entry
    for (const d of Object.keys(entry.dependencies ?? {})) queue.push([at, d])
    for (const d of Object.keys(entry.peerDependencies ?? {})) {
      if (entry.peerDependenciesMeta?.[d]?.optional !== true) queue.push([at, d])
    }
  }
  return {
    packageJson: { name: "consumer", version: "0.0.0", private: true, type: "module", dependencies },
    lockfile: { name: "consumer", version: "0.0.0", lockfileVersion: 3, requires: true, packages }
  }
}

/** `npm ci` of a consumer from the npm cache (the registry only when the cache lacks a tarball, said so). */
const installOffline = (app: string): Run => {
  const install = run("npm", ["ci", "--offline", "--no-audit", "--no-fund"], app)
  if (install.code === 0 || !install.stderr.includes("ENOTCACHED")) return install
  console.log(
    "package test: the npm cache lacks a tarball parley's lockfile names; installing the consumer from the registry instead"
  )
  return run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund"], app)
}

/** Every file under `dir`, relative, with `/` separators. */
const walk = (dir: string, base = dir): Array<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? walk(path.join(dir, e.name), base)
        : [path.relative(base, path.join(dir, e.name)).split(path.sep).join("/")]
    )

/**
 * Every module URL (ESM, through a load hook) and CommonJS file that plain
 * `node` loads for `import(specifier)` in the consumer `app`.
 */
const loadedBy = (app: string, work: string, specifier: string): Array<string> => {
  const log = path.join(work, `loaded-${specifier.replace(/\W/g, "_")}.txt`)
  const hook = `import { appendFileSync } from "node:fs"; export async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + "\\n"); return next(url, context) }`
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)})`
  const r = run(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(register)}`,
      "--input-type=module",
      "-e",
      `await import(${JSON.stringify(specifier)}); const { createRequire } = await import("node:module"); console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)))`
    ],
    app
  )
  expect(r.stderr, specifier).toBe("")
  const esm = fs
    .readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
  return [...esm, ...(JSON.parse(r.stdout) as Array<string>)]
}

// The largest events.json of JP's whole corpus (1.8 MB, 670 entries), committed as a fixture.
const largest = path.join(
  fixtureCorpus.dir,
  "conversations",
  "17738399468-rfd-review-and-phase-1-planning",
  "events.json"
)

/** The first test's folder, removed after both tests (kept, and named, when one failed). */
let workDir: string | undefined
/** The first test's tarball and its folder once it passed, for the tmux test. */
let packed: { readonly work: string; readonly tarball: string } | undefined
let failed = false

describe("the npm package (npm pack → a fresh strict consumer)", () => {
  afterAll(() => {
    // Kept on failure for inspection; the installed consumers are tens of MB otherwise left in /tmp.
    if (workDir === undefined) return
    if (failed) console.log(`package test: kept for inspection: ${workDir}`)
    else fs.rmSync(workDir, { recursive: true, force: true })
  })
  beforeEach(() => {
    onTestFailed(() => {
      failed = true
    })
  })
  it("ships compiled ESM, .d.ts and the CLI bundle only; a NodeNext consumer typechecks with 0 errors and runs it with plain node; installs light; npm install -g runs parley demo", async () => {
    const work = tempDir("parley-package-")
    workDir = work
    const pack = run("npm", ["pack", "--json", "--pack-destination", work], repoRoot)
    expect(pack.code, pack.stderr).toBe(0)
    const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
    const files = info!.files.map((f) => f.path).sort()

    // What ships: the CLI bundle (its fast paths' scripts, not their source maps), the library's JS and .d.ts with their maps, the library's sources the maps point into, README, package.json — nothing else.
    for (const f of files)
      expect(f).toMatch(
        /^(package\.json|README\.md|LICENSE|dist\/[^/]+\.[mc]js|dist\/lib\/.+\.(js|d\.ts)(\.map)?|src\/.+\.ts)$/
      )
    expect(
      files.filter(
        (f) => /^(test|bench|\.ci|scripts|examples)\//.test(f) || f === "src/bin.ts" || f.startsWith("src/cli/")
      )
    ).toStrictEqual([])
    // No install-time script runs for a consumer (docs/library.md#installing): the build runs on `npm pack` (prepack), not on install.
    const scripts = readJson<{ scripts: Record<string, string> }>(path.join(repoRoot, "package.json")).scripts
    expect(
      Object.keys(scripts).filter((k) => ["preinstall", "install", "postinstall", "prepare"].includes(k))
    ).toStrictEqual([])
    expect(files).toContain("dist/parley.mjs")
    expect(files).toContain("dist/parley-query.cjs")
    // package.json says MIT: the license text ships with it (docs/library.md#installing).
    expect(files).toContain("LICENSE")
    // Every library source (the CLI aside: bin.ts and cli/ are bundled into dist/parley.mjs) ships as .js plus .d.ts, so every deep import works.
    const sources = walk(path.join(repoRoot, "src")).filter(
      (f) => f.endsWith(".ts") && f !== "bin.ts" && !f.startsWith("cli/")
    )
    expect(files.filter((f) => f.startsWith("dist/lib/cli/"))).toStrictEqual([])
    for (const s of sources) {
      expect(files).toContain(`dist/lib/${s.replace(/\.ts$/, ".js")}`)
      expect(files).toContain(`dist/lib/${s.replace(/\.ts$/, ".d.ts")}`)
      // Source and declaration maps into the shipped sources: go-to-definition lands in TypeScript.
      expect(files).toContain(`dist/lib/${s.replace(/\.ts$/, ".js.map")}`)
      expect(files).toContain(`dist/lib/${s.replace(/\.ts$/, ".d.ts.map")}`)
      expect(files).toContain(`src/${s}`)
    }
    const manifest = readJson<PackageJson>(path.join(repoRoot, "package.json"))
    for (const target of Object.values(manifest.exports)) {
      for (const t of typeof target === "string" ? [target] : [target.types, target.default]) {
        const re = new RegExp(`^${t.slice(2).replace(/[.]/g, "\\.").replace("*", ".+")}$`)
        expect(
          files.some((f) => re.test(f)),
          t
        ).toBe(true)
      }
    }

    // The consumer: fixture sources, its own effect, installed from the cache.
    const app = path.join(work, "app")
    fs.cpSync(path.join(repoRoot, "test", "fixtures", "consumer"), app, { recursive: true })
    const { lockfile, packageJson } = consumerManifests(path.join(work, info!.filename))
    fs.writeFileSync(path.join(app, "package.json"), JSON.stringify(packageJson, null, 2) + "\n")
    fs.writeFileSync(path.join(app, "package-lock.json"), JSON.stringify(lockfile, null, 2) + "\n")
    const install = installOffline(app)
    expect(install.code, install.stderr).toBe(0)
    // npm names no script of parley's among the install scripts it warns about (docs/library.md#installing).
    expect(
      `${install.stdout}\n${install.stderr}`.split("\n").filter((l) => /install-scripts/.test(l) && /parley/.test(l))
    ).toStrictEqual([])
    // One Effect: parley's peer dependency is the consumer's own copy.
    expect(manifest.dependencies["effect"]).toBeUndefined()
    expect(manifest.peerDependencies["effect"]).toMatch(/^\^4\.\d+\.\d+$/)
    // The platform layers are the consumer's choice: an optional peer, not installed for them.
    expect(manifest.peerDependenciesMeta?.["@effect/platform-node"]).toStrictEqual({ optional: true })
    expect(fs.existsSync(path.join(app, "node_modules", "@effect", "platform-node"))).toBe(false)
    const effects = walk(path.join(app, "node_modules")).filter((f) => /(^|\/)effect\/package\.json$/.test(f))
    expect(effects).toStrictEqual(["effect/package.json"])

    const started = performance.now()
    const tsc = run(process.execPath, [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "."], app)
    console.log(`package test: consumer tsc took ${Math.round(performance.now() - started)} ms`)
    expect(tsc.stdout + tsc.stderr).toBe("")
    expect(tsc.code).toBe(0)

    // What the consumer's editor shows (docs/library.md#public-modules): each namespace of parley and parley/ai, read through the
    // installed .d.ts, carries its module's doc on hover, and every type of its module is there as `X.Type`.
    const consumerOptions = ts.getParsedCommandLineOfConfigFile(
      path.join(app, "tsconfig.json"),
      { noUnusedLocals: false },
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} }
    )!.options
    const hovers = hoverProbe({
      dir: app,
      options: consumerOptions,
      namespaces: [
        ["parley", namespacesOf(Parley)],
        ["parley/ai", namespacesOf(ParleyAi)]
      ],
      extra: genericUses
    })
    expect(Object.keys(hovers.docs).length).toBeGreaterThan(40)
    expect(Object.entries(hovers.docs).filter(([, doc]) => doc === "")).toStrictEqual([])
    expect(hovers.typeAccesses).toBeGreaterThan(100)
    expect(hovers.errors).toStrictEqual([])

    // Without skipLibCheck too (docs/decisions.md#optional-peer-dependencies): parley's declarations name no optional package, so a light consumer
    // checks them all. (Effect's own declarations want DOM types; only parley's lines count here.)
    const strictLib = run(
      process.execPath,
      [
        path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"),
        "-p",
        ".",
        "--noEmit",
        "--skipLibCheck",
        "false",
        "--lib",
        "ES2023,DOM"
      ],
      app
    )
    expect(
      (strictLib.stdout + strictLib.stderr).split("\n").filter((l) => /node_modules\/parley\/|^main\.mts/.test(l))
    ).toStrictEqual([])

    const main = run(process.execPath, [path.join("out", "main.mjs"), largest], app)
    expect(main.stderr).toBe("")
    expect(main.code).toBe(0)
    expect(JSON.parse(main.stdout)).toStrictEqual({
      entries: 670,
      identical: true,
      lastEventAt: "2026-03-18T15:52:24.727287Z",
      tags: [
        "parley/ConversationStore",
        "parley/Executor",
        "parley/PromptBackend",
        "parley/InquiryBackend",
        "parley/Provider"
      ],
      requirements: true,
      store: "function",
      ai: { tools: ["write_file"], asked: "overwrite", completed: "wrote a.txt", ok: "fine", provider: true }
    })

    // A light install (docs/decisions.md#optional-peer-dependencies): the SDKs, the MCP client, PostgreSQL and the HTML renderer are optional peers, not installed.
    const installed = walk(path.join(app, "node_modules"))
      .filter((f) => /^(@[^/]+\/)?[^/@]+\/package\.json$/.test(f))
      .map((f) => f.slice(0, -"/package.json".length))
      .sort()
    const optional = ["openai", "@anthropic-ai/sdk", "@modelcontextprotocol/client", "@effect/sql-pg", "markdown-it"]
    for (const name of optional) {
      expect(manifest.peerDependenciesMeta?.[name]).toStrictEqual({ optional: true })
      expect(manifest.dependencies[name]).toBeUndefined()
    }
    expect(
      installed.filter((p) => /^(openai|@anthropic-ai\/|@modelcontextprotocol\/|@effect\/sql-pg|markdown-it)/.test(p))
    ).toStrictEqual([])
    console.log(`package test: the consumer's node_modules holds ${installed.length} packages: ${installed.join(" ")}`)

    // Every entry point loads under plain node through the exports map (no `.ts` specifier left behind),
    // except SafeMarkdown (its markdown-it is a static import: markdownToHtml is synchronous): it fails naming it.
    // Internal modules (`@internal`, off the list: test/docs/Exports.test.ts) are not importable.
    const internals = [
      "parley/layers/store/FileIo",
      "parley/programs/coordinator/Env",
      "parley/domain/storage/JsonStrict"
    ]
    const specifiers = Object.keys(manifest.exports)
      .filter((k) => k !== "./package.json")
      .map((k) => (k === "." ? "parley" : `parley/${k.slice(2)}`))
      .concat(internals)
    const loadAll = run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const failed = {}; for (const s of ${JSON.stringify(specifiers)}) await import(s).catch((e) => { failed[s] = e.code === "ERR_MODULE_NOT_FOUND" ? /Cannot find package '([^']+)'/.exec(e.message)?.[1] ?? e.message : e.code === "ERR_PACKAGE_PATH_NOT_EXPORTED" ? e.code : e.message }); console.log(JSON.stringify(failed))`
      ],
      app
    )
    expect(loadAll.stderr).toBe("")
    expect(JSON.parse(loadAll.stdout)).toStrictEqual({
      "parley/layers/render/SafeMarkdown": "markdown-it",
      ...Object.fromEntries(internals.map((s) => [s, "ERR_PACKAGE_PATH_NOT_EXPORTED"]))
    })
    // The PostgreSQL store loads its driver when its layer is built: without it, a MissingPackage naming it.
    const pg = run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import * as Effect from "effect/Effect"; import * as Layer from "effect/Layer"; import * as Pg from "parley/layers/store/pg/PgConversationStore"; const e = await Effect.runPromise(Effect.flip(Effect.scoped(Layer.build(Pg.layer({ url: "postgres://127.0.0.1:1/none" }))))); console.log(JSON.stringify([e._tag, e.name]))`
      ],
      app
    )
    expect(pg.stderr).toBe("")
    expect(JSON.parse(pg.stdout)).toStrictEqual(["MissingPackage", "@effect/sql-pg"])

    // Importing the library loads no model or MCP SDK (they are not even installed; the load hook would see them).
    const sdk = /\/node_modules\/(@anthropic-ai\/sdk|openai|@modelcontextprotocol\/(sdk|client|core))\//
    const importsOf = (specifier: string) => loadedBy(app, work, specifier)
    for (const specifier of ["parley", "parley/ai"]) {
      const loaded = importsOf(specifier)
      expect(loaded.filter((u) => u.includes("/node_modules/parley/dist/lib/")).length, specifier).toBeGreaterThan(10)
      expect(
        loaded.filter((u) => sdk.test(u)),
        specifier
      ).toStrictEqual([])
    }

    // arethetypeswrong (the esm-only profile: parley is ESM-only) and publint find nothing in the tarball.
    const tarball = path.join(work, info!.filename)
    const bin = (name: string) => path.join(repoRoot, "node_modules", ".bin", name)
    const attw = run(bin("attw"), [tarball, "--profile", "esm-only", "--format", "json"], work)
    expect(attw.stderr).toBe("")
    // The JSON lists every resolution's problems; esm-only ignores CommonJS require (node16-cjs) and node10, as its exit code does.
    const { problems } = JSON.parse(attw.stdout) as {
      problems: Record<string, ReadonlyArray<{ entrypoint: string; resolutionKind?: string }>>
    }
    const counted = Object.values(problems)
      .flat()
      .filter((p) => p.resolutionKind !== "node10" && p.resolutionKind !== "node16-cjs")
    expect(counted).toStrictEqual([])
    expect(attw.code).toBe(0)
    const publint = run(bin("publint"), ["run", tarball, "--strict"], work)
    expect(publint.stdout).toContain("All good!")
    expect(publint.code).toBe(0)

    // The CLI from the installed package.
    const cli = run(process.execPath, [path.join(app, "node_modules", ".bin", "parley"), "--version"], app)
    expect(cli.code).toBe(0)
    expect(cli.stdout).toContain(manifest.version)
    // `npm install -g` of the tarball alone gives a working `parley demo` (docs/library.md#installing): the CLI bundle carries the SDKs it needs.
    const prefix = path.join(work, "global")
    const global = run(
      "npm",
      ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", tarball],
      work
    )
    expect(global.code, global.stderr).toBe(0)
    const demoTmp = path.join(work, "demo-tmp")
    fs.mkdirSync(demoTmp)
    const demo = spawnSync(path.join(prefix, "bin", "parley"), ["demo"], {
      cwd: work,
      encoding: "utf8",
      timeout: 120_000,
      input: "",
      // The demo's project goes under TMPDIR: inside `work`, removed with it.
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PARLEY_"))),
        TMPDIR: demoTmp
      }
    })
    expect(demo.status, demo.stderr).toBe(0)
    expect(demo.stdout).toContain("Wrote 72 bytes to notes.txt.")
    expect(fs.readdirSync(demoTmp).filter((d) => d.startsWith("parley-demo-")).length).toBe(1)
    packed = { work, tarball }
  }, 900_000)

  // The acceptance of the effect/ai bridge (docs/library.md#bridges-to-effectai-parleyai): a consumer's agent (test/fixtures/consumer-agent) with an effect/ai tool that
  // needs approval, the MCP server-everything and a built-in, under one config file, in one turn, asked under tmux.
  // Its own test, so that a machine without tmux counts it as skipped (not passed with nothing checked).
  it.skipIf(!Tmux.available)(
    "a consumer's agent asks its effect/ai tool's approval under tmux; n skips it, the MCP tool and the built-in run",
    async () => {
      if (packed === undefined)
        throw new Error("no tarball: the package test above failed before packing and installing")
      const { work, tarball } = packed
      const agentApp = path.join(work, "agent")
      fs.cpSync(path.join(repoRoot, "test", "fixtures", "consumer-agent"), agentApp, { recursive: true })
      const agentManifests = consumerManifests(tarball, ["@effect/platform-node", "@modelcontextprotocol/client"])
      fs.writeFileSync(path.join(agentApp, "package.json"), JSON.stringify(agentManifests.packageJson, null, 2) + "\n")
      fs.writeFileSync(
        path.join(agentApp, "package-lock.json"),
        JSON.stringify(agentManifests.lockfile, null, 2) + "\n"
      )
      const agentInstall = installOffline(agentApp)
      expect(agentInstall.code, agentInstall.stderr).toBe(0)
      const agentTsc = run(
        process.execPath,
        [path.join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "."],
        agentApp
      )
      expect(agentTsc.stdout + agentTsc.stderr).toBe("")
      fs.writeFileSync(path.join(agentApp, "notes.txt"), "the notes\n")
      const mark = newMark()
      fs.writeFileSync(
        path.join(agentApp, "config.toml"),
        `[conversation.tools.read_file]\nrun = "unattended"\n[conversation.tools.echo]\nrun = "unattended"\n${stdioToml("everything", mark)}`
      )
      try {
        const result = path.join(agentApp, "result.json")
        const s = Tmux.start({
          command: [process.execPath, path.join("out", "agent.mjs"), "config.toml", result],
          cwd: agentApp
        })
        await s.waitFor(/\? Run built-in deploy tool\? \[y\/Y\/n\/N,\?\]/, { timeoutMs: 60_000 })
        s.sendKeys("n")
        expect(await s.waitForExit({ timeoutMs: 60_000 })).toBe(0)
        expect(s.pane()).toMatch(/✔ Run built-in deploy tool\? skip/)
        const out = readJson<{ ran: Array<string>; responses: Array<[string, string]>; inquiries: Array<unknown> }>(
          result
        )
        // The "no" skipped the toolkit tool; the MCP tool and the built-in ran.
        expect(out.ran).toStrictEqual([])
        expect(out.responses.sort((a, b) => a[0].localeCompare(b[0]))).toStrictEqual([
          ["call_deploy", "Tool skipped by user."],
          ["call_echo", "Echo: hello from MCP"],
          ["call_read", "the notes\n"]
        ])
        // The approval is recorded: a permission inquiry and the person's `false`.
        expect(out.inquiries).toStrictEqual([
          {
            request: "call_deploy.__permission__.1",
            text: "Run built-in deploy tool?",
            metadata: { parley_permission: true }
          },
          { response: "call_deploy.__permission__.1", outcome: "answered", answer: false }
        ])
        // The MCP server stopped with the agent.
        expect(await waitGone(mark)).toStrictEqual([])
      } finally {
        Tmux.killAll()
        killMarked(mark)
      }
    },
    600_000
  )
})
