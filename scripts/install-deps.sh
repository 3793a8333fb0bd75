#!/usr/bin/env bash
# Installs simdup's build and test dependencies from Debian packages.
# Idempotent: packages already present are not touched, and apt-get runs only when one is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache clang-format
  libgtest-dev libgmock-dev libbenchmark-dev
  libutf8proc-dev libopencc-dev opencc libxxhash-dev xxhash libssl-dev
  libsimdjson-dev nlohmann-json3-dev libcli11-dev libtbb-dev
  zlib1g-dev libzstd-dev zstd
  librocksdb-dev redis-server libhiredis-dev libpqxx-dev postgresql
  pybind11-dev
  python3 python3-dev python3-numpy python3-jieba python3-pytest python3-distributed
  manpages-zh
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
