// Serves the browser page of the tests and benchmark and collects what it reports.
//
//   node serve.mjs [--port P] [--count N]
//
// Bundles fetch.mjs and the @ndn/* packages it imports with esbuild (in memory: nothing is
// written), listens on 127.0.0.1 (port P, or one the kernel picks), and prints one JSON object
// per line on stdout: {"listening": "http://127.0.0.1:PORT/"} once it accepts connections, then
// {"result": R} for each result the page POSTs to /result (R as fetch.mjs describes it). Exits
// after N results (default 1). GET / is the page: any query string is the page's parameters.
// The page is loaded from http://127.0.0.1, a secure context, as WebTransport requires.

import { build } from "esbuild";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    count: { type: "string", default: "1" },
  },
});
let left = Number(values.count);
/** The largest result body accepted, in octets. */
const MAX_BODY = 1 << 20;

const bundle = await build({
  entryPoints: [fileURLToPath(new URL("fetch.mjs", import.meta.url))],
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  write: false,
  logLevel: "warning",
});
const script = bundle.outputFiles[0].contents;
const page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>NDN fetch</title>" +
  "<link rel=\"icon\" href=\"data:,\"></head><body><script type=\"module\" src=\"/fetch.js\"></script></body></html>";

const emit = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

const server = http.createServer((req, res) => {
  const path = new URL(req.url, "http://127.0.0.1").pathname;
  if (req.method === "GET" && path === "/") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end(page);
  } else if (req.method === "GET" && path === "/fetch.js") {
    res.writeHead(200, { "content-type": "text/javascript", "cache-control": "no-store" });
    res.end(script);
  } else if (req.method === "POST" && path === "/result") {
    const parts = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on("end", () => {
      let result;
      try {
        result = JSON.parse(Buffer.concat(parts).toString("utf8"));
      } catch (err) {
        result = { ok: false, stage: "report", error: `not JSON: ${err}` };
      }
      res.writeHead(204);
      res.end();
      emit({ result });
      if (--left <= 0) {
        server.close();
        server.closeAllConnections();
      }
    });
  } else {
    res.writeHead(404);
    res.end();
  }
});
server.listen(Number(values.port), "127.0.0.1", () => {
  emit({ listening: `http://127.0.0.1:${server.address().port}/` });
});
