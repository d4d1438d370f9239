// Builds what the package ships (issue 12): `node scripts/build.mjs [cli] [lib]`.
//
// cli (the default, and all the test setup and bench need): bundles the CLI
//   with esbuild into one ESM entry (dist/parley.mjs) plus lazily loaded
//   chunks, because an unbundled Effect CLI starts ~9x slower than `node -e
//   0`. The entry itself is a few hundred bytes: it answers `--version`,
//   hands a plain `conversation ls` / `print` to the reading bundle
//   (dist/parley-reading.mjs, built on its own: see OWN_BUNDLES below), a
//   plain `query` to the query bundle (dist/parley-query.mjs), and
//   imports the command tree (src/cli/Run.ts, a chunk) for anything else;
//   the LLM SDKs are only imported on paths that call a model.
// lib (`npm run build` and `prepack`, so `npm pack` builds it; a git install
//   does not: npm runs only `prepare` for one, and parley has none):
//   TypeScript's own emit of src/ (bin.ts aside) as ESM plus .d.ts in
//   dist/lib/, the target of package.json's `exports`. The sources import
//   `./X.ts`; tsconfig.build.json rewrites those to `./X.js`.
//
// Both are built in scratch folders and renamed into place, so a parley
// process (or a consumer) started during a rebuild never sees half a build.
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { BANNER, trimBanner } from "./banner.mjs"
// node:fs and node:fs/promises without Node's ES module facade (every CLI bundle below).
import { facadeFree } from "./facadeFree.mjs"

const args = process.argv.slice(2)
// --clean: chunks of earlier builds are removed (npm pack ships dist/*.mjs). Not by
// default: a parley started before this build may still import its own chunks lazily.
const clean = args.includes("--clean")
const targets = new Set(args.filter((a) => a !== "--clean"))
if (targets.size === 0) targets.add("cli")
for (const t of targets) {
  if (t !== "cli" && t !== "lib") {
    console.error(`build: unknown target "${t}"; use cli and/or lib`)
    process.exit(2)
  }
}

// What both CLI bundles share: ESM for Node, minified, chunks loaded lazily.
const cliOptions = (outdir) => ({
  metafile: true,
  outdir,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
  // A name a stand-in module lacks (scripts/facadeFree.mjs) would read as undefined: fail the build instead.
  logOverride: { "import-is-undefined": "error" },
  // Every file's; trimmed to what each needs once written (scripts/banner.mjs).
  banner: { js: BANNER }
})

// The reading commands (src/cli/ReadingRun.ts) are a bundle of their own, dist/parley-reading.mjs
// with reading-* chunks (issue 28, start-up). In one build its chunks would be shared with
// the other commands, and a shared chunk holds every part of Effect any of them uses: `ls`
// would evaluate Stream, the RPC client's needs and more before listing anything.
// A plain query's fast path (src/cli/QueryFast.ts) likewise, dist/parley-query.mjs with query-*
// chunks: in the shared build its turn loaded 98 modules, split along every other command's
// lines; in its own, about half as many (each costs Node a resolve, a read and a link).
// (Start-up of a query, docs/benchmarks.md#start-up-of-a-query.)
const OWN_BUNDLES = { "./cli/ReadingRun.ts": "./parley-reading.mjs", "./cli/QueryFast.ts": "./parley-query.mjs" }
const ownBundles = {
  name: "own-bundles",
  setup(b) {
    b.onResolve({ filter: /^\.\/cli\/(ReadingRun|QueryFast)\.ts$/ }, (args) =>
      args.importer.endsWith(path.join("src", "bin.ts")) ? { path: OWN_BUNDLES[args.path], external: true } : undefined
    )
  }
}

