"""Cross-implementation packet vectors between Kite and python-ndn (0.5.x).

Usage
-----
    python pyndn_vectors.py gen --seed S --count N --out FILE
        Write N random cases, encoded by python-ndn, as a JSON array.  The same
        seed always yields the same file.  For N=300 the mix is 80 names,
        80 Interests, 80 Data and 60 NDNLPv2 packets (about 40% of them Nacks);
        other counts are split in the same proportions.

    python pyndn_vectors.py check --in FILE
        Decode the "wire" of every case (written by another implementation,
        e.g. Kite) with python-ndn and compare each field of the case with what
        python-ndn decoded.  Prints one line per mismatch, "note:" lines for
        checks python-ndn cannot perform, then "N passed, M failed".  Exits 1
        if anything failed or the file holds no case.

Kite's interop test runs `gen` and decodes the cases with Kite's codec, and
has Kite write its own cases in the same schema for `check`.

Schema
------
Every case is an object with "kind" and "wire".  Byte strings are lowercase
hex, absent optional fields are null, integers are JSON numbers (they may
need all 64 bits), flags are JSON booleans.  Names ("name",
"key_locator_name", "forwarding_hint" items) are the hex of a whole Name TLV
(type 7).

  name:     uri (a Name URI), components [{"type": int, "value": hex}, ...]
  interest: name (incl. any ParametersSha256DigestComponent), can_be_prefix,
            must_be_fresh, forwarding_hint [name, ...], nonce (the 4 bytes
            read as big-endian u32), lifetime, hop_limit, app_params, and the
            signature fields below
  data:     name, content_type, freshness, final_block_id (hex of the whole
            component TLV), content, the signature fields below, and
            validity_not_before, validity_not_after ("YYYYMMDDThhmmss")
  lp:       sequence, frag_index, frag_count, pit_token, nack_reason (-1: a
            Nack header without NackReason), incoming_face_id,
            next_hop_face_id, cache_policy (the CachePolicyType), congestion_mark,
            tx_sequence, acks [int, ...], non_discovery, fragment
  signature fields: sig_type, key_locator_name, key_digest, sig_nonce (hex),
            sig_time, sig_seq, sig_value

Besides the fields, `check` verifies that each name's "uri" parses (with
python-ndn) back to its wire, and that each Interest carrying
ApplicationParameters names their correct SHA-256 digest.

What python-ndn cannot check
----------------------------
* Its LpPacket model has no Sequence field and keeps only one Ack: `gen`
  writes "sequence": null and at most one ack; `check` skips "sequence" and
  compares only the first ack, with a note line.  TxSequence and Ack are raw
  bytes in python-ndn; they are compared as big-endian integers.
* It reads LpPacket headers only in its own order (... IncomingFaceId,
  NextHopFaceId, CachePolicy, CongestionMark, TxSequence, Ack, NonDiscovery,
  Fragment) and silently drops a header that comes after one it orders later;
  such a header is skipped with a note line.  `gen` writes that order.
* It models SignatureNonce as a NonNegativeInteger (1, 2, 4 or 8 bytes), so
  sig_nonce is compared as an integer.
* Its URI parser rejects component types above 65535 and has no "..."
  escape for empty or period-only values.  When a URI does not parse back to
  the wire, it is checked segment by segment; such components are skipped
  with a note line, the others must still match.
"""

import argparse
import hashlib
import json
import random
import string
import sys
from dataclasses import dataclass
from datetime import datetime, timezone

from ndn.app_support.security_v2 import (CertificateV2SignatureInfo, CertificateV2Value,
                                         SecurityV2TypeNumber, ValidityPeriod)
from ndn.encoding import (Component, InterestParam, KeyLocator, MetaInfo, ModelField, Name,
                          ProcedureArgument, SignatureType, Signer, TlvModel, TypeNumber,
                          get_tl_num_size, make_interest, parse_and_check_tl, parse_interest,
                          parse_tl_num, write_tl_num)
from ndn.encoding.ndnlp_v2 import (CachePolicy, LpPacket, LpPacketValue, LpTypeNumber,
                                   NetworkNack)
from ndn.encoding.tlv_var import pack_uint_bytes
from ndn.security import DigestSha256Signer, HmacSha256Signer

# --------------------------------------------------------------------------
# Shared helpers
# --------------------------------------------------------------------------

KIND_SHARES = (("name", 8), ("interest", 8), ("data", 8), ("lp", 6))

