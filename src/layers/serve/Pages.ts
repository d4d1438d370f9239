/**
 * The page of `parley serve` (docs/serve.md): `/` lists the conversations with
 * their states (running, waiting for input, incomplete), 100 a page, each a link to
 * `/conversations/<id>`, the conversation as the HTML viewer draws it
 * (`domain/render/Html.ts`) with a live part that `/app.js` fills in. No
 * external URL; everything from a conversation is escaped; the script is a
 * file (the CSP allows no inline script).
 *
 * @example
 * ```ts
 * import * as Pages from "parley/layers/serve/Pages"
 * const routes = Pages.layer("/home/me/.parley")
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { Bounded } from "../../domain/render/Bounded.ts"
import { renderHtmlParts } from "../../domain/render/Html.ts"
import { PAGE_CSS } from "../../domain/render/HtmlStyle.ts"
import { escapeHtml } from "../../domain/render/HtmlText.ts"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../../domain/storage/ConversationMetadata.ts"
import * as QueuedMessage from "../../domain/storage/QueuedMessage.ts"
import * as QueueLog from "../../domain/storage/QueueLog.ts"
import type { Conversation } from "../../domain/storage/Conversation.ts"
import * as LastError from "../../domain/run/LastError.ts"
import { splitIncompleteTurn } from "../../domain/stream/IncompleteTurn.ts"
import { ConversationStore, type ConversationSummary, type StoreError } from "../../services/ConversationStore.ts"
import { APP_JS } from "./AppScript.ts"
import * as Bytes from "./Bytes.ts"
import * as Hosts from "./Hosts.ts"

/** What the live parts add to the viewer's stylesheet: big touch targets, forms that wrap on a phone. */
const LIVE_CSS = `
#live{border:1px solid var(--border);border-radius:8px;padding:.6em .8em;margin:1em 0}
.waiting{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;gap:.3em .8em;align-items:center;padding:.5em .8em;margin:0 0 .8em;background:var(--warn-bg);color:var(--fg);border:2px solid var(--warn);border-radius:8px}
.waiting[hidden]{display:none}
.waiting a{color:var(--fg);overflow-wrap:anywhere}
#waiting-links{display:flex;flex-wrap:wrap;gap:.3em .8em}
.ask{margin:.4em 0}
.ask form.question{scroll-margin-top:5rem}
form.approval .args{flex-basis:100%;margin:0}
form.approval dl{margin:.2em 0}
form.approval dd{margin:0 0 .3em 1em;overflow-wrap:anywhere}
form.approval pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.2em 0}
.answered-here{margin:.3em 0;font-weight:600}
.by{color:var(--muted)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
#live.running{border-color:var(--user-edge)}
.live-status{font-weight:600;margin:.2em 0}
.live-reply{white-space:pre-wrap}
.activity{padding-left:1.2em;margin:.3em 0}
form.question,form.control{display:flex;flex-wrap:wrap;gap:.5em;align-items:center;margin:.6em 0;padding:.6em;border:1px solid var(--border);border-radius:6px;background:var(--soft)}
form.question .q-text{flex-basis:100%;margin:0;font-weight:600}
form .q-note{flex-basis:100%;margin:0;color:var(--muted)}
form.sent{opacity:.6}
.controls{display:flex;flex-wrap:wrap;gap:.5em}
.controls form.control{flex:1 1 8rem;margin:.3em 0}
button,select,input,textarea{font:inherit;min-height:2.75rem;padding:.3em .9em;border-radius:6px;border:1px solid var(--border);background:var(--bg);color:var(--fg);max-width:100%;box-sizing:border-box}
input,select,textarea{flex:1 1 12rem;min-width:0}
textarea{flex-basis:100%;min-height:4rem}
table.list{width:100%;border-collapse:collapse}
table.list td{padding:.5em .3em;border-bottom:1px solid var(--border);vertical-align:top;overflow-wrap:anywhere}
table.list th{text-align:left;padding:.4em .3em;border-bottom:2px solid var(--border);font-size:.85em;color:var(--muted)}
table.list td.state{white-space:nowrap}
.state-badge{display:inline-block;font-size:.85em;border-radius:1em;padding:0 .6em;border:1px solid var(--border);color:var(--muted)}
.st-waiting{color:var(--fg);background:var(--warn-bg);border-color:var(--warn)}
.st-running{color:var(--fg);background:var(--user);border-color:var(--user-edge)}
.st-failed{color:var(--err);border-color:var(--err)}
#inbox{margin:0 0 1em}
#inbox h2{margin:.2em 0 .4em;font-size:1.2em}
.inbox-item{margin:.4em 0}
.inbox-item .from{margin:0;font-size:.9em;color:var(--muted)}
form.all .all-row{flex-basis:100%;display:flex;flex-wrap:wrap;gap:.3em .6em;align-items:center}
form.all label{flex:1 1 14rem}
.notify-me{margin:.3em 0}
header .notify-me{margin:.3em 0 0}
nav.pages{display:flex;flex-wrap:wrap;gap:.5em 1em;align-items:center;margin:.8em 0}
@media (max-width:36rem){table.list thead{display:none}table.list tr{display:block;border-bottom:1px solid var(--border);padding:.3em 0}table.list td{display:inline-block;border:0;padding:.1em .3em}table.list td.title{display:block;font-weight:600}}
`

