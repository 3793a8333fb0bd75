#!/usr/bin/env bash
# Debian packages whose text eval/generate.py and scripts/make_sample.py read. Only needed to
# regenerate the evaluation corpora or the bundled sample, not to build or test simdup.
# Idempotent: apt-get runs only when a package is missing.
set -euo pipefail

packages=(
  opencc manpages manpages-zh fortunes-zh python3-doc python3-numpy
  debian-handbook debian-reference-en debian-reference-zh-cn debian-reference-zh-tw
  maint-guide maint-guide-zh-cn maint-guide-zh-tw debian-faq debian-faq-zh-cn
  # generate.py --profile large: man pages of sections 2 and 3 (manpages-dev) and Perl's
  # (perl-doc), GNOME's zh_CN help pages (gnome-user-docs)
  manpages-dev perl-doc gnome-user-docs
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "eval/install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "eval/install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