DIGEST_TYPES = (Component.TYPE_IMPLICIT_SHA256, Component.TYPE_PARAMETERS_SHA256)
NUMERIC_TYPES = (Component.TYPE_SEGMENT, Component.TYPE_BYTE_OFFSET, Component.TYPE_VERSION,
                 Component.TYPE_TIMESTAMP, Component.TYPE_SEQUENCE_NUM)
OPAQUE_TYPES = (9, 100, 252, 253, 65535)
OVERSIZED_TYPE = 300000  # beyond python-ndn's (and the spec's) 65535 limit

VALIDITY_FORMAT = "%Y%m%dT%H%M%S"


def hex_or_none(value):
    return None if value is None else bytes(value).hex()


def uint_from_bytes(value):
    return None if value is None else int.from_bytes(value, "big")


def make_component(typ, value):
    """Component TLV; python-ndn's from_bytes refuses types above 65535, so
    those are assembled from its TLV number writer."""
    if typ <= Component.MAX_COMPONENT_TYPE_VALUE:
        return bytes(Component.from_bytes(value, typ))
    header = bytearray(get_tl_num_size(typ) + get_tl_num_size(len(value)))
    offset = write_tl_num(typ, header)
    write_tl_num(len(value), header, offset)
    return bytes(header) + value


def name_tlv(name):
    return bytes(Name.to_bytes(name))


def first_element(wire, outer_type):
    """The first TLV element inside the value of a packet, byte for byte."""
    value = parse_and_check_tl(wire, outer_type)
    _, type_size = parse_tl_num(value, 0)
    length, length_size = parse_tl_num(value, type_size)
    return bytes(value[:type_size + length_size + length])


# --------------------------------------------------------------------------
# Random values
# --------------------------------------------------------------------------

def maybe(rng, make, probability=0.5):
    return make() if rng.random() < probability else None


def rand_nni(rng, widths=(1, 2, 4, 8)):
    """A NonNegativeInteger whose minimal encoding has one of the given widths."""
    width = rng.choice(widths)
    low = 0 if width == 1 else 1 << (4 * width)
    high = (1 << (8 * width)) - 1
    return rng.choice((low, high, rng.randint(low, high), rng.randint(low, high)))


def rand_text(rng):
    alphabet = string.ascii_letters + string.digits + "-._~%=/ +:?#&Ωé"
    text = "".join(rng.choices(alphabet, k=rng.randint(1, 20)))
    return text.encode()


def rand_generic_value(rng):
    makers = (  # (weight, maker)
        (4, lambda: rng.randbytes(rng.randint(1, 16))),
        (4, lambda: rand_text(rng)),
        (0.4, lambda: b""),  # rare: some URI syntaxes cannot express these two
        (0.4, lambda: b"." * rng.randint(1, 4)),
        (1, lambda: rng.randbytes(rng.randint(250, 400))),  # 3-byte TLV-LENGTH
    )
    weights, choices = zip(*makers)
    return rng.choices(choices, weights=weights)[0]()


def rand_component_part(rng, flavor):
    """(type, value) of one random component of the given flavor."""
    if flavor == "generic":
        return Component.TYPE_GENERIC, rand_generic_value(rng)
    if flavor == "digest":
        return rng.choice(DIGEST_TYPES), rng.randbytes(32)
    if flavor == "keyword":
        return Component.TYPE_KEYWORD, rand_text(rng)
    if flavor == "numeric":
        return rng.choice(NUMERIC_TYPES), pack_uint_bytes(rand_nni(rng))
    if flavor == "opaque":
        value = b"" if rng.random() < 0.04 else rng.randbytes(rng.randint(1, 12))
        return rng.choice(OPAQUE_TYPES), value
    if flavor == "oversized":
        return OVERSIZED_TYPE, rng.randbytes(rng.randint(0, 12))
    raise ValueError(f"unknown component flavor {flavor}")


# Relative weights of component flavors, per use.
NAME_MIX = {"generic": 40, "digest": 12, "keyword": 6, "numeric": 20, "opaque": 10, "oversized": 1}
PACKET_NAME_MIX = {"generic": 50, "keyword": 6, "numeric": 25, "opaque": 10}


def rand_parts(rng, count, mix):
    flavors = rng.choices(list(mix), weights=list(mix.values()), k=count)
    return [rand_component_part(rng, flavor) for flavor in flavors]


def rand_components(rng, low, high):
    parts = rand_parts(rng, rng.randint(low, high), PACKET_NAME_MIX)
    return [make_component(typ, value) for typ, value in parts]