const html = (body: string, status = 200) => HttpServerResponse.html(body).pipe(HttpServerResponse.setStatus(status))

/** A running turn as the list page shows it: its conversation and its open questions. */
export interface Running {
  readonly conversation_id: string
  readonly open: ReadonlyArray<unknown>
  /** Set once the run has ended while its host still answers (`HostInfo.ended`). */
  readonly ended?: number | undefined
}

/** A conversation's state in one wording, and the class its badge takes. */
const stateOf = (s: ConversationSummary, running: Running | undefined): { text: string; kind: string } => {
  if (running !== undefined)
    return running.open.length > 0
      ? { text: `waiting for you (${running.open.length})`, kind: "waiting" }
      : { text: "running", kind: "running" }
  if (s.lastError !== null) return { text: LastError.text(s.lastError), kind: "failed" }
  if (s.incomplete !== null)
    return s.incomplete.state === "waiting-for-input"
      ? { text: "stopped, a question waits", kind: "paused" }
      : { text: "stopped before its end", kind: "paused" }
  return { text: "done", kind: "done" }
}

/** When, for people: "just now", "2 min ago", "3 h ago", "4 days ago", else the date. */
export const ago = (at: string, now: number): string => {
  const s = Math.max(0, Math.round((now - Date.parse(at)) / 1000))
  if (Number.isNaN(s)) return at
  if (s < 60) return "just now"
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`
  if (s < 7 * 86_400) return `${Math.floor(s / 86_400)} ${s < 2 * 86_400 ? "day" : "days"} ago`
  return at.slice(0, 10)
}

/** The full time, to the second, for the `title` of a human one. */
const fullTime = (at: string): string => `${at.slice(0, 10)} ${at.slice(11, 19)} UTC`

const row = (c: ConversationSummary, running: Running | undefined, now: number) => {
  const state = stateOf(c, running)
  const when =
    c.lastEventAt === null
      ? ""
      : `<time datetime="${escapeHtml(c.lastEventAt)}" title="${escapeHtml(fullTime(c.lastEventAt))}">${escapeHtml(ago(c.lastEventAt, now))}</time>`
  return `<tr data-id="${escapeHtml(c.id)}"><td class="title"><a href="/conversations/${escapeHtml(c.id)}">${escapeHtml(c.title ?? `jp-c${c.id}`)}</a></td><td class="state"><span class="state-badge st-${state.kind}">${escapeHtml(state.text)}</span></td><td class="when">${when}</td></tr>`
}

const shell = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}</title>
<style>${PAGE_CSS}${LIVE_CSS}</style>
<script src="/app.js" defer></script>
</head>
<body>
${body}
</body>
</html>
`

/** Rows a page of the list shows: a storage of 10,000 conversations is never drawn whole. */
export const PAGE_SIZE = 100

/** Which page of the list `?page=` asks for (from 1), within the pages there are. */
export const pageNumber = (given: string | ReadonlyArray<string> | undefined, total: number): number => {
  const n = Number.parseInt(typeof given === "string" ? given : (given?.[0] ?? "1"), 10)
  const last = Math.max(1, Math.ceil(total / PAGE_SIZE))
  return Number.isNaN(n) || n < 1 ? 1 : Math.min(n, last)
}

/** The links between pages of the list (none when there is one page); plain links: the cookie carries the token. */
const pager = (page: number, total: number): string => {
  const last = Math.ceil(total / PAGE_SIZE)
  if (last <= 1) return ""
  const newer = page > 1 ? `<a href="/?page=${page - 1}" rel="prev">← Newer</a>` : ""
  const older = page < last ? `<a href="/?page=${page + 1}" rel="next">Older →</a>` : ""
  const from = (page - 1) * PAGE_SIZE + 1
  return `<nav class="pages" aria-label="Pages of conversations">${newer}<span>${from}–${Math.min(total, page * PAGE_SIZE)} of ${total} (page ${page} of ${last})</span>${older}</nav>`
}

/** `/`: the conversations, most recently active first, a page (`?page=`) of them at a time. */
const listPage = (runs: Effect.Effect<ReadonlyArray<Running>>) =>
  Effect.gen(function* () {
    const { conversations } = yield* ConversationStore.use((s) => s.list({ archived: false })).pipe(Effect.orDie)
    const page = pageNumber((yield* HttpServerRequest.ParsedSearchParams)["page"], conversations.length)
    const all = yield* runs
    const running = new Map(all.map((i) => [i.conversation_id, i]))
    const now = Date.now()
    const shown = conversations.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE)
    const rows = shown.map((c) => row(c, running.get(c.id), now))
    const empty = conversations.length === 0 ? `<p class="note">No conversations yet.</p>` : ""
    const pages = pager(page, conversations.length)
    const waiting = all.reduce((n, r) => n + r.open.length, 0)
    // The inbox: every waiting question and approval, answerable here (filled in by the script from `/api/questions`).
    const inbox = `<section id="inbox" aria-labelledby="inbox-h"${waiting === 0 ? " hidden" : ""}><h2 id="inbox-h">Waiting for you (<span id="inbox-count">${waiting}</span>)</h2><div id="inbox-items"></div></section>`
    const head = `<thead><tr><th scope="col">Conversation</th><th scope="col">State</th><th scope="col">Last activity</th></tr></thead>`
    return html(
      shell(
        waiting === 0 ? "parley" : `(${waiting}) parley`,
        `<header><h1>Conversations</h1></header>\n<main>${inbox}${newConversation}${empty}<table class="list" id="conversations">${head}<tbody>${rows.join("")}</tbody></table>${pages}</main>`
      )
    )
  })

