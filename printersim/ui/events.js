// The page's live feed, shared by every tab of a browser: one stream of /ui/events for all of
// them, each event passed to each tab's port. A stream per tab would hold one of the 6
// connections a browser opens to the simulator each: the 7th tab would never load, and no
// picture would. Run as a SharedWorker; where a browser has none, each tab runs it as a
// dedicated worker of its own, and it is the tab's stream.
"use strict";

const ports = new Set();
let source = null, open = false, lastId = "", retry = 0;

function tell(msg) { for (const p of ports) p.postMessage(msg); }

function connect() {
  retry = 0;
  const es = new EventSource("/ui/events" + (lastId ? "?after=" + lastId : ""));
  source = es;
  es.addEventListener("open", () => { open = true; tell({ type: "open" }); });
  es.addEventListener("error", () => {
    if (source !== es) return;
    // A stream that broke or was refused is opened anew here, a second later, asking for what
    // followed the last event seen, or the lists the tabs read (the browser's own retry
    // would know neither). A refused one (a session that ended answers 401, a full house 503)
    // has the tabs read their lists again, which shows the login form when the session is gone.
    const closed = es.readyState === EventSource.CLOSED;
    es.close();
    source = null; open = false;
    tell({ type: "error", closed });
    if (ports.size) retry = setTimeout(connect, 1000);
  });
  for (const type of ["print", "state", "reload"]) {
    es.addEventListener(type, ev => {
      if (ev.lastEventId) lastId = ev.lastEventId;
      tell({ type, id: ev.lastEventId, data: ev.data });
    });
  }
}

function stop() {
  if (source) source.close();
  clearTimeout(retry);
  source = null; open = false; lastId = ""; retry = 0;
}

function attach(port) {
  ports.add(port);
  // A tab that leaves says so; the stream closes with the last one.
  port.onmessage = m => {
    if (m.data === "bye") {
      ports.delete(port);
      if (!ports.size) stop();
    } else if (m.data && m.data.after && !lastId) {
      // The last event of the lists a tab read, once the stream was open: what a stream
      // opened anew asks to follow when it has seen no event since.
      lastId = String(m.data.after);
    }
  };
  if (!source && !retry) connect();
  else if (open) port.postMessage({ type: "open" });
}

if (typeof SharedWorkerGlobalScope !== "undefined" && self instanceof SharedWorkerGlobalScope) {
  self.onconnect = e => attach(e.ports[0]);
} else {
  attach(self);
}
