"""python-ndn applications run against a live forwarder (Kite or NDNd), for the end-to-end tests.

Every subcommand connects to the forwarder's unix socket with python-ndn
(`UnixFace`, DigestSha256 keychain) and prints JSON, one object per line,
flushed at once so a test can read it while the process runs.

Usage
-----
    python pyndn_daemon.py serve SOCKET PREFIX... [--freshness MS] [--append COMP]
                                 [--prefix-suffix NAME] [--hold N]
                                 [--object-size N --segment-size S]
        Producer.  Registers each PREFIX with rib/register (as NDNApp.register
        does) and prints {"ready": true, "face_id": F} with the FaceId the
        forwarder's answer names, or {"ready": false, ...} and exits 1.
        Then answers every Interest under a PREFIX and prints
        {"interest": URI, "n": K, "can_be_prefix", "must_be_fresh"} for the
        K-th one (from 1), when it arrives.
          plain:   Data named the Interest's name (plus /COMP with
                   --append; plus the components of NAME, e.g. /a/b, with
                   --prefix-suffix when the Interest has CanBePrefix),
                   Content "K URI", FreshnessPeriod MS if given.
                   With --hold N an Interest is answered only once N are
                   waiting; then all are, in the order they came, 50 ms apart
                   (each Data in a read of its own at the forwarder, so that
                   arrival order is the order it applies them in, whichever
                   forwarding shards they go to).
          object:  with --object-size, a deterministic object of N octets cut
                   into S-octet segments under PREFIX/v=1/seg=I (FinalBlockId
                   on each); an Interest for PREFIX itself gets segment 0.
                   The ready line also carries "sha256" and "segments".
        Runs until the forwarder closes the connection or the process is
        killed.

    python pyndn_daemon.py get SOCKET STEP...
        Consumer.  STEP is "FLAGS:NAME" (FLAGS a comma list of fresh,
        prefix, plain; "lifetime=MS" too, default 2000) or "sleep:MS".  Each
        Interest step prints {"name", "content", "freshness_period"} on Data, {"nack": REASON} on
        a Nack, {"timeout": true} on a timeout.

    python pyndn_daemon.py fetch SOCKET PREFIX [--window W]
        Segmented fetch: the first Interest is PREFIX with CanBePrefix; then
        up to W Interests are outstanding at once (W=1: python-ndn's
        ndn.app_support.segment_fetcher).  Segments are joined in segment
        order.  Prints {"segments", "size", "sha256", "max_outstanding"} or
        {"error": ...}.

    python pyndn_daemon.py dataset SOCKET DATASET [--summary] [--timeout MS]
        Fetches /localhost/nfd/DATASET (e.g. status/general, faces/list)
        with segment_fetcher and prints its decoding by python-ndn's
        ndn.app_support.nfd_mgmt models as JSON (names as URIs, enums as
        numbers; lists for the repeated datasets).  With --summary (for
        datasets too large to print) it prints {"segments", "size",
        "items", "last"} instead: the count of top-level items and the
        last one decoded by the model.  --timeout is each Interest's lifetime
        (default 2000).

    python pyndn_daemon.py register-many SOCKET PREFIX [--rounds R] [--prefixes P]
        Registration as python-ndn's NDNApp.register makes it, back to back.
        One consumer connection stays open; each of R rounds opens a fresh
        producer connection, registers P prefixes PREFIX/r<round>/p<i> one
        after the other with NDNApp.register (v0.2 commands, millisecond
        timestamps), then the consumer sends one Interest under each, which
        the producer answers.  Prints {"round", "registered": [bool...],
        "answers": [...]} per round, each answer as `get` prints it, and
        closes the producer connection before the next round.

    python pyndn_daemon.py command SOCKET MODULE VERB [KEY=VALUE...]
        Sends a control command made by nfd_mgmt.make_command (keys:
        name, strategy, uri, local_uri as strings; face_id, cost, origin,
        flags, mask, expiration_period, face_persistency, mtu as numbers)
        and prints the ControlResponse: {"status_code", "status_text",
        "body": {field: value}}.  python-ndn's own parse_response is tried
        first; when its order-strict decoder refuses NFD's field order
        (Mtu after FacePersistency, as in UDP face answers) the response is
        read field by field and "lenient": true is added (also for answers with
        no ControlParameters, such as a 404, which parse_response cannot take).
"""

import argparse
import asyncio
import enum
import hashlib
import json
import sys

