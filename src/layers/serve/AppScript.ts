/**
 * The one script of `parley serve`'s page (docs/serve.md), served as `/app.js`
 * (the CSP allows scripts from the server only, none inline). On a
 * conversation page it follows the run's events (`EventSource`, which
 * resumes with `Last-Event-ID` by itself), shows the reply and the tools as
 * they go, and draws each open question as a form fitting its type — Yes /
 * No buttons, a select, a text field, a password field for a secret (sent,
 * then cleared; never shown again). When the run stops, the page is drawn
 * again from the recorded conversation. On the list page it refreshes the
 * rows. Everything from the conversation is set as text, never as HTML.
 *
 * @example
 * ```ts
 * import { APP_JS } from "parley/layers/serve/AppScript"
 * APP_JS.includes("EventSource") // true
 * ```
 *
 * @since 0.1.0
 * @internal
 */

export const APP_JS = String.raw`"use strict";
(function () {
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var k in attrs || {}) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function post(url, body) {
    return fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin" })
      .then(function (r) { return r.text().then(function (t) { return { ok: r.ok, status: r.status, body: t ? JSON.parse(t) : null }; }); });
  }

  function questionForm(id, e, questions) {
    var q = e.question, type = q.answer_type.type;
    var form = el("form", { "class": "question", "data-inquiry": e.inquiry_id, "data-type": type });
    form.appendChild(el("p", { "class": "q-text" }, e.call.name + ": " + q.text));
    var field = null;
    if (type === "boolean") {
      var yes = el("button", { type: "submit", value: "yes", "class": "yes" }, "Yes");
      var no = el("button", { type: "submit", value: "no", "class": "no" }, "No");
      form.appendChild(yes); form.appendChild(no);
    } else {
      if (type === "select") {
        field = el("select", { name: "answer", "aria-label": q.text });
        q.answer_type.options.forEach(function (o) {
          var opt = el("option", { value: o }, o);
          if (q["default"] === o) opt.selected = true;
          field.appendChild(opt);
        });
      } else {
        field = el("input", { name: "answer", type: type === "secret" ? "password" : "text", autocomplete: "off", "aria-label": q.text });
        if (type === "text" && typeof q["default"] === "string") field.value = q["default"];
      }
      form.appendChild(field);
      form.appendChild(el("button", { type: "submit" }, "Answer"));
    }
    var note = el("p", { "class": "q-note", role: "status" });
    form.appendChild(note);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var answer = type === "boolean" ? (ev.submitter && ev.submitter.value === "yes") : field.value;
      // A secret leaves the page with this request and nowhere else.
      if (type === "secret") field.value = "";
      post("/api/conversations/" + encodeURIComponent(id) + "/questions/" + encodeURIComponent(e.inquiry_id), { answer: answer }).then(function (r) {
        if (r.ok) { form.classList.add("sent"); note.textContent = "Sent."; }
        else note.textContent = (r.body && r.body.message) || ("Refused (" + r.status + ").");
      }, function () { note.textContent = "Could not reach the server."; });
    });
    questions.appendChild(form);
  }

  function conversation(live) {
    var id = live.getAttribute("data-conversation");
    var status = el("p", { id: "live-status", "class": "live-status" }, "Connecting…");
    var questions = el("div", { id: "questions" });
    var activity = el("ol", { id: "activity", "class": "activity" });
    var reply = el("div", { id: "live-reply", "class": "live-reply" });
    live.prepend(status, questions, activity, reply);
    var calls = {};
    var source = new EventSource("/api/conversations/" + encodeURIComponent(id) + "/events");
    source.onopen = function () { status.textContent = "Running."; live.classList.add("running"); };
    source.onerror = function () {
      if (source.readyState === EventSource.CLOSED) {
        live.classList.remove("running");
        status.textContent = "Not running.";
      }
    };
    source.onmessage = function (m) {
      var e = JSON.parse(m.data);
      switch (e._tag) {
        case "Waiting": if (e.waiting) status.textContent = "Waiting for the model…"; else status.textContent = "Running."; break;
        case "TextDelta": reply.textContent += e.text; break;
        case "ToolStarted": {
          var li = el("li", { "class": "tool running", "data-call": e.call.id }, "⏳ " + e.call.name);
          calls[e.call.id] = li; activity.appendChild(li); break;
        }
        case "ToolFinished": {
          var item = calls[e.call.id] || activity.appendChild(el("li", { "class": "tool" }));
          item.className = "tool " + (e.response.is_error ? "failed" : "done");
          item.textContent = (e.response.is_error ? "✗ " : "✓ ") + e.call.name; break;
        }
        case "QuestionOpened":
          if (e.audience === "person" && !questions.querySelector('[data-inquiry="' + CSS.escape(e.inquiry_id) + '"]')) questionForm(id, e, questions);
          status.textContent = "Waiting for input.";
          break;
        case "QuestionClosed": {
          var f = questions.querySelector('[data-inquiry="' + CSS.escape(e.inquiry_id) + '"]');
          if (f) f.remove();
          activity.appendChild(el("li", { "class": "answered" }, e.call.name + ": " + e.question.text + " — " + (e.outcome._tag === "Cancelled" ? "cancelled" : "answered") + " (" + e.by + ")"));
          break;
        }
        case "Warning": activity.appendChild(el("li", { "class": "warning" }, e.text)); break;
        case "Stopped":
          source.close();
          live.classList.remove("running");
          status.textContent = "Stopped: " + e.ending + ".";
          // The recorded conversation, drawn by the server, replaces the live view (once per run's end: a
          // page loaded just after it may replay the same end while the host is still going away).
          var key = "parley-stopped-" + id, mark = m.lastEventId + "/" + e.ending;
          if (sessionStorage.getItem(key) !== mark) {
            sessionStorage.setItem(key, mark);
            setTimeout(function () { location.reload(); }, 300);
          }
          break;
      }
    };
  }

  // The buttons and the message boxes: each form posts to its action; a new run opens its conversation.
  function controls() {
    document.querySelectorAll("form.control").forEach(function (form) {
      form.addEventListener("submit", function (ev) {
        ev.preventDefault();
        var note = form.querySelector(".q-note");
        var body = {};
        var message = form.querySelector("textarea");
        if (message) body.message = message.value;
        var here = (location.pathname.match(/^\/conversations\/([^/]+)/) || [])[1];
        if (note) note.textContent = "…";
        post(form.getAttribute("action"), body).then(function (r) {
          if (note) note.textContent = r.ok ? "Done." : ((r.body && r.body.message) || ("Refused (" + r.status + ")."));
          if (!r.ok) return;
          if (message) message.value = "";
          if (r.body && r.body.conversation_id && r.body.conversation_id !== here) location.assign("/conversations/" + encodeURIComponent(r.body.conversation_id));
          else setTimeout(function () { location.reload(); }, 300);
        }, function () { if (note) note.textContent = "Could not reach the server."; });
      });
    });
  }

  function stateOf(row) {
    if (row.running) return row.running.waiting.length > 0 ? "waiting for input" : "running";
    var said = [];
    if (row.incomplete) said.push("incomplete: " + row.incomplete.state);
    if (row.last_error) said.push("failed: " + row.last_error.message);
    return said.join("; ");
  }

  function list(table) {
    var body = table.querySelector("tbody");
    function draw(rows) {
      var fresh = document.createElement("tbody");
      rows.forEach(function (row) {
        var tr = el("tr", { "data-id": row.id });
        var a = el("a", { href: "/conversations/" + encodeURIComponent(row.id) }, row.title || ("jp-c" + row.id));
        var td = el("td"); td.appendChild(a); tr.appendChild(td);
        tr.appendChild(el("td", { "class": "state" }, stateOf(row)));
        tr.appendChild(el("td", { "class": "when" }, row.last_event_at || ""));
        fresh.appendChild(tr);
      });
      body.replaceWith(fresh); body = fresh;
    }
    setInterval(function () {
      fetch("/api/conversations", { credentials: "same-origin" }).then(function (r) { return r.ok ? r.json() : null; }).then(function (rows) { if (rows) draw(rows); }, function () {});
    }, 2000);
  }

  controls();
  var live = document.getElementById("live");
  if (live) conversation(live);
  var table = document.getElementById("conversations");
  if (table) list(table);
})();
`
