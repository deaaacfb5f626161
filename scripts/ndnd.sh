#!/usr/bin/env bash
# Builds NDNd v1.5.3 (the independent NDN forwarder Kite is tested and measured against) from
# the Go module proxy, once: a throwaway module requires it and `go build`s its command, into
# target/interop (or $CARGO_TARGET_DIR/interop). Prints the binary's path on stdout; exits 1
# with the reason on stderr when it cannot be built (no Go toolchain, proxy unreachable).
#   scripts/ndnd.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ndnd_version=v1.5.3
ndnd_bin="${CARGO_TARGET_DIR:-$PWD/target}/interop/ndnd-${ndnd_version}"
if [[ ! -x "$ndnd_bin" ]]; then
  if ! command -v go >/dev/null; then
    echo "ndnd.sh: no Go toolchain (NDNd needs Go 1.24+)" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$ndnd_bin")"
  gobuild=$(mktemp -d)
  trap 'rm -rf "$gobuild"' EXIT
  # `go get` names the command's package (not just the module) so go.sum holds every
  # dependency the build needs.
  if ! (cd "$gobuild" && go mod init throwaway \
        && go get "github.com/named-data/ndnd/cmd/ndnd@${ndnd_version}" \
        && go build -o "$ndnd_bin" github.com/named-data/ndnd/cmd/ndnd) >"$gobuild/log" 2>&1; then
    tail -20 "$gobuild/log" >&2
    echo "ndnd.sh: NDNd ${ndnd_version} did not build" >&2
    exit 1
  fi
  echo "ndnd.sh: built $ndnd_bin" >&2
fi
echo "$ndnd_bin"