// @effect/platform-node-shared's NodeSocketServer imports NodeWS (a re-export of the `ws`
// package) for its WebSocket server, which parley never starts; evaluating `ws` makes Node
// load http, https, tls, zlib and more. Every run that hosts its socket (every `query`)
// imports NodeSocketServer, so NodeWS becomes a shim that requires `ws` on first use: esbuild
// bundles a require() as a wrapper evaluated when it is called. (Start-up of a query,
// docs/benchmarks.md#start-up-of-a-query.)
const lazyWs = {
  name: "lazy-ws",
  setup(b) {
    b.onResolve({ filter: /^\.\/NodeWS\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}platform-node-shared${path.sep}`)
        ? { path: "lazy-ws", namespace: "lazy-ws", pluginData: args.resolveDir }
        : undefined
    )
    b.onLoad({ filter: /.*/, namespace: "lazy-ws" }, (args) => ({
      contents:
        'export class WebSocketServer { constructor(options) { const { WebSocketServer } = require("ws"); return new WebSocketServer(options) } }\n',
      resolveDir: args.pluginData,
      loader: "js"
    }))
  }
}

// Node built-ins a query never uses at start: loading node:crypto evaluates about twenty
// internal modules, node:tls caches the bundled root certificates, node:readline and
// node:child_process bring their own, node:v8 its heap and promise-hook helpers (~4 ms; the
// file store calls it only to decode an events.json of 8 MB or more), yet a scripted turn
// calls none of them (a tool's process, a terminal prompt, a TLS socket, a lock's random name
// come later, if ever).
// Each is imported through a CommonJS stand-in whose exports are getters that require the
// built-in at first use: esbuild reads an ESM import of CommonJS as property accesses at
// each use, so nothing is loaded before then. The names are the built-in's own, listed here
// at build time (stable APIs; a name missing would read as undefined, and the tests that
// spawn tools, prompt and hash would fail). (Start-up of a query, docs/benchmarks.md.)
const LAZY_BUILTINS = ["crypto", "tls", "readline", "child_process", "v8"]
const lazyBuiltins = {
  name: "lazy-builtins",
  setup(b) {
    const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join("|")})$`)
    b.onResolve({ filter }, (args) =>
      args.kind === "import-statement"
        ? { path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" }
        : undefined
    )
    b.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, async (args) => {
      const names = Object.keys(await import(`node:${args.path}`)).filter((k) => k !== "default")
      return {
        contents: `let m;const load=()=>m??=require("node:${args.path}");for(const k of ${JSON.stringify(names)})Object.defineProperty(exports,k,{enumerable:true,get:()=>load()[k]})`,
        loader: "js"
      }
    })
  }
}

const buildCli = async () => {
  const scratch = path.join("dist", `.build-${process.pid}`)
  mkdirSync(scratch, { recursive: true })
  try {
    const main = await build({
      ...cliOptions(scratch),
      entryPoints: { parley: "src/bin.ts" },
      plugins: [ownBundles, lazyWs, lazyBuiltins, facadeFree]
    })
    const reading = await build({
      ...cliOptions(scratch),
      entryPoints: { "parley-reading": "src/cli/ReadingRun.ts" },
      plugins: [lazyWs, lazyBuiltins, facadeFree],
      chunkNames: "reading-[name]-[hash]"
    })
    const query = await build({
      ...cliOptions(scratch),
      entryPoints: { "parley-query": "src/cli/QueryFast.ts" },
      plugins: [lazyWs, lazyBuiltins, facadeFree],
      chunkNames: "query-[name]-[hash]"
    })
    for (const f of readdirSync(scratch).filter((f) => f.endsWith(".mjs"))) {
      const file = path.join(scratch, f)
      writeFileSync(file, trimBanner(readFileSync(file, "utf8")))
    }
    chmodSync(path.join(scratch, "parley.mjs"), 0o755)
    // Which sources each chunk holds (not shipped): a test checks what a command loads (issue 28).
    const chunks = Object.fromEntries(
      [main, reading, query].flatMap((r) =>
        Object.entries(r.metafile.outputs).map(([file, o]) => [path.basename(file), Object.keys(o.inputs)])
      )
    )
    writeFileSync(path.join(scratch, "parley.chunks.json"), JSON.stringify(chunks) + "\n")
    // Chunks first, the entry last: a new entry never points at a missing chunk.
    // The reading and query entries just before the main one: they, too, must never point at a missing chunk.
    const last = (f) => (f === "parley.mjs" ? 2 : f === "parley-reading.mjs" || f === "parley-query.mjs" ? 1 : 0)
    const files = readdirSync(scratch).sort((a, b) => last(a) - last(b))
    for (const f of files) renameSync(path.join(scratch, f), path.join("dist", f))
    if (clean) {
      const current = new Set(files)
      for (const f of readdirSync("dist"))
        if (f.endsWith(".mjs") && !current.has(f)) rmSync(path.join("dist", f), { force: true })
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

const buildLib = () => {
  const scratch = path.join("dist", `.lib-${process.pid}`)
  const old = path.join("dist", `.lib-old-${process.pid}`)
  const target = path.join("dist", "lib")
  rmSync(scratch, { recursive: true, force: true })
  try {
    // The repository's own TypeScript, not whatever `tsc` is on PATH.
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
    execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", scratch], { stdio: "inherit" })
    // A directory cannot be replaced in one rename: move the old one aside first.
    if (existsSync(target)) renameSync(target, old)
    renameSync(scratch, target)
    return true
  } catch (error) {
    // tsc exited non-zero after printing its errors; a stack trace would only hide them.
    if (error && typeof error === "object" && "status" in error) return false
    throw error
  } finally {
    rmSync(scratch, { recursive: true, force: true })
    rmSync(old, { recursive: true, force: true })
  }
}

mkdirSync("dist", { recursive: true })
if (targets.has("cli")) await buildCli()
if (targets.has("lib") && !buildLib()) {
  console.error(
    "build: the library emit failed (TypeScript's errors are above); `npx tsc -p tsconfig.build.json --noEmit` checks it alone."
  )
  process.exit(1)
}
