// Builds what the package ships (issue 12): `node scripts/build.mjs [cli] [lib]`.
//
// cli (the default, and all the test setup and bench need): bundles the CLI
//   with esbuild into one ESM entry (dist/parley.mjs) plus lazily loaded
//   chunks, because an unbundled Effect CLI starts ~9x slower than `node -e
//   0`. The entry itself is about 4 KB: it answers `--version`, runs a plain
//   `conversation ls` / `print`, `query`, `ask` or `conversation attach`
//   from a script of its own (dist/parley-<name>.cjs, its command line read
//   by dist/parley-fast.mjs: see FAST below), and imports the command tree
//   (dist/parley-main.mjs with its chunks) for anything else; the LLM SDKs
//   are only loaded on paths that call a model.
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
import { createHash } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { BANNER, trimBanner } from "./banner.mjs"
// node:fs and node:fs/promises without Node's ES module facade (every CLI bundle below).
import { facadeFree } from "./facadeFree.mjs"
import { v8Probes } from "./v8Probes.mjs"

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
  minify: !process.env.NOMIN,
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
  // A name a stand-in module lacks (scripts/facadeFree.mjs) would read as undefined: fail the build instead.
  logOverride: { "import-is-undefined": "error" },
  // Every file's; trimmed to what each needs once written (scripts/banner.mjs).
  banner: { js: BANNER }
})

// The fast paths (src/bin.ts's fastPath: `conversation ls` / `print`, a plain `query`, `ask`,
// `conversation attach`) are each one CommonJS script of its own, dist/parley-<name>.cjs, which
// the entry runs through V8's code cache taken after a run (src/layers/file/CodeCache.ts,
// docs/startup.md#the-code-cache-of-a-fast-path). Node's compile cache of an ES module holds
// only what V8 compiled before running it; a cache taken after the run holds every function
// that ran. Each script holds what its path loads, its lazily loaded modules behind esbuild's
// lazy initializers (evaluated when first imported, as their chunks were); in one build with the
// other commands its code would be shared chunks that hold every part of Effect any of them uses.
// Keyed by the import in src/cli/FastPath.ts; the profile names the cache of a run of `line`.
const FAST = {
  "./ReadingRun.ts": { name: "parley-reading", profile: "line._tag+'-'+line.format" },
  "./conversation/LsFast.ts": { name: "parley-ls", profile: "'Ls-'+line.format" },
  "./QueryFast.ts": { name: "parley-query", profile: "'query'" },
  "./AskFast.ts": { name: "parley-ask", profile: "'ask'" },
  "./conversation/AttachFast.ts": { name: "parley-attach", profile: "'attach'" }
}
const cachedBundles = {
  name: "cached-bundles",
  setup(b) {
    b.onResolve({ filter: /^\.\/(ReadingRun|QueryFast|AskFast|conversation\/(AttachFast|LsFast))\.ts$/ }, (args) =>
      args.importer.endsWith(path.join("src", "cli", "FastPath.ts"))
        ? { path: args.path, namespace: "cached-bundle" }
        : undefined
    )
    b.onLoad({ filter: /.*/, namespace: "cached-bundle" }, (args) => {
      const { name, profile } = FAST[args.path]
      return {
        contents:
          'import * as path from "node:path";import { load } from "../layers/file/CodeCache.ts";import { prepare } from "../layers/file/CompileCache.ts";' +
          `export const run = (line) => load(path.join(import.meta.dirname, "${name}.cjs"), ${profile}, prepare(process.env)).run(line)`,
        resolveDir: path.resolve("src", "cli"),
        loader: "js"
      }
    })
  }
}