def rand_validity(rng):
    def stamp(seconds):
        return datetime.fromtimestamp(seconds, timezone.utc).strftime(VALIDITY_FORMAT)
    not_before = rng.randint(0, 4_000_000_000)
    not_after = not_before + rng.randint(0, 400_000_000)
    return stamp(not_before), stamp(not_after)


# --------------------------------------------------------------------------
# Signing
# --------------------------------------------------------------------------

@dataclass
class SigSpec:
    sig_type: int
    key_name: bytes | None
    key_digest: bytes | None
    nonce: int | None
    time: int | None
    seq: int | None
    validity: tuple[str, str] | None


class VectorSigner(Signer):
    """A python-ndn Signer that lets a stock python-ndn signer compute the
    signature and fills SignatureInfo with chosen, seed-determined fields
    (python-ndn's own Interest signer would add a random nonce and the clock)."""

    def __init__(self, spec, inner):
        self.spec = spec
        self.inner = inner
        self.value = None

    def write_signature_info(self, signature_info):
        self.inner.write_signature_info(signature_info)
        signature_info.key_locator = self._key_locator()
        signature_info.signature_nonce = self.spec.nonce
        signature_info.signature_time = self.spec.time
        signature_info.signature_seq_num = self.spec.seq
        if self.spec.validity is not None:
            signature_info.validity_period = ValidityPeriod()
            signature_info.validity_period.not_before = self.spec.validity[0].encode()
            signature_info.validity_period.not_after = self.spec.validity[1].encode()

    def _key_locator(self):
        if self.spec.key_name is None and self.spec.key_digest is None:
            return None
        locator = KeyLocator()
        locator.name = self.spec.key_name
        locator.key_digest = self.spec.key_digest
        return locator

    def get_signature_value_size(self):
        return self.inner.get_signature_value_size()

    def write_signature_value(self, wire, contents):
        size = self.inner.write_signature_value(wire, contents)
        self.value = bytes(wire[:size])
        return size

    def expected_fields(self):
        spec = self.spec
        return {
            "sig_type": spec.sig_type,
            "key_locator_name": hex_or_none(spec.key_name),
            "key_digest": hex_or_none(spec.key_digest),
            "sig_nonce": None if spec.nonce is None else pack_uint_bytes(spec.nonce).hex(),
            "sig_time": spec.time,
            "sig_seq": spec.seq,
        }


UNSIGNED_FIELDS = dict.fromkeys(
    ("sig_type", "key_locator_name", "key_digest", "sig_nonce", "sig_time", "sig_seq"))


def rand_signer(rng, allow_validity):
    sig_type = rng.choice((SignatureType.DIGEST_SHA256, SignatureType.HMAC_WITH_SHA256))
    key_name = key_digest = None
    if sig_type == SignatureType.HMAC_WITH_SHA256:
        if rng.random() < 0.5:
            key_name = name_tlv(rand_components(rng, 1, 4))
        else:
            key_digest = rng.randbytes(rng.choice((8, 32)))
    spec = SigSpec(
        sig_type=sig_type, key_name=key_name, key_digest=key_digest,
        nonce=maybe(rng, lambda: rand_nni(rng), 0.4),
        time=maybe(rng, lambda: rand_nni(rng), 0.4),
        seq=maybe(rng, lambda: rand_nni(rng), 0.4),
        validity=maybe(rng, lambda: rand_validity(rng), 0.4) if allow_validity else None)
    if sig_type == SignatureType.DIGEST_SHA256:
        inner = DigestSha256Signer()
    else:  # the key locator set by HmacSha256Signer is replaced by VectorSigner
        inner = HmacSha256Signer("/", rng.randbytes(32))
    return VectorSigner(spec, inner)


def signature_fields(signer, with_validity):
    fields = dict(UNSIGNED_FIELDS) if signer is None else signer.expected_fields()
    validity = None if signer is None else signer.spec.validity
    if with_validity:
        fields["validity_not_before"] = validity and validity[0]
        fields["validity_not_after"] = validity and validity[1]
    fields["sig_value"] = None if signer is None else signer.value.hex()
    return fields


# --------------------------------------------------------------------------
# Generation (python-ndn encodes)
# --------------------------------------------------------------------------

def gen_name(rng):
    count = rng.choice((rng.randint(0, 4), rng.randint(0, 12), rng.randint(0, 40)))
    parts = rand_parts(rng, count, NAME_MIX)
    components = [make_component(typ, value) for typ, value in parts]
    return {
        "kind": "name",
        "wire": name_tlv(components).hex(),
        "uri": Name.to_str(components),
        "components": [{"type": typ, "value": value.hex()} for typ, value in parts],
    }


