"""Verifies Data that Kite signed, with python-ndn's own verifiers (tests of kite-security).

Reads one JSON object per line on stdin:
    {"kind": "ecdsa-p256" | "ecdsa-p384" | "rsa-1024" | "rsa-2048" | "rsa-3072" | "hmac-sha256"
             | "ed25519" | "digest-sha256",
     "key": hex of the SubjectPublicKeyInfo DER (the secret for HMAC, empty for the digest),
     "data": hex of the whole Data}
and prints for each one line {"kind": ..., "sig_type": N, "valid": true | false}.
"""

import json
import sys

from Cryptodome.Hash import SHA256
from Cryptodome.PublicKey import ECC, RSA
from ndn.encoding import parse_data
from ndn.security.validator.known_key_validator import (
    verify_ecdsa,
    verify_ed25519,
    verify_hmac,
    verify_rsa,
)


def verify_digest(sig_ptrs) -> bool:
    h = SHA256.new()
    for part in sig_ptrs.signature_covered_part:
        h.update(part)
    return h.digest() == bytes(sig_ptrs.signature_value_buf)


def check(kind: str, key: bytes, sig_ptrs) -> bool:
    if kind.startswith("ecdsa"):
        return verify_ecdsa(ECC.import_key(key), sig_ptrs)
    if kind.startswith("rsa"):
        return verify_rsa(RSA.import_key(key), sig_ptrs)
    if kind == "ed25519":
        return verify_ed25519(ECC.import_key(key), sig_ptrs)
    if kind == "hmac-sha256":
        return verify_hmac(key, sig_ptrs)
    if kind == "digest-sha256":
        return verify_digest(sig_ptrs)
    raise ValueError(f"unknown kind {kind}")


def main() -> None:
    for line in sys.stdin:
        case = json.loads(line)
        _, _, _, sig_ptrs = parse_data(bytes.fromhex(case["data"]), with_tl=True)
        valid = check(case["kind"], bytes.fromhex(case["key"]), sig_ptrs)
        print(json.dumps({
            "kind": case["kind"],
            "sig_type": sig_ptrs.signature_info.signature_type,
            "valid": valid,
        }), flush=True)


if __name__ == "__main__":
    main()
