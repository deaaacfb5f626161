// The page script of the browser tests and benchmark: fetches one Data or a segmented object
// through a WebTransport (HTTP/3 datagrams, @ndn/quic-transport) or WebSocket
// (@ndn/ws-transport) face of a forwarder, and POSTs what it got to /result on the server
// that served the page (serve.mjs). Bundled by serve.mjs with esbuild when it starts.
//
// Parameters, in the page's query string:
//   transport  wt | ws
//   url        the forwarder's face: https://HOST:PORT/ndn for wt, ws://HOST:PORT/ for ws
//   hash       (wt) SHA-256 of the server's certificate, hex or base64: passed as
//              serverCertificateHashes, so a self-signed certificate is accepted
//   name       what to fetch
//   mode       data: one Interest for `name`, the Data's Content is the result;
//              object: a segmented object, `name` versioned, or else its version discovered
//              by RDR metadata (an Interest for NAME/32=metadata, CanBePrefix, MustBeFresh,
//              whose Data holds the versioned Name)
//   lifetime   InterestLifetime in ms of the single Interest and of RDR discovery (4000)
//   highwater  (wt) the session's datagrams.incomingHighWaterMark, in datagrams: how many
//              received datagrams Chromium queues for the page before it drops the oldest
//              (unset: the browser's default; @ndn/quic-transport sets none)
//
// The result, as JSON: {ok: true, name, bytes, sha256 (hex), connect_ms, fetch_ms, mtu,
// highwater (wt: the session's incomingHighWaterMark), segments, interests (sent for the
// segments, retransmissions included), user_agent}, or
// {ok: false, error, stage}.

import { consume } from "@ndn/endpoint";
import { Forwarder } from "@ndn/fw";
import { Component, Interest, Name } from "@ndn/packet";
import { H3Transport } from "@ndn/quic-transport";
import { fetch as fetchObject } from "@ndn/segmented-object";
import { Decoder } from "@ndn/tlv";
import { fromHex, toHex } from "@ndn/util";
import { WsTransport } from "@ndn/ws-transport";

const params = new URLSearchParams(location.search);
const param = (key, fallback) => {
  const v = params.get(key);
  if (v === null || v === "") {
    if (fallback === undefined) {
      throw new Error(`no ${key} in the query string`);
    }
    return fallback;
  }
  return v;
};

/** NDN naming conventions rev. 3: KeywordNameComponent and VersionNameComponent. */
const KEYWORD = 0x20;
const VERSION = 0x36;

/** A certificate hash written in hex or in base64, as octets. */
function hashOctets(text) {
  if (/^[0-9a-fA-F]{64}$/.test(text)) {
    return fromHex(text);
  }
  const bin = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const out = Uint8Array.from(bin, (c) => c.codePointAt(0));
  if (out.length !== 32) {
    throw new Error(`the certificate hash has ${out.length} octets, not 32`);
  }
  return out;
}

/** The WebTransport session's datagrams.incomingHighWaterMark, once it is made. */
let incomingHighWaterMark;

async function connect(fw, transport, url) {
  let mtu;
  const opts = { fw, callback: (tr) => { mtu = tr.mtu; } };
  let face;
  if (transport === "wt") {
    if (!H3Transport.supported) {
      throw new Error("this browser has no WebTransport");
    }
    const hash = params.get("hash");
    const wtOpts = hash ? { serverCertificateHashes: [{ algorithm: "sha-256", value: hashOctets(hash) }] } : {};
    // @ndn/quic-transport constructs the session itself; a subclass sees it, to report the
    // queue's mark and set it when asked.
    const highWater = params.get("highwater");
    const Base = globalThis.WebTransport;
    globalThis.WebTransport = class extends Base {
      constructor(...args) {
        super(...args);
        if (highWater) {
          this.datagrams.incomingHighWaterMark = Number(highWater);
        }
        incomingHighWaterMark = this.datagrams.incomingHighWaterMark;
      }
    };
    face = await H3Transport.createFace(opts, url, wtOpts);
  } else if (transport === "ws") {
    face = await WsTransport.createFace(opts, url);
  } else {
    throw new Error(`transport ${transport}: wt or ws`);
  }
  return { face, mtu };
}

async function discover(fw, name, lifetime) {
  const interest = new Interest(name.append(new Component(KEYWORD, "metadata")),
    Interest.CanBePrefix, Interest.MustBeFresh, Interest.Lifetime(lifetime));
  const data = await consume(interest, { fw, retx: 2 });
  return new Decoder(data.content).decode(Name);
}

async function run() {
  const transport = param("transport");
  const url = param("url");
  const mode = param("mode", "object");
  const lifetime = Number(param("lifetime", "4000"));
  let name = new Name(param("name"));
  const fw = Forwarder.create();
  let stage = "connect";
  try {
    const t0 = performance.now();
    const { face, mtu } = await connect(fw, transport, url);
    const t1 = performance.now();
    stage = "fetch";
    let content;
    let segments = 1;
    let interests = 1;
    if (mode === "data") {
      const data = await consume(new Interest(name, Interest.Lifetime(lifetime)), { fw, retx: 2 });
      content = data.content;
    } else if (mode === "object") {
      if (name.get(-1)?.type !== VERSION) {
        name = await discover(fw, name, lifetime);
      }
      interests = 0;
      const result = fetchObject(name, { fw, modifyInterest: () => { ++interests; } });
      content = await result;
      segments = result.count;
    } else {
      throw new Error(`mode ${mode}: data or object`);
    }
    const t2 = performance.now();
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", content));
    face.close();
    return {
      ok: true,
      name: name.toString(),
      bytes: content.length,
      sha256: toHex(digest).toLowerCase(),
      connect_ms: t1 - t0,
      fetch_ms: t2 - t1,
      mtu,
      highwater: incomingHighWaterMark,
      segments,
      interests,
      user_agent: navigator.userAgent,
    };
  } catch (err) {
    return { ok: false, stage, error: String(err?.stack ?? err) };
  }
}

const result = await run().catch((err) => ({ ok: false, stage: "setup", error: String(err) }));
document.body.textContent = JSON.stringify(result);
await globalThis.fetch("/result", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(result),
});
