#!/usr/bin/env bash
# Builds the Debian package of Kite with dpkg-deb alone (no debhelper, no cargo-deb):
#   /usr/bin/kite                                 the binary, stripped of debug information
#   /usr/lib/systemd/system/kite.service          from dist/systemd/kite.service, when present
#   /etc/kite/kite.toml                           conffile: scripts/default-config.sh (the
#                                                 example, its faces and routes commented out)
#   /usr/share/man/man1/kite*.1.gz                written by `kite man`
#   /usr/share/bash-completion/completions/kite   and the zsh and fish completions, written by
#   /usr/share/zsh/vendor-completions/_kite       `kite completions`
#   /usr/share/fish/vendor_completions.d/kite.fish
#   /usr/share/doc/kite/{README.md,config.md,operations.md,copyright}
#
# Usage: scripts/package-deb.sh [--binary PATH] [--out DIR] [--compress gzip|xz|none]
#   --binary  use this kite binary instead of building one (cargo build --release -p kite)
#   --out     where the .deb goes (default: target/debian)
# Prints the path of the package as its last line.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
binary=""
out="$root/target/debian"
compress="xz"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --compress) compress="$2"; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "package-deb.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

for tool in dpkg-deb dpkg strip gzip; do
    command -v "$tool" >/dev/null || { echo "package-deb.sh: $tool is needed" >&2; exit 1; }
done

if [ -z "$binary" ]; then
    (cd "$root" && cargo build --release -p kite --bin kite >&2)
    binary="$root/target/release/kite"
fi
[ -x "$binary" ] || { echo "package-deb.sh: no executable at $binary" >&2; exit 1; }

version="$("$binary" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
pkg="$stage/kite_${version}_${arch}"

install -d "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/etc/kite" "$pkg/usr/share/man/man1" \
    "$pkg/usr/share/bash-completion/completions" "$pkg/usr/share/zsh/vendor-completions" \
    "$pkg/usr/share/fish/vendor_completions.d" "$pkg/usr/share/doc/kite"

install -m 0755 "$binary" "$pkg/usr/bin/kite"
strip --strip-debug "$pkg/usr/bin/kite"

unit="$root/dist/systemd/kite.service"
if [ -f "$unit" ]; then
    install -d "$pkg/usr/lib/systemd/system"
    install -m 0644 "$unit" "$pkg/usr/lib/systemd/system/kite.service"
else
    echo "package-deb.sh: warning: $unit is absent; the package has no systemd unit" >&2
fi

"$root/scripts/default-config.sh" > "$pkg/etc/kite/kite.toml"
chmod 0644 "$pkg/etc/kite/kite.toml"
"$pkg/usr/bin/kite" run --config "$pkg/etc/kite/kite.toml" --print-config >/dev/null

"$pkg/usr/bin/kite" man "$pkg/usr/share/man/man1" >/dev/null
gzip -9n "$pkg"/usr/share/man/man1/*.1
"$pkg/usr/bin/kite" completions bash > "$pkg/usr/share/bash-completion/completions/kite"
"$pkg/usr/bin/kite" completions zsh > "$pkg/usr/share/zsh/vendor-completions/_kite"
"$pkg/usr/bin/kite" completions fish > "$pkg/usr/share/fish/vendor_completions.d/kite.fish"

install -m 0644 "$root/README.md" "$pkg/usr/share/doc/kite/README.md"
install -m 0644 "$root/docs/config.md" "$pkg/usr/share/doc/kite/config.md"
install -m 0644 "$root/docs/operations.md" "$pkg/usr/share/doc/kite/operations.md"
cat > "$pkg/usr/share/doc/kite/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: kite

Files: *
License: Apache-2.0
 On Debian systems the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
EOF

echo "/etc/kite/kite.toml" > "$pkg/DEBIAN/conffiles"
size="$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)"
cat > "$pkg/DEBIAN/control" <<EOF
Package: kite
Version: $version
Architecture: $arch
Maintainer: Kite maintainers <kite@invalid>
Installed-Size: $size
Depends: libc6, libgcc-s1
Section: net
Priority: optional
Description: Named Data Networking forwarder, a drop-in replacement for NFD
 Kite forwards NDN Interests and Data over unix sockets, UDP, TCP, WebSocket and
 Ethernet, speaks NFD's management protocol so existing NDN applications and
 tools work unchanged, and ships its tools (control, ping, get, put, perf,
 packet encode/decode) in the same binary.
EOF
# The unit is installed, not enabled: the operator chooses when the forwarder starts.
for script in postinst postrm; do
    cat > "$pkg/DEBIAN/$script" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    systemctl daemon-reload || true
fi
EOF
    chmod 0755 "$pkg/DEBIAN/$script"
done

mkdir -p "$out"
deb="$out/kite_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"$compress" --build "$pkg" "$deb" >&2
echo "$deb"
