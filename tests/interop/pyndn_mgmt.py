"""Cross-implementation vectors for the NFD management protocol, Kite <-> python-ndn (0.5.x).

Usage
-----
    python pyndn_mgmt.py gen --seed S --count N --out FILE
        Write N random cases per kind, encoded by python-ndn's
        `ndn.app_support.nfd_mgmt` models, as a JSON array.  Same seed, same file.

    python pyndn_mgmt.py commands --out FILE
        Write command Interests made by python-ndn's `make_command` (signed
        command Interest v0.2, DigestSha256) and `make_command_v2` signed as a
        v0.3 signed Interest: {"form", "wire", "module", "verb", "fields"
        (control_parameters), "timestamp"}.

    python pyndn_mgmt.py check --in FILE
        Decode every case's "wire" (written by Kite) with python-ndn and compare
        its fields with the case's.  Prints "case I: ok" or "case I: FAIL <why>"
        per case, then "N passed, M failed".  Exits 1 if the file is empty.

Schema
------
Each case: {"kind", "wire" (lowercase hex), "fields"}.  Names are the hex of a
whole Name TLV, strings are JSON strings, numbers JSON numbers, absent
optional fields null.

  control_parameters: name, face_id, uri, local_uri, origin, cost, capacity,
      count, flags, mask, strategy (a name), expiration_period,
      face_persistency, base_congestion_marking_interval,
      default_congestion_threshold, mtu
  control_response:   status_code, status_text, body (control_parameters
      fields, or null)
  face_status:        face_id, uri, local_uri, expiration_period, face_scope,
      face_persistency, link_type, base_congestion_marking_interval,
      default_congestion_threshold, mtu, n_in_interests, n_in_data,
      n_in_nacks, n_out_interests, n_out_data, n_out_nacks, n_in_bytes,
      n_out_bytes, flags                    (wire: one FaceStatus element)
  face_query_filter:  face_id, uri_scheme, uri, local_uri, face_scope,
      face_persistency, link_type           (wire: FaceQueryFilter element)
  face_event:         kind, face_id, uri, local_uri, face_scope,
      face_persistency, link_type, flags    (wire: FaceEventNotification)
  fib_entry:          name, next_hops [[face_id, cost], ...]
  rib_entry:          name, routes [{face_id, origin, cost, flags,
      expiration_period}, ...]
  strategy_choice:    name, strategy
  forwarder_status:   nfd_version, start_timestamp, current_timestamp,
      n_name_tree_entries, n_fib_entries, n_pit_entries,
      n_measurements_entries, n_cs_entries, n_in_interests, n_in_data,
      n_in_nacks, n_out_interests, n_out_data, n_out_nacks,
      n_satisfied_interests, n_unsatisfied_interests   (wire: the fields
      with no outer element, as the status/general Content)
  cs_info:            capacity, flags, n_cs_entries, n_hits, n_misses
                                            (wire: one CsInfo element, 128)

Known divergence
----------------
python-ndn's ControlParameters model orders BaseCongestionMarkingInterval,
DefaultCongestionThreshold and Mtu before Flags, Mask, Strategy,
ExpirationPeriod and FacePersistency, and its decoder is order-strict, so a
ControlParameters in NFD's order that holds fields of both groups fails to
decode (135 and 137 are critical) or loses DefaultCongestionThreshold (136 is
not).  Kite keeps NFD's order; its test expects exactly those cases to fail.
"""

import argparse
import json
import random
import sys

from ndn.app_support.nfd_mgmt import (ControlParameters, ControlParametersValue,
                                      ControlResponse, CsInfo, FaceEventNotification,
                                      FaceEventNotificationValue, FaceQueryFilter,
                                      FaceQueryFilterValue, FaceStatus, FaceStatusMsg,
                                      FibEntry, FibStatus, GeneralStatus, NextHopRecord,
                                      RibEntry, RibStatus, Route, Strategy, StrategyChoice,
                                      StrategyChoiceMsg)
from ndn.encoding import ModelField, Name, TlvModel