def rand_app_params(rng, signed):
    """Signed Interests always carry ApplicationParameters (python-ndn would
    otherwise add an empty one itself)."""
    choice = rng.random()
    if choice < 0.15:
        return b""
    if choice < 0.55 or signed:
        return rng.randbytes(rng.choice((rng.randint(1, 40), rng.randint(41, 600))))
    return None


def rand_interest_name(rng, app_params):
    components = rand_components(rng, 1, 6)
    if app_params is not None and rng.random() < 0.3:
        # python-ndn fills in a placeholder ParametersSha256DigestComponent
        # wherever it sits instead of appending one at the end.
        placeholder = make_component(Component.TYPE_PARAMETERS_SHA256, bytes(32))
        components.insert(rng.randint(0, len(components)), placeholder)
    if app_params is None and rng.random() < 0.15:
        components.append(make_component(Component.TYPE_IMPLICIT_SHA256, rng.randbytes(32)))
    return components


def gen_interest(rng):
    signer = maybe(rng, lambda: rand_signer(rng, allow_validity=False), 0.35)
    app_params = rand_app_params(rng, signed=signer is not None)
    hints = [name_tlv(rand_components(rng, 1, 4)) for _ in range(rng.choice((0, 0, 1, 3)))]
    param = InterestParam(
        can_be_prefix=rng.random() < 0.5,
        must_be_fresh=rng.random() < 0.5,
        nonce=maybe(rng, lambda: rng.randrange(1 << 32), 0.7),
        lifetime=maybe(rng, lambda: rand_nni(rng)),
        hop_limit=maybe(rng, lambda: rng.randrange(256), 0.4),
        forwarding_hint=hints)
    wire = bytes(make_interest(rand_interest_name(rng, app_params), param, app_params, signer))
    return {
        "kind": "interest",
        "wire": wire.hex(),
        "name": first_element(wire, TypeNumber.INTEREST).hex(),
        "can_be_prefix": param.can_be_prefix,
        "must_be_fresh": param.must_be_fresh,
        "forwarding_hint": [hint.hex() for hint in hints],
        "nonce": param.nonce,
        "lifetime": param.lifetime,
        "hop_limit": param.hop_limit,
        "app_params": hex_or_none(app_params),
        **signature_fields(signer, with_validity=False),
    }


class DataWithValidity(TlvModel):
    """python-ndn's Data packet model, with the SignatureInfo of its
    certificate model so that a ValidityPeriod can be encoded."""
    _signer = ProcedureArgument()
    data = ModelField(TypeNumber.DATA, CertificateV2Value, [_signer])


def encode_data(name, meta_info, content, signer):
    packet = DataWithValidity()
    packet.data = CertificateV2Value()
    packet.data.name = name
    packet.data.meta_info = meta_info
    packet.data.content = content
    if signer is not None:
        packet.data.signature_info = CertificateV2SignatureInfo()
    markers = {}
    packet._signer.set_arg(markers, signer)
    # Digest and HMAC signatures have a fixed size, so no length shrinking.
    return bytes(packet.encode(markers=markers))


def rand_content(rng):
    choice = rng.random()
    if choice < 0.15:
        return None
    if choice < 0.25:
        return b""
    return rng.randbytes(rng.choice((rng.randint(1, 100), rng.randint(1, 3000))))


def rand_final_block_id(rng):
    flavor = rng.choice(("numeric", "generic"))
    return make_component(*rand_component_part(rng, flavor))


def gen_data(rng):
    content_type = rng.choice((None, None, 0, 1, 2, 3, 5, rand_nni(rng)))
    freshness = maybe(rng, lambda: rand_nni(rng))
    final_block_id = maybe(rng, lambda: rand_final_block_id(rng), 0.3)
    meta_info = MetaInfo(content_type, freshness, final_block_id)
    if content_type is None and freshness is None and final_block_id is None:
        meta_info = rng.choice((None, meta_info))  # no MetaInfo, or an empty one
    content = rand_content(rng)
    signer = rand_signer(rng, allow_validity=True)  # the spec requires a signature
    name = name_tlv(rand_components(rng, 1, 8))
    wire = encode_data(name, meta_info, content, signer)
    return {
        "kind": "data",
        "wire": wire.hex(),
        "name": name.hex(),
        "content_type": content_type,
        "freshness": freshness,
        "final_block_id": hex_or_none(final_block_id),
        "content": hex_or_none(content),
        **signature_fields(signer, with_validity=True),
    }


