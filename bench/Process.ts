/**
 * Whole-process measurement (issue 16): a person feels the whole process —
 * start-up, reading, decoding, writing, exit — so these cases spawn `node`
 * and time it from outside, with its peak resident memory: `/usr/bin/time
 * -f %M` when the machine has it, else a preloaded hook that reports
 * `process.resourceUsage().maxRSS` at exit.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { median } from "./Harness.ts"

/** One run: wall time, CPU time (user + system: less moved by other processes than wall time) and peak resident set size. */
export interface Sample {
  readonly ms: number
  readonly cpuMs: number
  readonly peakMb: number
}

const GNU_TIME = "/usr/bin/time"
const hasGnuTime = (() => {
  try {
    return spawnSync(GNU_TIME, ["-f", "%M", "true"], { encoding: "utf8" }).status === 0
  } catch {
    return false
  }
})()

let scratch: string | undefined

/** The probe's files (made on first use): where the peak is written, and the hook that writes it. */
const probe = () => {
  scratch ??= fs.mkdtempSync(path.join(os.tmpdir(), "parley-bench-proc-"))
  const rssFile = path.join(scratch, "rss")
  const hook = path.join(scratch, "rss-hook.cjs")
  if (!fs.existsSync(hook)) {
    fs.writeFileSync(
      hook,
      `process.on("exit", () => { const u = process.resourceUsage(); require("fs").writeFileSync(${JSON.stringify(rssFile)}, u.maxRSS + " " + (u.userCPUTime + u.systemCPUTime) / 1e6) })\n`
    )
  }
  return { rssFile, hook }
}

/** How peak memory is measured, for the report. */
export const memoryProbe = hasGnuTime ? "/usr/bin/time -f %M" : "process.resourceUsage().maxRSS at exit"

/** Runs `node <args>` once; throws when it does not exit 0. */
export const runNode = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly input?: string } = {}
): Sample => {
  const { rssFile, hook } = probe()
  fs.rmSync(rssFile, { force: true })
  const [command, argv] = hasGnuTime
    ? [GNU_TIME, ["-f", "%M %U %S", "-o", rssFile, process.execPath, ...args]]
    : [process.execPath, ["--require", hook, ...args]]
  const t0 = performance.now()
  const r = spawnSync(command, argv, {
    cwd: options.cwd,
    encoding: "utf8",
    input: options.input ?? "",
    maxBuffer: 1 << 28
  })
  const ms = performance.now() - t0
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`)
  // GNU time writes "KB user-seconds system-seconds", the hook "KB cpu-seconds".
  const fields = (fs.readFileSync(rssFile, "utf8").trim().split("\n").at(-1) ?? "").split(" ").map(Number)
  const cpuSeconds = hasGnuTime ? (fields[1] ?? 0) + (fields[2] ?? 0) : (fields[1] ?? 0)
  return { ms, cpuMs: cpuSeconds * 1000, peakMb: (fields[0] ?? 0) / 1024 }
}

/** Medians of several runs of each case, interleaved so machine noise hits all of them. */
export const interleaved = (
  cases: ReadonlyArray<{ readonly run: () => Sample; readonly before?: () => void }>,
  runs: number,
  warmup = 1
): Array<Sample> => {
  const samples = cases.map(() => [] as Array<Sample>)
  for (let i = 0; i < warmup + runs; i++) {
    cases.forEach((c, k) => {
      c.before?.()
      const s = c.run()
      if (i >= warmup) samples[k]!.push(s)
    })
  }
  return samples.map((xs) => ({
    ms: median(xs.map((s) => s.ms)),
    cpuMs: median(xs.map((s) => s.cpuMs)),
    peakMb: median(xs.map((s) => s.peakMb))
  }))
}

/** Removes the scratch directory (the hook and the probe's file). */
export const cleanup = (): void => {
  if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true })
  scratch = undefined
}
