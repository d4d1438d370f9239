#!/usr/bin/env node
// Stress test of "no tool outlives parley" (issue 30 item 6): N times, start
// `parley query` on a scripted model that calls a slow local tool, wait for
// the tool's process to be spawned (its gate `sh` appears as parley's child),
// `kill -9` parley at a random moment 0..MAX ms later, and 1 s after parley
// is gone look for any running member of the tool's process group. Two busy
// loops load the cores meanwhile.
//
//   node scripts/reaper-stress.mjs [trials=500] [maxDelayMs=500] [busyLoops=2]
//
// Needs the built CLI (npm run build). Prints one line per survivor and a
// summary; exits 1 if any tool survived.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const [trials = 500, maxDelay = 500, busy = 2] = process.argv.slice(2).map(Number)
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const bin = path.join(repo, "dist", "parley.mjs")
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

const root = fs.mkdtempSync(path.join(os.tmpdir(), "parley-reaper-stress-"))
fs.mkdirSync(path.join(root, ".parley"))
fs.writeFileSync(
  path.join(root, ".parley", "config.toml"),
  `
[conversation.tools.slow]
source = "local"
command = "sh slow_tool.sh"
description = "Slow."
parameters = { type = "object", properties = {} }
run = "unattended"
`
)
// The tool starts a child of its own, so a group with two members must die.
fs.writeFileSync(path.join(root, "slow_tool.sh"), "sleep 30 &\nwait\n")
fs.writeFileSync(
  path.join(root, "script.json"),
  JSON.stringify({ steps: [{ tool_calls: [{ id: "c1", name: "slow", arguments: {} }] }, { message: "done" }] })
)

const stat = (pid) => {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ")
    return {
      state: f[0],
      ppid: Number(f[1]),
      pgrp: Number(f[2]),
      comm: s.slice(s.indexOf("(") + 1, s.lastIndexOf(")"))
    }
  } catch {
    return undefined
  }
}
const cmdline = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ")
  } catch {
    return ""
  }
}
const childrenOf = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(" ").filter(Boolean).map(Number)
  } catch {
    return []
  }
}
/** Running (not zombie) members of a process group. */
const members = (pgid) =>
  fs
    .readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => {
      const s = stat(pid)
      return s !== undefined && s.pgrp === pgid && s.state !== "Z" && s.state !== "X"
    })

const loops = Array.from({ length: busy }, () => spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" }))
const stopLoops = () => loops.forEach((l) => l.kill("SIGKILL"))
process.on("exit", stopLoops)

let survivors = 0
let gateNeverSeen = 0
const started = Date.now()
// A run in which the tool was never seen spawning (parley ended first) is not a trial: it is run again.
for (let trial = 1; trial <= trials; trial++) {
  const parley = spawn(
    process.execPath,
    [bin, "--storage", ".parley", "query", "--new", "--model", "scripted", "--script", "script.json", "go"],
    { cwd: root, stdio: "ignore" }
  )
  const exited = new Promise((r) => parley.on("exit", r))
  // The tool: a child of parley leading its own process group (the gate `sh`, or what it exec'd), not the reaper.
  let gate
  const deadline = Date.now() + 20_000
  while (gate === undefined && Date.now() < deadline && parley.exitCode === null) {
    gate = childrenOf(parley.pid).find((c) => stat(c)?.pgrp === c && !cmdline(c).includes("parley-reaper"))
    if (gate === undefined) await sleep(1)
  }
  if (gate === undefined) {
    gateNeverSeen++
    parley.kill("SIGKILL")
    await exited
    trial--
    if (gateNeverSeen > trials) throw new Error("the tool is never spawned: is dist/ built?")
    continue
  }
  const delay = Math.random() * maxDelay
  await sleep(delay)
  parley.kill("SIGKILL")
  await exited
  await sleep(1000)
  const alive = members(gate)
  if (alive.length > 0) {
    survivors++
    console.log(
      `trial ${trial}: killed ${delay.toFixed(0)} ms after spawn; alive 1 s later: ${alive.map((p) => `${p} ${cmdline(p)}`).join("; ")}`
    )
    for (const p of alive) {
      try {
        process.kill(p, "SIGKILL")
      } catch {}
    }
  }
  // Any stray group member started later (none expected), and the conversation dir, are cleaned per trial.
  try {
    process.kill(-gate, "SIGKILL")
  } catch {}
  if (trial % 50 === 0)
    console.log(`${trial} trials, ${survivors} survivors, ${((Date.now() - started) / 1000).toFixed(0)} s`)
}
stopLoops()
console.log(
  `done: ${trials} kill -9 at 0..${maxDelay} ms after the tool's spawn, ${busy} busy loops: ${survivors} tools alive 1 s after parley died${gateNeverSeen > 0 ? ` (${gateNeverSeen} more runs ended before the tool was seen, and were run again)` : ""}`
)
fs.rmSync(root, { recursive: true, force: true })
process.exit(survivors > 0 ? 1 : 0)