// The entry (src/bin.ts) is a file of its own, as small as it can be: Node compiles it before its
// compile cache is on. It loads the rest as files of their own: the fast paths (src/cli/FastPath.ts,
// dist/parley-fast.mjs: the command lines it reads, and how each path's script is run), the command
// tree (src/cli/Run.ts, built with its chunks as dist/parley-main.mjs) and the line said when a file
// of the build is missing (src/cli/MissingChunk.ts: it imports node:url, which no command starts with).
const ENTRY_EXTERNALS = {
  "./cli/FastPath.ts": "./parley-fast.mjs",
  "./cli/Run.ts": "./parley-main.mjs",
  "./cli/MissingChunk.ts": "./parley-missing.mjs"
}
const entryExternals = {
  name: "entry-externals",
  setup(b) {
    b.onResolve({ filter: /^\.\/cli\/(FastPath|Run|MissingChunk)\.ts$/ }, (args) =>
      args.importer.endsWith(path.join("src", "bin.ts"))
        ? { path: ENTRY_EXTERNALS[args.path], external: true }
        : undefined
    )
  }
}

// What each fast path's script is built with: CommonJS, one file (no chunks), no banner (a
// CommonJS module has its require), the content hash put last once written (keyed).
const fastOptions = (outdir) => ({
  metafile: true,
  outdir,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  splitting: false,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: !process.env.NOMIN,
  // Not shipped (package.json's files): test/cli/StartupPaths.test.ts maps what a run executed back to its modules.
  sourcemap: "external",
  sourcesContent: false,
  legalComments: "none",
  logLevel: "warning",
  // import.meta is empty in CommonJS: a module of a fast path that read it would misbehave, so the build fails.
  // Effect's ConfigProvider.fromEnv reads `import.meta?.env` (Vite's): as undefined as in Node's ES modules.
  define: { "import.meta.env": "undefined" },
  // An import() left in the script (a vendor's, below) as require(): a script run by vm has no module loader of its own.
  supported: { "dynamic-import": false },
  logOverride: { "import-is-undefined": "error", "empty-import-meta": "error" },
  entryPoints: Object.fromEntries(
    Object.entries(FAST).map(([source, { name }]) => [name, path.join("src", "cli", source)])
  )
})

// The SDKs a fast path loads only when it calls a model, an MCP server or a tool's schema check, and the
// Markdown library `print --format html` loads (a fifth of the reading commands' script), are
// scripts of their own beside it (dist/parley-vendor-<name>-<hash>.cjs, required by the path's script when
// it first imports one): in the query's script they were 1 MB of its 2.4, and V8 reads a cache
// entry for every function of a script it runs, used or not (the query's cache: 1.7 MB, 10 ms to
// read). None of them imports Effect, so a separate copy shares no state with the script.
const VENDORS = {
  openai: "openai",
  "@anthropic-ai/sdk": "anthropic",
  "@modelcontextprotocol/client": "mcp",
  "@modelcontextprotocol/client/stdio": "mcp",
  ajv: "ajv",
  "markdown-it": "markdown"
}
// Each named by its content's hash (`names`: vendor name → file), as chunks are: a parley started before a
// rebuild that loads one later gets its own build's.
const vendored = (names) => ({
  name: "vendored",
  setup(b) {
    b.onResolve(
      { filter: /^(openai|@anthropic-ai\/sdk|@modelcontextprotocol\/client(\/stdio)?|ajv|markdown-it)$/ },
      (args) => ({
        path: `./${names[VENDORS[args.path]]}`,
        external: true
      })
    )
  }
})
// Each vendor script's exports as the fast path's script reads them: it requires the script where its
// source says import() (esbuild, dynamic-import unsupported), in Node's way, `default` being
// module.exports. So the SDK's class is module.exports; the MCP client and its stdio transport are
// one script, as they share the SDK's core (its schemas, its errors).
const VENDOR_ENTRIES = {
  openai: 'const m = require("openai"); module.exports = m.default ?? m',
  anthropic: 'const m = require("@anthropic-ai/sdk"); module.exports = m.default ?? m',
  mcp: 'module.exports = { ...require("@modelcontextprotocol/client"), StdioClientTransport: require("@modelcontextprotocol/client/stdio").StdioClientTransport }',
  ajv: 'module.exports = require("ajv")',
  markdown: 'const m = require("markdown-it"); module.exports = m.default ?? m'
}
const vendorEntries = {
  name: "vendor-entries",
  setup(b) {
    b.onResolve({ filter: /^vendor:/ }, (args) => ({ path: args.path.slice("vendor:".length), namespace: "vendor" }))
    b.onLoad({ filter: /.*/, namespace: "vendor" }, (args) => ({
      contents: VENDOR_ENTRIES[args.path],
      resolveDir: path.resolve("."),
      loader: "js"
    }))
  }
}
const vendorOptions = (outdir) => ({
  ...fastOptions(outdir),
  sourcemap: false,
  entryPoints: Object.fromEntries(
    Object.keys(VENDOR_ENTRIES).map((name) => [`parley-vendor-${name}`, `vendor:${name}`])
  )
})

