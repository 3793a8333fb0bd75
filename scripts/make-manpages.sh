#!/usr/bin/env bash
# Writes the man pages of simdup and of each command (simdup-dedup.1.gz, simdup-idf-build.1.gz,
# ...) into OUT_DIR, made by help2man from the CLI's own --help so that they cannot drift from it.
# The build runs this (cmake/install.cmake); the commands are those `simdup --help` lists.
# Usage: make-manpages.sh SIMDUP_BINARY OUT_DIR     (HELP2MAN names help2man if not on PATH)
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 SIMDUP_BINARY OUT_DIR" >&2
  exit 2
fi
bin=$(realpath "$1")
out=$2
help2man=${HELP2MAN:-help2man}
version=$("$bin" --version)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
rm -f "$out"/*.1.gz

# Prints NAME<TAB>DESCRIPTION for each command listed under "Subcommands:" in `simdup ARGS --help`.
subcommands() {
  "$bin" "$@" --help | awk '
    /^Subcommands:$/ { on = 1; next }
    on && /^$/ { on = 0 }
    on && /^  [a-z]/ { name = $1; sub(/^  [^ ]+ +/, ""); print name "\t" $0 }'
}

# The NAME line wants a short phrase: the description up to its first ": " or " (".
short() {
  local d=$1
  d=${d%%: *}
  d=${d%% (*}
  printf '%s' "$d"
}

# page PAGE_NAME DESCRIPTION SEE_ALSO [COMMAND WORDS...]: one page, then one per subcommand.
page() {
  local name=$1 desc=$2 see_also=$3
  shift 3
  # help2man runs a program, so each command gets a wrapper named like its page.
  local wrapper="$tmp/$name"
  printf '#!/bin/sh\nexec %q %s "$@"\n' "$bin" "$*" >"$wrapper"
  chmod +x "$wrapper"

  local subs children="" sub_name sub_desc
  subs=$(subcommands "$@")
  while IFS=$'\t' read -r sub_name sub_desc; do
    [ -n "$sub_name" ] || continue
    children+="${children:+,\n}.BR $name-$sub_name (1)"
  done <<<"$subs"
  {
    echo "[SEE ALSO]"
    if [ -n "$children" ]; then printf '%b\n' "$children"; fi
    if [ -n "$see_also" ]; then
      [ -z "$children" ] || echo ".PP"
      echo ".BR $see_also (1)"
    fi
    echo ".PP"
    echo "The full documentation is in /usr/share/doc/simdup (docs/cli.md in the sources)."
  } >"$tmp/$name.h2m"

  # help2man takes the page's name from the version string; the footer shows simdup's version.
  "$help2man" --no-info --section 1 --name "$desc" --source "$version" \
    --version-string "$name ${version#simdup }" \
    --include "$tmp/$name.h2m" --output "$tmp/$name.1" "$wrapper"
  gzip -9n <"$tmp/$name.1" >"$out/$name.1.gz"

  while IFS=$'\t' read -r sub_name sub_desc; do
    [ -n "$sub_name" ] || continue
    page "$name-$sub_name" "$(short "$sub_desc")" "$name" "$@" "$sub_name"
  done <<<"$subs"
}

page simdup "near-duplicate text detection with 64-bit SimHash fingerprints" ""
