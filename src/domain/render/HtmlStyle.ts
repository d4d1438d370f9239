/**
 * The inline style sheet of the conversation page (docs/cli.md#viewing-a-conversation-as-a-page): light and dark
 * (`prefers-color-scheme`), readable from a phone's width up, no fonts or
 * images fetched. Static text: nothing from a conversation reaches it.
 *
 * @example
 * ```ts
 * import { PAGE_CSS } from "parley/domain/render/HtmlStyle"
 * `<style>${PAGE_CSS}</style>`
 * ```
 *
 * @since 0.1.0
 * @internal
 */

/** The page's CSS. Turn sections use `content-visibility: auto` so a long page lays out only what is on screen. */
export const PAGE_CSS = `
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1f2328;--muted:#59636e;--border:#d1d9e0;--soft:#f6f8fa;--user:#ddf4ff;--user-edge:#54aeff;
--accent:#0969da;--ok:#1a7f37;--ok-bg:#dafbe1;--warn:#9a6700;--warn-bg:#fff8c5;--err:#d1242f;--err-bg:#ffebe9;--q:#8250df;--q-bg:#fbefff;--code:#eff2f5}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--border:#3d444d;--soft:#151b23;--user:#0c2d4b;--user-edge:#1f6feb;
--accent:#4493f8;--ok:#3fb950;--ok-bg:#12361e;--warn:#d29922;--warn-bg:#3a2d0a;--err:#f85149;--err-bg:#42191b;--q:#ab7df8;--q-bg:#2a1b47;--code:#1f262e}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0 auto;max-width:54rem;padding:1rem;background:var(--bg);color:var(--fg);
font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;overflow-wrap:break-word}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.86em}
code{background:var(--code);border-radius:4px;padding:.05em .3em}
pre{background:var(--soft);border:1px solid var(--border);border-radius:6px;padding:.6em .75em;overflow-x:auto;white-space:pre;margin:.4em 0;max-width:100%}
pre code{background:none;padding:0;font-size:1em}
a{color:var(--accent)}
h1{font-size:1.5rem;margin:.2em 0}
h2{font-size:1.1rem;margin:0 0 .6em;display:flex;flex-wrap:wrap;gap:.5em;align-items:baseline}
h2 a{color:inherit;text-decoration:none}
h2 time{color:var(--muted);font-size:.8em;font-weight:normal}
h4{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:.8em 0 .3em}
header{border-bottom:1px solid var(--border);padding-bottom:.6em;margin-bottom:1em}
.facts{color:var(--muted);margin:.2em 0}
.toc summary{cursor:pointer;color:var(--muted)}
.toc ol{margin:.3em 0;padding-left:1.6em;font-size:.92em}
footer{color:var(--muted);font-size:.8em;border-top:1px solid var(--border);margin-top:2em;padding-top:.6em}
.turn{border-bottom:1px solid var(--border);padding:1em 0;content-visibility:auto;contain-intrinsic-size:auto 40rem}
.msg{margin:.6em 0}
.who{font-size:.8em;color:var(--muted);font-weight:600}
.who time{font-weight:normal}
.msg.user{background:var(--user);border-left:4px solid var(--user-edge);border-radius:6px;padding:.5em .8em}
.md>:first-child{margin-top:.2em}.md>:last-child{margin-bottom:.2em}
.md pre{max-height:32em;overflow:auto}
.md h1{font-size:1.3em}.md h2{font-size:1.15em;display:block}.md h3,.md h4,.md h5,.md h6{font-size:1em;text-transform:none;letter-spacing:0;color:inherit}
.md table{border-collapse:collapse;display:block;overflow-x:auto}.md td,.md th{border:1px solid var(--border);padding:.2em .5em}
.md blockquote{margin:.4em 0;padding-left:.8em;border-left:3px solid var(--border);color:var(--muted)}
.url{color:var(--muted);font-size:.85em;word-break:break-all}
.link{text-decoration:underline dotted}
.image{color:var(--muted)}
details>summary{cursor:pointer}
.reasoning{margin:.5em 0;color:var(--muted);font-size:.92em}
.reasoning>summary{font-style:italic}
.reasoning .preview{font-style:normal;opacity:.8}
.tool-call{border:1px solid var(--border);border-radius:8px;margin:.5em 0;background:var(--bg)}
.tool-call>summary{padding:.45em .7em;list-style-position:inside;overflow-wrap:anywhere}
.tool-call[open]>summary{border-bottom:1px solid var(--border);background:var(--soft);border-radius:8px 8px 0 0}
.tool-call .preview{color:var(--muted);font-size:.9em}
.call-body{padding:.2em .8em .7em}
.call-id{font-size:.8em;color:var(--muted);margin-top:.4em}
.tool-call.s-failed{border-color:var(--err);border-width:2px}
.tool-call.s-failed>summary{background:var(--err-bg)}
.tool-call.s-waiting-for-input,.tool-call.s-pending{border-color:var(--warn);border-style:dashed;border-width:2px}
.result.error h4{color:var(--err)}
.result.error pre{border-color:var(--err);background:var(--err-bg)}
.mark{display:inline-block;width:1.2em;text-align:center;font-weight:bold}
.icon{width:1em;height:1em;vertical-align:-.125em}
.m-completed{color:var(--ok)}.m-failed{color:var(--err)}.m-pending,.m-waiting-for-input{color:var(--warn)}
.chips{white-space:nowrap}
.chip{display:inline-block;font-size:.75em;border-radius:1em;padding:0 .55em;border:1px solid var(--border);color:var(--muted);vertical-align:middle}
.chip.c-q{color:var(--q);border-color:var(--q);background:var(--q-bg)}
.chip.c-failed{color:var(--err);border-color:var(--err);background:var(--err-bg)}
.chip.c-pending,.chip.c-waiting-for-input,.chip.c-incomplete{color:var(--warn);border-color:var(--warn);background:var(--warn-bg)}
.args dl{margin:0;display:grid;grid-template-columns:minmax(4em,max-content) 1fr;gap:.2em .8em;align-items:baseline}
.args dt{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em;color:var(--muted)}
.args dd{margin:0;min-width:0}
.inquiries{list-style:none;padding:0;margin:.3em 0}
.inquiry{border-left:4px solid var(--q);background:var(--q-bg);border-radius:0 6px 6px 0;padding:.4em .7em;margin:.5em 0}
.q-head{font-size:.8em;color:var(--muted)}
.q-text{margin:.2em 0}
.q-text pre{max-height:20em;overflow:auto}
.q-meta{font-size:.85em;color:var(--muted)}
.options{margin:.2em 0;padding-left:1.4em;font-size:.9em}
.desc{color:var(--muted)}
.tag{font-size:.75em;color:var(--muted);border:1px solid var(--border);border-radius:1em;padding:0 .4em}
.attempts{list-style:none;padding:0;margin:.4em 0 0}
.attempt{margin:.2em 0}
.attempt-n{font-size:.8em;color:var(--muted);margin-right:.3em}
.badge{display:inline-block;font-size:.8em;font-weight:600;border-radius:4px;padding:.05em .5em;border:1px solid}
.b-answered{color:var(--ok);background:var(--ok-bg)}
.b-redacted{color:var(--muted);background:var(--soft)}
.b-cancelled{color:var(--err);background:var(--err-bg)}
.b-open{color:var(--warn);background:var(--warn-bg)}
.b-none{color:var(--muted);background:var(--soft);border-style:dashed}
.note{color:var(--muted);font-size:.85em}
.value{font-size:.85em}
.loose .inquiry{border-left-style:dashed}
.orphan{color:var(--err);font-size:.9em}
.err-text{color:var(--err);font-weight:600}
.clip>details.all>summary{font-size:.85em;color:var(--accent)}
.clip:has(>details.all[open])>pre.head{display:none}
.cut{color:var(--muted)}
.incomplete{border:2px solid var(--warn);background:var(--warn-bg);border-radius:8px;padding:.6em .9em;margin:.8em 0}
.incomplete .state{font-weight:700;margin:0 0 .3em}
.incomplete p{margin:.3em 0}
.call-states{list-style:none;padding-left:.4em;margin:.3em 0}
.commands code{overflow-wrap:anywhere}
.compaction{border-left:4px double var(--muted);background:var(--soft);border-radius:4px;padding:.4em .8em;margin:.6em 0;font-size:.92em}
.compaction .what{margin:.2em 0;color:var(--muted)}
.incomplete-link{margin:.3em 0;font-weight:600;color:var(--warn)}
@media (max-width:36rem){body{padding:.6rem;font-size:15px}.args dl{grid-template-columns:1fr}.args dd{margin-bottom:.3em}.call-body{padding:.2em .5em .6em}}
`
