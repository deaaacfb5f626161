#!/usr/bin/env bash
# Runs every test Kite has, installing what the tests need first:
#   formatting and lints, unit and integration tests, property tests, the cross-implementation
#   tests against python-ndn (from PyPI, in .venv), end-to-end tests of `kite run` with
#   python-ndn and NDNts apps (NDNts from npm, in tests/interop/ndnts/node_modules), two
#   daemons and NDNd (built from the Go module proxy, cached in target/interop), and each fuzz
#   target for a bounded time.
#   scripts/test.sh            everything (about 25 minutes on 2 cores); a failing test binary
#                              does not stop the others, and the exit status is non-zero
#   FUZZ_SECONDS=N scripts/test.sh   fuzz each target N seconds (default 30, 0 skips fuzzing)
# It ends with `tests: N passed, M failed, K skipped`. A test that cannot run here (not root, no
# network namespaces, no Node.js, no NDNd or NLSR install) calls kite_testkit::skip, which
# appends a line to the file KITE_SKIP_LOG names; those tests are listed by name with their
# reasons and counted as skipped, not passed (scripts/test-summary.sh does the counting).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/test-summary.sh

fuzz_seconds=${FUZZ_SECONDS:-30}

step() { echo; echo "==> $*"; }

need_apt() {
  # Installs Debian packages when a needed tool is missing (CI runs as root).
  if command -v apt-get >/dev/null 2>&1; then
    local sudo=""
    (( EUID != 0 )) && sudo="sudo"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "$@"
  else
    echo "test.sh: please install: $*" >&2
    exit 1
  fi
}

step "checking tools"
command -v cargo >/dev/null || { echo "test.sh: cargo is not installed (Kite needs stable Rust 1.88+)" >&2; exit 1; }
command -v python3 >/dev/null || need_apt python3
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt python3-venv
command -v c++ >/dev/null || need_apt g++
# eBPF strategies (strategies/*.c) build with clang -target bpf; the tests rebuild and compare them.
command -v clang >/dev/null || need_apt clang
command -v make >/dev/null || need_apt make
# The NDNd interop test runs both forwarders in a private network namespace.
command -v ip >/dev/null || need_apt iproute2
command -v nsenter >/dev/null || need_apt util-linux
# A test runs the daemon under a small open files limit.
command -v prlimit >/dev/null || need_apt util-linux
# The manual pages are rendered with groff and man; the Debian package is built with dpkg-deb
# and strip.
command -v groff >/dev/null || need_apt groff-base
command -v man >/dev/null || need_apt man-db
command -v strip >/dev/null || need_apt binutils
# The status page of `kite run --metrics` is rendered in headless Chromium.
command -v chromium >/dev/null || need_apt chromium
# The lossy-chain tests drop frames with nftables inside their namespaces.
command -v nft >/dev/null || need_apt nftables
# The AF_XDP tests ping across an interface the XDP program is attached to.
command -v ping >/dev/null || need_apt iputils-ping
rustup component list --installed 2>/dev/null | grep -q rustfmt || rustup component add rustfmt clippy

step "python-ndn and prometheus-client (PyPI) in .venv, for the cross-implementation and metrics tests"
if ! .venv/bin/python -c 'import ndn' 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check 'python-ndn>=0.5.2,<0.6'
fi
if ! .venv/bin/python -c 'import prometheus_client' 2>/dev/null; then
  .venv/bin/pip install --quiet --disable-pip-version-check 'prometheus-client>=0.20,<1'
fi
.venv/bin/python -c 'import importlib.metadata as m; print("python-ndn", m.version("python-ndn"), "prometheus-client", m.version("prometheus-client"))'
export KITE_PYTHON="$PWD/.venv/bin/python"