const button = (id: string, action: string, label: string) =>
  `<form class="control" id="${action}" action="/api/conversations/${escapeHtml(id)}/${action}" method="post"><button type="submit">${label}</button><p class="q-note" role="status"></p></form>`

/** Where a conversation stands, for the buttons that apply to it. */
export type PageState = "running" | "incomplete" | "complete"

/**
 * The buttons under a conversation, only those that apply (Stop while it
 * runs; Continue / Discard for an incomplete turn nobody runs), and the
 * message box.
 */
const controls = (id: string, state: PageState, pending: ReadonlyArray<QueueLog.QueuedMessage>) => {
  const queued = pending.length
  const buttons =
    state === "running"
      ? [button(id, "stop", "Stop")]
      : state === "incomplete"
        ? [button(id, "continue", "Continue"), button(id, "discard", "Discard")]
        : []
  const status = `<p id="live-status" class="live-status" role="status">${state === "running" ? "Running." : "Not running."}</p>`
  return (
    `${status}<div id="live-asks"></div><div id="live-reply" class="live-reply"></div>` +
    (buttons.length > 0 ? `<div class="controls">${buttons.join("")}</div>` : "") +
    sendBox(id, state, queued) +
    queuedList(id, pending)
  )
}

/**
 * The queued messages, each with a Withdraw button (`DELETE …/messages/:n`,
 * docs/cli.md#talk-to-a-running-turn); the script adds those sent from the
 * page and removes those delivered or withdrawn.
 */
