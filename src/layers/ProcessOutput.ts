/**
 * A parley process's two outputs (docs/decisions.md#fast-start): a reader that closed a pipe
 * ends the process cleanly with 0 (the run's way, `ProcessMain.ts`, once one has started),
 * unless the command asked to finish instead ({@link persistOnBrokenStdout}); and the exit,
 * once what was written has reached the OS. Plain code: the listing's fast path
 * (`cli/conversation/LsFast.ts`) ends through it without loading Effect.
 *
 * @internal
 * @example
 * ```ts
 * import * as ProcessOutput from "parley/layers/ProcessOutput"
 * process.stdout.write("done\n")
 * ProcessOutput.exitOnceFlushed(0, false)
 * ```
 */

import * as fs from "node:fs"
import { isTerminal as isTerminalFd } from "./file/IsTerminal.ts"

/** Set once the run has started: ends it the way a signal does (every finalizer runs), exiting 0. */
let onBrokenPipe: (() => void) | undefined

type Output = "stdout" | "stderr"

/** The outputs whose reader going away stops the run (RFD 027's pipeline semantics, the default). */
const stopsWhenClosed = new Set<Output>(["stdout", "stderr"])

/**
 * A reader that closes stdout no longer stops the run (`query
 * --persist-on-sigpipe`, RFD 027's background semantics): what is written
 * there afterwards goes nowhere, and the turn runs to its end.
 */
export const persistOnBrokenStdout = (): void => void stopsWhenClosed.delete("stdout")

// `parley … | head` closes the pipe early: that is not an error. Mid-run it
// is an interrupt, so the journal is still folded and the lock released.
const onError = (name: Output) => (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
  if (!stopsWhenClosed.has(name)) return
  if (onBrokenPipe === undefined) process.exit(0)
  onBrokenPipe()
}

/** The outputs a stream was made for (the rest were never written through one: nothing to flush). */
const made = new Set<Output>()

/**
 * Watches `name` for a closed reader once Node makes its stream: `process.stdout` builds it on
 * first use, and building one loads Node's streams and `net` (for a pipe), about a tenth of
 * `conversation print`'s start-up beyond `node -e 0` (issue 50), which a command writing with
 * `fs.writeSync` (`cli/Stdout.ts`) or nothing at all never needs.
 */
const watch = (name: Output): void => {
  const own = Object.getOwnPropertyDescriptor(process, name)
  const make = (stream: NodeJS.WriteStream): NodeJS.WriteStream => {
    if (!made.has(name)) stream.on("error", onError(name))
    made.add(name)
    return stream
  }
  if (own?.get === undefined || own.configurable !== true) return void make(process[name])
  const get = own.get
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: own.enumerable === true,
    get: () => make(get.call(process))
  })
}
watch("stdout")
watch("stderr")

/** Where each output's direct writes go: its own descriptor, or the log of a run that left its terminal. */
const descriptor: Record<Output, number> = { stdout: 1, stderr: 2 }

/** Whether `name` is a terminal (what `process[name].isTTY` says), without making its stream. */
export const isTerminal = (name: Output): boolean =>
  made.has(name) ? process[name].isTTY === true : isTerminalFd(descriptor[name])

// How much a pipe or a socket is written directly before its stream takes over. A direct write
// on a descriptor left blocking (as a parent hands it) waits for its reader, and with it the
// whole run (its host, its timers, its signals); Node's stream makes the descriptor non-blocking
// and queues instead. A pipe holds at least a page (4 KiB) on Linux even past a user's pipe
// allowance, so writes this short into a pipe nobody else fills never wait. Both outputs on one
// pipe (`2>&1`) share it.
const DIRECT_BUDGET = 4 * 1024

/** Whether both outputs go to a run's log (`redirect`). */
let redirected = false

/** Bytes still to be written directly into one file; spent (below zero) once a stream took over. */
interface Budget {
  left: number
}

/** Each output's budget, the same one for both outputs of one file; gone once its stream has taken over. */
const direct = new Map<Output, Budget>()

/** Which file each output's budget is of (device and inode), so that both outputs on one pipe share it. */
const fileOf = new Map<Output, string>()

