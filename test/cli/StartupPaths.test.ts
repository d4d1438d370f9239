// Start-up (docs/decisions.md#fast-start): `conversation ls` and `conversation print` load no
// SDK, MCP, markdown, executor or effect/cli code, and a command line the
// fast path declines still gets effect/cli's own answer. What a process
// runs is read from V8's coverage of it (support/Ran.ts).
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as HostPath from "../../src/layers/host/HostPath.ts"
import { bundle } from "../support/Cli.ts"
import { repoRoot, tempDir } from "../support/Fixtures.ts"
import { ranOf } from "../support/Ran.ts"

const dir = tempDir("parley-startup-")
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const storage = path.join(dir, ".parley")
fs.mkdirSync(path.join(storage, "conversations"), { recursive: true })
const small = "17758406187-missing-date-in-version-string"
fs.cpSync(
  path.join(repoRoot, "test", "fixtures", "corpus", "jp", "conversations", small),
  path.join(storage, "conversations", small),
  { recursive: true }
)

/** Runs `args` under V8's coverage: the built files it loaded and the modules it ran (`support/Ran.ts`). */
const run = (args: ReadonlyArray<string>) => {
  const coverage = path.join(dir, `coverage-${Math.random().toString(36).slice(2)}`)
  const r = spawnSync(process.execPath, [bundle, "--storage", storage, ...args], {
    encoding: "utf8",
    env: { ...process.env, NODE_V8_COVERAGE: coverage },
    timeout: 60_000
  })
  const { files, modules } = ranOf(coverage)
  fs.rmSync(coverage, { recursive: true, force: true })
  return { ...r, files, modules }
}

/** The modules `ran` ran, matching `pattern`. */
const sources = (ran: { readonly modules: ReadonlyArray<string> }, pattern: RegExp) =>
  ran.modules.filter((s) => pattern.test(s))

const HEAVY =
  /node_modules\/(@modelcontextprotocol|openai|@anthropic-ai|markdown-it|ajv|smol-toml|@effect\/sql-pg)\/|src\/layers\/store\/pg\/|node_modules\/effect\/dist\/sql\/|node_modules\/effect\/dist\/cli\/|src\/layers\/(mcp|executor|provider|prompt)\/|src\/cli\/(Live|Query|Main)\.ts|src\/domain\/render\/Html\.ts/