class CsInfoMsg(TlvModel):
    """The cs/info payload: CsInfo inside its outer element (128)."""
    info = ModelField(0x80, CsInfo)


CP_FIELDS = [  # (schema key, python-ndn attribute)
    ("name", "name"), ("face_id", "face_id"), ("uri", "uri"), ("local_uri", "local_uri"),
    ("origin", "origin"), ("cost", "cost"), ("capacity", "capacity"), ("count", "count"),
    ("flags", "flags"), ("mask", "mask"), ("strategy", "strategy"),
    ("expiration_period", "expiration_period"), ("face_persistency", "face_persistency"),
    ("base_congestion_marking_interval", "base_congestion_mark_interval"),
    ("default_congestion_threshold", "default_congestion_threshold"), ("mtu", "mtu"),
]
FACE_STATUS_FIELDS = [
    "face_id", "uri", "local_uri", "expiration_period", "face_scope", "face_persistency",
    "link_type", "base_congestion_marking_interval", "default_congestion_threshold", "mtu",
    "n_in_interests", "n_in_data", "n_in_nacks", "n_out_interests", "n_out_data",
    "n_out_nacks", "n_in_bytes", "n_out_bytes", "flags",
]
FACE_STATUS_ATTR = {"base_congestion_marking_interval": "base_congestion_mark_interval"}
FILTER_FIELDS = ["face_id", "uri_scheme", "uri", "local_uri", "face_scope",
                 "face_persistency", "link_type"]
EVENT_FIELDS = ["kind", "face_id", "uri", "local_uri", "face_scope", "face_persistency",
                "link_type", "flags"]
EVENT_ATTR = {"kind": "face_event_kind"}
GENERAL_FIELDS = [
    "nfd_version", "start_timestamp", "current_timestamp", "n_name_tree_entries",
    "n_fib_entries", "n_pit_entries", "n_measurements_entries", "n_cs_entries",
    "n_in_interests", "n_in_data", "n_in_nacks", "n_out_interests", "n_out_data",
    "n_out_nacks", "n_satisfied_interests", "n_unsatisfied_interests",
]
GENERAL_ATTR = {"n_measurements_entries": "n_measurement_entries"}
CS_FIELDS = ["capacity", "flags", "n_cs_entries", "n_hits", "n_misses"]
STRING_KEYS = {"uri", "local_uri", "uri_scheme", "nfd_version", "status_text"}


def name_hex(name):
    return bytes(Name.encode(name)).hex()


def plain(v):
    """A decoded python-ndn value as a schema value."""
    if v is None:
        return None
    if hasattr(v, "value"):  # Enum / Flag
        return int(v.value)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).decode()
    return v


# ---------------------------------------------------------------- generation

class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def maybe(self, f, p=0.5):
        return f() if self.r.random() < p else None

    def num(self):
        return self.r.choice([0, 1, 255, 256, 65535, 65536, 2**32 - 1, 2**32,
                              self.r.randrange(2**63)])

    def text(self):
        return self.r.choice(["udp4://192.0.2.1:6363", "fd://19", "unix:///run/nfd/nfd.sock",
                              "tcp6://[2001:db8::1]:6363", "ether://[01:00:5e:00:17:aa]",
                              "dev://eth0", "", "internal://"])

    def name(self):
        comps = ["".join(self.r.choice("abcxyz0-_.") for _ in range(self.r.randrange(1, 6)))
                 for _ in range(self.r.randrange(0, 5))]
        return "/" + "/".join(comps)

    def control_parameters_value(self):
        v = ControlParametersValue()
        fields = {}
        makers = {
            "name": self.name, "face_id": self.num, "uri": self.text, "local_uri": self.text,
            "origin": lambda: self.r.choice([0, 64, 65, 66, 128, 129, 255]),
            "cost": self.num, "capacity": self.num, "count": self.num, "flags": self.num,
            "mask": self.num, "strategy": self.name, "expiration_period": self.num,
            "face_persistency": lambda: self.r.randrange(3),
            "base_congestion_marking_interval": self.num,
            "default_congestion_threshold": self.num, "mtu": self.num,
        }
        for key, attr in CP_FIELDS:
            val = self.maybe(makers[key], 0.4)
            if val is None:
                fields[key] = None
                continue
            if key == "strategy":
                s = Strategy()
                s.name = val
                v.strategy = s
                fields[key] = name_hex(Name.from_str(val))
            elif key == "name":
                v.name = val
                fields[key] = name_hex(Name.from_str(val))
            else:
                setattr(v, attr, val)
                fields[key] = val
        return v, fields

    def face_status(self):
        s = FaceStatus()
        fields = {}
        for key in FACE_STATUS_FIELDS:
            optional = key in ("expiration_period", "base_congestion_marking_interval",
                               "default_congestion_threshold", "mtu")
            if key in ("uri", "local_uri"):
                val = self.text()
            elif key == "face_scope":
                val = self.r.randrange(2)
            elif key in ("face_persistency", "link_type"):
                val = self.r.randrange(3)
            elif key == "flags":
                val = self.r.randrange(8)
            else:
                val = self.num()
            if optional and self.r.random() < 0.4:
                val = None
            fields[key] = val
            if val is not None:
                setattr(s, FACE_STATUS_ATTR.get(key, key), val)
        return s, fields


