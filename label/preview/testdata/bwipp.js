// Reads a JSON list of requests ({"bcid": ..., "text": ..., "opts": {...}}) on standard input
// and writes, in the same order, what bwip-js (BWIPP) encodes for each: {"sbs": [...]}, the
// bar and space widths of a linear symbol in modules, or {"w": W, "h": H, "pixs": "0110..."},
// a 2D symbol's modules row by row (1 dark), or {"error": "..."}.
// Usage: node bwipp.js BWIPJS_DIR < requests.json
"use strict";
const path = require("path");
const bwipjs = require(path.join(process.argv[2], "node_modules", "bwip-js"));
const version = require(path.join(process.argv[2], "node_modules", "bwip-js", "package.json")).version;
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((r) => {
    try {
      const sym = bwipjs.raw(r.bcid, r.text, r.opts || {})[0];
      if (sym.sbs) {
        return { sbs: Array.from(sym.sbs) };
      }
      // Rows may be repeated (PDF417's row height): keep one of each.
      const w = sym.pixx, rows = [];
      for (let y = 0; y < sym.pixy; y++) {
        rows.push(Array.from(sym.pixs.slice(y * w, (y + 1) * w)).join(""));
      }
      return { w: w, h: rows.length, pixs: rows.join("") };
    } catch (e) {
      return { error: String(e.message || e) };
    }
  });
  process.stdout.write(JSON.stringify({ version: version, symbols: out }));
});