describe("start-up: what the reading commands load", () => {
  it("ls and print (markdown, json) load none of the query path, no effect/cli, no markdown", () => {
    for (const args of [
      ["conversation", "ls"],
      ["conversation", "ls", "--format", "json"],
      ["conversation", "print", "17758406187"],
      ["conversation", "print", "17758406187", "--format", "json"]
    ]) {
      const r = run(args)
      expect(r.status, r.stderr).toBe(0)
      // It ran: its own script, and the listing or the printing in it (a listing's is its own, without Effect).
      const listing = args[1] === "ls"
      expect(r.files, args.join(" ")).toContain(listing ? "parley-ls.cjs" : "parley-reading.cjs")
      expect(
        sources(r, listing ? /src\/cli\/conversation\/LsFast\.ts/ : /src\/cli\/conversation\/PrintRun\.ts/).length
      ).toBeGreaterThan(0)
      expect(sources(r, HEAVY), args.join(" ")).toStrictEqual([])
    }
    expect(run(["conversation", "ls"]).stdout).toBe(
      "17758406187  2026-04-10 17:07:29     29 events  Missing date in version string\n"
    )
  })

  it("ls loads no effect/Schema and no event codec: a listing that decodes nothing needs neither", () => {
    const LISTING_HEAVY =
      /node_modules\/effect\/dist\/Schema\.js|src\/domain\/storage\/EntryCodec\.ts|src\/layers\/store\/(FileConversationOps|ConversationRead|StoreLocks)\.ts|src\/services\/StoreErrors\.ts/
    for (const args of [
      ["conversation", "ls"],
      ["conversation", "ls", "--format", "json"]
    ]) {
      // Warm: the first run writes the listing index, the second decodes nothing.
      expect(run(args).status).toBe(0)
      const r = run(args)
      expect(r.status, r.stderr).toBe(0)
      expect(sources(r, LISTING_HEAVY), args.join(" ")).toStrictEqual([])
    }
    // A print decodes: the same check sees the codec and Schema then.
    const print = run(["conversation", "print", "17758406187"])
    expect(sources(print, /src\/domain\/storage\/EntryCodec\.ts/).length).toBeGreaterThan(0)
    expect(sources(print, /node_modules\/effect\/dist\/Schema\.js/).length).toBeGreaterThan(0)
    // A conversation's metadata names a detached policy: its schema alone, not all of config.toml's.
    expect(sources(print, /src\/domain\/tool\/DetachedPolicy\.ts/).length).toBeGreaterThan(0)
    expect(sources(print, /src\/domain\/tool\/Config\.ts/)).toStrictEqual([])
  })

  it("a common listing runs no Effect (no fiber, no layer); one with a host socket is listed by the Effect path, alike", async () => {
    const EFFECT = /node_modules\/effect\/dist\/(internal\/effect|Layer|Effect)\.js/
    const plain = run(["conversation", "ls"])
    expect(plain.status, plain.stderr).toBe(0)
    expect(plain.files).not.toContain("parley-reading.cjs")
    expect(sources(plain, EFFECT)).toStrictEqual([])
    // A killed host's socket (a child that listened there, killed): the listing asks it, so the Effect path lists.
    const socket = HostPath.of(storage, "17758406187")
    fs.mkdirSync(path.dirname(socket), { recursive: true, mode: 0o700 })
    const host = spawn(
      process.execPath,
      ["-e", `require("net").createServer().listen(${JSON.stringify(socket)}, () => console.log("up"))`],
      {
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    try {
      await new Promise((resolve, reject) => {
        host.stdout.once("data", resolve)
        host.once("exit", reject)
      })
    } finally {
      host.kill("SIGKILL")
    }
    await new Promise((resolve) =>
      host.exitCode !== null || host.signalCode !== null ? resolve(null) : host.once("exit", resolve)
    )
    expect(fs.existsSync(socket)).toBe(true)
    const declined = run(["conversation", "ls"])
    fs.rmSync(socket, { force: true })
    expect(declined.status, declined.stderr).toBe(0)
    expect(declined.files).toContain("parley-reading.cjs")
    expect(sources(declined, /src\/cli\/conversation\/LsRun\.ts/).length).toBeGreaterThan(0)
    expect(declined.stdout).toBe(plain.stdout)
    expect(declined.stderr).toBe(plain.stderr)
  })

  it("the check sees heavy code when it loads: a page loads markdown-it, the full command line effect/cli", () => {
    const page = run(["conversation", "print", "17758406187", "--format", "html", "--output", path.join(dir, "p.html")])
    expect(page.status, page.stderr).toBe(0)
    expect(sources(page, /node_modules\/markdown-it\//).length).toBeGreaterThan(0)
    const check = run(["conversation", "check"])
    expect(sources(check, /node_modules\/effect\/dist\/cli\//).length).toBeGreaterThan(0)
  })

  it("a command line the fast path declines gets effect/cli's answer: usage errors exit 2, help is printed", () => {
    const typo = run(["conversation", "ls", "--neww"])
    expect(typo.status).toBe(2)
    expect(typo.stderr).toMatch(/^parley: unrecognized flag --neww for `parley conversation ls`/)
    const badId = run(["conversation", "print", "nope"])
    expect(badId.status).toBe(2)
    expect(badId.stderr).toContain('"nope" is not a conversation id')
    const help = run(["conversation", "ls", "--help"])
    expect(help.status).toBe(0)
    expect(help.stdout).toContain("--archived")
  })
})

describe("start-up: `parley ask` runs without the command tree (docs/decisions.md#fast-start)", () => {
  const TREE =
    /src\/cli\/(Main|Root|Live|Query)\.ts|src\/cli\/conversation\/(Attach|Check|Fork)\.ts|src\/(cli|layers)\/serve\//
  it("an ask loads neither effect/cli's command tree nor another command; a declined one still gets effect/cli's answer", () => {
    const asked = run(["ask", "Deploy?", "--new", "--timeout", "1s"])
    expect(asked.status, asked.stderr).toBe(3)
    expect(asked.stderr).toMatch(/in time/)
    expect(sources(asked, /src\/cli\/AskRun\.ts/).length).toBeGreaterThan(0)
    expect(sources(asked, TREE)).toStrictEqual([])
    const typo = run(["ask", "Deploy?", "--neww"])
    expect(typo.status).toBe(2)
    expect(typo.stderr).toMatch(/^parley: unrecognized flag --neww for `parley ask`/)
  })
})

describe("start-up: `conversation attach` runs without the command tree (docs/decisions.md#fast-start)", () => {
  const TREE =
    /src\/cli\/(Main|Root|Live|Query)\.ts|src\/cli\/conversation\/(Attach|Send|Check|Fork)\.ts|src\/(cli|layers)\/serve\/|node_modules\/effect\/dist\/cli\/Command\.js/
  it("an attach loads neither effect/cli's command tree nor another command; a declined one still gets effect/cli's answer", () => {
    const attached = run(["conversation", "attach"])
    expect(attached.status, attached.stderr).toBe(1)
    expect(attached.stderr).toMatch(/has a running turn/)
    expect(sources(attached, /src\/cli\/conversation\/AttachRun\.ts/).length).toBeGreaterThan(0)
    expect(sources(attached, TREE)).toStrictEqual([])
    const typo = run(["conversation", "attach", "--neww"])
    expect(typo.status).toBe(2)
    expect(typo.stderr).toMatch(/^parley: unrecognized flag --neww for `parley conversation attach`/)
  })
})

describe("start-up: a plain `parley query` runs without the command tree (docs/startup.md#start-up-of-a-query)", () => {
  const TREE =
    /src\/cli\/(Main|Root|Query|Ask|Serve|Inbox)\.ts|src\/cli\/conversation\/|src\/(cli|layers)\/serve\/|node_modules\/effect\/dist\/cli\/(Command|Flag|Argument|CliError)\.js/
  it("a scripted turn loads neither effect/cli's command tree nor another command; a declined one still gets effect/cli's answer", () => {
    const script = path.join(dir, "reply-tree.json")
    fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "ok" }] }))
    const r = run(["query", "--new", "hi", "--script", script])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain("ok")
    expect(sources(r, /src\/cli\/QueryRun\.ts/).length).toBeGreaterThan(0)
    expect(sources(r, TREE)).toStrictEqual([])
    const typo = run(["query", "hi", "--neww"])
    expect(typo.status).toBe(2)
    expect(typo.stderr).toMatch(/^parley: unrecognized flag --neww for `parley query`/)
    const both = run(["query", "hi", "--new", "--id", "17758406187"])
    expect(both.status).toBe(2)
    expect(both.stderr).toContain("--new and --id cannot be used together")
  })
})

describe("start-up: the HTTP server is loaded by `serve` only (docs/decisions.md#fast-start)", () => {
  // (effect/http's router itself is loaded by effect/rpc, which the host client uses.)
  const SERVER =
    /src\/(cli|layers)\/serve\/|src\/layers\/cluster\/|src\/services\/ServeApi\.ts|node_modules\/effect\/dist\/http-api\/|platform-node\/dist\/NodeHttpServer/
  it("the full command line (check, query --help) loads none of it; serve --help neither", () => {
    for (const args of [
      ["conversation", "check"],
      ["query", "--help"],
      ["serve", "--help"]
    ]) {
      const r = run(args)
      expect(r.status, r.stderr).toBe(0)
      // The check sees the command tree it ran (effect/cli), so it would see the server's modules.
      expect(sources(r, /node_modules\/effect\/dist\/cli\/Command\.js/).length, args.join(" ")).toBeGreaterThan(0)
      expect(sources(r, SERVER), args.join(" ")).toStrictEqual([])
    }
  })
})

/** The built-ins (`process.moduleLoadList`) and the output of a run of `args`, its output into a file. */
const builtinsOf = (name: string, args: ReadonlyArray<string>) => {
  const builtins = path.join(dir, `builtins-${name}.cjs`)
  const list = path.join(dir, `builtins-${name}.txt`)
  fs.writeFileSync(
    builtins,
    `process.on("exit", () => require("fs").writeFileSync(process.env.PARLEY_BUILTINS, process.moduleLoadList.join("\\n")))\n`
  )
  // Into a file: a pipe would make process.stdout, a socket, which loads the streams anyway.
  const out = path.join(dir, `out-${name}.txt`)
  const fd = fs.openSync(out, "w")
  const r = spawnSync(process.execPath, ["--require", builtins, bundle, ...args], {
    encoding: "utf8",
    stdio: ["ignore", fd, "pipe"],
    env: { ...process.env, PARLEY_BUILTINS: list },
    timeout: 60_000
  })
  fs.closeSync(fd)
  expect(r.status, r.stderr).toBe(0)
  return { internals: fs.readFileSync(list, "utf8").split("\n"), out: fs.readFileSync(out, "utf8") }
}

describe("start-up: the built-ins an ls loads (scripts/build.mjs, facadeFree)", () => {
  it("an ls of an empty storage into a file loads neither node:fs/promises (nor readline with it) nor the stream stack", () => {
    const empty = path.join(dir, "empty-storage")
    fs.mkdirSync(empty)
    // Into a file, as `parley ls > file` or a shell's pipe: a socket would make process.stdout, which loads streams.
    const { internals, out } = builtinsOf("ls", ["--storage", empty, "conversation", "ls"])
    expect(out).toContain("No conversations yet")
    // Node's ES module facade of node:fs reads fs.promises and fs.ReadStream, which load these.
    expect(
      internals.filter((m) =>
        /^NativeModule (fs\/promises|internal\/fs\/promises|stream|internal\/readline\/\w+)$/.test(m)
      )
    ).toStrictEqual([])
  })

  it("a print of a conversation into a file loads neither node:fs/promises nor readline (its reads go through node:fs's callbacks)", () => {
    const storage = path.join(dir, "print-storage")
    const name = "17758406187-missing-date-in-version-string"
    fs.cpSync(
      path.resolve(import.meta.dirname, "../fixtures/corpus/jp/conversations", name),
      path.join(storage, "conversations", name),
      { recursive: true }
    )
    const { internals, out } = builtinsOf("print", ["--storage", storage, "conversation", "print", "17758406187"])
    expect(out).toContain("# Missing date in version string")
    // node:os neither: only a host's socket in the per-user runtime directory needs it (HostPath).
    expect(
      internals.filter((m) => /^NativeModule (os|fs\/promises|internal\/fs\/promises|internal\/readline\/\w+)$/.test(m))
    ).toStrictEqual([])
  })
})

describe("start-up: a query loads what its turn uses (docs/startup.md#start-up-of-a-query)", () => {
  it("a scripted turn without a tool call loads no ajv, no ws, and Node never loads its http stack, undici, tls, readline, the crypto module, node:os, node:fs/promises or perf_hooks", () => {
    const script = path.join(dir, "reply.json")
    fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "ok" }] }))
    const builtins = path.join(dir, "builtins.cjs")
    fs.writeFileSync(
      builtins,
      `process.on("exit", () => require("fs").writeFileSync(process.env.PARLEY_BUILTINS, process.moduleLoadList.join("\\n")))\n`
    )
    const list = path.join(dir, "builtins.txt")
    const coverage = path.join(dir, "coverage-query")
    const r = spawnSync(
      process.execPath,
      ["--require", builtins, bundle, "--storage", storage, "query", "--new", "hi", "--script", script],
      { encoding: "utf8", env: { ...process.env, NODE_V8_COVERAGE: coverage, PARLEY_BUILTINS: list }, timeout: 60_000 }
    )
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toContain("ok")
    const ran = ranOf(coverage)
    expect(sources(ran, /src\/cli\/QueryRun\.ts/).length).toBeGreaterThan(0)
    expect(sources(ran, /node_modules\/ajv\//)).toStrictEqual([])
    // ajv, the SDKs and MCP are scripts of their own, loaded when first imported.
    expect(ran.files.filter((f) => f.startsWith("parley-vendor-"))).toStrictEqual([])
    // ws's code is in the query's script, behind a wrapper nothing calls: what would show is what it requires.
    const internals = fs.readFileSync(list, "utf8").split("\n")
    expect(
      internals.filter((m) =>
        /^NativeModule (http|https|zlib|tls|readline|crypto|os|_http_\w+|internal\/deps\/undici\/undici)$/.test(m)
      )
    ).toStrictEqual([])
    // A new conversation and its lock are made through node:fs's callbacks (the build's stand-in of
    // node:fs/promises, the store's FileCalls), its events stamped by process.hrtime: ~3.5 ms of its start.
    expect(
      internals.filter((m) =>
        /^NativeModule (fs\/promises|internal\/fs\/promises|internal\/readline\/\w+|perf_hooks|internal\/perf\/performance)$/.test(
          m
        )
      )
    ).toStrictEqual([])
    // Its reply and its conversation's line are written on the pipes directly (ProcessOutput.write), its
    // stdin asked of its file before node:tty (IsTerminal.ts), and a host that never listened leaves no
    // socket to look at: no stream, net or tty (~8% of its start).
    expect(internals.filter(streamStack)).toStrictEqual([])
    expect(r.stderr).toContain("(new)")
  })

  // Linux only: elsewhere /dev/null is asked of node:tty (IsTerminal.ts knows Linux's memory devices alone).
  it.skipIf(process.platform !== "linux")(
    "a scripted turn fed /dev/null, its outputs pipes, loads neither node:tty nor the streams",
    () => {
      const script = path.join(dir, "reply-null.json")
      fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "ok" }] }))
      const builtins = path.join(dir, "builtins-null.cjs")
      const list = path.join(dir, "builtins-null.txt")
      fs.writeFileSync(
        builtins,
        `process.on("exit", () => require("fs").writeFileSync(process.env.PARLEY_BUILTINS, process.moduleLoadList.join("\\n")))\n`
      )
      const r = spawnSync(
        process.execPath,
        ["--require", builtins, bundle, "--storage", storage, "query", "--new", "hi", "--script", script],
        {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, PARLEY_BUILTINS: list },
          timeout: 60_000
        }
      )
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout).toBe("ok\n")
      expect(r.stderr).toMatch(/^conversation \d+ \(new\)\n$/)
      expect(fs.readFileSync(list, "utf8").split("\n").filter(streamStack)).toStrictEqual([])
    }
  )
})