def rand_nack(rng):
    nack = NetworkNack()
    # At most 4 bytes, so that nack_reason (-1 for no reason) fits an i64.
    nack.nack_reason = rng.choice((None, 0, 50, 100, 150, rand_nni(rng, (1, 2, 4))))
    return nack


def rand_cache_policy(rng):
    policy = CachePolicy()
    policy.cache_policy_type = rng.choice((1, rand_nni(rng)))
    return policy


def gen_lp(rng):
    is_nack = rng.random() < 0.4
    lp = LpPacketValue()
    lp.frag_count = maybe(rng, lambda: rng.randint(1, 20), 0.25)
    lp.frag_index = maybe(rng, lambda: rng.randrange(lp.frag_count or 20), 0.25)
    lp.pit_token = maybe(rng, lambda: rng.randbytes(rng.randint(1, 32)))
    lp.nack = rand_nack(rng) if is_nack else None
    lp.incoming_face_id = maybe(rng, lambda: rand_nni(rng), 0.3)
    lp.next_hop_face_id = maybe(rng, lambda: rand_nni(rng), 0.3)
    lp.cache_policy = maybe(rng, lambda: rand_cache_policy(rng), 0.25)
    lp.congestion_mark = maybe(rng, lambda: rng.choice((0, 1, rand_nni(rng))), 0.25)
    tx_sequence = maybe(rng, lambda: rng.randrange(1 << 64), 0.3)
    lp.tx_sequence = None if tx_sequence is None else tx_sequence.to_bytes(8, "big")
    acks = [rng.randrange(1 << 64)] if rng.random() < 0.3 else []
    lp.ack = acks[0].to_bytes(8, "big") if acks else None
    lp.non_discovery = rng.random() < 0.2
    has_fragment = is_nack or rng.random() < 0.85
    lp.fragment = bytes.fromhex(gen_interest(rng)["wire"]) if has_fragment else None
    packet = LpPacket()
    packet.lp_packet = lp
    return {
        "kind": "lp",
        "wire": bytes(packet.encode()).hex(),
        "sequence": None,  # not in python-ndn's LpPacket model
        "frag_index": lp.frag_index,
        "frag_count": lp.frag_count,
        "pit_token": hex_or_none(lp.pit_token),
        "nack_reason": nack_reason_field(lp.nack),
        "incoming_face_id": lp.incoming_face_id,
        "next_hop_face_id": lp.next_hop_face_id,
        "cache_policy": cache_policy_field(lp.cache_policy),
        "congestion_mark": lp.congestion_mark,
        "tx_sequence": tx_sequence,
        "acks": acks,
        "non_discovery": lp.non_discovery,
        "fragment": hex_or_none(lp.fragment),
    }


GENERATORS = {"name": gen_name, "interest": gen_interest, "data": gen_data, "lp": gen_lp}


def kind_counts(count):
    """Split count over the kinds in KIND_SHARES proportions (largest remainder)."""
    total = sum(share for _, share in KIND_SHARES)
    exact = [(kind, count * share / total) for kind, share in KIND_SHARES]
    counts = {kind: int(value) for kind, value in exact}
    by_remainder = sorted(exact, key=lambda item: item[1] - int(item[1]), reverse=True)
    for kind, _ in by_remainder[:count - sum(counts.values())]:
        counts[kind] += 1
    return counts


def generate(seed, count):
    rng = random.Random(seed)
    return [GENERATORS[kind](rng)
            for kind, kind_count in kind_counts(count).items()
            for _ in range(kind_count)]


# --------------------------------------------------------------------------
# Decoding (python-ndn decodes) into the case schema
# --------------------------------------------------------------------------

class Unreadable:
    """Decoded value of a field python-ndn cannot read; compared by a note only."""

    def __init__(self, reason):
        self.reason = reason


def is_absent(value):
    """How an absent field appears in the schema: null, [] or false."""
    return value is None or value is False or value == []


def attr(model, field):
    """A field of an optional python-ndn model; None when the model is absent."""
    return None if model is None else getattr(model, field)


def name_hex_or_none(name):
    return None if name is None else name_tlv(name).hex()


def text_or_none(value):
    return None if value is None else bytes(value).decode("ascii", errors="replace")


