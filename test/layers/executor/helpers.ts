// Shared test helpers for the executor tests (not a test file itself).
import { afterAll } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ExecutorLive from "../../../src/layers/executor/ExecutorLive.ts"
import type * as BuiltinTools from "../../../src/layers/executor/BuiltinTools.ts"
import { validate } from "../../../src/services/Config.ts"
import type { ExecutionContext, ExecutorResult } from "../../../src/services/Executor.ts"

export const FIXTURES = path.resolve(import.meta.dirname, "../../fixtures/tools")
export const EXAMPLES = path.resolve(import.meta.dirname, "../../../examples/tools")

const created: Array<string> = []
afterAll(() => {
  for (const dir of created) fs.rmSync(dir, { recursive: true, force: true })
})

/** A fresh project root (realpath, so it compares equal to what tools see); removed after the file's tests. */
export const tempRoot = (): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "parley-tools-")))
  created.push(dir)
  return dir
}

export const contextFor = (root: string): ExecutionContext => ({ conversationId: "17738399468", root })

/** An executor from a `conversation.tools` table (validated like config.toml). */
export const executorFor = (
  tools: Record<string, unknown>,
  options: { readonly builtins?: ReadonlyArray<BuiltinTools.BuiltinTool> } = {}
) =>
  Effect.gen(function* () {
    const data = yield* validate({ conversation: { tools } }, "config.toml")
    return yield* ExecutorLive.make(data, options)
  })

export const completed = (result: ExecutorResult) => {
  if (result._tag !== "Completed") throw new Error(`expected Completed, got ${JSON.stringify(result)}`)
  return result.response
}

export const needsInput = (result: ExecutorResult) => {
  if (result._tag !== "NeedsInput") throw new Error(`expected NeedsInput, got ${JSON.stringify(result)}`)
  return result
}

/**
 * Whether a process is still running. `kill(pid, 0)` → ESRCH means gone. A
 * zombie (exited, waiting to be reaped) also counts as gone: in this sandbox
 * PID 1 does not reap orphans, so a killed grandchild can stay a zombie.
 */
export const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return false
    throw e
  }
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  return state !== "Z" && state !== "X"
}

/** Waits (really) until `file` exists, up to `ms`. */
export const waitForFile = (file: string, ms = 10_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + ms
    while (!fs.existsSync(file)) {
      if (Date.now() > deadline) throw new Error(`${file} did not appear within ${ms} ms`)
      await new Promise((r) => setTimeout(r, 10))
    }
  })