step "NDNts (npm) in tests/interop/ndnts/node_modules, for the NDNts end-to-end tests"
# The versions package-lock.json pins, installed again only when it changes. Without Node.js
# and npm (or with a Node.js older than the pinned NDNts declares) those tests say SKIPPED.
node_pkgs=()
command -v node >/dev/null || node_pkgs+=(nodejs)
command -v npm >/dev/null || node_pkgs+=(npm)
if (( ${#node_pkgs[@]} > 0 )); then
  (need_apt "${node_pkgs[@]}") || true
fi
ndnts=tests/interop/ndnts
if command -v node >/dev/null && command -v npm >/dev/null; then
  if cmp -s "$ndnts/package-lock.json" "$ndnts/node_modules/.kite-installed-lock"; then
    echo "NDNts: installed"
  elif (cd "$ndnts" && npm ci --engine-strict --no-audit --no-fund --loglevel=error); then
    cp "$ndnts/package-lock.json" "$ndnts/node_modules/.kite-installed-lock"
  else
    rm -rf "$ndnts/node_modules"
    echo "test.sh: npm ci failed (Node.js $(node --version)): the NDNts tests will be SKIPPED" >&2
  fi
  if [[ -f "$ndnts/node_modules/.kite-installed-lock" ]]; then
    (cd "$ndnts" && node -p '"NDNts " + require("./node_modules/@ndn/endpoint/package.json").version + " on Node.js " + process.version')
  fi
else
  echo "test.sh: Node.js and npm are not installed: the NDNts tests will be SKIPPED" >&2
fi

step "NDNd v1.5.3 (Go module proxy), for the Kite-NDNd interop test"
ndnd_bin=$(scripts/ndnd.sh) || {
  echo "test.sh: the Kite-NDNd interop test will be SKIPPED" >&2
  ndnd_bin=""
}
if [[ -n "$ndnd_bin" ]]; then
  export KITE_NDND="$ndnd_bin"
  echo "NDNd: $KITE_NDND"
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "cargo doc (broken or private intra-doc links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

step "cargo test (unit, integration, property, python-ndn interop)"
log=$(mktemp)
KITE_SKIP_LOG=$(mktemp)
export KITE_SKIP_LOG
trap 'rm -f "$log" "$KITE_SKIP_LOG"' EXIT
status=0
cargo test --workspace --no-fail-fast -- --include-ignored 2>&1 | tee "$log" || status=1

step "end-to-end tests again with two I/O threads (KITE_TEST_IO_THREADS=2: faces spread over both)"
# Forwarding, faces, UDP on-demand faces, Ethernet, management, shared memory, congestion and two
# shards (token dispatch and the tokenless fallback) with every daemon's faces spread over two
# I/O threads. Left out: the on-demand LRU test, which orders the faces of one listener (with
# two threads each has its own, holding half the limit).
KITE_TEST_IO_THREADS=2 cargo test --no-fail-fast -p kite \
  --test e2e_io_threads --test e2e_aggregation --test e2e_pyndn --test e2e_mgmt \
  --test e2e_face_create --test e2e_on_demand --test e2e_two_daemons --test e2e_malformed \
  --test e2e_fragmentation --test e2e_shm --test e2e_congestion --test e2e_lp_reliability \
  --test e2e_ether \
  -- --include-ignored --skip a_full_listener_gives_up_its_idlest_on_demand_face 2>&1 | tee -a "$log" \
  || status=1

step "Ethernet end-to-end tests again through AF_XDP (KITE_TEST_ETHER=xdp: kite run --xdp)"
# Every Ethernet behaviour over Kite's XDP program and AF_XDP sockets. Left out: the lossy
# LpReliability test, whose loss is made at the netdev ingress hook, which XDP runs before.
KITE_TEST_ETHER=xdp cargo test --no-fail-fast -p kite --test e2e_ether \
  -- --include-ignored --skip lp_reliability_repairs_a_lossy_unicast_ethernet_link 2>&1 | tee -a "$log" \
  || status=1

if (( fuzz_seconds > 0 )); then
  step "fuzzing every target (decoders, link service, Ethernet, management, configuration, trust schemas, forwarder) for ${fuzz_seconds}s from the seed corpus"
  scripts/fuzz.sh "$fuzz_seconds" || status=1
fi

echo
test_summary "$log" "$KITE_SKIP_LOG"
if (( status != 0 )); then
  echo "test.sh: FAILED (the failing step's output is above)" >&2
fi
exit "$status"
