#!/usr/bin/env bash
# Puts Debian's prometheus package (the server and promtool) into a cache folder, without installing
# it or starting its service: `apt-get download` and `dpkg-deb -x`. Idempotent: a folder that holds
# both binaries is left alone. The tests read the folder from PROMETHEUS_DIR (default: this one).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${PROMETHEUS_DIR:-$PWD/.cache/prometheus}"
if [ -x "$dir/usr/bin/prometheus" ] && [ -x "$dir/usr/bin/promtool" ]; then
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# As root, apt would otherwise warn that its own user cannot write here; a machine whose package
# lists are not yet read reads them first.
download () { (cd "$work" && apt-get -o APT::Sandbox::User=root download prometheus >/dev/null); }
download || { apt-get update -qq && download; }
mkdir -p "$dir"
dpkg-deb -x "$work"/prometheus_*.deb "$dir"
echo "prometheus $("$dir/usr/bin/prometheus" --version 2>&1 | head -1) in $dir"
