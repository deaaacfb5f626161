// NDNts applications run against a live forwarder, for the end-to-end tests: the `serve` and
// `get` subcommands of ../pyndn_daemon.py, with the same arguments and the same JSON lines, so
// one test drives either library.
//
// Each connects to the forwarder's unix socket with @ndn/node-transport's UnixTransport, in a
// logical forwarder (@ndn/fw) of its own, and prints one JSON object per line.
//
//   node ndnts_daemon.mjs serve SOCKET PREFIX... [--freshness MS] [--append COMP]
//                               [--prefix-suffix NAME] [--hold N]
//     Producer. Registers each PREFIX with rib/register (@ndn/nfdmgmt's invoke, a
//     digest-signed command) and prints {"ready": true, "face_id": F}, or
//     {"ready": false, ...} and exits 1. Then answers every Interest under a PREFIX and prints
//     {"interest": URI, "n": K, "can_be_prefix", "must_be_fresh"} for the K-th one (from 1),
//     when it arrives: Data named the Interest's name (plus /COMP with --append; plus the
//     components of NAME with --prefix-suffix when the Interest has CanBePrefix), Content
//     "K URI", FreshnessPeriod MS if given. With --hold N an Interest is answered only once
//     N are waiting; then all are, in the order they came, 50 ms apart (so that each Data
//     reaches the forwarder in a read of its own, and arrival order is the order it applies
//     them in, whichever forwarding shards they go to). Runs until the process is killed.
//
//   node ndnts_daemon.mjs get SOCKET STEP...
//     Consumer. STEP is "FLAGS:NAME" (FLAGS a comma list of fresh, prefix, plain;
//     "lifetime=MS" too, default 2000) or "sleep:MS". Each Interest step prints
//     {"name", "content", "freshness_period"} on Data and {"timeout": true} when none comes
//     within the lifetime (NDNts's forwarder drops Nacks, so a Nack shows as a timeout).

import { consume, produce } from "@ndn/endpoint";
import { Forwarder } from "@ndn/fw";
import { ControlParameters, invoke } from "@ndn/nfdmgmt";
import { UnixTransport } from "@ndn/node-transport";
import { AltUri, Data, digestSigning, Interest, Name } from "@ndn/packet";
import { parseArgs } from "node:util";

const emit = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
// Generic components without their "8=", as python-ndn prints them.
const uriOf = (name) => AltUri.ofName(name);

const decoder = new TextDecoder();
const encoder = new TextEncoder();

async function connect(socket) {
  const fw = Forwarder.create();
  const face = await UnixTransport.createFace({ fw }, socket);
  return { fw, face };
}

async function serve(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      freshness: { type: "string" },
      append: { type: "string" },
      "prefix-suffix": { type: "string" },
      hold: { type: "string", default: "0" },
    },
  });
  const [socket, ...prefixes] = positionals;
  if (!socket || prefixes.length === 0) {
    throw new Error("serve SOCKET PREFIX...");
  }
  const suffix = values["prefix-suffix"] ? new Name(values["prefix-suffix"]).comps : [];
  const hold = Number(values.hold);
  const { fw } = await connect(socket);

  let n = 0;
  const held = [];
  const handler = async (interest) => {
    const k = ++n;
    const uri = uriOf(interest.name);
    emit({
      interest: uri,
      n: k,
      can_be_prefix: interest.canBePrefix,
      must_be_fresh: interest.mustBeFresh,
    });
    let name = interest.name;
    if (values.append) {
      name = name.append(values.append);
    }
    if (interest.canBePrefix) {
      name = name.append(...suffix);
    }
    const data = new Data(name, encoder.encode(`${k} ${uri}`));
    if (values.freshness !== undefined) {
      data.freshnessPeriod = Number(values.freshness);
    }
    // Answered in arrival order, 50 ms apart, once `hold` Interests are waiting.
    const answered = new Promise((resolve) => held.push(() => resolve(data)));
    if (held.length >= hold) {
      held.splice(0).forEach((answer, i) => setTimeout(answer, 50 * i));
    }
    return answered;
  };

  let faceId;
  for (const prefix of prefixes) {
    produce(prefix, handler, {
      fw,
      dataSigner: digestSigning,
      // Every held Interest waits in the handler.
      concurrency: Math.max(hold, 1) + 64,
      announcement: false,
    });
    const resp = await invoke("rib/register", { name: new Name(prefix) }, { cOpts: { fw } });
    if (resp.statusCode !== 200) {
      emit({ ready: false, prefix, status_code: resp.statusCode, status_text: resp.statusText });
      process.exit(1);
    }
    faceId = ControlParameters.decodeFromResponseBody(resp).faceId;
  }
  emit({ ready: true, face_id: faceId });
}

async function express(fw, flags, uri) {
  let lifetime = 2000;
  const fields = [];
  for (const flag of flags) {
    if (flag === "fresh") {
      fields.push(Interest.MustBeFresh);
    } else if (flag === "prefix") {
      fields.push(Interest.CanBePrefix);
    } else if (flag.startsWith("lifetime=")) {
      lifetime = Number(flag.slice("lifetime=".length));
    } else if (flag !== "plain") {
      throw new Error(`unknown flag ${flag}`);
    }
  }
  const interest = new Interest(new Name(uri), ...fields, Interest.Lifetime(lifetime));
  try {
    const data = await consume(interest, { fw, retx: 0 });
    return {
      name: uriOf(data.name),
      content: decoder.decode(data.content),
      freshness_period: data.freshnessPeriod || null,
    };
  } catch (err) {
    if (/rejected: expire/.test(String(err))) {
      return { timeout: true };
    }
    return { error: String(err) };
  }
}

async function get(argv) {
  const [socket, ...steps] = argv;
  if (!socket || steps.length === 0) {
    throw new Error("get SOCKET STEP...");
  }
  const { fw, face } = await connect(socket);
  for (const step of steps) {
    const colon = step.indexOf(":");
    const flags = step.slice(0, colon);
    const rest = step.slice(colon + 1);
    if (flags === "sleep") {
      await new Promise((resolve) => setTimeout(resolve, Number(rest)));
      continue;
    }
    emit(await express(fw, flags.split(","), rest));
  }
  face.close();
  process.exit(0);
}

const [cmd, ...argv] = process.argv.slice(2);
const commands = { serve, get };
if (!commands[cmd]) {
  process.stderr.write(`usage: ndnts_daemon.mjs {${Object.keys(commands).join(",")}} ...\n`);
  process.exit(2);
}
await commands[cmd](argv);
