/**
 * Runs a command on a real terminal: a detached tmux session with a fixed
 * size and a clean environment, so end-to-end tests can type keys and read
 * the screen the way a user does.
 *
 * Every session gets its own tmux server (`-L <name>`, no config file), so
 * sessions never share an environment, a user's tmux is never touched, and
 * killing the session ends the server and every process in the pane.
 *
 * @example
 * ```ts
 * import * as Tmux from "../../support/Tmux.ts"
 * const s = Tmux.start({ command: ["node", "dist/parley.mjs", "query", "hi"], cwd })
 * try {
 *   await s.waitFor(/Overwrite notes\.txt\?/)
 *   s.sendKeys("y")
 *   expect(await s.waitForExit()).toBe(0)
 * } finally {
 *   s.kill()
 * }
 * ```
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"

/** The tmux binary, or `undefined` when tmux is not installed. */
export const tmuxBinary: string | undefined = (() => {
  for (const candidate of ["tmux", "/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"]) {
    const r = spawnSync(candidate, ["-V"], { encoding: "utf8" })
    if (r.status === 0) return candidate
  }
  return undefined
})()

export const available = tmuxBinary !== undefined

/** Quotes one word for `sh -c`. */
export const shellQuote = (word: string): string =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`

/** What `waitForExit` looks for: the wrapper prints it when the command ends. */
const EXIT_MARK = "__TMUX_EXIT__="

export interface StartOptions {
  /** argv of the command (quoted for the shell here). */
  readonly command: ReadonlyArray<string>
  readonly cwd: string
  /**
   * Extra environment. The pane starts from a clean one: PATH, HOME, LANG,
   * TERM=xterm-256color, TMPDIR (when set), plus these.
   */
  readonly env?: Readonly<Record<string, string>>
  readonly width?: number
  readonly height?: number
}

export interface WaitOptions {
  readonly timeoutMs?: number
  /** Include the scrollback (default true). */
  readonly history?: boolean
}

export interface Session {
  /** The session (and tmux server socket) name. */
  readonly name: string
  /** tmux key names, one key each: `"y"`, `"Y"`, `"Enter"`, `"C-c"`. */
  readonly sendKeys: (...keys: ReadonlyArray<string>) => void
  /** Types `text` literally (no key-name lookup). */
  readonly sendText: (text: string) => void
  /** The screen text; with `history` (default) the scrollback too. Wrapped lines joined, trailing blank lines dropped. */
  readonly pane: (history?: boolean) => string
  /** Resolves with the first match once the pane matches; rejects with the pane text after the timeout. */
  readonly waitFor: (pattern: RegExp, options?: WaitOptions) => Promise<RegExpMatchArray>
  /** Resolves with the command's exit code once it has ended. */
  readonly waitForExit: (options?: WaitOptions) => Promise<number>
  /** Ends the tmux server and every process in the pane; safe to call twice. */
  readonly kill: () => void
}

const live = new Set<Session>()
let counter = 0

const DEFAULT_TIMEOUT_MS = 15_000

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** `/proc/<pid>/<file>`, or undefined once the process is gone. */
const readProc = (pid: string | number, file: string): string | undefined => {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, "utf8")
  } catch {
    return undefined
  }
}

/** The fields of `/proc/<pid>/stat` after `(comm)`: state ppid pgrp session …; comm may hold spaces and parentheses. */
const statFields = (stat: string): Array<string> => stat.slice(stat.lastIndexOf(")") + 2).split(" ")

/**
 * The live (not zombie) processes of the terminal session `sid` (the pane's
 * first process leads it). Without /proc (macOS), just whether `sid` is alive.
 */
const sessionProcesses = (sid: number): Array<number> => {
  if (!fs.existsSync("/proc/self/stat")) {
    try {
      process.kill(sid, 0)
      return [sid]
    } catch {
      return []
    }
  }
  const pids: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    const stat = /^\d+$/.test(entry) ? readProc(entry, "stat") : undefined
    if (stat === undefined) continue
    const fields = statFields(stat)
    if (fields[0] !== "Z" && Number(fields[3]) === sid) pids.push(Number(entry))
  }
  return pids
}

/** What each process of the pane's session is doing (state, kernel wait, command): a timed-out wait says why the program has not gone on. */
const processReport = (sid: number): string =>
  sessionProcesses(sid)
    .map((pid) => {
      const stat = readProc(pid, "stat")
      const state = stat === undefined ? "?" : statFields(stat)[0]
      const command = (readProc(pid, "cmdline") ?? "?").split("\0").join(" ").trim()
      return `${pid} ${state} ${readProc(pid, "wchan") || "-"} ${command}`.slice(0, 400)
    })
    .join("\n")

/**
 * Starts `command` in a new detached session of a fresh tmux server. The
 * pane stays open after the command ends (a `sleep` holds it) so its last
 * screen can be read; `kill` ends it.
 */
export const start = (options: StartOptions): Session => {
  if (tmuxBinary === undefined) throw new Error("tmux is not installed")
  const tmux = tmuxBinary
  const name = `parley-test-${process.pid}-${++counter}`
  const width = options.width ?? 120
  const height = options.height ?? 40
  const clean: Record<string, string> = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: process.env["HOME"] ?? "/tmp",
    LANG: "C.UTF-8",
    TERM: "xterm-256color",
    ...(process.env["TMPDIR"] !== undefined ? { TMPDIR: process.env["TMPDIR"] } : {}),
    ...options.env
  }
  // tmux sets TERM in the pane from its own options, so the command sets
  // the environment itself (`env -i`), after the shell tmux runs it with.
  const inner = ["env", "-i", ...Object.entries(clean).map(([k, v]) => `${k}=${v}`), ...options.command]
    .map(shellQuote)
    .join(" ")
  // `trap : INT`: a Ctrl-C that reaches the terminal as a signal (parley between
  // two raw-mode prompts) goes to the whole foreground group; without a trap the
  // pane's shell dies of it, and the session with it, before the exit mark.
  // A caught signal is reset to its default in the child (exec), so parley sees it.
  const script = `trap : INT; ${inner}; echo "${EXIT_MARK}$?"; exec sleep 600`
  const run = (args: ReadonlyArray<string>) =>
    execFileSync(tmux, ["-L", name, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

  // The server inherits this environment; -u: the pane is UTF-8 whatever the locale.
  // TMUX_TMPDIR as every other tmux call here has it (the test run's own root): the same server, and no socket left in /tmp.
  const serverEnv = {
    PATH: clean.PATH!,
    HOME: clean.HOME!,
    LANG: "C.UTF-8",
    TERM: "xterm-256color",
    ...(process.env["TMUX_TMPDIR"] === undefined ? {} : { TMUX_TMPDIR: process.env["TMUX_TMPDIR"] })
  }
  execFileSync(
    tmux,
    [
      "-u",
      "-L",
      name,
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-s",
      name,
      "-x",
      String(width),
      "-y",
      String(height),
      "-c",
      options.cwd,
      "sh",
      "-c",
      script
    ],
    {
      encoding: "utf8",
      env: serverEnv,
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  const panePid = Number(run(["display-message", "-p", "-t", name, "#{pane_pid}"]).trim())

  let killed = false
  const pane = (history = true): string => {
    const out = run(["capture-pane", "-p", "-J", "-t", name, ...(history ? ["-S", "-"] : [])])
    return out.replace(/\s+$/, "")
  }
  const describe = (text: string) => `--- pane of ${name} (${width}x${height}) ---\n${text}\n--- end of pane ---`

  const waitFor = async (pattern: RegExp, waitOptions: WaitOptions = {}): Promise<RegExpMatchArray> => {
    const timeout = waitOptions.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const started = Date.now()
    let text = ""
    for (;;) {
      text = pane(waitOptions.history ?? true)
      const match = text.match(pattern)
      if (match !== null) return match
      if (Date.now() - started > timeout) break
      await sleep(50)
    }
    throw new Error(
      `Timed out after ${timeout} ms waiting for ${pattern} in the pane.\n${describe(text)}\n--- processes of the pane (pid state wchan command) ---\n${processReport(panePid)}`
    )
  }

  const session: Session = {
    name,
    sendKeys: (...keys) => {
      run(["send-keys", "-t", name, ...keys])
    },
    sendText: (text) => {
      run(["send-keys", "-t", name, "-l", "--", text])
    },
    pane,
    waitFor,
    waitForExit: async (waitOptions) => {
      const match = await waitFor(new RegExp(`${EXIT_MARK}(\\d+)`), waitOptions)
      return Number(match[1])
    },
    kill: () => {
      if (killed) return
      killed = true
      live.delete(session)
      try {
        run(["kill-server"])
      } catch {
        // Already gone.
      }
      // kill-server hangs up the pane; make sure every process in it is gone.
      const deadline = Date.now() + 2_000
      let left = sessionProcesses(panePid)
      while (left.length > 0 && Date.now() < deadline) {
        spawnSync("sleep", ["0.02"])
        left = sessionProcesses(panePid)
      }
      for (const pid of left) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // Exited meanwhile.
        }
      }
    }
  }
  live.add(session)
  return session
}

/** Kills every session this process started and has not killed yet (for `afterEach`). */
export const killAll = (): void => {
  for (const session of [...live]) session.kill()
}

/** Why real-TTY tests must be skipped here, or `undefined` when tmux is available. */
export const skipReason = available
  ? undefined
  : "tmux is not installed (install it, e.g. apt-get install tmux, to run the real-TTY tests)"