const queuedList = (id: string, pending: ReadonlyArray<QueueLog.QueuedMessage>) =>
  `<ul id="queued-list" class="queued-list" data-action="/api/conversations/${escapeHtml(id)}/messages">${pending
    .filter((m) => m.state === "queued")
    .map(
      (m) =>
        `<li data-n="${m.id}"><span>Message ${m.id} (${escapeHtml(m.when)}): ${escapeHtml(m.message)}</span> <button type="button" class="withdraw" data-n="${m.id}">Withdraw</button> <span class="q-note" role="status"></span></li>`
    )
    .join("")}</ul>`

/**
 * The message box: while a turn runs, a message is queued for it and `when`
 * says when it gets it (docs/cli.md#talk-to-a-running-turn); "2 messages
 * queued" says what waits (kept by the script as messages are sent and delivered).
 */
const sendBox = (id: string, state: PageState, queued: number) => {
  const when =
    state === "running"
      ? `<select name="when" aria-label="When the running turn gets it"><option value="after" selected>after this turn</option><option value="next">at its next request to the model</option><option value="now">now (stop the turn, go on with it)</option></select>`
      : ""
  return `<form class="control" id="send" action="/api/conversations/${escapeHtml(id)}/messages" method="post"><textarea name="message" aria-label="Message" placeholder="Message"></textarea>${when}<button type="submit">Send</button><p class="q-note" role="status"></p><p id="queued" class="q-note" data-count="${queued}">${QueueLog.describe(queued)}</p></form>`
}

/** The messages that wait in a conversation's queue, given those its events delivered (none when the store keeps no queue or it cannot be read). */
const queuedIn = (id: ConversationId.ConversationId, delivered: ReadonlySet<string>) =>
  ConversationStore.use((s) =>
    s.messages === undefined
      ? Effect.succeed([])
      : Effect.map(s.messages.list(id), (messages) => QueueLog.pending({ messages }, delivered))
  ).pipe(Effect.orElseSucceed((): ReadonlyArray<QueueLog.QueuedMessage> => []))

/** The sticky bar that says how many questions wait and jumps to them (filled in by the script as they open and close). */
const waitingBar = (count: number) =>
  `<nav id="waiting" class="waiting" aria-label="Waiting for you"${count === 0 ? " hidden" : ""}><strong id="waiting-count">Waiting for you (${count})</strong><span id="waiting-links"></span></nav>`

/** The box on the list page that starts a conversation. */
const newConversation = `<form class="control" id="new" action="/api/conversations" method="post"><textarea name="message" aria-label="New conversation" placeholder="Start a conversation"></textarea><button type="submit">Start</button><p class="q-note" role="status"></p></form>`

/**
 * A page as drawn: what drew it (the conversation's version, the live part's
 * markup) and its bytes. Kept for the last {@link KEPT} pages viewed, so
 * opening an unchanged conversation again (a reload, a second tab) costs a
 * version check instead of a load and a render: half a megabyte of HTML for
 * 500 events is ~25 ms of a server's CPU, and a browser paints nothing
 * before its first byte.
 */