from ndn.app import NDNApp
from ndn.app_support import nfd_mgmt
from ndn.app_support.segment_fetcher import segment_fetcher
from ndn.encoding import Component, Name, NameField, parse_tl_num
from ndn.security import KeychainDigest
from ndn.transport.stream_face import UnixFace
from ndn.types import InterestNack, InterestTimeout

NUMERIC_KEYS = {
    "face_id", "cost", "origin", "flags", "mask", "expiration_period",
    "face_persistency", "mtu", "capacity", "count",
}


def emit(obj):
    print(json.dumps(obj), flush=True)


def new_app(sock):
    return NDNApp(face=UnixFace(sock), keychain=KeychainDigest())


def run_app(sock, body):
    """Runs `body(app)` on a fresh connection; returns its exit status."""
    app = new_app(sock)
    status = {"code": 0}

    async def after_start():
        try:
            status["code"] = await body(app) or 0
        finally:
            app.shutdown()

    asyncio.run(app.main_loop(after_start()))
    return status["code"]


def object_bytes(size):
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[:size])


def jsonable(value):
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, list):
        # A name outside a model (parse_response's "name") is a list of component TLVs.
        if value and all(isinstance(c, (bytes, bytearray, memoryview)) for c in value):
            return Name.to_str(value)
        return [jsonable(v) for v in value]
    if hasattr(value, "_encoded_fields"):
        return {f.name: Name.to_str(getattr(value, f.name)) if isinstance(f, NameField)
                else jsonable(getattr(value, f.name)) for f in value._encoded_fields}
    return value


async def register(app, prefix):
    """rib/register as NDNApp.register sends it; returns the decoded response."""
    _, _, reply = await app.express_interest(
        nfd_mgmt.make_command("rib", "register", app.face, name=prefix), lifetime=2000)
    return decode_response(reply)


def cmd_serve(args):
    prefix = Name.from_str(args.prefixes[0])
    suffix = Name.from_str(args.prefix_suffix) if args.prefix_suffix else []
    counter = {"n": 0}
    held = []
    segments = []
    if args.object_size is not None:
        blob = object_bytes(args.object_size)
        segments = [blob[i:i + args.segment_size]
                    for i in range(0, len(blob), args.segment_size)]
        base = prefix + [Component.from_version(1)]
        last = Component.from_segment(len(segments) - 1)

    async def body(app):
        def on_interest(name, param, _app_param):
            counter["n"] += 1
            uri = Name.to_str(name)
            emit({"interest": uri, "n": counter["n"], "can_be_prefix": bool(param.can_be_prefix),
                  "must_be_fresh": bool(param.must_be_fresh)})
            if segments:
                index = 0
                if len(name) > len(prefix) and Component.get_type(name[-1]) == Component.TYPE_SEGMENT:
                    index = Component.to_number(name[-1])
                if index >= len(segments):
                    return
                app.put_data(base + [Component.from_segment(index)], segments[index],
                             final_block_id=last, freshness_period=10000)
                return
            data_name = name + [Component.from_str(args.append)] if args.append else name
            if param.can_be_prefix:
                data_name = data_name + suffix
            kwargs = {}
            if args.freshness is not None:
                kwargs["freshness_period"] = args.freshness
            content = f"{counter['n']} {uri}".encode()
            held.append(lambda: app.put_data(data_name, content, **kwargs))
            if len(held) >= args.hold:
                loop = asyncio.get_running_loop()
                for i, answer in enumerate(held):
                    loop.call_later(0.05 * i, answer)
                held.clear()

        for p in args.prefixes:
            app.set_interest_filter(p, on_interest)
            resp = await register(app, p)
            if resp["status_code"] != 200:
                emit({"ready": False, "prefix": p, "response": resp})
                return 1
        ready = {"ready": True, "face_id": resp["body"].get("face_id")}
        if segments:
            ready["sha256"] = hashlib.sha256(b"".join(segments)).hexdigest()
            ready["segments"] = len(segments)
        emit(ready)
        await asyncio.Event().wait()

    return run_app(args.socket, body)


