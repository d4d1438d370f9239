// MCP OAuth (docs/mcp.md#oauth): an HTTP MCP server that answers 401 with OAuth metadata is
// signed in to through the SDK's OAuth client — against a fake authorization
// server on 127.0.0.1 (fixtures/oauth-server.mjs). The test is the person:
// it opens the page parley hands out, which redirects to parley's loopback.
// Tokens land 0600 under the storage directory and are refreshed.
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ExecutorLive from "../../../src/layers/executor/ExecutorLive.ts"
import { Config } from "../../../src/services/Config.ts"
import { Executor } from "../../../src/services/Executor.ts"

const ORACLE = path.join(import.meta.dirname, "fixtures", "oauth-server.mjs")

const dirs: Array<string> = []
const children: Array<ChildProcess> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

interface Setup {
  readonly storage: string
  readonly log: string
  readonly base: string
  readonly problems: Array<string>
  readonly pages: Array<URL>
}

const setup = async (ttlMs = 60_000): Promise<Setup> => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-oauth-"))
  dirs.push(root)
  const storage = path.join(root, ".parley")
  fs.mkdirSync(storage)
  const log = path.join(root, "oauth.jsonl")
  const child = spawn(process.execPath, [ORACLE], {
    env: { ...process.env, OAUTH_LOG: log, OAUTH_ACCESS_TTL_MS: String(ttlMs) },
    stdio: ["ignore", "ignore", "pipe"]
  })
  children.push(child)
  const base = await new Promise<string>((resolve, reject) => {
    let err = ""
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString()
      const m = /listening on (\S+)/.exec(err)
      if (m !== null) resolve(m[1]!)
    })
    child.on("exit", () => reject(new Error(`the OAuth server exited: ${err}`)))
  })
  return { storage, log, base, problems: [], pages: [] }
}

const events = (s: Setup): Array<Record<string, unknown>> =>
  fs.existsSync(s.log)
    ? fs
        .readFileSync(s.log, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l))
    : []

/** The person at the browser: opens the page, follows the authorization server's redirect to parley's loopback. */
const person = (s: Setup) => (_server: string, url: URL) => {
  s.pages.push(url)
  void (async () => {
    const answer = await fetch(url, { redirect: "manual" })
    const back = answer.headers.get("location")
    if (back !== null) await fetch(back)
  })()
}

const withExecutor = <A>(
  s: Setup,
  interactive: boolean,
  program: (executor: Executor["Service"]) => Effect.Effect<A>
) =>
  Effect.flatMap(Executor, program).pipe(
    Effect.provide(
      ExecutorLive.layerWith({
        mcp: {
          root: path.dirname(s.storage),
          interactive,
          storage: s.storage,
          signIn: person(s),
          onProblem: (m) => void s.problems.push(m)
        }
      }).pipe(Layer.provide(Config.layerLiteral({ mcp: { servers: { guarded: { url: `${s.base}/mcp` } } } })))
    )
  )

const whoami = (executor: Executor["Service"], s: Setup) =>
  Effect.map(
    executor.execute(
      { id: "c1", name: "whoami", arguments: {} },
      {},
      { conversationId: "17738399468", root: s.storage }
    ),
    (r) => (r._tag === "Completed" ? r.response : r)
  )

const stateFile = (s: Setup) => path.join(s.storage, "mcp-oauth", "guarded.json")

