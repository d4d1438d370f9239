/**
 * The process's two outputs written directly (src/layers/ProcessOutput.ts, issue 50): what a
 * direct write cannot take, or what is past its budget, goes through Node's stream, and the
 * reader gets every byte in order either way.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot, tempDir } from "../support/Fixtures.ts"

const child = path.join(repoRoot, "test/support/processOutputChild.ts")
const dir = tempDir("parley-process-output-")

/** The lines the child writes: `count` numbered lines of `size` bytes. */
const expected = (count: number, size: number): string =>
  Array.from({ length: count }, (_, i) => {
    const head = `${String(i).padStart(6, "0")} `
    return `${head}${"x".repeat(size - head.length - 1)}\n`
  }).join("")

/** Runs the child into a socket (a Node parent's pipe), read only after `delayMs`; its stdout and stderr. */
const runSlowlyRead = (count: number, size: number, delayMs: number, streamAt?: number) =>
  new Promise<{ out: string; err: string; code: number | null }>((resolve, reject) => {
    const args = [child, String(count), String(size), ...(streamAt === undefined ? [] : [String(streamAt)])]
    const p = spawn(process.execPath, ["--import", "tsx", ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const out: Array<Buffer> = []
    let err = ""
    const timer = setTimeout(() => p.kill("SIGKILL"), 60_000)
    p.stdout.pause()
    setTimeout(() => p.stdout.resume(), delayMs)
    p.stdout.on("data", (b: Buffer) => out.push(b))
    p.stderr.on("data", (b: Buffer) => {
      err += b.toString("utf8")
    })
    p.on("error", reject)
    p.on("close", (code) => {
      clearTimeout(timer)
      resolve({ out: Buffer.concat(out).toString("utf8"), err, code })
    })
  })

describe("ProcessOutput.write", () => {
  it("a short output reaches a pipe whole and in order without Node's stream", async () => {
    // 3,000 bytes: within the direct budget (4 KiB).
    const r = await runSlowlyRead(30, 100, 0)
    expect(r.code).toBe(0)
    expect(r.out).toBe(expected(30, 100))
    expect(r.err).toBe("stream:false\n")
  })

  it("past its budget the stream takes over: a reader that waits still gets every line, in order", async () => {
    // 4 MB: far past the direct budget and any socket's buffer; the reader starts after a second.
    const r = await runSlowlyRead(40_000, 100, 1000)
    expect(r.code).toBe(0)
    expect(r.out.length).toBe(4_000_000)
    expect(r.out).toBe(expected(40_000, 100))
    expect(r.err).toBe("stream:true\n")
  })

  it("once something else has written through the stream, every later write follows it there (it may hold queued bytes)", async () => {
    const r = await runSlowlyRead(100, 100, 200, 10)
    expect(r.code).toBe(0)
    expect(r.out).toBe(expected(100, 100))
    // Line 10 and the 89 after it: none passes what the stream may still hold.
    expect(r.err).toBe("stream:true through:90\n")
  })

  it("a full non-blocking pipe: what the direct write could not take follows through the stream, in order", () => {
    // Python makes the pipe: filled until it takes no more (whatever its size and the page size), then
    // a page read back and all but 1,000 bytes of it written again, its write end non-blocking; it reads
    // everything a second later. The child's direct writes meet a full pipe (EAGAIN) after 1,000 bytes,
    // well within their budget.
    const harness = path.join(dir, "full-pipe.py")
    fs.writeFileSync(
      harness,
      [
        "import os, fcntl, subprocess, sys, time",
        "r, w = os.pipe()",
        "fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)",
        "filled = 0",
        "while True:",
        "    try:",
        "        filled += os.write(w, b'p' * 4096)",
        "    except BlockingIOError:",
        "        break",
        "page = os.sysconf('SC_PAGE_SIZE')",
        "back = len(os.read(r, page))",
        "filled += os.write(w, b'p' * (back - 1000)) - back",
        "p = subprocess.Popen(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)",
        "os.close(w)",
        "time.sleep(1)",
        "data = b''",
        "while True:",
        "    chunk = os.read(r, 65536)",
        "    if not chunk: break",
        "    data += chunk",
        "err = p.stderr.read()",
        "sys.stdout.buffer.write(data)",
        "sys.stderr.buffer.write(err + ('rc:%d filled:%d' % (p.wait(), filled)).encode())"
      ].join("\n")
    )
    const r = spawnSync("python3", [harness, process.execPath, "--import", "tsx", child, "30", "100"], {
      cwd: repoRoot,
      encoding: "utf8",
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024
    })
    const filled = Number(/filled:(\d+)$/.exec(r.stderr)?.[1])
    expect(r.stderr).toBe(`stream:true\nrc:0 filled:${filled}`)
    expect(r.stdout).toBe("p".repeat(filled) + expected(30, 100))
  })

  it("both outputs into one pipe (2>&1) share one budget: past it, both go through their streams", () => {
    // 50 lines of 100 bytes, every other one on stderr: 2,500 bytes each, 5,000 together (the budget is 4 KiB).
    const run = (lines: number) =>
      spawnSync("sh", ["-c", `"$0" --import tsx "$1" ${lines} 100 2>&1`, process.execPath, child], {
        cwd: repoRoot,
        encoding: "utf8",
        env: { ...process.env, ALTERNATE: "1" },
        timeout: 60_000
      })
    const shared = run(50)
    expect(shared.status).toBe(0)
    expect(shared.stdout).toBe(`${expected(50, 100)}stream:true\n`)
    // 30 lines (3,000 bytes together) stay within it: no stream made.
    const within = run(30)
    expect(within.stdout).toBe(`${expected(30, 100)}stream:false\n`)
  })
})
