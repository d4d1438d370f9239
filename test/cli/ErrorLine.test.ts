// Errors carry data (docs/decisions.md#errors-carry-data): errors carry data, and the CLI renders each one to one
// line, with the command to run next built by Hint (parley as it was
// started, --storage when it was given). Checked as pure functions and end
// to end on the built binary.
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import * as ErrorLine from "../../src/cli/ErrorLine.ts"
import { CliFailure } from "../../src/cli/CliFailure.ts"
import { NotPrivate } from "../../src/domain/storage/NotPrivate.ts"
import { ProviderError } from "../../src/services/Provider.ts"
import {
  AppendRejected,
  ConversationCorrupt,
  ConversationExists,
  ConversationLocked,
  ConversationNotFound,
  StoreIoError
} from "../../src/services/StoreErrors.ts"
import { runParley } from "../support/Cli.ts"
import { repoRoot, tempDir } from "../support/Fixtures.ts"
import {
  conversationDir,
  conversationIdOf,
  exited,
  makeProject,
  parley,
  type Project,
  writeScript
} from "../support/Project.ts"

describe("the line of a refused runtime path (NotPrivate)", () => {
  const refused = (problem: NotPrivate["problem"], path: string, owner = 0, mode = 0o700) =>
    ErrorLine.line(new NotPrivate({ path, want: "directory", problem, owner, mode, uid: 0 }), {})
  it("names the path, owner and mode, and says what to do for each problem (the XDG way out only in the temp dir)", () => {
    const tmp = os.tmpdir()
    expect(refused("owner", `${tmp}/parley-0`, 1001, 0o777)).toBe(
      `Refusing to use ${tmp}/parley-0: it belongs to uid 1001, not to you (uid 0) (owner uid 1001, mode 0777). Another user may be waiting there for what parley sends: have it removed (by uid 1001 or root) (or set XDG_RUNTIME_DIR to a directory only you can use), then run again.`
    )
    expect(refused("owner", "/home/me/.parley/run", 1001, 0o700)).toBe(
      "Refusing to use /home/me/.parley/run: it belongs to uid 1001, not to you (uid 0) (owner uid 1001, mode 0700). Another user may be waiting there for what parley sends: have it removed (by uid 1001 or root), then run again."
    )
    expect(refused("open", "/run/user/0/parley", 0, 0o755)).toBe(
      "Refusing to use /run/user/0/parley: other users have access to it (owner uid 0, mode 0755). It is yours: make it private (`chmod 700 /run/user/0/parley`), then run again."
    )
    expect(refused("symlink", "/home/me/.parley/run", 0, 0o777)).toBe(
      "Refusing to use /home/me/.parley/run: it is a symbolic link (owner uid 0, mode 0777). Remove it, then run again."
    )
    expect(refused("kind", "/home/me/.parley/run", 0, 0o644)).toBe(
      "Refusing to use /home/me/.parley/run: it is not a directory (owner uid 0, mode 0644). Remove it, then run again."
    )
    expect(
      ErrorLine.hasNextStep(
        new NotPrivate({ path: "/x", want: "socket", problem: "owner", owner: 1, mode: 0o755, uid: 0 })
      )
    ).toBe(true)
  })
})