describe("OAuth for HTTP MCP servers (a fake authorization server on 127.0.0.1)", () => {
  it.live(
    "401 with OAuth metadata: registration, sign-in with PKCE on a loopback redirect, tokens kept 0600; the next run asks nothing",
    () =>
      Effect.gen(function* () {
        const s = yield* Effect.promise(() => setup())
        yield* withExecutor(s, true, (executor) =>
          Effect.gen(function* () {
            expect(s.problems).toStrictEqual([])
            expect(yield* whoami(executor, s)).toStrictEqual({ content: "signed in", is_error: false })
          })
        )
        // One page, on the authorization server, with PKCE S256 and a loopback redirect.
        expect(s.pages.length).toBe(1)
        const page = s.pages[0]!
        expect(page.origin + page.pathname).toBe(`${s.base}/authorize`)
        expect(page.searchParams.get("code_challenge_method")).toBe("S256")
        expect(page.searchParams.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
        expect(page.searchParams.get("resource")).toBe(`${s.base}/mcp`)
        const registered = events(s).find((e) => e["event"] === "register")!["metadata"] as Record<string, unknown>
        expect(registered).toMatchObject({
          client_name: "parley",
          token_endpoint_auth_method: "none",
          redirect_uris: [page.searchParams.get("redirect_uri")]
        })
        // The state file: owner-only, in an owner-only directory, with the tokens and the registration.
        expect(fs.statSync(stateFile(s)).mode & 0o777).toBe(0o600)
        expect(fs.statSync(path.dirname(stateFile(s))).mode & 0o777).toBe(0o700)
        const saved = JSON.parse(fs.readFileSync(stateFile(s), "utf8"))
        expect(saved.server_url).toBe(`${s.base}/mcp`)
        expect(saved.tokens.access_token).toMatch(/^access-/)
        expect(saved.code_verifier).toBeUndefined()
        expect(Object.keys(saved.clients)).toStrictEqual([s.base])
        expect(
          events(s)
            .filter((e) => e["event"] === "token")
            .map((e) => e["grant_type"])
        ).toStrictEqual(["authorization_code"])

        // A second run, nobody at a terminal: the stored token is enough.
        yield* withExecutor(s, false, (executor) =>
          Effect.gen(function* () {
            expect(yield* whoami(executor, s)).toStrictEqual({ content: "signed in", is_error: false })
          })
        )
        expect(s.pages.length).toBe(1)
        expect(s.problems).toStrictEqual([])
      })
  )

  it.live("an expired access token is refreshed with the refresh token and saved; no sign-in", () =>
    Effect.gen(function* () {
      const s = yield* Effect.promise(() => setup())
      yield* withExecutor(s, true, (executor) => Effect.asVoid(whoami(executor, s)))
      const first = JSON.parse(fs.readFileSync(stateFile(s), "utf8")).tokens.access_token
      // The access token expires at the server (not by a clock a loaded machine could outrun).
      yield* Effect.promise(() => fetch(`${s.base}/expire`, { method: "POST" }))
      yield* withExecutor(s, false, (executor) =>
        Effect.gen(function* () {
          expect(yield* whoami(executor, s)).toStrictEqual({ content: "signed in", is_error: false })
        })
      )
      expect(s.pages.length).toBe(1)
      expect(s.problems).toStrictEqual([])
      expect(
        events(s)
          .filter((e) => e["event"] === "token")
          .map((e) => e["grant_type"])
      ).toStrictEqual(["authorization_code", "refresh_token"])
      const refreshed = JSON.parse(fs.readFileSync(stateFile(s), "utf8")).tokens.access_token
      expect(refreshed).not.toBe(first)
      expect(fs.statSync(stateFile(s)).mode & 0o777).toBe(0o600)
    })
  )

  it.live("nobody at a terminal and no token: the server does not start, and the problem says how to sign in", () =>
    Effect.gen(function* () {
      const s = yield* Effect.promise(() => setup())
      yield* withExecutor(s, false, (executor) =>
        Effect.sync(() => expect(executor.definitions.some((d) => d.name === "whoami")).toBe(false))
      )
      expect(s.pages).toStrictEqual([])
      expect(s.problems).toStrictEqual([
        `MCP server "guarded" (${s.base}/mcp) could not be started: it needs you to sign in (OAuth), and nobody is at a terminal to do it; run parley at a terminal once: the tokens are then kept in ${stateFile(s)}\nIts tools are unavailable in this run; check [mcp.servers.guarded] in config.toml.`
      ])
    })
  )
})
