/**
 * CLI benchmarks (issue: Turn loop):
 * - cold start of `parley --version` (the bundle) vs `node -e 0` (issue 16: ≤ 2×);
 * - start-up of the real reading commands (issue 28: ≤ 2× `node -e 0`, on Node
 *   24): `conversation ls` on an empty storage and `conversation print` of a
 *   small conversation (the corpus's smallest, 29 events). Run the bench with
 *   Node 24 first on PATH to measure Node 24;
 * - one scripted `query` turn (a new conversation, one reply, no tool), whole
 *   process, vs `node -e 0` (issue 50: ≤ 3×);
 * - `query --continue-turn` on the largest corpus conversation (given an
 *   incomplete last turn) until the first provider request, vs loading it.
 *
 * `npm run bench -- cli startup` runs only the whole-process start-up cases.
 */
import * as RunLive from "../src/layers/RunLive.ts"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { ChatRequest } from "../src/domain/event/ChatRequest.ts"
import * as ConversationId from "../src/domain/storage/ConversationId.ts"
import * as Timestamp from "../src/domain/event/Timestamp.ts"
import { TurnStart } from "../src/domain/event/TurnStart.ts"
import * as ExecutorScripted from "../src/layers/executor/ExecutorScripted.ts"
import * as MockInquiryBackend from "../src/layers/MockInquiryBackend.ts"
import * as MockPromptBackend from "../src/layers/prompt/MockPromptBackend.ts"
import * as FileConversationStore from "../src/layers/store/FileConversationStore.ts"
import * as Query from "../src/programs/Query.ts"
import { Config } from "../src/services/Config.ts"
import { ConversationStore } from "../src/services/ConversationStore.ts"
import { Provider, ProviderError } from "../src/services/Provider.ts"
import { type Goal, median } from "./Harness.ts"
import { interleaved, runNode } from "./Process.ts"

const repo = path.resolve(import.meta.dirname, "..")
const corpus = path.resolve(repo, "test", "fixtures", "corpus", "jp", "conversations")