describe("the line of each error", () => {
  // As an installed parley runs: through its bin link (see Hint.invokedAs).
  const argv1 = process.argv[1]
  beforeAll(() => {
    process.argv[1] = "/usr/local/bin/parley"
  })
  afterAll(() => {
    process.argv[1] = argv1!
  })

  const file = "/s/conversations/17000000001/events.json"

  it("a missing or damaged conversation names the command to run next, with --storage only when it was given", () => {
    const missing = new ConversationNotFound({ id: "123" })
    expect(missing.message).toBe("No conversation with id 123.")
    expect(ErrorLine.line(missing, {})).toBe(
      "No conversation with id 123. Run `parley conversation ls --archived` to see the ids."
    )
    expect(ErrorLine.line(missing, { storage: "/tmp/my dir" })).toBe(
      "No conversation with id 123. Run `parley conversation ls --archived --storage '/tmp/my dir'` to see the ids."
    )
    const corrupt = new ConversationCorrupt({ id: "17000000001", file, entry: 2, reason: 'unknown type "x"' })
    expect(corrupt.message).toBe(`${file}: entry 2: unknown type "x"`)
    // A store command calls no model: --model and --script are not repeated.
    expect(ErrorLine.line(corrupt, { storage: "/s", model: "openai/gpt-5", script: "/x.json" })).toBe(
      `${file}: entry 2: unknown type "x". Run \`parley conversation check 17000000001 --storage /s\` for details.`
    )
    expect(ErrorLine.line(new ConversationCorrupt({ id: "17000000001", file, reason: "missing" }), {})).toBe(
      `${file}: missing. Run \`parley conversation check 17000000001\` for details.`
    )
    expect([missing, corrupt].every(ErrorLine.hasNextStep)).toBe(true)
  })

  it("the other store errors say what happened in their own words: the holder's pid, the lock file, the path", () => {
    const lock = "/s/locks/jp-c17000000001.lock"
    const cases: Array<[unknown, string]> = [
      [
        new ConversationLocked({ id: "17000000001", holder: 4242, path: lock }),
        `Conversation 17000000001 is being written by another parley process (pid 4242). Wait for it to finish, or remove ${lock} if that process is gone.`
      ],
      [
        new ConversationLocked({ id: "17000000001", path: lock }),
        `Conversation 17000000001 is being written by another parley process. Wait for it to finish, or remove ${lock} if that process is gone.`
      ],
      [
        new ConversationExists({ id: "17000000001" }),
        "A conversation with id 17000000001 already exists. Pick another id, or omit it to get a fresh one."
      ],
      [
        new AppendRejected({ id: "17000000001", reason: "no turn is open" }),
        "Cannot append to conversation 17000000001: no turn is open"
      ],
      [new StoreIoError({ path: "/s/conversations", reason: "EACCES" }), "/s/conversations: EACCES"],
      ["plain text", "plain text"]
    ]
    for (const [error, text] of cases) {
      expect(ErrorLine.line(error, { storage: "/s" })).toBe(text)
      expect(ErrorLine.hasNextStep(error)).toBe(false)
    }
  })

  it("a CLI failure is kept as it is; anything else becomes exit 1 with its line", () => {
    const own = new CliFailure({ code: 2, message: "usage" })
    expect(ErrorLine.failure(own, {})).toBe(own)
    const failed = ErrorLine.failure(new ConversationNotFound({ id: "9" }), { storage: "/s" })
    expect([failed.code, failed.message]).toStrictEqual([
      1,
      "No conversation with id 9. Run `parley conversation ls --archived --storage /s` to see the ids."
    ])
  })

  it("a provider missing its key or script: the error carries what is missing, the line says which flag or variable gives it", () => {
    const missing = (provider: string, what: "api_key" | "script", detail: string) =>
      ErrorLine.line(
        new ProviderError({ provider, failure: "config", missing: what, detail, retryable: false, attempts: 1 }),
        {}
      )
    expect(missing("anthropic", "api_key", "ANTHROPIC_API_KEY is not set.")).toBe(
      "ANTHROPIC_API_KEY is not set. Export it, or run with --model scripted --script FILE to work offline."
    )
    expect(missing("openai", "api_key", "OPENAI_API_KEY is not set.")).toBe(
      "OPENAI_API_KEY is not set. Export it (or set providers.openai.base_url for a local server), or run with --model scripted --script FILE."
    )
    expect(missing("scripted", "script", "The scripted model needs a script (PARLEY_SCRIPT).")).toBe(
      "The scripted model needs a script: pass --script FILE or set PARLEY_SCRIPT."
    )
  })

  it("no message or page text of src/domain, src/services or src/layers names a parley command (they are rendered only in src/cli)", () => {
    const filesUnder = (dir: string): Array<string> =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    const offending = ["domain", "services", "layers"]
      .flatMap((part) => filesUnder(path.join(repoRoot, "src", part)))
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) =>
        fs
          .readFileSync(f, "utf8")
          .split("\n")
          // Code, not comments: `parley query …`, `parley conversation …` written into text.
          .filter((l) => !/^\s*(\/?\*|\/\/)/.test(l) && /\bparley (query|conversation|demo)\b/.test(l))
          // The HTML page's footer says which command wrote it: provenance, not a command to run.
          .filter((l) => !l.includes("<footer>Written by <code>parley conversation print --format html</code>"))
          .map((l) => `${path.relative(repoRoot, f)}: ${l.trim()}`)
      )
    expect(offending).toStrictEqual([])
  })
})