def decoded_signature(info, value, with_validity):
    locator = attr(info, "key_locator")
    fields = {
        "sig_type": attr(info, "signature_type"),
        "key_locator_name": name_hex_or_none(attr(locator, "name")),
        "key_digest": hex_or_none(attr(locator, "key_digest")),
        "sig_nonce": attr(info, "signature_nonce"),
        "sig_time": attr(info, "signature_time"),
        "sig_seq": attr(info, "signature_seq_num"),
    }
    if with_validity:
        validity = attr(info, "validity_period")
        fields["validity_not_before"] = text_or_none(attr(validity, "not_before"))
        fields["validity_not_after"] = text_or_none(attr(validity, "not_after"))
    fields["sig_value"] = hex_or_none(value)
    return fields


SIGNATURE_FIELD_TYPES = {
    "sig_nonce": TypeNumber.SIGNATURE_NONCE,
    "sig_time": TypeNumber.SIGNATURE_TIME,
    "sig_seq": TypeNumber.SIGNATURE_SEQ_NUM,
    "validity_not_before": SecurityV2TypeNumber.VALIDITY_PERIOD,
    "validity_not_after": SecurityV2TypeNumber.VALIDITY_PERIOD,
}


def elements(value):
    """(TLV-TYPE, value) of each element directly inside a TLV value."""
    offset = 0
    while offset < len(value):
        typ, type_size = parse_tl_num(value, offset)
        length, length_size = parse_tl_num(value, offset + type_size)
        start = offset + type_size + length_size
        yield typ, value[start:start + length]
        offset = start + length


def mark_skipped(decoded, field_types, container, model):
    """python-ndn's models read elements in their own order only, and silently
    drop one that follows an element they order later (e.g. TxSequence after
    Ack).  Mark such fields, present in the container but not read, Unreadable."""
    present = {typ for typ, _ in elements(container)}
    for field, typ in field_types.items():
        if field in decoded and typ in present and is_absent(decoded[field]):
            decoded[field] = Unreadable(f"present in the wire, but python-ndn's {model} model "
                                        "skips it after an element it orders later")


def mark_skipped_signature(decoded, packet_value, info_type):
    for typ, value in elements(packet_value):
        if typ == info_type:
            mark_skipped(decoded, SIGNATURE_FIELD_TYPES, value, "SignatureInfo")
            return


def decode_name(wire):
    parse_and_check_tl(wire, Name.TYPE_NAME)  # rejects a wrong type or trailing bytes
    components = Name.decode(wire)[0]
    return {"components": [{"type": Component.get_type(component),
                            "value": bytes(Component.get_value(component)).hex()}
                           for component in components]}


def decode_interest(wire):
    name, param, app_params, sig_ptrs = parse_interest(wire)
    decoded = {
        "name": name_tlv(name).hex(),
        "can_be_prefix": bool(param.can_be_prefix),
        "must_be_fresh": bool(param.must_be_fresh),
        "forwarding_hint": [name_tlv(hint).hex() for hint in param.forwarding_hint],
        "nonce": param.nonce,
        "lifetime": param.lifetime,
        "hop_limit": param.hop_limit,
        "app_params": hex_or_none(app_params),
        **decoded_signature(sig_ptrs.signature_info, sig_ptrs.signature_value_buf,
                            with_validity=False),
    }
    mark_skipped_signature(decoded, parse_and_check_tl(wire, TypeNumber.INTEREST),
                           TypeNumber.INTEREST_SIGNATURE_INFO)
    return decoded


def decode_data(wire):
    value = parse_and_check_tl(wire, TypeNumber.DATA)
    data = CertificateV2Value.parse(value)
    meta = data.meta_info
    decoded = {
        "name": name_tlv(data.name).hex(),
        "content_type": attr(meta, "content_type"),
        "freshness": attr(meta, "freshness_period"),
        "final_block_id": hex_or_none(attr(meta, "final_block_id")),
        "content": hex_or_none(data.content),
        **decoded_signature(data.signature_info, data.signature_value, with_validity=True),
    }
    mark_skipped_signature(decoded, value, TypeNumber.SIGNATURE_INFO)
    return decoded


def nack_reason_field(nack):
    if nack is None:
        return None
    return -1 if nack.nack_reason is None else nack.nack_reason


def cache_policy_field(policy):
    return None if policy is None else policy.cache_policy_type