const spawnTimes = (args: ReadonlyArray<string>, runs: number): number => {
  const times: Array<number> = []
  for (let i = 0; i < runs + 2; i++) {
    const t0 = performance.now()
    const r = spawnSync(process.execPath, args, { cwd: repo, encoding: "utf8" })
    if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`)
    if (i >= 2) times.push(performance.now() - t0)
  }
  return median(times)
}

/** Samples of `--continue-turn` and of the load, taken in turn. */
const PAIRS = 41

/** A full garbage collection, callable without starting node with `--expose-gc` (V8 exposes `gc` to contexts made after the flag). */
const fullGc = (): (() => void) => {
  v8.setFlagsFromString("--expose-gc")
  return vm.runInNewContext("gc") as () => void
}

/** `conversation ls` (empty storage) and `conversation print` (a small conversation) against `node -e 0`, interleaved. */
const readingStartup = (): ReadonlyArray<Goal> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-start-"))
  const empty = path.join(dir, "empty", ".parley")
  fs.mkdirSync(empty, { recursive: true })
  const small = path.join(dir, "small", ".parley")
  const name = "17758406187-missing-date-in-version-string"
  fs.cpSync(path.join(corpus, name), path.join(small, "conversations", name), { recursive: true })
  const cases = {
    ls: ["dist/parley.mjs", "--storage", empty, "conversation", "ls"],
    print: ["dist/parley.mjs", "--storage", small, "conversation", "print", "17758406187"],
    node: ["-e", "0"]
  }
  const times: Record<keyof typeof cases, Array<number>> = { ls: [], print: [], node: [] }
  // One warm-up each (Node's compile cache is written on the first run), then interleaved rounds.
  for (let i = 0; i < 6; i++)
    for (const [k, args] of Object.entries(cases)) times[k as keyof typeof cases].push(spawnTimes(args, 3))
  fs.rmSync(dir, { recursive: true, force: true })
  const floor = { name: `node -e 0 (Node ${process.versions.node})`, medianMs: median(times.node) }
  return [
    {
      name: "start-up: conversation ls on an empty storage (no effect/cli, nothing of the query path)",
      subject: { name: "parley conversation ls", medianMs: median(times.ls) },
      floor,
      maxRatio: 1.5
    },
    {
      name: "start-up: conversation print of a small conversation (29 events, Markdown)",
      subject: { name: "parley conversation print", medianMs: median(times.print) },
      floor,
      maxRatio: 2
    }
  ]
}

/**
 * One scripted `query` turn in a new conversation (one reply, no tool call), whole process
 * to exit, against `node -e 0`, interleaved; the storage is emptied before each run, so
 * every run makes its first conversation (as a person's first query in a project does).
 */
const queryTurn = (): Goal => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-query-"))
  const storage = path.join(dir, ".parley")
  const script = path.join(dir, "script.json")
  fs.writeFileSync(script, JSON.stringify({ steps: [{ message: "ok" }] }))
  const bin = process.env["PARLEY_BENCH_BIN"] ?? path.join(repo, "dist", "parley.mjs")
  try {
    const [query, node] = interleaved(
      [
        {
          before: () => fs.rmSync(storage, { recursive: true, force: true }),
          run: () => runNode([bin, "--storage", storage, "query", "--new", "hi", "--script", script], { cwd: dir })
        },
        { run: () => runNode(["-e", "0"], { cwd: dir }) }
      ],
      15,
      2
    )
    return {
      name: "start-up: one scripted query turn (a new conversation, one reply), whole process to exit",
      subject: { name: "parley query --new hi --script s.json", medianMs: query!.ms },
      floor: { name: `node -e 0 (Node ${process.versions.node})`, medianMs: node!.ms },
      maxRatio: 3,
      note: `CPU ${query!.cpuMs.toFixed(0)} ms vs ${node!.cpuMs.toFixed(0)} ms (${(query!.cpuMs / node!.cpuMs).toFixed(2)}×); peak ${query!.peakMb.toFixed(0)} MB vs ${node!.peakMb.toFixed(0)} MB`
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

export const run = async (): Promise<ReadonlyArray<Goal>> => {
  const goals: Array<Goal> = []
  if (!fs.existsSync(path.join(repo, "dist", "parley.mjs")))
    spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: repo })
  if (process.argv[3] === "startup") return [...readingStartup(), queryTurn()]
  // Interleave so machine noise hits both sides.
  const parleyTimes: Array<number> = []
  const nodeTimes: Array<number> = []
  for (let i = 0; i < 5; i++) {
    parleyTimes.push(spawnTimes(["dist/parley.mjs", "--version"], 3))
    nodeTimes.push(spawnTimes(["-e", "0"], 3))
  }
  goals.push({
    name: "cold start: parley --version (the entry answers it; everything else loads after it)",
    subject: { name: "node dist/parley.mjs --version", medianMs: median(parleyTimes) },
    floor: { name: "node -e 0", medianMs: median(nodeTimes) },
    maxRatio: 2
  })
  goals.push(...readingStartup(), queryTurn())

  // --continue-turn up to the first provider request.
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-resume-"))
  const source = path.join(corpus, "17738399468-rfd-review-and-phase-1-planning")
  fs.cpSync(source, path.join(storage, "conversations", path.basename(source)), { recursive: true })
  const id = ConversationId.parse("17738399468")!
  const store = FileConversationStore.layer({ storageDir: storage })
  // Leave the last turn incomplete: a question with no reply yet.
  await Effect.runPromise(
    ConversationStore.use((s) =>
      Effect.scoped(
        Effect.flatMap(s.open(id), (session) =>
          session.append([
            new TurnStart({ timestamp: Timestamp.now() }),
            new ChatRequest({ timestamp: Timestamp.now(), content: "and then?" })
          ])
        )
      )
    ).pipe(Effect.provide(store))
  )

  let events = 0
  let reachedAt = 0
  const provider = Layer.succeed(
    Provider,
    Provider.of({
      stream: (request) => {
        reachedAt = performance.now()
        events = request.events.length
        return Stream.fail(
          new ProviderError({
            provider: "bench",
            failure: "config",
            detail: "first request reached",
            retryable: false,
            attempts: 1
          })
        )
      }
    })
  )
  const services = Layer.mergeAll(
    RunLive.layer,
    FileConversationStore.layer({ storageDir: storage }),
    provider,
    ExecutorScripted.layer({}),
    MockPromptBackend.layer([], { interactive: false }),
    MockInquiryBackend.layer({}),
    Config.layerEmpty
  )
  // Time from the start of the program to the moment the provider is called
  // (what follows — the failed request, the final save — is not counted).
  const resume = async () => {
    const t0 = performance.now()
    await Effect.runPromise(
      Query.query({
        message: undefined,
        target: { _tag: "Id", id },
        model: "scripted",
        root: storage,
        continueTurn: true,
        interactive: false
      }).pipe(
        Effect.provide(services),
        Effect.catchTag("ProviderError", () => Effect.void)
      )
    )
    return reachedAt - t0
  }
  const load = async () => {
    const t0 = performance.now()
    await Effect.runPromise(
      ConversationStore.use((s) => s.load(id)).pipe(
        Effect.provide(FileConversationStore.layer({ storageDir: storage }))
      )
    )
    return performance.now() - t0
  }
  // Each sample starts from a collected heap, resume and load in turn: a scavenge of the young
  // generation the samples before grew (27 ms at 64 MB on Node 24) otherwise lands in one side
  // or the other by chance (1.38-2.36x from run to run before). Each side's own collections count.
  const collect = fullGc()
  for (let i = 0; i < 3; i++) await resume()
  const resumeTimes: Array<number> = []
  const loadTimes: Array<number> = []
  // 41 pairs: the two differ by ~5 ms on ~13, so a millisecond of a loaded machine's noise in a median of 15
  // moved the ratio 0.1 (1.33-1.62x over whole runs, 1.39-1.41x alone).
  for (let i = 0; i < PAIRS; i++) {
    collect()
    resumeTimes.push(await resume())
    collect()
    loadTimes.push(await load())
  }
  const resumeTime = { name: "--continue-turn until the first provider request", medianMs: median(resumeTimes) }
  const loadTime = { name: "load the conversation", medianMs: median(loadTimes) }
  goals.push({
    name: `--continue-turn on the largest corpus conversation (1.8 MB; ${events} provider-visible events sent)`,
    subject: resumeTime,
    floor: loadTime,
    maxRatio: 1.5,
    note: `includes taking the lock, splitting the incomplete turn, sanitize and intoParts; ${PAIRS} pairs in turn, each sample after a full collection`
  })
  fs.rmSync(storage, { recursive: true, force: true })
  return goals
}
