/**
 * One try at delivering one notification (docs/questions-and-approvals.md#notifications): a POST to
 * the webhook, signed as GitHub signs its own (`X-Parley-Signature:
 * sha256=<hex HMAC-SHA256 of the raw body>`), or a run of the command with
 * the JSON on stdin and a local tool's environment (no `PARLEY_*`, no token).
 * A try never throws: it says what happened ({@link Attempt}), and the
 * caller decides whether to try again.
 *
 * @example
 * ```ts
 * import * as Send from "parley/layers/notify/Send"
 * Send.signature("s3cret", '{"event":"run_ended"}') // "sha256=…" (64 hex digits)
 * const tried = Send.post({ url: "http://127.0.0.1:8080/hook", secret: "s3cret", timeoutMs: 10_000 }, {
 *   event: "run_ended", delivery_id: "ab12", body: '{"event":"run_ended"}'
 * }, AbortSignal.timeout(20_000)) // Promise<{ outcome: "delivered", detail: "HTTP 200" }>
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import { spawn } from "node:child_process"
import * as Delivery from "../../domain/notify/Delivery.ts"
import * as ToolEnv from "../../domain/tool/ToolEnv.ts"

/** What one try did: its outcome and a line saying why (for the log). */
export interface Attempt {
  readonly outcome: Delivery.Outcome
  readonly detail: string
}

/** What a try sends. */
export interface Message {
  readonly event: string
  readonly delivery_id: string
  readonly body: string
}

/** The `X-Parley-Signature` value of `body` under `secret`. */
export const signature = (secret: string, body: string): string =>
  `sha256=${process.getBuiltinModule("node:crypto").createHmac("sha256", secret).update(body).digest("hex")}`

/** A webhook, its secret resolved. */
export interface Webhook {
  readonly url: string
  readonly secret: string | undefined
  readonly timeoutMs: number
}

const headersOf = (hook: Webhook, m: Message): Record<string, string> => ({
  "content-type": "application/json",
  "user-agent": "parley-notify",
  "x-parley-event": m.event,
  "x-parley-delivery": m.delivery_id,
  ...(hook.secret === undefined ? {} : { "x-parley-signature": signature(hook.secret, m.body) })
})

const messageOf = (error: unknown): string => {
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ""
  // One line for the log (OpenSSL's messages end with a newline).
  return (error instanceof Error ? `${error.message}${cause}` : String(error)).trim()
}

/**
 * POSTs `m` once: a status says what it means; a refused connection or a timeout is tried again.
 * Through node:http(s), not `fetch`: loading Node's fetch (undici) costs a run about as much as
 * starting Node (70 ms wall against 17 ms for node:http on this machine), and a run notifies on
 * its way out. A redirect is a status like any other (nothing is followed), and each try opens
 * its own connection, closed once the status is in, so no kept-alive socket holds the process.
 */
export const post = (hook: Webhook, m: Message, signal: AbortSignal): Promise<Attempt> =>
  new Promise((resolve) => {
    try {
      const url = new URL(hook.url)
      const client = process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http")
      const body = Buffer.from(m.body, "utf8")
      const request = client.request(
        url,
        {
          method: "POST",
          headers: { ...headersOf(hook, m), "content-length": String(body.length) },
          agent: false,
          signal: AbortSignal.any([signal, AbortSignal.timeout(hook.timeoutMs)])
        },
        (response) => {
          // The answer is its status. The body is not read: the connection is closed now (it is
          // this try's own), not kept downloading a large or stalled body until the timeout.
          response.destroy()
          const status = response.statusCode ?? 0
          resolve({ outcome: Delivery.outcomeOf(status), detail: `HTTP ${status}` })
        }
      )
      request.on("error", (error) => resolve({ outcome: "retry", detail: messageOf(error) }))
      request.end(body)
    } catch (error) {
      resolve({ outcome: "retry", detail: messageOf(error) })
    }
  })

/** A command, as `[notify] command` lists it, and where it runs. */
export interface Command {
  readonly argv: ReadonlyArray<string>
  readonly cwd: string
  readonly timeoutMs: number
}

/** Runs the command once with `m`'s body on stdin: exit 0 delivered, anything else failed (a command is not run twice). */
export const run = (command: Command, m: Message, signal: AbortSignal): Promise<Attempt> =>
  new Promise((resolve) => {
    const [file, ...args] = command.argv
    const child = spawn(file!, args, {
      cwd: command.cwd,
      env: ToolEnv.withoutParleys(process.env),
      stdio: ["pipe", "ignore", "pipe"],
      signal: AbortSignal.any([signal, AbortSignal.timeout(command.timeoutMs)])
    })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-400)
    })
    child.stdin.on("error", () => {})
    child.stdin.end(m.body)
    child.on("error", (error) => resolve({ outcome: "failed", detail: messageOf(error) }))
    child.on("close", (code, sig) =>
      resolve(
        code === 0
          ? { outcome: "delivered", detail: "exit 0" }
          : { outcome: "failed", detail: `${sig ?? `exit ${code}`}${stderr === "" ? "" : `: ${stderr.trim()}`}` }
      )
    )
  })