/** `name`'s direct budget: a terminal's and a file's writes block as its stream's would, so theirs has no bound. */
const budgetOf = (name: Output): Budget | undefined => {
  // Once its stream exists (made by whatever wrote through it), it may hold queued bytes: a direct
  // write would pass them. A redirected stream writes synchronously (`redirect`): nothing queued.
  if (made.has(name) && !redirected) {
    direct.delete(name)
    return undefined
  }
  const known = direct.get(name)
  if (known !== undefined) return known
  try {
    const stat = fs.fstatSync(descriptor[name])
    const file = `${stat.dev}:${stat.ino}`
    const other = name === "stdout" ? "stderr" : "stdout"
    const shared = fileOf.get(other) === file ? direct.get(other) : undefined
    const budget = shared ?? {
      left: stat.isFile() || stat.isCharacterDevice() ? Number.POSITIVE_INFINITY : DIRECT_BUDGET
    }
    fileOf.set(name, file)
    direct.set(name, budget)
    return budget
  } catch {
    return undefined
  }
}

/** From now on `name` (and the other output, when it writes into the same file) goes through its stream. */
const handOver = (name: Output, budget: Budget | undefined): void => {
  if (budget !== undefined) budget.left = Number.NEGATIVE_INFINITY
  direct.delete(name)
}

/**
 * Writes `text` on `name` with `fs.writeSync` while that output has written nothing through its
 * stream and has budget left (making `process.stdout` loads Node's streams and `net` for a pipe:
 * ~3 ms of a scripted turn, issue 50); from the first write it cannot take (a full non-blocking
 * descriptor, a closed pipe: the stream reports it as it always did), or past the budget, the
 * stream writes everything after, in order. `whole`: the command's whole output, after which it
 * ends (a listing, a print): nothing else runs while it waits for its reader, so no budget.
 */
export const write = (name: Output, text: string, whole = false): void => {
  const budget = budgetOf(name)
  const bytes = Buffer.from(text, "utf8")
  if (budget === undefined || budget.left < 0 || (!whole && bytes.length > budget.left)) {
    handOver(name, budget)
    process[name].write(bytes)
    return
  }
  let at = 0
  try {
    while (at < bytes.length) at += fs.writeSync(descriptor[name], bytes, at, bytes.length - at)
    budget.left = Math.max(0, budget.left - bytes.length)
  } catch {
    handOver(name, budget)
    process[name].write(bytes.subarray(at))
  }
}

/**
 * Sends both outputs' direct writes to `fd` from now on (a run that left its terminal writes its log:
 * `host/DetachedRun.ts`, which sends the streams' writes there too). A log is a file: no budget.
 */
export const redirect = (fd: number): void => {
  redirected = true
  const log = { left: Number.POSITIVE_INFINITY }
  for (const name of ["stdout", "stderr"] as const) {
    descriptor[name] = fd
    direct.set(name, log)
  }
}

/** Resolves once everything written to `name` has reached the OS (a pipe may be full). */
const drained = (name: Output): Promise<void> => {
  if (!made.has(name)) return Promise.resolve()
  const stream = process[name]
  return new Promise((resolve) => (stream.writableLength === 0 ? resolve() : stream.write("", () => resolve())))
}

/** Ends a reader's closing of a pipe the way `stop` does (a run's interrupt), from now on. */
export const stopOnBrokenPipe = (stop: () => void): void => {
  onBrokenPipe = stop
}

/**
 * Exits with `code` once everything written has reached the OS: at once when `now` (a stop, a
 * failure), else once nothing is left holding the event loop, or after two seconds.
 */
export const exitOnceFlushed = (code: number, now: boolean): void =>
  void Promise.all([drained("stdout"), drained("stderr")]).then(() => {
    if (now) return process.exit(code)
    // The command is over and its output out: something left holding the event loop (a
    // connection a stalled client never closed) gets two seconds, not forever.
    setTimeout(() => process.exit(code), 2000).unref()
    // Once nothing is left, exit at once: left to itself, Node frees the heap page by page
    // before it exits, which the OS does anyway (a scripted turn: ~3 ms of its start-up).
    process.once("beforeExit", () => process.exit(code))
  })