LP_FIELD_TYPES = {
    "frag_index": LpTypeNumber.FRAG_INDEX,
    "frag_count": LpTypeNumber.FRAG_COUNT,
    "pit_token": LpTypeNumber.PIT_TOKEN,
    "nack_reason": LpTypeNumber.NACK,
    "incoming_face_id": LpTypeNumber.INCOMING_FACE_ID,
    "next_hop_face_id": LpTypeNumber.NEXT_HOP_FACE_ID,
    "cache_policy": LpTypeNumber.CACHE_POLICY,
    "congestion_mark": LpTypeNumber.CONGESTION_MARK,
    "tx_sequence": LpTypeNumber.TX_SEQUENCE,
    "acks": LpTypeNumber.ACK,
    "non_discovery": LpTypeNumber.NON_DISCOVERY,
    "fragment": LpTypeNumber.FRAGMENT,
}


def decode_lp(wire):
    value = parse_and_check_tl(wire, LpTypeNumber.LP_PACKET)
    # parse_lp_packet_v2 refuses FragIndex/FragCount, so use its model directly.
    lp = LpPacketValue.parse(value, ignore_critical=True)
    decoded = {
        "sequence": Unreadable("python-ndn's LpPacket model has no Sequence field"),
        "frag_index": lp.frag_index,
        "frag_count": lp.frag_count,
        "pit_token": hex_or_none(lp.pit_token),
        "nack_reason": nack_reason_field(lp.nack),
        "incoming_face_id": lp.incoming_face_id,
        "next_hop_face_id": lp.next_hop_face_id,
        "cache_policy": cache_policy_field(lp.cache_policy),
        "congestion_mark": lp.congestion_mark,
        "tx_sequence": uint_from_bytes(lp.tx_sequence),
        "acks": [] if lp.ack is None else [uint_from_bytes(lp.ack)],
        "non_discovery": bool(lp.non_discovery),
        "fragment": hex_or_none(lp.fragment),
    }
    mark_skipped(decoded, LP_FIELD_TYPES, value, "LpPacket")
    return decoded


DECODERS = {"name": decode_name, "interest": decode_interest, "data": decode_data,
            "lp": decode_lp}


# --------------------------------------------------------------------------
# Checking
# --------------------------------------------------------------------------

MISSING = object()


class Report:
    """Failures and notes collected for one case."""

    def __init__(self):
        self.failures = []
        self.notes = []

    def mismatch(self, field, expected, decoded):
        self.failures.append(
            f"{field}: expected {show(expected)}, python-ndn decoded {show(decoded)}")