/** Node's stream stack, `net` and `node:tty` (which loads both). */
const streamStack = (m: string) =>
  /^NativeModule (stream|internal\/streams\/readable|net|tty|internal\/tty)$/.test(m) ||
  m === "Internal Binding pipe_wrap"

describe("start-up: node:v8 loads only where it is used (scripts/build.mjs, lazyBuiltins)", () => {
  // Its ES module facade loads v8's heap helpers and, through them, Node's whole stream stack.
  // (internal/streams/utils alone is loaded by node:fs/promises: not the stack.)
  const v8Stack = (m: string) => /^NativeModule (v8|internal\/heap_utils|stream|internal\/streams\/readable)$/.test(m)

  it("a print of a small conversation loads neither v8 nor the streams; one of 8 MB or more loads v8 as it decodes", () => {
    const small = builtinsOf("print-small", ["--storage", storage, "conversation", "print", "17758406187"])
    expect(small.out).toContain("# Missing date in version string")
    expect(small.internals.filter(v8Stack)).toStrictEqual([])
    // The same conversation with a 9 MB request: the file store holds V8's young generation while it decodes.
    const large = path.join(dir, "large", ".parley")
    const name = "17758406188-large"
    fs.mkdirSync(path.join(large, "conversations", name), { recursive: true })
    for (const f of ["metadata.json", "base_config.json"])
      fs.copyFileSync(
        path.join(storage, "conversations", "17758406187-missing-date-in-version-string", f),
        path.join(large, "conversations", name, f)
      )
    const events = [
      { timestamp: "2026-04-10 17:04:20.531233", type: "turn_start" },
      { timestamp: "2026-04-10 17:04:20.531236", type: "chat_request", content: `big ${"x".repeat(9 * 1024 * 1024)}` }
    ]
    fs.writeFileSync(path.join(large, "conversations", name, "events.json"), `${JSON.stringify(events, null, 2)}\n`)
    const printed = builtinsOf("print-large", ["--storage", large, "conversation", "print", "17758406188"])
    expect(printed.out).toContain("big xxxx")
    expect(printed.internals).toContain("NativeModule v8")
  })
})
