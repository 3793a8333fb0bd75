#!/usr/bin/env bash
# `simdup fingerprint` (or `simdup dedup`) on one core and on every core of the affinity mask,
# beside the machine's own ceiling: one single-core copy per core at once (what the host gives
# independent work; on a shared virtual machine it is well below N when the neighbours are busy,
# which /proc/stat's steal column shows). Process start and exit are included. Issue 38, item 1:
# two cores at least 1.8x one core on a file of 100 MB or more.
#
#   bench/e2e/fingerprint_scaling.sh [--dedup] [--perf] [--file FILE] [--runs N] [SIMDUP...]
#     SIMDUP   default build/release/cli/simdup; several (a build before a change and one after)
#              take turns within each round, so that they see the same machine
#     --file   default eval/out/large-en/en.jsonl (docs/data.md); --runs: rounds, default 5
#     --dedup  time `simdup dedup FILE --out TMP --force --quiet` instead
#     --perf   after the rounds, `perf record` one all-core run of each SIMDUP and print where
#              its samples fall: text and feature code, JSON and record reading, copies and
#              allocation, the kernel, threading, output, start-up (the dynamic loader)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=fingerprint profile=0 file=$root/eval/out/large-en/en.jsonl runs=5
while [[ ${1:-} == --* ]]; do
  case $1 in
    --dedup) mode=dedup ;;
    --perf) profile=1 ;;
    --file) file=$2; shift ;;
    --runs) runs=$2; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
binaries=("$@")
[[ ${#binaries[@]} -gt 0 ]] || binaries=("$root/build/release/cli/simdup")
for b in "${binaries[@]}"; do [[ -x $b ]] || { echo "no simdup binary at $b" >&2; exit 1; }; done
[[ -r $file ]] || { echo "no input $file (docs/data.md makes eval/out/large-en)" >&2; exit 1; }
cpus=($(taskset -c -p $$ | sed 's/.*: //' | tr ',' '\n' | while IFS=- read -r a b; do
  seq "$a" "${b:-$a}"; done))
n=${#cpus[@]}
all=$(IFS=,; echo "${cpus[*]}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

job() {  # job SIMDUP CPULIST SLOT
  if [[ $mode == dedup ]]; then
    taskset -c "$2" "$1" dedup "$file" --out "$out/d$3" --force --quiet
  else
    taskset -c "$2" "$1" fingerprint "$file" > /dev/null
  fi
}
now() { date +%s.%N; }
steal() { awk '/^cpu /{print $9}' /proc/stat; }
job "${binaries[0]}" "$all" 0  # warm the page cache
steal0=$(steal) t_start=$(now)
for r in $(seq "$runs"); do
  for k in "${!binaries[@]}"; do
    b=${binaries[$k]}
    t0=$(now); job "$b" "${cpus[0]}" 0; t1=$(now)
    job "$b" "$all" 0; t2=$(now)
    for i in "${!cpus[@]}"; do job "$b" "${cpus[$i]}" "$i" & done
    wait; t3=$(now)
    awk -v k="$k" -v r="$r" -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" \
      'BEGIN{print k, r, b-a, c-b, d-c}' >> "$out/times"
  done
done
steal_share=$(awk -v s0="$steal0" -v s1="$(steal)" -v t0="$t_start" -v t1="$(now)" -v n="$n" \
  -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.0f", 100 * (s1 - s0) / hz / ((t1 - t0) * n)}')
mb=$(awk -v b="$(stat -c %s "$file")" 'BEGIN{printf "%.1f", b / 1e6}')
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $n cores" \
  "(${all}), steal ${steal_share} % of the CPU time during the rounds"
echo "simdup $mode $file ($mb MB), $runs rounds; median (best) wall seconds, start and exit included"
for k in "${!binaries[@]}"; do
  echo "${binaries[$k]}:"
  awk -v k="$k" '$1 == k' "$out/times" | sort -k3,3n | awk '{print $3}' > "$out/one"
  awk -v k="$k" '$1 == k' "$out/times" | sort -k4,4n | awk '{print $4}' > "$out/every"
  awk -v k="$k" '$1 == k' "$out/times" | sort -k5,5n | awk '{print $5}' > "$out/ceil"
  med() { awk '{v[NR] = $1} END{print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}' "$1"; }
  awk -v o="$(med "$out/one")" -v a="$(med "$out/every")" -v c="$(med "$out/ceil")" \
    -v bo="$(head -1 "$out/one")" -v ba="$(head -1 "$out/every")" -v bc="$(head -1 "$out/ceil")" \
    -v n="$n" -v mb="$mb" 'BEGIN{
    printf "  one core     %5.2f (%5.2f) s  %6.1f MB/s\n", o, bo, mb / o;
    printf "  %d cores      %5.2f (%5.2f) s  %6.1f MB/s  %.2fx one core (best %.2fx)\n", n, a, ba, mb / a, o / a, bo / ba;
    printf "  ceiling      %d one-core copies at once %5.2f (%5.2f) s: the machine gives %.2fx\n", n, c, bc, n * o / c}'
done

[[ $profile == 1 ]] || exit 0
command -v perf > /dev/null || { echo "--perf: no perf (Debian's linux-perf)" >&2; exit 1; }
for simdup in "${binaries[@]}"; do
  echo "where the samples of one $n-core run fall: $simdup"
  if [[ $mode == dedup ]]; then
    perf record -q -F 4000 -o "$out/perf.data" -- "$simdup" dedup "$file" --out "$out/p" \
      --force --quiet 2> /dev/null
  else
    perf record -q -F 4000 -o "$out/perf.data" -- "$simdup" fingerprint "$file" > /dev/null \
      2> /dev/null
  fi
  perf report -i "$out/perf.data" --no-children --sort dso,sym -n --stdio 2> /dev/null |
    awk '/^ +[0-9.]+%/ {
      n = $2; dso = $3; sym = ""; for (i = 5; i <= NF; ++i) sym = sym " " $i;
      if (dso ~ /kallsyms/) c = "kernel (page faults, read copies, scheduling)";
      else if (dso ~ /^ld-linux/) c = "start-up (dynamic loader)";
      else if (dso ~ /simdjson/ || sym ~ /jsonl_|line_input|reader::|record_source|file_source|fd_source|set_provenance|clear_fields|decode_|memchr/) c = "JSON and record reading";
      else if (sym ~ /memmove|memcpy|memset|memcmp|strlen|malloc|free|_int_|sysmalloc|unlink_chunk|operator new|operator delete|basic_string/) c = "copies, string scans and allocation";
      else if (dso ~ /tbb/ || sym ~ /sched_yield|pthread|futex/) c = "threading";
      else if (sym ~ /simdup::json::|to_hex|output_sink|record_writer|cli::/) c = "output";
      else if (dso ~ /utf8proc|opencc|marisa|simdup/) c = "text and feature code";
      else c = "other (" dso ")";
      share[c] += n; total += n }
      END { for (c in share) printf "%6.1f %%  %s\n", 100 * share[c] / total, c }' | sort -rn
done
