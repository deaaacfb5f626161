#!/usr/bin/env bash
# Prints the configuration installed as /etc/kite/kite.toml by the Debian package and the
# container image: docs/kite.example.toml with its example [[face]] and [[route]] tables
# (to documentation addresses, 192.0.2.0/24) commented out, so that it starts on any host.
# Usage: scripts/default-config.sh [EXAMPLE.toml]
set -euo pipefail
example="${1:-$(cd "$(dirname "$0")/.." && pwd)/docs/kite.example.toml}"
echo "# Kite's configuration (kite run --config /etc/kite/kite.toml); every key is in"
echo "# docs/config.md (/usr/share/doc/kite/config.md). Package upgrades keep your edits."
echo
awk '
    /^\[\[(face|route)\]\]/ { array = 1 }
    /^\[[^[]/ { array = 0 }
    array && /^[^#]/ { print "# " $0; next }
    { print }
' "$example"
