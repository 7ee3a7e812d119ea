#!/usr/bin/env bash
# Brings Debian 13's nats-server (2.10) into .cache/nats-server/2.10 without installing anything:
# Debian 12's 2.9.10 loses data on a purge (nats-server#3838), and the suite runs on a maintained
# server as well. It reads the trixie archive from the same mirror as the system's own sources,
# into apt state of its own, downloads the package and unpacks it with dpkg-deb. Prints the
# binary's path; does nothing but print it when the binary is already there.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${NATS_SERVER_CACHE:-$root/.cache/nats-server}"
dest="$cache/2.10"
bin="$dest/usr/sbin/nats-server"

if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q '^nats-server: v2\.10\.'; then
  echo "$bin"
  exit 0
fi

# The system's own Debian mirror (the first URIs of its deb822 sources), so that a machine that
# reaches only that mirror reaches trixie too.
uri="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)"
uri="${uri:-http://deb.debian.org/debian}"

apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/download"
cat > "$apt_dir/trixie.sources" <<SOURCES
Types: deb
URIs: $uri
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
apt_opts=(
  -o "Dir::Etc::sourcelist=$apt_dir/trixie.sources"
  -o Dir::Etc::sourceparts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir/cache"
  # The download lands in a folder of this user's; apt's own sandbox user could not write there.
  -o APT::Sandbox::User=root
)
echo "fetching nats-server from $uri trixie into $dest" >&2
apt-get -qq "${apt_opts[@]}" update >&2
rm -f "$apt_dir/download"/*.deb
(cd "$apt_dir/download" && apt-get -qq "${apt_opts[@]}" download nats-server/trixie >&2)
deb="$(ls "$apt_dir/download"/nats-server_*.deb)"

# Unpacked beside and moved in whole, so that a cut run never leaves half a server.
rm -rf "$dest.tmp"
dpkg-deb -x "$deb" "$dest.tmp"
if ! "$dest.tmp/usr/sbin/nats-server" --version | grep -q '^nats-server: v2\.10\.'; then
  echo "$deb is not a nats-server 2.10: $("$dest.tmp/usr/sbin/nats-server" --version)" >&2
  exit 1
fi
rm -rf "$dest"
mv "$dest.tmp" "$dest"
rm -rf "$apt_dir/lists" "$apt_dir/cache" "$apt_dir/download"
echo "$bin"