def gen_cases(seed, count):
    g = Gen(seed)
    cases = []

    def add(kind, wire, fields):
        cases.append({"kind": kind, "wire": bytes(wire).hex(), "fields": fields})

    for _ in range(count):
        cp = ControlParameters()
        cp.cp, fields = g.control_parameters_value()
        add("control_parameters", cp.encode(), fields)

        cr = ControlResponse()
        cr.status_code = g.r.choice([200, 400, 403, 404, 409, 410, 414, 500, 504])
        cr.status_text = g.r.choice(["Success", "failed in validating parameters", ""])
        body = None
        if g.r.random() < 0.5:
            cr.body, body = g.control_parameters_value()
        msg = bytes([0x65]) + encode_len(len(cr.encode())) + bytes(cr.encode())
        add("control_response", msg,
            {"status_code": cr.status_code, "status_text": cr.status_text, "body": body})

        msg = FaceStatusMsg()
        fs, fields = g.face_status()
        msg.face_status = [fs]
        add("face_status", msg.encode(), fields)

        qf = FaceQueryFilter()
        qf.face_query_filter = FaceQueryFilterValue()
        fields = {}
        for key in FILTER_FIELDS:
            if key in ("uri_scheme",):
                val = g.maybe(lambda: g.r.choice(["udp4", "tcp4", "unix", "ether"]))
            elif key in ("uri", "local_uri"):
                val = g.maybe(g.text)
            elif key == "face_scope":
                val = g.maybe(lambda: g.r.randrange(2))
            elif key in ("face_persistency", "link_type"):
                val = g.maybe(lambda: g.r.randrange(3))
            else:
                val = g.maybe(g.num)
            fields[key] = val
            if val is not None:
                setattr(qf.face_query_filter, key, val)
        add("face_query_filter", qf.encode(), fields)

        ev = FaceEventNotification()
        ev.event = FaceEventNotificationValue()
        fields = {"kind": g.r.randrange(1, 5), "face_id": g.num(), "uri": g.text(),
                  "local_uri": g.text(), "face_scope": g.r.randrange(2),
                  "face_persistency": g.r.randrange(3), "link_type": g.r.randrange(3),
                  "flags": g.r.randrange(8)}
        for key, val in fields.items():
            setattr(ev.event, EVENT_ATTR.get(key, key), val)
        add("face_event", ev.encode(), fields)

        fib = FibStatus()
        e = FibEntry()
        nm = g.name()
        e.name = nm
        hops = [[g.num(), g.num()] for _ in range(g.r.randrange(0, 4))]
        e.next_hop_records = []
        for face, cost in hops:
            h = NextHopRecord()
            h.face_id, h.cost = face, cost
            e.next_hop_records.append(h)
        fib.entries = [e]
        add("fib_entry", fib.encode(), {"name": name_hex(Name.from_str(nm)), "next_hops": hops})

        rib = RibStatus()
        e = RibEntry()
        nm = g.name()
        e.name = nm
        routes = []
        e.routes = []
        for _ in range(g.r.randrange(0, 4)):
            rt = {"face_id": g.num(), "origin": g.r.choice([0, 65, 128, 129, 255]),
                  "cost": g.num(), "flags": g.r.randrange(4),
                  "expiration_period": g.maybe(g.num)}
            route = Route()
            for key, val in rt.items():
                if val is not None:
                    setattr(route, key, val)
            e.routes.append(route)
            routes.append(rt)
        rib.entries = [e]
        add("rib_entry", rib.encode(), {"name": name_hex(Name.from_str(nm)), "routes": routes})

        sc = StrategyChoiceMsg()
        c = StrategyChoice()
        nm, st = g.name(), "/localhost/nfd/strategy/best-route/v=5"
        c.name = nm
        c.strategy = Strategy()
        c.strategy.name = st
        sc.strategy_choices = [c]
        add("strategy_choice", sc.encode(),
            {"name": name_hex(Name.from_str(nm)), "strategy": name_hex(Name.from_str(st))})

        gs = GeneralStatus()
        fields = {}
        for key in GENERAL_FIELDS:
            val = g.r.choice(["NFD 24.07", "kite 0.1.0", ""]) if key == "nfd_version" else g.num()
            fields[key] = val
            setattr(gs, GENERAL_ATTR.get(key, key), val)
        add("forwarder_status", gs.encode(), fields)

        cs = CsInfoMsg()
        cs.info = CsInfo()
        fields = {key: g.num() for key in CS_FIELDS}
        for key, val in fields.items():
            setattr(cs.info, key, val)
        add("cs_info", cs.encode(), fields)
    return cases


