#!/usr/bin/env bash
# code-server's install runs @vscode/ripgrep's postinstall, which downloads
# ripgrep from GitHub (unreachable here and in CI). It uses a download
# already in its cache instead: put Debian's rg there, packed as the
# release it looks for (@vscode/ripgrep 1.15.11, as code-server 4.99.4's
# npm-shrinkwrap.json pins it; ripgrep v13.0.0-10 for x86_64 Linux).
set -euo pipefail
rg="$(command -v rg)" || { echo "no rg (Debian: apt-get install ripgrep)" >&2; exit 1; }
cache="${TMPDIR:-/tmp}/vscode-ripgrep-cache-1.15.11"
pack="$(mktemp -d)"
mkdir -p "$cache"
cp "$rg" "$pack/rg"
tar czf "$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$pack" rg
rm -rf "$pack"
echo "ripgrep for @vscode/ripgrep 1.15.11: $cache"