describe("error lines of the built binary", () => {
  const dirs: Array<string> = []
  const holders: Array<ChildProcess> = []
  afterEach(async () => {
    for (const h of holders.splice(0)) {
      h.stdin?.end()
      h.kill("SIGKILL")
      await exited(h)
    }
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
  })

  /** A project with one finished conversation; returns it and the conversation id. */
  const withConversation = (): { p: Project; id: string } => {
    const p = makeProject()
    dirs.push(p.root)
    expect(parley(p, ["query", "hello", "--script", writeScript(p, "one.json", [{ message: "Hi." }])]).code).toBe(0)
    return { p, id: conversationIdOf(p) }
  }

  /** Another process holding `file` through FileLock, until its stdin closes. */
  const holdLock = async (file: string): Promise<ChildProcess> => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(repoRoot, "test/support/lockChild.ts"), file, String(Date.now())],
      {
        cwd: repoRoot,
        stdio: ["pipe", "pipe", "inherit"]
      }
    )
    holders.push(child)
    const said = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the lock holder did not answer in 30 s")), 30_000)
      child.stdout!.once("data", (d: Buffer) => (clearTimeout(timer), resolve(d.toString())))
    })
    expect(said).toBe("Acquired\n")
    return child
  }

  it("a locked conversation: one line naming the conversation, the holder's pid and the lock file; exit 1, nothing written", async () => {
    const { p, id } = withConversation()
    const lock = path.join(p.storage, "locks", `jp-c${id}.lock`)
    const holder = await holdLock(lock)
    const before = fs.readFileSync(path.join(conversationDir(p), "events.json"), "utf8")
    const r = parley(p, ["query", "--id", id, "again", "--script", writeScript(p, "two.json", [{ message: "Again." }])])
    expect([r.code, r.stdout, r.stderr]).toStrictEqual([
      1,
      "",
      `parley: Conversation ${id} is being written by another parley process (pid ${holder.pid}). Wait for it to finish, or remove ${lock} if that process is gone.\n`
    ])
    expect(fs.readFileSync(path.join(conversationDir(p), "events.json"), "utf8")).toBe(before)
  }, 60_000)

  it("a damaged conversation names the check command, with --storage (quoted) when it was given, and without it when it was not", () => {
    const root = tempDir("parley-errorline-")
    dirs.push(root)
    const storage = path.join(root, "my store")
    const script = path.join(root, "s.json")
    fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "Hi." }] }))
    expect(
      runParley(["query", "hello", "--storage", storage, "--script", script], {
        cwd: root,
        env: { PARLEY_STORAGE: undefined }
      }).code
    ).toBe(0)
    const dir = path.join(
      storage,
      "conversations",
      fs.readdirSync(path.join(storage, "conversations")).find((n) => /^\d/.test(n))!
    )
    const id = path.basename(dir).split("-")[0]!
    fs.rmSync(path.join(dir, "events.json"))
    const damage = `${path.join(dir, "events.json")}: missing`
    const given = runParley(["conversation", "print", id, "--storage", storage], {
      cwd: root,
      env: { PARLEY_STORAGE: undefined }
    })
    expect([given.code, given.stderr]).toStrictEqual([
      1,
      `parley: ${damage}. Run \`parley conversation check ${id} --storage '${storage}'\` for details.\n`
    ])
    // The same error from `query`: the same line (a store command repeats no --model or --script).
    const viaQuery = runParley(["query", "--id", id, "more", "--storage", storage, "--script", script], {
      cwd: root,
      env: { PARLEY_STORAGE: undefined }
    })
    expect([viaQuery.code, viaQuery.stderr]).toStrictEqual([
      1,
      `parley: ${damage}. Run \`parley conversation check ${id} --storage '${storage}'\` for details.\n`
    ])
    // Found by looking up from the working directory (a `.parley` there): nothing to repeat.
    const found = path.join(root, ".parley")
    fs.renameSync(storage, found)
    const dirThere = path.join(found, "conversations", path.basename(dir))
    const bare = runParley(["conversation", "print", id], { cwd: root, env: { PARLEY_STORAGE: undefined } })
    expect([bare.code, bare.stderr]).toStrictEqual([
      1,
      `parley: ${path.join(dirThere, "events.json")}: missing. Run \`parley conversation check ${id}\` for details.\n`
    ])
  })
})