def encode_len(n):
    if n < 253:
        return bytes([n])
    if n < 65536:
        return bytes([253]) + n.to_bytes(2, "big")
    return bytes([254]) + n.to_bytes(4, "big")


# ---------------------------------------------------------------- checking

def cp_fields(v):
    out = {}
    for key, attr in CP_FIELDS:
        val = getattr(v, attr)
        if val is None:
            out[key] = None
        elif key == "name":
            out[key] = name_hex(val)
        elif key == "strategy":
            out[key] = name_hex(val.name)
        else:
            out[key] = plain(val)
    return out


def only_element(models):
    if len(models) != 1:
        raise ValueError(f"{len(models)} elements where one was written")
    return models[0]


def decode(kind, wire):
    if kind == "control_parameters":
        return cp_fields(ControlParameters.parse(wire).cp)
    if kind == "control_response":
        from ndn.encoding import parse_and_check_tl
        cr = ControlResponse.parse(parse_and_check_tl(memoryview(wire), 0x65))
        return {"status_code": cr.status_code, "status_text": plain(cr.status_text),
                "body": None if cr.body is None else cp_fields(cr.body)}
    if kind == "face_status":
        s = only_element(FaceStatusMsg.parse(wire).face_status)
        return {k: plain(getattr(s, FACE_STATUS_ATTR.get(k, k))) for k in FACE_STATUS_FIELDS}
    if kind == "face_query_filter":
        f = FaceQueryFilter.parse(wire).face_query_filter
        return {k: plain(getattr(f, k)) for k in FILTER_FIELDS}
    if kind == "face_event":
        e = FaceEventNotification.parse(wire).event
        return {k: plain(getattr(e, EVENT_ATTR.get(k, k))) for k in EVENT_FIELDS}
    if kind == "fib_entry":
        e = only_element(FibStatus.parse(wire).entries)
        return {"name": name_hex(e.name),
                "next_hops": [[h.face_id, h.cost] for h in e.next_hop_records or []]}
    if kind == "rib_entry":
        e = only_element(RibStatus.parse(wire).entries)
        return {"name": name_hex(e.name),
                "routes": [{"face_id": r.face_id, "origin": r.origin, "cost": r.cost,
                            "flags": plain(r.flags), "expiration_period": r.expiration_period}
                           for r in e.routes or []]}
    if kind == "strategy_choice":
        c = only_element(StrategyChoiceMsg.parse(wire).strategy_choices)
        return {"name": name_hex(c.name), "strategy": name_hex(c.strategy.name)}
    if kind == "forwarder_status":
        s = GeneralStatus.parse(wire)
        return {k: plain(getattr(s, GENERAL_ATTR.get(k, k))) for k in GENERAL_FIELDS}
    if kind == "cs_info":
        c = CsInfoMsg.parse(wire).info
        return {k: plain(getattr(c, k)) for k in CS_FIELDS}
    raise ValueError(f"unknown kind {kind}")