interface Kept {
  readonly version: string
  /** What the live part needs of the conversation, so a changed live part alone is drawn from these. */
  readonly incomplete: boolean
  readonly delivered: ReadonlySet<string>
  readonly live: string
  readonly bytes: Uint8Array
}

/** What a server keeps of the pages it drew: the pages, and the Markdown it rendered (made on the first page drawn). */
interface Drawn {
  readonly pages: Bounded<string, Kept>
  markdown: ((source: string) => string) | undefined
}

/** How many drawn pages are kept at most (each ~0.5 MB for 500 events)… */
export const KEPT = 8
/** …and how many bytes of them: a conversation with large tool outputs draws a page of megabytes. */
export const KEPT_BYTES = 32 * 1024 * 1024
/** A page larger than this is drawn for each view, not kept: it would push out all the others. */
export const KEPT_PAGE_BYTES = 8 * 1024 * 1024

/** A page's bytes as HTML. */
const htmlBytes = (bytes: Uint8Array) =>
  HttpServerResponse.uint8Array(bytes, { contentType: "text/html; charset=utf-8" })

const encoder = new TextEncoder()

/** The live part of a conversation's page: where it stands, its buttons and queued messages, the waiting bar. */
const livePart = (
  id: ConversationId.ConversationId,
  incomplete: boolean,
  delivered: ReadonlySet<string>,
  runs: Effect.Effect<ReadonlyArray<Running>>
) =>
  Effect.gen(function* () {
    // A run that ended is drawn as it was left (its host may linger a moment to send the end to its
    // followers): the page reloaded at the end says so, and offers no Stop.
    const running = (yield* runs).find((r) => r.conversation_id === id && r.ended === undefined)
    const state: PageState = running !== undefined ? "running" : incomplete ? "incomplete" : "complete"
    const waiting = running?.open.length ?? 0
    const markup = controls(id, state, yield* queuedIn(id, delivered))
    return { state, waiting, markup, key: `${state}\n${waiting}\n${markup}` }
  })

/** Draws the page of `c` with its live part, as UTF-8. */
const draw = (
  c: Conversation,
  live: { readonly state: PageState; readonly waiting: number; readonly markup: string },
  markdown: (source: string) => string
): Uint8Array => {
  // Its last run's error, until its next run: said above the conversation, not only in a log nobody reads.
  const error = ConversationMetadata.lastError(c.metadata)
  const failed =
    error === null
      ? ""
      : `<p class="note" id="last-error" role="alert">The last run ${escapeHtml(LastError.text(error))} (${escapeHtml(error.at)})</p>\n`
  const parts = renderHtmlParts(
    { id: c.id, title: c.metadata.title, entries: c.entries },
    {
      markdown,
      live: {
        script: "/app.js",
        css: LIVE_CSS,
        controls: live.markup,
        running: live.state === "running",
        top: failed + waitingBar(live.waiting),
        nav: `<nav><a href="/">← All conversations</a></nav>\n`,
        state: live.state,
        // The tab says how many questions wait, before the script runs (and the script keeps it so).
        waiting: live.waiting
      }
    }
  )
  return encodeParts(parts)
}

/**
 * The pieces as one UTF-8 array, each encoded as it is: joined first, the
 * page would be one string of half a megabyte, all of it two bytes a
 * character for the navigation's "←" (outside Latin-1), flattened and
 * copied before encoding (with the replacements that drew the served parts
 * before, about half of a changed page's time in the server).
 */
const encodeParts = (parts: ReadonlyArray<string>): Uint8Array => Bytes.concat(parts.map((p) => encoder.encode(p)))

/** The page for a conversation `load` could not give. */
const unloaded = (id: string, failure: StoreError) =>
  failure._tag === "ConversationNotFound"
    ? html(
        shell(
          "Not found",
          `<main><p>No conversation has the id ${escapeHtml(id)}. <a href="/">All conversations</a></p></main>`
        ),
        404
      )
    : html(shell("Damaged", `<main><p>${escapeHtml(failure.message)}</p></main>`), 500)

