// The printersim page: printers, their jobs and the labels they printed, live from /ui/events.
"use strict";

const KEPT = 200;
const printers = new Map(); // name -> {el, gone, dropped, refreshing, again}
const $ = (sel, root = document) => root.querySelector(sel);
const enc = encodeURIComponent;

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  if (r.status === 401) { location.reload(); throw new Error("logged out"); }
  if (!r.ok) throw new Error(url + ": " + r.status);
  return r.json();
}

async function post(url, body) {
  const r = await fetch(url, { method: "POST", headers: body ? { "Content-Type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined });
  let msg = r.status + " " + r.statusText;
  try { const j = await r.json(); if (j && j.message) msg = r.status + ": " + j.message; else if (j && j.label !== undefined) msg = "printed " + (j.label || "label data") + ", " + j.queueLength + " job(s) left"; } catch (_) { /* no body */ }
  return { ok: r.ok, msg };
}

// --- the simulator-wide bar ---

let barBusy = false, barAgain = false;
let lineText = "stopped"; // each printer's line state: running with its beat, or stopped
async function refreshBar() {
  if (barBusy) { barAgain = true; return; }
  barBusy = true;
  try {
    const s = await getJSON("/ui/printers");
    $("#line").textContent = s.line.running ? "line: running, a beat every " + s.line.every : "line: stopped (beat " + s.line.every + ")";
    $("#line-start").disabled = s.line.running;
    $("#line-stop").disabled = !s.line.running;
    lineText = s.line.running ? "running, a beat every " + s.line.every : "stopped (beat " + s.line.every + ")";
    for (const p of printers.values()) { const l = $(".line-state", p.el); if (l) l.textContent = lineText; }
    $("#faults").textContent = s.faults.length ? "pending: " + s.faults.map(f => f.kind + (f.times ? " ×" + f.times : " (until cleared)")).join(", ") : "no fault pending";
    $("#logout").hidden = !s.token;
    return s;
  } finally {
    barBusy = false;
    if (barAgain) { barAgain = false; refreshBar(); }
  }
}

// --- one printer ---

function addPrinter(name) {
  const el0 = $("#printer-tpl").content.firstElementChild.cloneNode(true);
  $(".name", el0).textContent = name;
  $(".trigger", el0).addEventListener("click", async () => {
    const a = $(".answer", el0);
    a.textContent = "…";
    try {
      const r = await post("/ui/printers/" + enc(name) + "/trigger");
      a.textContent = r.msg;
      a.classList.toggle("err", !r.ok);
    } catch (e) {
      a.textContent = "no answer: " + e.message; a.classList.add("err");
    }
  });
  $("#printers").append(el0);
  const p = { el: el0, gone: 0, dropped: 0, refreshing: false, again: false };
  printers.set(name, p);
  return p;
}

async function refreshState(name) {
  const p = printers.get(name);
  if (p.refreshing) { p.again = true; return; }
  p.refreshing = true;
  try {
    const st = await getJSON("/ui/printers/" + enc(name));
    const c = st.counters;
    $(".state", p.el).replaceChildren(el("span", "line-state", lineText),
      " · triggers " + c.triggers + " · printed " + c.printedLabels + " · bounces " + c.triggerBounces + " · last trigger #" + st.triggerNumber);
    const tb = $(".queue tbody", p.el);
    tb.replaceChildren();
    if (!st.queue.length) {
      const tr = el("tr"); const td = el("td", "", "no job selected"); td.colSpan = 4; tr.append(td); tb.append(tr);
    }
    for (const j of st.queue) {
      const tr = el("tr");
      tr.append(el("td", "", j.label), el("td", "", j.table ? j.table + ": " + j.row : "—"),
        el("td", "", j.copiesLeft === undefined ? "unlimited" : String(j.copiesLeft)), el("td", "", String(j.rowsLeft)));
      tb.append(tr);
    }
  } catch (e) {
    $(".state", p.el).textContent = "state unavailable: " + e.message;
  } finally {
    p.refreshing = false;
    if (p.again) { p.again = false; refreshState(name); }
  }
}

function keptLine(p) {
  let t = "The last " + KEPT + " triggers are kept; " + p.gone + " gone.";
  if (p.dropped) t += " " + p.dropped + " picture(s) skipped by the renderer under load are drawn when shown.";
  $(".kept", p.el).textContent = t;
}

// setMM sizes a picture: at 1:1 its CSS size is the label's size in millimetres; the grid and
// rulers use --mm, the displayed size of one millimetre.
function setMM(box) {
  const img = $("img", box);
  const mm = sizeMM(img);
  if (!mm || !img.naturalWidth) return; // the rulers once it has loaded
  const [wmm, hmm] = mm;
  const px = img.getBoundingClientRect().width / wmm;
  box.style.setProperty("--mm", px + "px");
  for (const r of box.querySelectorAll(".ruler")) {
    const top = r.classList.contains("top");
    const n = Math.floor(top ? wmm : hmm);
    if (r.childElementCount !== Math.floor(n / 10) + 1) {
      r.replaceChildren();
      for (let i = 0; i <= n; i += 10) r.append(el("span", "", String(i)));
    }
    [...r.children].forEach((s, i) => { s.style[top ? "left" : "top"] = (i * 10 * px) + "px"; });
  }
}

// sizeMM sizes a picture for the zoom, from its pixels, or before it loads from the size the
// list gave (so it holds its place at 1:1 too), and returns its millimetres.
function sizeMM(img) {
  const w = img.naturalWidth || Number(img.getAttribute("width")), h = img.naturalHeight || Number(img.getAttribute("height"));
  if (!w || !h) return null;
  const wmm = w / Number(img.dataset.hdpi) * 25.4, hmm = h / Number(img.dataset.vdpi) * 25.4;
  if (document.body.classList.contains("zoom")) {
    img.style.width = wmm + "mm"; img.style.height = hmm + "mm";
  } else {
    img.style.width = ""; img.style.height = "";
  }
  return [wmm, hmm];
}

function entryItem(name, e) {
  const li = el("li", e.state === "bounced" ? "bounce" : "print");
  li.dataset.n = e.n;
  const when = new Date(e.time).toLocaleTimeString();
  const what = e.state === "bounced" ? "bounced: " + e.reason : (e.label || "label data") + (e.key ? " · row " + e.key : "");
  li.append(el("div", "meta", "#" + e.n + " · " + when + " · " + what));
  if (e.state === "printed") {
    const box = el("div", "label");
    const img = el("img");
    img.alt = "label " + (e.label || "data") + " printed by trigger " + e.n;
    img.dataset.hdpi = e.hdpi || 300;
    img.dataset.vdpi = e.vdpi || 300;
    // The picture's size, known from the list, reserves its place before it loads, so the
    // list does not grow as one scrolls.
    if (e.width && e.height) { img.width = e.width; img.height = e.height; sizeMM(img); }
    img.loading = "lazy"; // a line at full speed loads only the pictures in view
    img.addEventListener("load", () => setMM(box));
    img.addEventListener("error", () => { box.replaceChildren(el("span", "meta", "no picture (its URL says why)")); });
    img.src = "/ui/printers/" + enc(name) + "/prints/" + e.n + ".png";
    box.append(el("div", "ruler top"), el("div", "ruler left"), img);
    const a = el("a", "meta", "download");
    a.href = img.src; a.download = name + "-" + e.n + ".png";
    li.append(box, el("br"), a);
  }
  return li;
}

// addEntry puts a trigger in its place (newest first) unless it is already there.
function addEntry(name, e, countGone) {
  const p = printers.get(name);
  if (!p) return;
  const list = $(".prints", p.el);
  let before = null;
  for (const li of list.children) {
    const n = Number(li.dataset.n);
    if (n === e.n) return;
    if (n < e.n) { before = li; break; }
  }
  const li = entryItem(name, e);
  if (e.deferred) { li.dataset.deferred = "1"; p.dropped++; }
  list.insertBefore(li, before);
  while (list.childElementCount > KEPT) {
    // The count says the kept prints whose pictures were skipped, as the list does.
    if (list.lastElementChild.dataset.deferred) p.dropped--;
    list.lastElementChild.remove();
    if (countGone) p.gone++;
  }
  keptLine(p);
}

async function loadPrints(name) {
  const p = printers.get(name);
  const l = await getJSON("/ui/printers/" + enc(name) + "/prints");
  $(".prints", p.el).replaceChildren();
  for (const e of l.prints) addEntry(name, e, false);
  p.gone = l.gone; p.dropped = l.dropped;
  keptLine(p);
  return l.lastEvent;
}

// --- live ---

async function loadAll() {
  let after = Infinity;
  const s = await refreshBar();
  // A simulator restarted with other printers: the page is built again for them.
  if (s && (s.printers.length !== printers.size || s.printers.some(n => !printers.has(n)))) {
    location.reload();
    return new Promise(() => {});
  }
  for (const name of printers.keys()) {
    after = Math.min(after, await loadPrints(name));
    refreshState(name);
  }
  return after;
}

// The events come from events.js, one stream for every tab of the browser. The lists are read
// once the stream is open, so that no print falls between them; prints that come while they
// are read wait, and are put in their place after (addEntry skips those the lists had).
let streaming = false, loaded = false, syncing = false, syncAgain = false, waiting = [];
async function sync() {
  if (syncing) { syncAgain = true; return; }
  syncing = true;
  try {
    const after = await loadAll();
    if (Number.isFinite(after)) port.postMessage({ after });
    loaded = true;
  } catch (e) {
    showError(e);
    // The stream is open but the lists could not be read: try again (a stream that breaks
    // has them read again when it is refused).
    if (streaming) setTimeout(sync, 2000);
  } finally {
    const w = waiting;
    syncing = false; waiting = [];
    for (const e of w) { addEntry(e.printer, e, true); refreshState(e.printer); }
    if (syncAgain) { syncAgain = false; sync(); } else if (loaded && streaming) showLive();
  }
}

function showLive() { $("#feed").textContent = "live"; $("#feed").classList.remove("err"); }

// feed takes a message of events.js: the stream's state, or an event with its id and data.
function feed(m) {
  switch (m.type) {
  case "open":
    streaming = true;
    if (!loaded) sync(); else if (!syncing) showLive();
    break;
  case "error":
    streaming = false;
    $("#feed").textContent = "reconnecting…"; $("#feed").classList.add("err");
    // A stream the simulator refused: read the lists again, which shows the login form when
    // the session is gone.
    if (m.closed) sync();
    break;
  case "print": {
    const e = JSON.parse(m.data);
    if (syncing) { waiting.push(e); break; }
    addEntry(e.printer, e, true);
    refreshState(e.printer);
    break;
  }
  case "state": {
    const s = JSON.parse(m.data);
    if (printers.has(s.printer)) refreshState(s.printer);
    refreshBar();
    break;
  }
  case "reload":
    sync();
    break;
  }
}

let port = null; // to events.js
function listen() {
  const url = "/ui/static/events.js";
  if (typeof SharedWorker === "function") {
    port = new SharedWorker(url, { name: "printersim events" }).port;
  } else {
    port = new Worker(url); // no shared worker in this browser: a stream of its own
  }
  port.onmessage = m => feed(m.data);
  window.addEventListener("pagehide", () => port.postMessage("bye"));
  // A page the browser kept and shows again left its stream: it is loaded anew.
  window.addEventListener("pageshow", e => { if (e.persisted) location.reload(); });
}

// control posts a control's request and says a refusal beside the control (answer), never in
// place of the live status.
async function control(answer, url, body) {
  const a = $(answer);
  try {
    const r = await post(url, body);
    a.textContent = r.ok ? "" : r.msg;
    a.classList.toggle("err", !r.ok);
  } catch (e) {
    a.textContent = "no answer: " + e.message; a.classList.add("err");
  }
  refreshBar();
}

function showError(e) { $("#feed").textContent = String(e.message || e); $("#feed").classList.add("err"); }

function view() {
  document.body.classList.toggle("grid-on", $("#grid").checked);
  document.body.classList.toggle("zoom", $("#zoom").checked);
  for (const box of document.querySelectorAll(".label")) setMM(box);
}

async function main() {
  $("#grid").addEventListener("change", view);
  $("#zoom").addEventListener("change", view);
  window.addEventListener("resize", view);
  $("#line-start").addEventListener("click", () => control("#line-answer", "/ui/line", { running: true }));
  $("#line-stop").addEventListener("click", () => control("#line-answer", "/ui/line", { running: false }));
  for (const b of document.querySelectorAll("[data-fault]")) {
    b.addEventListener("click", () => control("#fault-answer", "/ui/faults", { kind: b.dataset.fault, delay: $("#delay").value }));
  }
  const s = await refreshBar();
  for (const name of s.printers) addPrinter(name);
  listen();
}

main().catch(showError);