async def express(app, flags, name):
    lifetime = 2000
    kw = {"must_be_fresh": False, "can_be_prefix": False}
    for flag in flags:
        if flag == "fresh":
            kw["must_be_fresh"] = True
        elif flag == "prefix":
            kw["can_be_prefix"] = True
        elif flag.startswith("lifetime="):
            lifetime = int(flag.split("=", 1)[1])
        elif flag != "plain":
            raise SystemExit(f"unknown flag {flag}")
    try:
        data_name, meta, content = await app.express_interest(name, lifetime=lifetime, **kw)
        return {"name": Name.to_str(data_name),
                "content": bytes(content or b"").decode("utf-8", "backslashreplace"),
                "freshness_period": meta.freshness_period}
    except InterestNack as e:
        return {"nack": e.reason}
    except InterestTimeout:
        return {"timeout": True}


def cmd_get(args):
    async def body(app):
        for step in args.steps:
            flags, _, rest = step.partition(":")
            if flags == "sleep":
                await asyncio.sleep(int(rest) / 1000)
                continue
            emit(await express(app, flags.split(","), rest))

    return run_app(args.socket, body)


async def fetch_window(app, prefix, window):
    first_name, meta, content = await app.express_interest(
        prefix, can_be_prefix=True, must_be_fresh=True, lifetime=4000)
    base = first_name[:-1]
    final = Component.to_number(meta.final_block_id)
    parts = {0: bytes(content)}
    outstanding = set()
    state = {"max": 1}
    next_seg = 1

    async def one(seg):
        for _ in range(3):
            try:
                _, _, c = await app.express_interest(
                    base + [Component.from_segment(seg)], must_be_fresh=True, lifetime=4000)
                return seg, bytes(c)
            except InterestTimeout:
                continue
        raise InterestTimeout()

    while next_seg <= final or outstanding:
        while next_seg <= final and len(outstanding) < window:
            outstanding.add(asyncio.ensure_future(one(next_seg)))
            next_seg += 1
        state["max"] = max(state["max"], len(outstanding))
        done, outstanding = await asyncio.wait(outstanding, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            seg, c = task.result()
            parts[seg] = c
    blob = b"".join(parts[i] for i in range(final + 1))
    return blob, len(parts), state["max"]


def cmd_fetch(args):
    async def body(app):
        try:
            if args.window == 1:
                chunks = [bytes(c) async for c in segment_fetcher(app, args.prefix, timeout=4000)]
                blob, count, most = b"".join(chunks), len(chunks), 1
            else:
                blob, count, most = await fetch_window(app, args.prefix, args.window)
        except (InterestNack, InterestTimeout) as e:
            emit({"error": type(e).__name__})
            return 1
        emit({"segments": count, "size": len(blob), "sha256": hashlib.sha256(blob).hexdigest(),
              "max_outstanding": most})

    return run_app(args.socket, body)


def cmd_register_many(args):
    consumer = new_app(args.socket)

    async def rounds():
        for r in range(args.rounds):
            producer = new_app(args.socket)
            done = asyncio.get_running_loop().create_future()

            async def body(app=producer, r=r, done=done):
                def on_interest(name, _param, _app_param, app=app):
                    app.put_data(name, Name.to_str(name).encode(), freshness_period=0)

                prefixes = [f"{args.prefix}/r{r}/p{i}" for i in range(args.prefixes)]
                registered = []
                # Each register() is awaited before the next, as an application registers
                # its prefixes at start.
                for p in prefixes:
                    try:
                        registered.append(await app.register(p, on_interest))
                    except AttributeError:  # python-ndn cannot parse a 403 without a body
                        registered.append(False)
                answers = [await express(consumer, ["plain"], p + "/x") for p in prefixes]
                done.set_result({"round": r, "registered": registered, "answers": answers})
                app.shutdown()

            await producer.main_loop(body())
            emit(await done)
        consumer.shutdown()

    asyncio.run(consumer.main_loop(rounds()))
    return 0


DATASETS = {
    "status/general": (nfd_mgmt.GeneralStatus, None),
    "faces/list": (nfd_mgmt.FaceStatusMsg, "face_status"),
    "fib/list": (nfd_mgmt.FibStatus, "entries"),
    "rib/list": (nfd_mgmt.RibStatus, "entries"),
    "strategy-choice/list": (nfd_mgmt.StrategyChoiceMsg, "strategy_choices"),
    "cs/info": (nfd_mgmt.CsInfo, None),
}


def cmd_dataset(args):
    model, field = DATASETS[args.dataset]

    async def body(app):
        chunks = [bytes(c) async for c in segment_fetcher(
            app, "/localhost/nfd/" + args.dataset, timeout=args.timeout)]
        payload = b"".join(chunks)
        if args.summary:
            items = [whole for _, _, whole in tlv_items(payload)]
            last = model.parse(items[-1]) if items else None
            emit({"segments": len(chunks), "size": len(payload), "items": len(items),
                  "last": jsonable(getattr(last, field) if field else last) if last else None})
            return
        if model is nfd_mgmt.CsInfo:
            _, n = parse_tl_num(payload, 0)
            ln, m = parse_tl_num(payload, n)
            payload = payload[n + m:n + m + ln]
        parsed = model.parse(payload)
        emit(jsonable(getattr(parsed, field) if field else parsed) or [])

    return run_app(args.socket, body)


def tlv_items(buf):
    """(type, value, whole element) of each TLV element in `buf`."""
    offset = 0
    while offset < len(buf):
        typ, n = parse_tl_num(buf, offset)
        ln, m = parse_tl_num(buf, offset + n)
        start = offset + n + m
        yield typ, buf[start:start + ln], buf[offset:start + ln]
        offset = start + ln


def lenient_response(reply):
    fields = {0x69: "face_id", 0x72: "uri", 0x81: "local_uri", 0x6f: "origin", 0x6a: "cost",
              0x6c: "flags", 0x6d: "expiration_period", 0x85: "face_persistency", 0x89: "mtu"}
    out = {"status_code": None, "status_text": None, "body": {}, "lenient": True}
    (_, inner, _), = list(tlv_items(bytes(reply)))
    for typ, val, _ in tlv_items(inner):
        if typ == 0x66:
            out["status_code"] = int.from_bytes(val, "big")
        elif typ == 0x67:
            out["status_text"] = val.decode()
        elif typ == 0x68:
            for t, v, _ in tlv_items(val):
                if t == 0x07:
                    out["body"]["name"] = Name.to_str([c for _, _, c in tlv_items(v)])
                elif t in (0x72, 0x81):
                    out["body"][fields[t]] = v.decode()
                elif t in fields:
                    out["body"][fields[t]] = int.from_bytes(v, "big")
    return out


def decode_response(reply):
    try:
        r = nfd_mgmt.parse_response(reply)
    except Exception:  # python-ndn's strict field order, or no body (e.g. a 404): see the top
        return lenient_response(reply)
    body = {k: jsonable(v) for k, v in r.items()
            if k not in ("status_code", "status_text") and v is not None}
    return {"status_code": r["status_code"], "status_text": jsonable(r["status_text"]),
            "body": body}


def cmd_command(args):
    kwargs = {}
    for kv in args.params:
        key, _, value = kv.partition("=")
        kwargs[key] = int(value) if key in NUMERIC_KEYS else value

    async def body(app):
        try:
            _, _, reply = await app.express_interest(
                nfd_mgmt.make_command(args.module, args.verb, app.face, **kwargs), lifetime=4000)
        except (InterestNack, InterestTimeout) as e:
            emit({"error": type(e).__name__})
            return 1
        emit(decode_response(reply))

    return run_app(args.socket, body)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("socket")
    s.add_argument("prefixes", nargs="+", metavar="prefix")
    s.add_argument("--freshness", type=int)
    s.add_argument("--append")
    s.add_argument("--prefix-suffix")
    s.add_argument("--hold", type=int, default=0)
    s.add_argument("--object-size", type=int)
    s.add_argument("--segment-size", type=int, default=8000)
    s.set_defaults(func=cmd_serve)
    g = sub.add_parser("get")
    g.add_argument("socket")
    g.add_argument("steps", nargs="+")
    g.set_defaults(func=cmd_get)
    f = sub.add_parser("fetch")
    f.add_argument("socket")
    f.add_argument("prefix")
    f.add_argument("--window", type=int, default=1)
    f.set_defaults(func=cmd_fetch)
    d = sub.add_parser("dataset")
    d.add_argument("socket")
    d.add_argument("dataset", choices=sorted(DATASETS))
    d.add_argument("--summary", action="store_true")
    d.add_argument("--timeout", type=int, default=2000)
    d.set_defaults(func=cmd_dataset)
    m = sub.add_parser("register-many")
    m.add_argument("socket")
    m.add_argument("prefix")
    m.add_argument("--rounds", type=int, default=50)
    m.add_argument("--prefixes", type=int, default=4)
    m.set_defaults(func=cmd_register_many)
    c = sub.add_parser("command")
    c.add_argument("socket")
    c.add_argument("module")
    c.add_argument("verb")
    c.add_argument("params", nargs="*")
    c.set_defaults(func=cmd_command)
    args = p.parse_args()
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
