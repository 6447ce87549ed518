#!/usr/bin/env bash
# Installs every Debian package shardc needs. Idempotent: when everything is
# already installed it only runs dpkg-query and returns in well under a second.
#   scripts/setup.sh           what the build and the tests need
#   scripts/setup.sh --bench   and the benchmarks' peers that the tests do not
#                              need (bench/run passes it): PyTorch, some 100s of MB
set -euo pipefail

packages=(
  cmake ninja-build g++ clang-14 clang-format-14 llvm-14-dev llvm-14-tools libclang-rt-14-dev
  openjdk-17-jre-headless antlr4 libantlr4-runtime-dev
  libcli11-dev libfmt-dev catch2 nlohmann-json3-dev libmimalloc-dev
  mpich libmpich-dev openmpi-bin libopenmpi-dev libopenblas-dev libopenblas-serial-dev libscalapack-mpich-dev python3
  python3-numpy
  coinor-libcbc-dev pkg-config
  neovim
)
case "${1:-}" in
  "") ;;
  --bench) packages+=(python3-torch) ;;
  *) echo "usage: scripts/setup.sh [--bench]" >&2; exit 2 ;;
esac
# npm installs the VS Code grammar tester (editors/vscode); a node from
# elsewhere (e.g. NodeSource, which bundles npm) is used as it is.
if ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
