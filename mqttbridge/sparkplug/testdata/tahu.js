// Runs Eclipse Tahu's JavaScript codec (npm sparkplug-payload) for tahu_test.go. Reads on
// standard input {"encode": [payload objects], "decode": [base64 payloads]} and writes
// {"version": ..., "encoded": [base64], "decoded": [payload objects]}: each object as Tahu's
// encodePayload takes it and decodePayload gives it, with a Long written {"$long": "decimal"}
// and bytes {"$bytes": "base64"} both ways, so that no 64-bit value passes through a double.
// Usage: node tahu.js NPM_DIR < requests.json
"use strict";
const path = require("path");
const dir = process.argv[2];
const tahu = require(path.join(dir, "node_modules", "sparkplug-payload")).get("spBv1.0");
const Long = require(path.join(dir, "node_modules", "long"));
const version = require(path.join(dir, "node_modules", "sparkplug-payload", "package.json")).version;

function toTahu(v) {
  if (Array.isArray(v)) return v.map(toTahu);
  if (v !== null && typeof v === "object") {
    if (typeof v.$long === "string") return Long.fromString(v.$long, !v.$long.startsWith("-"));
    if (typeof v.$bytes === "string") return Buffer.from(v.$bytes, "base64");
    const o = {};
    for (const k of Object.keys(v)) o[k] = toTahu(v[k]);
    return o;
  }
  return v;
}

function fromTahu(v) {
  if (Long.isLong(v)) return { $long: v.toString() };
  if (v instanceof Uint8Array) return { $bytes: Buffer.from(v).toString("base64") };
  if (Array.isArray(v)) return v.map(fromTahu);
  if (v !== null && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v)) if (v[k] !== undefined) o[k] = fromTahu(v[k]);
    return o;
  }
  if (typeof v === "number" && !Number.isFinite(v)) return { $number: String(v) };
  return v;
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const req = JSON.parse(input);
  const out = { version: version, encoded: [], decoded: [] };
  for (const p of req.encode || []) {
    out.encoded.push(Buffer.from(tahu.encodePayload(toTahu(p))).toString("base64"));
  }
  for (const b of req.decode || []) {
    try {
      out.decoded.push(fromTahu(tahu.decodePayload(Buffer.from(b, "base64"))));
    } catch (e) {
      out.decoded.push({ error: String(e.message || e) });
    }
  }
  process.stdout.write(JSON.stringify(out));
});
