/**
 * A stateless fake of OpenAI's Chat Completions for the cluster tests and
 * bench (docs/cluster.md): every runner may send any conversation's next request,
 * so the reply depends on the request alone, never on a queue.
 *
 * - the last message is a tool result → a final reply, `Done: <result>`;
 * - otherwise → one call of the `deferrable` tool (it asks `confirm`), named
 *   after the first word of the user's message after "deploy "; after
 *   "hang " instead, the call hangs (its `slow` mode, for an hour); after
 *   "secret " it asks `token`, a `secret` question; after "act " it asks
 *   nothing and acts at once (its `slow` mode for 0 s: a tool whose only
 *   question is its approval, with `run = "ask"`); after "pair " it calls the
 *   tool twice at once: `<name>-fast` (done at once) and `<name>` (hangs);
 *   after "gate " the call runs until the file `<root>/<name>.go` exists;
 * - the last message is a user message right after a tool result (one sent to
 *   the running turn, `send --when next|now`) → a final reply, `Noted: <it>`.
 *
 * `start()` listens on 127.0.0.1 (random port); `baseUrl` is what
 * `[providers.openai] base_url` takes. Run as a script it prints that url
 * and serves until killed.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export interface ToolModel {
  readonly baseUrl: string
  /** Requests answered so far. */
  readonly requests: () => number
  /** The messages of the last requests answered (at most 200 kept), oldest first. */
  readonly seen: () => ReadonlyArray<ReadonlyArray<Message>>
  readonly close: () => Promise<void>
}

export interface Message {
  readonly role: string
  readonly content?: unknown
}

const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-tm", object: "chat.completion.chunk", created: 1_700_000_000, model: "tool-model", choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] })}\n\n`

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => (typeof p === "object" && p !== null && "text" in p ? String(p.text) : "")).join("")
      : ""

/** Two calls at once: one that is done at once, one that hangs for an hour. */
const pairOf = (name: string) =>
  [
    [`${name}-fast`, 0],
    [name, 3600]
  ].map(([n, seconds], index) => ({
    index,
    id: `call_${n}`,
    type: "function",
    function: { name: "deferrable", arguments: JSON.stringify({ name: n, mode: "slow", seconds }) }
  }))

/** The events of the reply to `messages`. */
export const reply = (messages: ReadonlyArray<Message>): string => {
  const last = messages.at(-1)
  const head = chunk({ role: "assistant", content: "" })
  if (last?.role === "tool") {
    return head + chunk({ content: `Done: ${textOf(last.content)}` }) + chunk({}, "stop") + "data: [DONE]\n\n"
  }
  if (last?.role === "user" && messages.at(-2)?.role === "tool")
    return head + chunk({ content: `Noted: ${textOf(last.content)}` }) + chunk({}, "stop") + "data: [DONE]\n\n"
  const user = textOf(messages.find((m) => m.role === "user")?.content)
  const pair = /\bpair (\S+)/.exec(user)?.[1]
  if (pair !== undefined)
    return head + chunk({ tool_calls: pairOf(pair) }) + chunk({}, "tool_calls") + "data: [DONE]\n\n"
  const hang = /hang (\S+)/.exec(user)?.[1]
  const secret = /secret (\S+)/.exec(user)?.[1]
  const act = /\bact (\S+)/.exec(user)?.[1]
  const gate = /\bgate (\S+)/.exec(user)?.[1]
  const name = hang ?? secret ?? act ?? gate ?? /deploy (\S+)/.exec(user)?.[1] ?? "x"
  const mode =
    hang !== undefined || act !== undefined
      ? "slow"
      : secret !== undefined
        ? "secret"
        : gate !== undefined
          ? "gate"
          : "ask"
  const args = mode === "slow" ? { name, mode, seconds: act !== undefined ? 0 : 3600 } : { name, mode }
  const call = {
    index: 0,
    id: `call_${name}`,
    type: "function",
    function: { name: "deferrable", arguments: JSON.stringify(args) }
  }
  return head + chunk({ tool_calls: [call] }) + chunk({}, "tool_calls") + "data: [DONE]\n\n"
}

export const start = (): Promise<ToolModel> =>
  new Promise((resolve) => {
    let count = 0
    const seen: Array<ReadonlyArray<Message>> = []
    const server = createServer((req, res) => {
      let body = ""
      req.on("data", (d: Buffer) => (body += d.toString()))
      req.on("end", () => {
        count++
        let messages: ReadonlyArray<Message> = []
        try {
          messages = (JSON.parse(body) as { messages?: ReadonlyArray<Message> }).messages ?? []
        } catch {
          // an empty conversation: a tool call named x
        }
        seen.push(messages)
        if (seen.length > 200) seen.shift()
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        res.end(reply(messages))
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        requests: () => count,
        seen: () => [...seen],
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  void start().then((m) => console.log(m.baseUrl))
}