def check(path):
    with open(path) as f:
        cases = json.load(f)
    passed = failed = 0
    for i, case in enumerate(cases):
        try:
            got = decode(case["kind"], bytes.fromhex(case["wire"]))
            why = None if got == case["fields"] else f"python-ndn read {json.dumps(got)}"
        except Exception as e:  # noqa: BLE001 - every decoder error is a finding
            why = f"python-ndn error: {e}"
        if why is None:
            passed += 1
            print(f"case {i}: ok")
        else:
            failed += 1
            print(f"case {i}: FAIL {case['kind']}: {why}")
    print(f"{passed} passed, {failed} failed")
    return 0 if cases else 1


def command_cases():
    import struct
    from ndn.app_support.nfd_mgmt import make_command, make_command_v2
    from ndn.encoding import Component, InterestParam, make_interest, parse_interest
    from ndn.security import DigestSha256Signer

    requests = [
        ("rib", "register", {"name": "/a/b", "face_id": 300, "cost": 5, "origin": 255}),
        ("rib", "unregister", {"name": "/a"}),
        ("faces", "create", {"uri": "udp4://192.0.2.1:6363", "face_persistency": 2}),
        ("faces", "update", {"flags": 1, "mask": 1}),
        ("fib", "add-nexthop", {"name": "/x", "face_id": 256, "cost": 10}),
        ("strategy-choice", "set", {"name": "/", "strategy": "/localhost/nfd/strategy/asf"}),
        ("cs", "erase", {"name": "/bench", "count": 3}),
    ]
    cases = []
    for module, verb, args in requests:
        want = ControlParametersValue()
        for key, val in args.items():
            if key == "strategy":
                want.strategy = Strategy()
                want.strategy.name = val
            else:
                setattr(want, key, val)
        fields = cp_fields(ControlParametersValue.parse(want.encode()))
        name = make_command(module, verb, **args)
        wire = make_interest(name, InterestParam(must_be_fresh=True, lifetime=4000))
        ts = struct.unpack("!Q", bytes(Component.get_value(name[-4])))[0]
        cases.append({"form": "v02", "wire": bytes(wire).hex(), "module": module,
                      "verb": verb, "fields": fields, "timestamp": ts})
        name = make_command_v2(module, verb, **args)
        wire = make_interest(name, InterestParam(lifetime=4000), app_param=b"",
                             signer=DigestSha256Signer(for_interest=True))
        _, _, _, sig = parse_interest(wire)
        ts = sig.signature_info.signature_time
        cases.append({"form": "v03", "wire": bytes(wire).hex(), "module": module,
                      "verb": verb, "fields": fields, "timestamp": ts})
    return cases


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--count", type=int, required=True)
    g.add_argument("--out", required=True)
    m = sub.add_parser("commands")
    m.add_argument("--out", required=True)
    c = sub.add_parser("check")
    c.add_argument("--in", dest="inp", required=True)
    a = ap.parse_args()
    if a.cmd == "gen":
        with open(a.out, "w") as f:
            json.dump(gen_cases(a.seed, a.count), f)
        return 0
    if a.cmd == "commands":
        with open(a.out, "w") as f:
            json.dump(command_cases(), f)
        return 0
    return check(a.inp)


if __name__ == "__main__":
    sys.exit(main())
