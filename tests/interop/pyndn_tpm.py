"""Makes keys with python-ndn's file TPM, for kite-security's tests that read them.

    python pyndn_tpm.py DIR

Generates an ECDSA P-256 and an RSA 2048 key with `ndn.security.tpm.TpmFile(DIR)` (the
format python-ndn's default keychain keeps keys in) and prints one JSON line per key:
{"type": "ec" | "rsa", "key_name": URI, "public": hex of the SubjectPublicKeyInfo DER}.
"""

import json
import sys

from ndn.encoding import Name
from ndn.security.tpm import TpmFile


def main():
    tpm = TpmFile(sys.argv[1])
    for key_type in ("ec", "rsa"):
        key_name, public = tpm.generate_key(Name.from_str("/interop/tpm"), key_type)
        print(json.dumps({"type": key_type, "key_name": Name.to_str(key_name),
                          "public": bytes(public).hex()}), flush=True)


if __name__ == "__main__":
    main()