def show(value, limit=160):
    text = json.dumps(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def expected_view(kind, case, fields, report):
    """The case's values for the given fields, in the form python-ndn decodes them."""
    view = {field: case.get(field, MISSING) for field in fields}
    if isinstance(view.get("sig_nonce"), str):
        view["sig_nonce"] = int.from_bytes(bytes.fromhex(view["sig_nonce"]), "big")
    if kind == "lp":
        acks = view["acks"]
        if isinstance(acks, list) and len(acks) > 1:
            report.notes.append(f"only the first of {len(acks)} acks compared: "
                                "python-ndn's LpPacket model keeps a single Ack")
            view["acks"] = acks[:1]
    return view


def compare_fields(expected, decoded, report):
    for field, decoded_value in decoded.items():
        expected_value = expected[field]
        if expected_value is MISSING:
            report.failures.append(f"{field}: missing from the case")
        elif isinstance(decoded_value, Unreadable):
            if not is_absent(expected_value):
                report.notes.append(f"{field} not compared: {decoded_value.reason}")
        elif json.dumps(expected_value) != json.dumps(decoded_value):
            report.mismatch(field, expected_value, decoded_value)


def uri_limitation(typ, value):
    """Why python-ndn's URI syntax cannot express this component, or None."""
    if typ > Component.MAX_COMPONENT_TYPE_VALUE:
        return "python-ndn's URI parser rejects component types above 65535"
    if typ not in DIGEST_TYPES and set(value) <= {ord(".")}:
        return "python-ndn's URI syntax has no '...' escape for empty or period-only values"
    return None


def uri_segments(uri):
    """Split a URI into component strings as python-ndn's Name.from_str does:
    one leading and one trailing slash are dropped."""
    body = uri.removeprefix("/")
    stripped = body.removesuffix("/")
    if not stripped and len(uri) - len(stripped) <= 1:
        return []
    return stripped.split("/")


def parse_uri_component(segment):
    """python-ndn's reading of one URI segment, as Name.from_str does it."""
    try:
        return bytes(Component.from_str(Component.escape_str(segment)))
    except Exception:  # whatever python-ndn raises, the segment is unreadable
        return None


def check_uri(uri, wire, components, report):
    """Parse the case's URI with python-ndn; it must encode to the wire.

    When it does not, the URI is compared segment by segment, so that only the
    components python-ndn's URI syntax cannot express are left unchecked."""
    if not isinstance(uri, str):
        report.failures.append(f"uri: expected a string, got {show(uri)}")
        return
    try:
        if name_tlv(Name.from_str(uri)) == wire:
            return
    except Exception:  # whatever python-ndn raises, look at each segment below
        pass
    parts = [(c["type"], bytes.fromhex(c["value"])) for c in components]
    segments = uri_segments(uri)
    if len(segments) != len(parts):
        report.failures.append(f"uri: {show(uri)} has {len(segments)} components, "
                               f"the wire {len(parts)}")
        return
    for position, (segment, (typ, value)) in enumerate(zip(segments, parts)):
        parsed = parse_uri_component(segment)
        expected = make_component(typ, value)
        if parsed == expected:
            continue
        limitation = uri_limitation(typ, value)
        if limitation is not None:
            report.notes.append(f"uri component {position} {show(segment)} not checked: "
                                f"{limitation}")
        else:
            report.failures.append(
                f"uri: component {position} {show(segment)}: python-ndn reads "
                f"{'nothing' if parsed is None else parsed.hex()}, the wire has {expected.hex()}")


def check_params_digest(wire, report):
    """An Interest with ApplicationParameters must name their SHA-256 digest."""
    _, _, app_params, sig_ptrs = parse_interest(wire)
    if app_params is None:
        return
    if sig_ptrs.digest_value_buf is None:
        report.failures.append("params_digest: ApplicationParameters present but "
                               "no ParametersSha256DigestComponent")
        return
    digest = hashlib.sha256()
    for block in sig_ptrs.digest_covered_part:
        digest.update(block)
    named = bytes(sig_ptrs.digest_value_buf).hex()
    if named != digest.hexdigest():
        report.failures.append(f"params_digest: the name holds {named}, but SHA-256 from "
                               f"ApplicationParameters to the end is {digest.hexdigest()}")


def check_case(case):
    report = Report()
    kind = case.get("kind") if isinstance(case, dict) else None
    if not isinstance(kind, str) or kind not in DECODERS:
        report.failures.append(f"not a case of a known kind: {show(case)}")
        return report
    try:
        wire = bytes.fromhex(case["wire"])
    except (KeyError, TypeError, ValueError) as exc:
        report.failures.append(f"wire: unusable ({exc!r})")
        return report
    try:
        decoded = DECODERS[kind](wire)
    except Exception as exc:  # any decoder error is a failed case, not a crash
        report.failures.append(f"python-ndn failed to decode the wire: {type(exc).__name__}: {exc}")
        return report
    try:
        compare_fields(expected_view(kind, case, decoded, report), decoded, report)
    except (TypeError, ValueError) as exc:
        report.failures.append(f"malformed case field: {exc}")
    if kind == "name":
        check_uri(case.get("uri"), wire, decoded["components"], report)
    elif kind == "interest":
        check_params_digest(wire, report)
    return report


def load_cases(path):
    try:
        with open(path, encoding="utf-8") as file:
            cases = json.load(file)
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {path}: {exc}")
        return []
    if not isinstance(cases, list):
        print(f"error: {path} does not hold a JSON array")
        return []
    return cases


def run_check(path):
    cases = load_cases(path)
    failed = 0
    for index, case in enumerate(cases):
        report = check_case(case)
        label = f"case {index} ({case.get('kind') if isinstance(case, dict) else '?'})"
        for note in report.notes:
            print(f"{label}: note: {note}")
        for failure in report.failures:
            print(f"{label}: {failure}")
        failed += bool(report.failures)
    if not cases:
        print("error: no cases to check")
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed or not cases else 0


def run_gen(seed, count, path):
    cases = generate(seed, count)
    with open(path, "w", encoding="utf-8") as file:
        json.dump(cases, file, indent=1)
        file.write("\n")
    print(f"wrote {len(cases)} cases to {path}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("gen", help="write python-ndn-encoded cases")
    gen.add_argument("--seed", type=int, required=True)
    gen.add_argument("--count", type=int, required=True)
    gen.add_argument("--out", required=True)
    check = commands.add_parser("check", help="decode cases with python-ndn and compare")
    check.add_argument("--in", dest="infile", required=True)
    args = parser.parse_args(argv)
    if args.command == "gen":
        return run_gen(args.seed, args.count, args.out)
    return run_check(args.infile)


if __name__ == "__main__":
    sys.exit(main())
