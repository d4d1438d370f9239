/**
 * The runs `parley serve` starts (docs/serve.md#the-api: `POST /api/conversations`,
 * `…/messages`, `…/continue`, `…/discard`). Each is a `parley query` child
 * process of the server, with stdin closed, announcing itself (so its
 * questions wait for an answer unless config or the turn it resumes sets
 * another `detached` policy), so it hosts itself on its socket exactly like a run started in a terminal
 * (one host protocol: the server watches and answers it as a client, and
 * never opens a conversation itself). A child says its conversation id
 * through `$PARLEY_ANNOUNCE` once its host listens and its model is chosen
 * (a child that cannot get under way ends unannounced); its output goes to a
 * log under `<storage>/run/` (a database's: the per-user run directory, `HostPath.runDir`). When the server stops, its children are
 * stopped as SIGTERM stops a query (open questions cancelled, the turn
 * recorded and resumable), and waited for.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Runs from "parley/layers/serve/Runs"
 * const program = Effect.gen(function* () {
 *   const runs = yield* Runs.make("/home/me/.parley")
 *   const started = yield* runs.start(["--new"], "hello")
 * })
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ToolEnv from "../../domain/tool/ToolEnv.ts"
import { ANNOUNCE } from "../../domain/run/HostSocket.ts"
import * as Refusal from "../../domain/run/Refusal.ts"
import * as PrivateDir from "../file/PrivateDir.ts"
import * as HostPath from "../host/HostPath.ts"

/** How long a child may take to create its conversation, check its model and listen. */
const READY_MS = 20_000

/** A child that ended (or never became ready): its exit and the end of its output. */
export interface Ended {
  readonly _tag: "Ended"
  readonly code: number | null
  readonly output: string
  /** Its stdout alone (`--format json`: the report). */
  readonly stdout?: string
  /** Why it was refused, as it said in `$PARLEY_REFUSAL` (a lock), when it was. */
  readonly refused?: Refusal.Refusal
}

/** A child that is running its turn. */
export interface Started {
  readonly _tag: "Started"
  readonly conversation_id: string
  readonly pid: number
}

/** What a child wrote into its refusal file (then removed), as the field of {@link Ended}. */
const refusalIn = (file: string): { readonly refused?: Refusal.Refusal } => {
  let text = ""
  try {
    text = fs.readFileSync(file, "utf8")
  } catch {
    // Not written: not refused.
  }
  fs.rmSync(file, { force: true })
  return Option.match(Refusal.decode(text), { onNone: () => ({}), onSome: (refused) => ({ refused }) })
}

const exitOf = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()))

/**
 * The command line and environment of a child `parley query`: the storage
 * in `$PARLEY_STORAGE` (a database url's password stays out of `ps`), and
 * the server's `--config` when it was given.
 */
const childOf = (storage: string, config: string | undefined, args: ReadonlyArray<string>, refusal: string) => ({
  argv: [
    ...process.execArgv,
    process.argv[1]!,
    ...(config === undefined ? [] : ["--config", config]),
    "query",
    ...args
  ],
  // The token stays with serve: its runs never read it, and their tools could read it from their parent's environ.
  env: { ...ToolEnv.withoutToken(process.env), PARLEY_STORAGE: storage, [Refusal.REFUSAL]: refusal }
})