/** The inputs `entry` imports statically, and theirs, from esbuild's metafile `inputs`: what evaluates as it loads. */
const staticClosure = (inputs, entry) => {
  const seen = new Set()
  const visit = (input) => {
    if (seen.has(input) || inputs[input] === undefined) return
    seen.add(input)
    for (const i of inputs[input].imports)
      if (!i.external && (i.kind === "import-statement" || i.kind === "require-call")) visit(i.path)
  }
  visit(entry)
  return [...seen]
}

// A fast path's script must be ASCII: one other character (U+2026, an ellipsis, in a regex literal of markdown-it's) makes
// the whole source a two-byte string, which V8 then holds and scans: reading the reading commands' script took
// 1.3 ms instead of 0.4 (esbuild escapes strings and identifiers, not a regex literal's text). A vendor's script
// is required by Node's own loader, only when its SDK is used.
const ascii = (file, code) => {
  const at = code.search(/[^\x00-\x7f]/)
  if (at >= 0)
    throw new Error(`${file} is not ASCII at ${at}: ${JSON.stringify(code.slice(Math.max(0, at - 60), at + 20))}`)
}

/** `code` with its content hash last (the source map's lines stay), the line src/layers/file/CodeCache.ts keys its cache by. */
const keyed = (code) =>
  `${code}${code.endsWith("\n") ? "" : "\n"}//parley-bundle ${createHash("sha256").update(code).digest("hex").slice(0, 32)}\n`

