// A Sparkplug B host built on Eclipse Tahu's JavaScript codec (npm sparkplug-payload) and npm
// mqtt, independent of the module's own codec, for sparkplug_tahu_test.go.
// Usage: node tahuhost.js NPM_DIR BROKER_URL GROUP
// It subscribes to spBv1.0/GROUP/#, decodes every message with Tahu's decodePayload and writes
// one JSON line per message on stdout: {"topic", "type", "device", "seq", "metrics": [{"name",
// "alias", "type", "value"}]}, a metric sent by alias alone named from its birth, a Long as its
// decimal string, bytes in base64; a payload Tahu cannot decode gives {"topic", "error"}. Each
// line on stdin is a command it encodes with Tahu's encodePayload and publishes at QoS 0, as
// hosts do: {"device": "line1" (omitted for NCMD), "edge": "...", "metrics": [{"name", "type",
// "value"}]}; it answers {"sent": n} after the n-th. It connects with a clean session.
"use strict";
const path = require("path");
const readline = require("readline");
const [dir, url, group] = process.argv.slice(2);
const tahu = require(path.join(dir, "node_modules", "sparkplug-payload")).get("spBv1.0");
const mqtt = require(path.join(dir, "node_modules", "mqtt"));
const Long = require(path.join(dir, "node_modules", "long"));

function plain(v) {
  if (Long.isLong(v)) return v.toString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v)) if (v[k] !== undefined) o[k] = plain(v[k]);
    return o;
  }
  return v;
}

const names = new Map(); // "edge/device" -> Map(alias -> name), from the births
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");
const client = mqtt.connect(url, { clean: true, clientId: "tahu-host-" + process.pid, reconnectPeriod: 200 });
client.on("connect", () => {
  client.subscribe("spBv1.0/" + group + "/#", { qos: 1 }, (err) => {
    out(err ? { error: String(err) } : { subscribed: true });
  });
});
client.on("message", (topic, payload) => {
  const parts = topic.split("/");
  const type = parts[2], edge = parts[3], device = parts[4] || "";
  const key = edge + "/" + device;
  let p;
  try {
    p = tahu.decodePayload(payload);
  } catch (e) {
    out({ topic: topic, error: String(e.message || e) });
    return;
  }
  if (type === "NBIRTH" || type === "DBIRTH") {
    const m = new Map();
    for (const x of p.metrics || []) if (x.alias !== undefined) m.set(plain(x.alias), x.name);
    names.set(key, m);
  }
  const aliases = names.get(key) || new Map();
  const metrics = (p.metrics || []).map((x) => {
    const alias = x.alias !== undefined ? plain(x.alias) : undefined;
    return {
      name: x.name !== undefined ? x.name : aliases.get(alias),
      alias: alias,
      type: x.type,
      value: plain(x.value),
    };
  });
  out({ topic: topic, type: type, edge: edge, device: device, seq: p.seq !== undefined ? plain(p.seq) : undefined, metrics: metrics });
});
let sent = 0;
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const c = JSON.parse(line);
  const topic = c.device
    ? "spBv1.0/" + group + "/DCMD/" + c.edge + "/" + c.device
    : "spBv1.0/" + group + "/NCMD/" + c.edge;
  const payload = tahu.encodePayload({ timestamp: Date.now(), metrics: c.metrics });
  client.publish(topic, Buffer.from(payload), { qos: 0 }, (err) => {
    sent++;
    out(err ? { error: String(err) } : { sent: sent });
  });
}).on("close", () => client.end(false, () => process.exit(0)));
