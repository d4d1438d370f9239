/**
 * The one script of `parley serve`'s page (docs/serve.md), served as `/app.js`
 * (the CSP allows scripts from the server only, none inline). On a
 * conversation page it follows the run's events (`EventSource`, which
 * resumes with `Last-Event-ID` by itself) over the one render the server
 * draws: whenever the run records something (a reply, a tool call, a
 * question or its answer) the turns are fetched again from the server and
 * swapped in place, and each open question's form is put inside its tool
 * call — Yes / No buttons, Run / Skip / Always / Never for an approval
 * (with the call's arguments, and an Edit field whose JSON object is
 * checked here and sent as `{"edit": {…}}`), Deliver / Skip / Edit for a
 * result review (with the result), a select, a text field, a password field for
 * a secret (sent, then cleared; never shown again). Each queued message
 * is listed with a Withdraw button (`DELETE …/messages/:n`). An answered question
 * says who answered and through what (`answered_by`, `via`). A sticky bar
 * and the tab's title count the questions waiting; several open questions
 * also get one "Answer all" form (the batch endpoint); a question that opens
 * while the page is in the background shows a browser notification once the
 * person allowed it. When the run stops, the
 * page is drawn again. On the list page it refreshes the rows. Everything
 * from the conversation is set as text, never as HTML (the turns come from
 * the server, which escapes them).
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
      .then(function (r) { return r.text().then(function (t) { var b = null; try { b = t ? JSON.parse(t) : null; } catch (e) { b = null; } return { ok: r.ok, status: r.status, body: b }; }); });
  }
  // The server's reason, as it said it: a run that did not start says what its child printed.
  function reason(r) {
    var b = r.body || {};
    if (typeof b.output === "string" && b.output.trim() !== "") return b.output.trim();
    return b.message || ("Refused (" + r.status + ").");
  }

  // Who answered, in words (answered_by, via). "other" is a person through a surface (the API, an attached terminal).
  var VIA = { page: "on this page", terminal: "at a terminal", attach: "at an attached terminal", api: "through the API",
    cluster: "through another runner", inbox: "in parley inbox", ask: "at parley ask's prompt" };
  var BY = { assistant: "the assistant", config: "config", remembered: "a remembered answer", parley: "parley" };
  function mine() { try { return JSON.parse(sessionStorage.getItem("parley-answered-here") || "[]"); } catch (e) { return []; } }
  function markMine(iid) { var m = mine(); m.push(iid); sessionStorage.setItem("parley-answered-here", JSON.stringify(m.slice(-200))); }
  function who(e) {
    var by = e.answered_by || e.by;
    if (by === "you" || by === "other") {
      if (e.via === "page" || ((e.via === "api" || e.via === undefined) && mine().indexOf(e.inquiry_id) >= 0)) return "you, on this page";
      return VIA[e.via] ? "you, " + VIA[e.via] : "you";
    }
    return BY[by] || by;
  }
  var APPROVAL = { yes: "run", no: "skipped", always: "always run", never: "never run" };
  function answerText(e) {
    var o = e.outcome;
    if (o._tag === "Redacted") return "answered (a secret, not shown)";
    if (o._tag === "Cancelled") return "cancelled (" + o.reason + ")";
    if (e.kind === "approval" && APPROVAL[o.answer]) return APPROVAL[o.answer];
    return "answered " + JSON.stringify(o.answer);
  }

  // A call's arguments, pretty, with long values folded.
  function argsView(args) {
    var dl = el("dl");
    Object.keys(args || {}).forEach(function (k) {
      var v = args[k], text = typeof v === "string" ? v : JSON.stringify(v, null, 2);
      dl.appendChild(el("dt", {}, k));
      var dd = el("dd");
      if (text.length > 80 || text.indexOf("\n") >= 0) {
        var d = el("details"); d.appendChild(el("summary", {}, text.slice(0, 60).replace(/\s+/g, " ") + "…"));
        d.appendChild(el("pre", {}, text)); dd.appendChild(d);
      } else dd.appendChild(el("code", {}, text));
      dl.appendChild(dd);
    });
    var box = el("div", { "class": "args" });
    box.appendChild(el("p", { "class": "q-note" }, Object.keys(args || {}).length === 0 ? "No arguments." : "Arguments:"));
    box.appendChild(dl);
    return box;
  }

  // The first control of a form: where the keyboard lands when the page brings a form forward.
  function firstControl(form) { return form.querySelector("select, input, textarea, button"); }
  // Set when a form of this page was answered: the next form that opens takes the focus (the keyboard goes on there).
  var focusNext = false;
  // Set when the person scrolls or types or clicks: the page no longer brings the first waiting form into view.
  // An answer sent from the page clears it (the click that sent it was no move away): the next form, which takes
  // the keyboard, is brought into view too, also after the turns above it are drawn again and push it down.
  var moved = false;

  // Told when waiting: a browser notification when a question opens while the page is in the background,
  // once the person allowed it (the button asks; nothing asks by itself).
  function notifyHidden(text, tag) {
    if (!document.hidden || !("Notification" in window) || Notification.permission !== "granted") return;
    try { new Notification("parley: a question waits", { body: text, tag: tag }); } catch (e) { /* a browser that shows none */ }
  }
  function notifyButton(after) {
    if (!after || !("Notification" in window) || Notification.permission !== "default") return;
    var b = el("button", { type: "button", "class": "notify-me" }, "Notify me when a question waits");
    b.addEventListener("click", function () { Notification.requestPermission().then(function () { b.remove(); }, function () { b.remove(); }); });
    after.insertAdjacentElement("afterend", b);
  }
  function questionTitle(e) { return e.kind === "approval" ? "Run " + (e.tool || e.call.name) + "?" : e.question.text; }

  // "Answer all": one form for every open question of a turn, sent together (all or none) to the batch endpoint.
  var CHOICES = { approval: [["yes", "Run"], ["no", "Skip"], ["always", "Always"], ["never", "Never"]], "boolean": [["yes", "Yes"], ["no", "No"]] };
  function optionValue(o) { return typeof o === "string" ? o : (typeof o.value === "string" ? o.value : JSON.stringify(o.value)); }
  function allField(e, fid) {
    var q = e.question, type = q.answer_type.type, d = q["default"];
    if (e.kind !== "approval" && (type === "text" || type === "secret")) {
      var input = el("input", { id: fid, type: type === "secret" ? "password" : "text", autocomplete: "off" });
      if (type === "text" && typeof d === "string") input.value = d;
      return input;
    }
    // An approval asked each time (persistence "none") takes yes or no only.
    var choices = e.kind === "approval" ? (q.persistence === "none" ? CHOICES["boolean"] : CHOICES.approval) : type === "boolean" ? CHOICES["boolean"]
      : q.answer_type.options.map(function (o) { var v = optionValue(o); return [v, v]; });
    var pick = e.kind === "approval" || d === undefined || d === null ? "" : type === "boolean" ? (d ? "yes" : "no") : String(d);
    var select = el("select", { id: fid });
    var none = el("option", { value: "" }, "Choose…"); none.disabled = true; select.appendChild(none);
    choices.forEach(function (c) { var o = el("option", { value: c[0] }, c[1]); if (c[0] === pick) o.selected = true; select.appendChild(o); });
    if (pick === "") none.selected = true;
    return select;
  }
  function allForm(id, items) {
    var form = el("form", { "class": "question all", id: "answer-all", "aria-labelledby": "answer-all-h" });
    form.appendChild(el("p", { "class": "q-text", id: "answer-all-h" }, "Answer all " + items.length + " at once"));
    var fields = items.map(function (e, i) {
      var row = el("div", { "class": "all-row" }), fid = "answer-all-" + i, field = allField(e, fid);
      row.appendChild(el("label", { "for": fid }, (e.kind === "approval" ? "" : (e.tool || e.call.name) + ": ") + questionTitle(e)));
      row.appendChild(field);
      form.appendChild(row);
      return field;
    });
    form.appendChild(el("button", { type: "submit" }, "Answer all"));
    var note = el("p", { "class": "q-note", role: "status" });
    form.appendChild(note);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var answers = {}, missing = false;
      items.forEach(function (e, i) {
        var v = fields[i].value, type = e.question.answer_type.type;
        if (fields[i].tagName === "SELECT" && v === "") missing = true;
        answers[e.inquiry_id] = e.kind === "approval" ? v : type === "boolean" ? v === "yes" : v;
      });
      if (missing) { note.textContent = "Answer every question first."; return; }
      fields.forEach(function (f) { if (f.type === "password") f.value = ""; });
      items.forEach(function (e) { markMine(e.inquiry_id); });
      post("/api/conversations/" + encodeURIComponent(id) + "/answers", { answers: answers }).then(function (r) {
        if (r.ok) { form.classList.add("sent"); note.textContent = "Sent."; focusNext = true; moved = false; }
        else note.textContent = reason(r);
      }, function () { note.textContent = "Could not reach the server."; });
    });
    return form;
  }

  // An edit sent as {"edit": …}: a call's arguments (a JSON object, checked here first), or a result's text.
  // A button of its own (not the form's submit); the server's reason is shown when it refuses.
  function editBox(id, e, review) {
    var given = review ? (e.arguments || e.call.arguments).result : JSON.stringify(e.arguments || e.call.arguments, null, 2);
    var box = el("details", { "class": "edit" });
    box.appendChild(el("summary", {}, review ? "Edit the result" : "Edit the arguments"));
    var area = el("textarea", { name: "edit", rows: "8", spellcheck: "false", "aria-label": review ? "Edited result" : "Edited arguments (JSON)" });
    area.value = typeof given === "string" ? given : "";
    box.appendChild(area);
    var send = el("button", { type: "button", "class": "edit-send" }, review ? "Deliver edited" : "Run edited");
    var note = el("p", { "class": "q-note", role: "status" });
    box.appendChild(send); box.appendChild(note);
    send.addEventListener("click", function () {
      var edit;
      if (review) edit = { result: area.value };
      else {
        try { edit = JSON.parse(area.value); } catch (err) { note.textContent = "Not valid JSON: " + err.message; return; }
        if (edit === null || typeof edit !== "object" || Array.isArray(edit)) { note.textContent = "The arguments must be a JSON object."; return; }
      }
      markMine(e.inquiry_id);
      post("/api/conversations/" + encodeURIComponent(id) + "/questions/" + encodeURIComponent(e.inquiry_id), { answer: { edit: edit } }).then(function (r) {
        if (r.ok) { box.closest("form").classList.add("sent"); note.textContent = "Sent."; }
        else note.textContent = reason(r);
      }, function () { note.textContent = "Could not reach the server."; });
    });
    return box;
  }

  function questionForm(id, e) {
    var q = e.question, type = q.answer_type.type, approval = e.kind === "approval", tool = e.tool || e.call.name;
    var form = el("form", { "class": "question" + (approval ? " approval" : ""), id: "ask-" + e.inquiry_id, "data-inquiry": e.inquiry_id, "data-type": type, "aria-label": approval ? "Approve " + tool : q.text });
    if (e.label) form.appendChild(el("p", { "class": "q-note" }, e.label));
    // An approval asked each time (an MCP server's page or form: persistence "none") says what it asks, and takes yes or no.
    var once = approval && q.persistence === "none";
    // A result review (<call>.__result__.<n>): the result, then Deliver / Skip / Edit.
    var review = once && e.inquiry_id.indexOf(".__result__.") >= 0;
    form.appendChild(el("p", { "class": "q-text" }, approval && !once ? "Run " + tool + "?" : tool + ": " + q.text));
    var field = null;
    function choice(value, label) { form.appendChild(el("button", { type: "submit", value: value, "class": value }, label)); }
    if (review) {
      form.appendChild(argsView(e.arguments || e.call.arguments));
      choice("yes", "Deliver"); choice("no", "Skip"); form.appendChild(editBox(id, e, true));
    } else if (once) {
      form.appendChild(argsView(e.arguments || e.call.arguments));
      choice("yes", "Yes"); choice("no", "No");
    } else if (approval) {
      form.appendChild(argsView(e.arguments || e.call.arguments));
      choice("yes", "Run"); choice("no", "Skip"); choice("always", "Always"); choice("never", "Never");
      form.appendChild(editBox(id, e, false));
    } else if (type === "boolean") {
      choice("yes", "Yes"); choice("no", "No");
    } else {
      if (type === "select") {
        field = el("select", { name: "answer", "aria-label": q.text });
        var given = q["default"] !== undefined && q["default"] !== null;
        // No option is picked for the person unless the tool gave a default.
        if (!given) { var none = el("option", { value: "" }, "Choose…"); none.selected = true; none.disabled = true; field.appendChild(none); }
        q.answer_type.options.forEach(function (o) {
          var v = typeof o === "string" ? o : (typeof o.value === "string" ? o.value : JSON.stringify(o.value));
          var opt = el("option", { value: v }, v);
          if (given && q["default"] === v) opt.selected = true;
          field.appendChild(opt);
        });
      } else {
        field = el("input", { name: "answer", type: type === "secret" ? "password" : "text", autocomplete: "off", "aria-label": q.text, placeholder: type === "secret" ? "" : "Type your answer" });
        if (type === "text" && typeof q["default"] === "string") field.value = q["default"];
      }
      form.appendChild(field);
      form.appendChild(el("button", { type: "submit" }, "Answer"));
    }
    var note = el("p", { "class": "q-note", role: "status" });
    form.appendChild(note);
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var pressed = ev.submitter && ev.submitter.value;
      var answer = approval ? pressed : type === "boolean" ? pressed === "yes" : field.value;
      if (type === "select" && answer === "") { note.textContent = "Choose an option first."; return; }
      // A secret leaves the page with this request and nowhere else.
      if (type === "secret") field.value = "";
      markMine(e.inquiry_id);
      post("/api/conversations/" + encodeURIComponent(id) + "/questions/" + encodeURIComponent(e.inquiry_id), { answer: answer }).then(function (r) {
        if (r.ok) { form.classList.add("sent"); note.textContent = "Sent."; focusNext = true; moved = false; }
        else note.textContent = reason(r);
      }, function () { note.textContent = "Could not reach the server."; });
    });
    return form;
  }

  // Drawing a part of the page again takes its old nodes out (a form is put back, but it left the page), and a
  // browser drops a click whose target left the page between its press and its release: while a pointer is
  // down, or Space is down on a button (it clicks as the key comes up), what is drawn waits for the release
  // (the latest drawing only). A press whose release never comes (the window lost the focus, a context menu)
  // ends with those; five seconds at most in any case.
  var pressed = false, held = null;
  function release() {
    pressed = false;
    // After the click this release makes, which is dispatched in the same task.
    if (held) { var h = held; held = null; setTimeout(h, 0); }
  }
  window.addEventListener("pointerdown", function () { pressed = true; }, true);
  window.addEventListener("keydown", function (ev) {
    if (ev.key === " " && ev.target && ev.target.tagName === "BUTTON") pressed = true;
  }, true);
  window.addEventListener("keyup", function (ev) { if (ev.key === " " && pressed) release(); }, true);
  ["pointerup", "pointercancel", "blur", "contextmenu", "dragstart"].forEach(function (t) {
    window.addEventListener(t, function () { if (pressed) release(); }, true);
  });
  document.addEventListener("visibilitychange", function () { if (pressed) release(); });
  function whenReleased(draw) {
    if (!pressed) return draw();
    held = draw;
    setTimeout(function () { if (held === draw) { held = null; draw(); } }, 5000);
  }
  function outer(node) { return node ? node.outerHTML : ""; }

  function conversation(live) {
    var id = live.getAttribute("data-conversation");
    var status = document.getElementById("live-status");
    var asks = document.getElementById("live-asks");
    var reply = document.getElementById("live-reply");
    var bar = document.getElementById("waiting");
    var open = {}, closed = {}, order = [];
    var baseTitle = document.title.replace(/^\(\d+\) /, "");
    // The page scrolls to the waiting form itself: the browser's restoring of the old position would undo it.
    if ("scrollRestoration" in history) history.scrollRestoration = "manual";
    ["wheel", "touchmove", "keydown", "mousedown"].forEach(function (t) { window.addEventListener(t, function () { moved = true; }, { passive: true }); });

    function slotOf(iid) { return document.querySelector('.ask[data-inquiry="' + CSS.escape(iid) + '"]'); }
    // A question's form goes where the server left its place, else into its tool call, else under the turns.
    function place(item) {
      var slot = slotOf(item.e.inquiry_id);
      if (!slot) {
        slot = el("div", { "class": "ask", "data-inquiry": item.e.inquiry_id });
        var call = document.querySelector('details.tool-call[data-call-id="' + CSS.escape(item.e.call.id) + '"] .call-body');
        if (call) call.insertBefore(slot, call.querySelector(".result")); else asks.appendChild(slot);
      }
      if (item.form.parentNode !== slot) slot.appendChild(item.form);
      var d = slot.closest("details"); if (d) d.open = true;
    }
    function show() {
      var ids = order.filter(function (k) { return open[k]; });
      document.title = (ids.length > 0 ? "(" + ids.length + ") " : "") + baseTitle;
      bar.hidden = ids.length === 0;
      document.getElementById("waiting-count").textContent = "Waiting for you (" + ids.length + ")";
      answerAll(ids);
      Object.keys(linkOf).forEach(function (k) { if (!open[k]) delete linkOf[k]; });
      var want = ids.map(linkTo);
      if (ids.length >= 2) want.push(allLink);
      // The links are updated where they stand, not drawn again: the link the keyboard is on keeps the focus
      // while other questions open and close and the page redraws (a link removed from the page drops it).
      var links = document.getElementById("waiting-links");
      Array.prototype.slice.call(links.children).forEach(function (a) { if (want.indexOf(a) < 0) a.remove(); });
      want.forEach(function (a, i) { if (links.children[i] !== a) links.insertBefore(a, links.children[i] || null); });
      // The person's work first: the first waiting form is brought into view, unless they have moved.
      inView();
    }
    // A waiting question's link in the bar, made once. Jumping to a form puts the keyboard in it too.
    var linkOf = {};
    function linkTo(k) {
      if (!linkOf[k]) {
        linkOf[k] = el("a", { href: "#ask-" + k }, questionTitle(open[k].e));
        linkOf[k].addEventListener("click", function () { var c = open[k] && firstControl(open[k].form); if (c) setTimeout(function () { c.focus(); }, 0); });
      }
      return linkOf[k];
    }
    var allLink = el("a", { href: "#answer-all", "class": "all-link" }, "Answer all");
    // Several questions open: one more form answers them all (rebuilt only when the set of open questions changes).
    var allKey = "";
    function answerAll(ids) {
      var key = ids.length >= 2 ? ids.join(" ") : "";
      var old = document.getElementById("answer-all");
      if (key !== allKey || (key !== "" && !old)) {
        if (old) old.remove();
        allKey = key;
        if (key !== "") asks.insertBefore(allForm(id, ids.map(function (k) { return open[k].e; })), asks.firstChild);
      }
    }
    function inView() {
      var first = order.filter(function (k) { return open[k]; })[0];
      if (first !== undefined && !moved) open[first].form.scrollIntoView({ block: "center" });
    }
    // Whatever grows or shrinks above it later (a call opened, the turns drawn again), the form stays in sight.
    if (window.ResizeObserver) new ResizeObserver(inView).observe(document.body);
    // An answered question says how, and who answered: in the server's render, or where its form was.
    function annotate() {
      Object.keys(closed).forEach(function (k) {
        var e = closed[k], by = "by " + who(e);
        var slot = slotOf(k), inside = slot && slot.closest("li.attempt");
        var li = inside || document.querySelector('li.attempt[data-inquiry-id="' + CSS.escape(k) + '"]');
        if (!li) { if (slot) slot.replaceChildren(el("p", { "class": "answered-here" }, answerText(e) + " · " + by)); return; }
        // The server's render has the attempt: a place made here for the form, outside it, holds nothing more.
        if (slot && !inside) slot.remove();
        if (inside) li.querySelector(".outcome").replaceChildren(el("span", { "class": "badge b-answered" }, answerText(e)));
        if (!li.querySelector(".by")) li.appendChild(el("span", { "class": "by" }, " · " + by));
        // Kept open while the run goes on: the answer given stays in sight where its form was.
        var d = li.closest("details"); if (d) d.open = true;
      });
    }
    var timer = null;
    function refresh() { clearTimeout(timer); timer = setTimeout(redraw, 120); }
    // The server's render last drawn: one that has not changed is not drawn again (nothing moves, nothing flickers).
    var drawn = outer(document.getElementById("turns")) + outer(document.querySelector("header"));
    // Each fetch numbered: an answer that comes after a later one's is older, and is not drawn.
    var asked = 0, answered = 0;
    function redraw() {
      var n = ++asked;
      fetch(location.pathname, { credentials: "same-origin" }).then(function (r) { return r.ok ? r.text() : null; }).then(function (t) {
        if (!t || n < answered) return;
        answered = n;
        var doc = new DOMParser().parseFromString(t, "text/html");
        var turns = doc.getElementById("turns"), header = doc.querySelector("header");
        var render = outer(turns) + outer(header);
        // What is drawn already: a render held back before this one is older, and is not drawn either.
        if (render === drawn) { held = null; return; }
        whenReleased(function () {
          drawn = render;
          var focused = document.activeElement;
          if (turns) document.getElementById("turns").replaceWith(document.adoptNode(turns));
          if (header) document.querySelector("header").replaceWith(document.adoptNode(header));
          Object.keys(open).forEach(function (k) { if (open[k]) place(open[k]); });
          annotate();
          if (focused && focused !== document.activeElement && document.contains(focused)) focused.focus({ preventScroll: true });
          show();
        });
      }, function () {});
    }

    notifyButton(status);
    var source = new EventSource("/api/conversations/" + encodeURIComponent(id) + "/events");
    source.onopen = function () { live.classList.add("running"); };
    var stopped = false;
    source.onerror = function () {
      if (source.readyState !== EventSource.CLOSED) return;
      live.classList.remove("running");
      status.textContent = "Not running.";
      // Drawn while the run went on, and nothing more to follow without its end seen (it ended or was killed
      // before this page could follow it): drawn again as the run left it, once in ten seconds at most.
      var key = "parley-closed-" + id, last = Number(sessionStorage.getItem(key) || 0);
      if (!stopped && document.body.getAttribute("data-state") === "running" && Date.now() - last > 10000) {
        sessionStorage.setItem(key, String(Date.now()));
        location.reload();
      }
    };
    source.onmessage = function (m) {
      var e = JSON.parse(m.data);
      switch (e._tag) {
        case "Waiting": status.textContent = e.waiting ? "Waiting for the model…" : "Running."; break;
        case "TextDelta": reply.textContent += e.text; break;
        case "ReplyFinished": reply.textContent = ""; refresh(); break;
        case "ToolCallsAnnounced": refresh(); break;
        case "ToolStarted": status.textContent = "Running " + e.call.name + "…"; break;
        case "ToolFinished": refresh(); break;
        case "QuestionOpened":
          if (e.audience === "person" && !open[e.inquiry_id] && !closed[e.inquiry_id]) {
            open[e.inquiry_id] = { e: e, form: questionForm(id, e) };
            order.push(e.inquiry_id);
            place(open[e.inquiry_id]);
            status.textContent = "Waiting for you.";
            show();
            notifyHidden(questionTitle(e), e.inquiry_id);
            // Answered here a moment ago: the keyboard goes on in the next form.
            var ae = document.activeElement;
            if (focusNext && (!ae || ae === document.body)) { focusNext = false; var c = firstControl(open[e.inquiry_id].form); if (c) c.focus(); }
          }
          refresh();
          break;
        case "QuestionClosed": {
          var item = open[e.inquiry_id];
          open[e.inquiry_id] = null;
          closed[e.inquiry_id] = e;
          if (item) item.form.remove();
          annotate(); show(); refresh();
          break;
        }
        case "MessageDelivered": delivered(asks, e); break;
        case "Warning": asks.appendChild(el("p", { "class": "warning" }, e.text)); break;
        case "Stopped":
          stopped = true;
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

  // A message the running turn queued: what it will do, and the count of queued messages. No command line
  // to paste: the page cannot know the --storage and --config the server was started with.
  function queuedSaid(note, n, when, message) {
    if (note) note.textContent = "Queued as message " + n + ": " + (when === "next" ? "the running turn gets it with its next request to the model." : when === "now" ? "the turn stops and goes on with it." : "a new turn starts with it when this one ends.") + " Until then it can be withdrawn here or at a terminal: send --withdraw " + n + ".";
    queuedCount(1);
    if (when !== "now") queuedItem(n, when || "after", message);
  }
  // One queued message in the list, with its Withdraw button (the server draws those queued before the page loaded).
  function queuedItem(n, when, message) {
    var list = document.getElementById("queued-list");
    if (!list || list.querySelector('li[data-n="' + n + '"]')) return;
    var item = el("li", { "data-n": String(n) });
    item.appendChild(el("span", {}, "Message " + n + " (" + when + "): " + message));
    item.appendChild(document.createTextNode(" "));
    item.appendChild(el("button", { type: "button", "class": "withdraw", "data-n": String(n) }, "Withdraw"));
    item.appendChild(document.createTextNode(" "));
    item.appendChild(el("span", { "class": "q-note", role: "status" }));
    list.appendChild(item);
  }
  function queuedGone(n) {
    var item = document.querySelector('#queued-list li[data-n="' + n + '"]');
    if (item) item.remove();
  }
  // Withdraw: DELETE …/messages/:n; a message delivered meanwhile says so where its button was.
  function withdrawButtons(list) {
    list.addEventListener("click", function (ev) {
      var button = ev.target.closest && ev.target.closest("button.withdraw");
      if (!button) return;
      var n = button.getAttribute("data-n"), note = button.parentNode.querySelector(".q-note");
      button.disabled = true;
      fetch(list.getAttribute("data-action") + "/" + encodeURIComponent(n), { method: "DELETE", credentials: "same-origin" })
        .then(function (r) { return r.text().then(function (t) { var b = null; try { b = t ? JSON.parse(t) : null; } catch (e) { b = null; } return { ok: r.ok, status: r.status, body: b }; }); })
        .then(function (r) {
          if (r.ok) { queuedGone(n); queuedCount(-1); return; }
          if (note) note.textContent = reason(r);
        }, function () { button.disabled = false; if (note) note.textContent = "Could not reach the server."; });
    });
  }
  function queuedCount(delta) {
    var q = document.getElementById("queued");
    if (!q) return;
    var n = Math.max(0, Number(q.getAttribute("data-count") || 0) + delta);
    q.setAttribute("data-count", String(n));
    q.textContent = n === 0 ? "" : n + (n === 1 ? " message queued" : " messages queued");
  }
  function delivered(asks, e) {
    asks.appendChild(el("p", { "class": "note" }, "Message " + e.id + " (via " + e.via + ") delivered: " + e.message));
    queuedCount(-1);
    queuedGone(e.id);
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
        var when = form.querySelector("select[name=when]");
        if (when) { body.when = when.value; body.via = "page"; }
        var here = (location.pathname.match(/^\/conversations\/([^/]+)/) || [])[1];
        if (note) note.textContent = "…";
        post(form.getAttribute("action"), body).then(function (r) {
          if (note) note.textContent = r.ok ? "Done." : reason(r);
          if (!r.ok) return;
          if (message) message.value = "";
          if (r.body && r.body.queued !== undefined) return queuedSaid(note, r.body.queued, body.when, body.message);
          if (r.body && r.body.conversation_id && r.body.conversation_id !== here) location.assign("/conversations/" + encodeURIComponent(r.body.conversation_id));
          else setTimeout(function () { location.reload(); }, 300);
        }, function () { if (note) note.textContent = "Could not reach the server."; });
      });
    });
  }

  // The home page: its rows drawn again by the server (one wording per state), and the inbox of waiting questions.
  function list(table) {
    // The rows last drawn: unchanged ones are left as they are.
    var rows = outer(table.querySelector("tbody"));
    setInterval(function () {
      fetch(location.pathname + location.search, { credentials: "same-origin" }).then(function (r) { return r.ok ? r.text() : null; }).then(function (t) {
        if (!t) return;
        var doc = new DOMParser().parseFromString(t, "text/html");
        var fresh = doc.querySelector("#conversations tbody");
        if (!fresh) return;
        if (fresh.outerHTML === rows) { held = null; return; }
        whenReleased(function () {
          rows = fresh.outerHTML;
          table.querySelector("tbody").replaceWith(document.adoptNode(fresh));
        });
      }, function () {});
    }, 2000);
  }

  function inbox(section) {
    var items = document.getElementById("inbox-items"), shown = {};
    function eventOf(q) {
      return { inquiry_id: q.inquiry_id, kind: q.kind, tool: q.tool, arguments: q.arguments,
        call: { id: q.tool_call_id, name: q.tool, arguments: q.arguments },
        question: { text: q.question, answer_type: { type: q.answer_type, options: q.options || [] }, "default": q["default"] === null ? undefined : q["default"] } };
    }
    var drawn = false;
    function draw(rows) {
      var seen = {};
      rows.forEach(function (q) {
        var key = q.conversation_id + "/" + q.inquiry_id;
        seen[key] = true;
        if (shown[key]) return;
        var item = el("div", { "class": "inbox-item" });
        var from = el("p", { "class": "from" });
        from.appendChild(el("a", { href: "/conversations/" + encodeURIComponent(q.conversation_id) }, "jp-c" + q.conversation_id));
        from.appendChild(document.createTextNode(q.running ? " · running" : " · stopped, waits on disk"));
        item.appendChild(from);
        item.appendChild(questionForm(q.conversation_id, eventOf(q)));
        items.appendChild(item);
        shown[key] = item;
        if (drawn) notifyHidden(q.kind === "approval" ? "Run " + q.tool + "?" : q.question, key);
      });
      Object.keys(shown).forEach(function (k) { if (!seen[k]) { shown[k].remove(); delete shown[k]; } });
      section.hidden = rows.length === 0;
      document.getElementById("inbox-count").textContent = String(rows.length);
      document.title = (rows.length > 0 ? "(" + rows.length + ") " : "") + "parley";
      drawn = true;
    }
    function poll() {
      fetch("/api/questions", { credentials: "same-origin" }).then(function (r) { return r.ok ? r.json() : null; }).then(function (rows) { if (rows) draw(rows); }, function () {});
    }
    poll();
    setInterval(poll, 2000);
  }

  controls();
  var queuedList = document.getElementById("queued-list");
  if (queuedList) withdrawButtons(queuedList);
  var live = document.getElementById("live");
  if (live) conversation(live);
  var table = document.getElementById("conversations");
  if (table) list(table);
  var waiting = document.getElementById("inbox");
  if (waiting) { inbox(waiting); notifyButton(document.querySelector("header h1")); }
})();
`