/** `/conversations/:id`: the viewer's page, live; the page kept in `drawn` while its conversation and live part are unchanged. */
const conversationPage = (id: string, runs: Effect.Effect<ReadonlyArray<Running>>, drawn: Drawn) =>
  Effect.gen(function* () {
    // Exact, as the API reads it: a stray space or a `jp-c` without digits is no conversation's address.
    const cid = ConversationId.parseExact(id)
    if (cid === undefined)
      return html(shell("Bad request", `<main><p>${escapeHtml(id)} is not a conversation id.</p></main>`), 400)
    const store = yield* ConversationStore
    // Read before the load: a change after it gives a newer version next time, never this page under a newer one.
    // A store that cannot tell (or fails to) has every page drawn afresh.
    const version =
      store.version === undefined ? undefined : Option.getOrUndefined(yield* Effect.option(store.version(cid)))
    const kept = drawn.pages
    const known = kept.get(cid)
    if (known !== undefined && known.version === version) {
      const live = yield* livePart(cid, known.incomplete, known.delivered, runs)
      if (live.key === known.live) return htmlBytes(known.bytes)
    }
    const loaded = yield* Effect.result(store.load(cid))
    if (loaded._tag === "Failure") {
      kept.delete(cid)
      return unloaded(id, loaded.failure)
    }
    const c = loaded.success
    // Loaded by the first page that shows a conversation: markdown-it is an optional package, and a program
    // that embeds the cluster or the API (or a runner no browser visits) need not have it.
    const { remembering } = yield* Effect.promise(() => import("../render/SafeMarkdown.ts"))
    drawn.markdown ??= remembering()
    const incomplete = splitIncompleteTurn(c.entries).incomplete !== null
    const delivered = QueuedMessage.deliveredIn(c.entries)
    const live = yield* livePart(c.id, incomplete, delivered, runs)
    const bytes = draw(c, live, drawn.markdown)
    if (version === undefined) kept.delete(cid)
    else kept.set(cid, { version, incomplete, delivered, live: live.key, bytes }, bytes.length)
    return htmlBytes(bytes)
  })

/**
 * The page's routes, over the store of `storage` (given by `Server.app`: one
 * for the page and the API). The running turns are those of the runs' hosts,
 * unless `running` says otherwise (a cluster runner knows them from its
 * database: docs/cluster.md#live-from-any-runner).
 */
export const layer = (storage: string, running?: Effect.Effect<ReadonlyArray<Running>>) =>
  Layer.unwrap(
    Effect.map(Effect.service(ConversationStore), (store) => {
      const withStore = Effect.provideService(ConversationStore, store)
      const runs = running ?? Hosts.all(storage)
      // This server's drawn pages (conversationPage), most recently viewed last, and its rendered Markdown.
      const drawn: Drawn = {
        pages: new Bounded({ maxEntries: KEPT, maxSize: KEPT_BYTES, maxEntrySize: KEPT_PAGE_BYTES }),
        markdown: undefined
      }
      return Layer.mergeAll(
        HttpRouter.add("GET", "/", withStore(listPage(runs))),
        HttpRouter.add(
          "GET",
          "/conversations/:id",
          withStore(Effect.flatMap(HttpRouter.params, (p) => conversationPage(p["id"] ?? "", runs, drawn)))
        ),
        HttpRouter.add(
          "GET",
          "/app.js",
          HttpServerResponse.text(APP_JS, { contentType: "text/javascript; charset=utf-8" })
        ),
        // Browsers ask for it on their own: no icon, and no error in the console.
        HttpRouter.add("GET", "/favicon.ico", HttpServerResponse.empty({ status: 204 }))
      )
    })
  )
