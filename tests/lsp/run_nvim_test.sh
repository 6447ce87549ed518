#!/usr/bin/env bash
# ctest entry for the Neovim real-client test: skips (exit 77, which ctest
# reports as skipped) only when nvim is not installed. `timeout` bounds the
# whole run as a last resort; the Lua script has its own timeouts.
# Usage: run_nvim_test.sh SHARDC_LSP
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v nvim >/dev/null; then
  echo "SKIPPED: nvim is not installed (scripts/setup.sh installs Debian's neovim)"
  exit 77
fi
SHARDC_LSP="$1" SHD_FILE="$here/error.shd" \
  exec timeout 60 nvim --headless -u NONE -i NONE -n -c "luafile $here/nvim_client.lua"