// @effect/platform-node-shared's NodeSocketServer imports NodeWS (a re-export of the `ws`
// package) for its WebSocket server, which parley never starts; evaluating `ws` makes Node
// load http, https, tls, zlib and more. Every run that hosts its socket (every `query`)
// imports NodeSocketServer, so NodeWS becomes a shim that requires `ws` on first use: esbuild
// bundles a require() as a wrapper evaluated when it is called. (Start-up of a query,
// docs/startup.md#start-up-of-a-query.)
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
// file store calls it only to decode an events.json of 8 MB or more), node:os its binding (the
// temp directory of a host socket in the per-user runtime directory), yet a scripted turn
// calls none of them (a tool's process, a terminal prompt, a TLS socket, a lock's random name
// come later, if ever).
// Each is imported through a CommonJS stand-in whose exports are getters that require the
// built-in at first use: esbuild reads an ESM import of CommonJS as property accesses at
// each use, so nothing is loaded before then. The names are the built-in's own, listed here
// at build time (stable APIs; a name missing would read as undefined, and the tests that
// spawn tools, prompt and hash would fail). (Start-up of a query, docs/benchmarks.md.)
const LAZY_BUILTINS = ["crypto", "tls", "readline", "child_process", "v8", "stream", "tty", "os"]
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
    // The entry and the fast paths' command lines: one file each, no chunks (ENTRY_EXTERNALS).
    const entry = await build({
      ...cliOptions(scratch),
      splitting: false,
      // Not shipped: the test of what each command runs reads them (test/support/Ran.ts).
      sourcemap: "external",
      sourcesContent: false,
      entryPoints: { parley: "src/bin.ts", "parley-fast": "src/cli/FastPath.ts" },
      plugins: [entryExternals, cachedBundles, lazyWs, lazyBuiltins, facadeFree, v8Probes]
    })
    const main = await build({
      ...cliOptions(scratch),
      entryPoints: { "parley-main": "src/cli/Run.ts", "parley-missing": "src/cli/MissingChunk.ts" },
      plugins: [lazyWs, lazyBuiltins, facadeFree, v8Probes]
    })
    const vendor = await build({ ...vendorOptions(scratch), plugins: [vendorEntries, lazyBuiltins, facadeFree] })
    const vendorNames = {}
    for (const name of Object.keys(VENDOR_ENTRIES)) {
      const file = path.join(scratch, `parley-vendor-${name}.cjs`)
      const hashed = `parley-vendor-${name}-${createHash("sha256").update(readFileSync(file)).digest("hex").slice(0, 8)}.cjs`
      renameSync(file, path.join(scratch, hashed))
      vendorNames[name] = hashed
    }
    const fast = await build({
      ...fastOptions(scratch),
      plugins: [vendored(vendorNames), lazyWs, lazyBuiltins, facadeFree, v8Probes]
    })
    for (const f of readdirSync(scratch).filter((f) => f.endsWith(".cjs"))) {
      const file = path.join(scratch, f)
      const code = readFileSync(file, "utf8")
      // Unminified (NOMIN), the comments stay, and they are not all ASCII: a build to read, not to ship.
      if (!f.startsWith("parley-vendor-") && !process.env.NOMIN) ascii(f, code)
      writeFileSync(file, keyed(code))
    }
    for (const f of readdirSync(scratch).filter((f) => f.endsWith(".mjs"))) {
      const file = path.join(scratch, f)
      writeFileSync(file, trimBanner(readFileSync(file, "utf8")))
    }
    chmodSync(path.join(scratch, "parley.mjs"), 0o755)
    // Which sources each chunk holds (not shipped): a test checks what a command loads (issue 28).
    const renamed = (file) => vendorNames[/^parley-vendor-(\w+)\.cjs$/.exec(file)?.[1]] ?? file
    const chunks = Object.fromEntries(
      [entry, main, fast, vendor].flatMap((r) =>
        Object.entries(r.metafile.outputs).map(([file, o]) => [renamed(path.basename(file)), Object.keys(o.inputs)])
      )
    )
    writeFileSync(path.join(scratch, "parley.chunks.json"), JSON.stringify(chunks) + "\n")
    // And, for each file built whole (the entry, the fast paths' command lines and scripts), the modules it
    // evaluates as it loads: its entry's static imports and theirs (not shipped; test/support/Ran.ts).
    const statics = Object.fromEntries(
      [entry, fast].flatMap((r) =>
        Object.entries(r.metafile.outputs)
          .filter(([, o]) => o.entryPoint !== undefined)
          .map(([file, o]) => [path.basename(file), staticClosure(r.metafile.inputs, o.entryPoint)])
      )
    )
    writeFileSync(path.join(scratch, "parley.static.json"), JSON.stringify(statics) + "\n")
    // Chunks and the fast paths' scripts first, the entry last: a new entry never points at a missing file.
    const last = (f) => (f === "parley.mjs" ? 1 : 0)
    const files = readdirSync(scratch).sort((a, b) => last(a) - last(b))
    for (const f of files) renameSync(path.join(scratch, f), path.join("dist", f))
    if (clean) {
      const current = new Set(files)
      for (const f of readdirSync("dist"))
        if (/\.(mjs|cjs|cjs\.map)$/.test(f) && !current.has(f)) rmSync(path.join("dist", f), { force: true })
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