/** An error as a line of text, when the caller has no renderer of its own (the CLI passes `ErrorLine.line`). */
export const plainLine = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The server's runs, stopped when the scope closes; `line` renders why a run could not start. */
export const make = (storage: string, config?: string, line: (error: unknown) => string = plainLine) =>
  Effect.gen(function* () {
    const children = new Set<ChildProcess>()
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        for (const child of children) child.kill("SIGTERM")
        // A run that does not stop within ten seconds is killed (a stuck tool).
        const timer = setTimeout(() => {
          for (const c of children) c.kill("SIGKILL")
        }, 10_000)
        await Promise.all([...children].map(exitOf))
        clearTimeout(timer)
      })
    )
    const dir = HostPath.runDir(storage)

    /**
     * The child `parley query ARGS`, its output into `log`: the log's
     * descriptor is closed whether the spawn worked or threw (a value Node
     * refuses in argv, a lack of processes), so no request holds one.
     */
    const spawnInto = (args: ReadonlyArray<string>, log: string, announced: string, message: string | undefined) => {
      const out = fs.openSync(log, "a", 0o600)
      try {
        const command = childOf(storage, config, args, `${announced}.refused`)
        return spawn(process.execPath, command.argv, {
          // The message goes in on stdin, never in argv: text that looks like a flag stays text.
          stdio: [message === undefined ? "ignore" : "pipe", out, out],
          env: { ...command.env, [ANNOUNCE]: announced }
        })
      } finally {
        fs.closeSync(out)
      }
    }

    /** Runs `parley query ARGS` as a child; resolves once it announced its conversation, or ended. */
    const run = (args: ReadonlyArray<string>, message?: string) =>
      Effect.callback<Started | Ended>((resume) => {
        // The logs' directory is this user's alone, or no run starts (the reply carries the line that says why).
        try {
          PrivateDir.ensure(dir)
        } catch (e) {
          return resume(Effect.succeed({ _tag: "Ended", code: 1, output: line(e) }))
        }
        const tag = `${process.pid}-${crypto.randomBytes(4).toString("hex")}`
        const announced = path.join(dir, `.announce-${tag}`)
        const log = path.join(dir, `served-${tag}.log`)
        const tail = () => fs.readFileSync(log, "utf8").trim().split("\n").slice(-5).join("\n")
        /** A child that ended before it announced: what it said, and its log gone (the answer carries it). */
        const ended = (code: number | null, output = tail()) => {
          fs.rmSync(log, { force: true })
          fs.rmSync(announced, { force: true })
          resume(Effect.succeed({ _tag: "Ended", code, output, ...refusalIn(`${announced}.refused`) }))
        }
        let child: ChildProcess
        try {
          child = spawnInto(args, log, announced, message)
        } catch (e) {
          return ended(null, `parley serve could not start the run: ${e instanceof Error ? e.message : String(e)}`)
        }
        // A spawn that fails later (no such file, too many processes) says so here, not as an uncaught error.
        let failed: Error | undefined
        child.once("error", (e) => {
          failed = e
          // No process to wait for when the server stops (its "exit" may never come).
          children.delete(child)
        })
        if (message !== undefined) {
          child.stdin!.on("error", () => undefined)
          child.stdin!.end(message)
        }
        children.add(child)
        child.once("exit", () => children.delete(child))
        const deadline = Date.now() + READY_MS
        const poll = setInterval(() => {
          if (fs.existsSync(announced)) {
            clearInterval(poll)
            // The first line: a second says the run's detached policy (for `query --detach`'s banner).
            const id = fs.readFileSync(announced, "utf8").trim().split("\n")[0]!
            fs.rmSync(announced, { force: true })
            resume(Effect.succeed({ _tag: "Started", conversation_id: id, pid: child.pid! }))
          } else if (child.exitCode !== null || child.signalCode !== null || failed !== undefined) {
            clearInterval(poll)
            ended(child.exitCode, failed === undefined ? tail() : `${tail()}\n${failed.message}`.trim())
          } else if (Date.now() > deadline) {
            // Still running, unannounced: its log stays (it may yet write to it).
            clearInterval(poll)
            resume(Effect.succeed({ _tag: "Ended", code: null, output: tail() }))
          }
        }, 20)
        return Effect.sync(() => clearInterval(poll))
      })

    return {
      /** A turn in the background (questions wait for an answer from any client). */
      // Announcing to the server makes the run a watched one: its questions wait unless config, or the turn it resumes, says otherwise.
      start: (args: ReadonlyArray<string>, message?: string) => run(args, message),
      /** `query --discard-turn --id ID --format json`, to its end: its exit code and output (the JSON report). */
      discard: (id: string) =>
        Effect.promise(
          () =>
            new Promise<Ended>((resolve) => {
              // Its refusal (a lock) comes back in a file of the runs' private directory; without one, none
              // is asked for ("") and a refused discard is told by its exit alone.
              let refusal = path.join(dir, `.refused-${process.pid}-${crypto.randomBytes(4).toString("hex")}`)
              try {
                PrivateDir.ensure(dir)
              } catch {
                refusal = ""
              }
              const command = childOf(storage, config, ["--discard-turn", `--id=${id}`, "--format", "json"], refusal)
              const child = spawn(process.execPath, command.argv, {
                stdio: ["ignore", "pipe", "pipe"],
                env: command.env
              })
              children.add(child)
              // A spawn that fails (too many processes) ends the call, not the server.
              child.once("error", (e) => {
                children.delete(child)
                resolve({ _tag: "Ended", code: null, output: e.message, stdout: "" })
              })
              let output = ""
              let stdout = ""
              child.stdout!.on("data", (d: Buffer) => {
                output += d.toString()
                stdout += d.toString()
              })
              child.stderr!.on("data", (d: Buffer) => (output += d.toString()))
              child.once("close", (code) => {
                children.delete(child)
                resolve({ _tag: "Ended", code, output, stdout, ...(refusal === "" ? {} : refusalIn(refusal)) })
              })
            })
        )
    }
  })

/** The runs' type. */
export type Runs = Effect.Success<ReturnType<typeof make>>
