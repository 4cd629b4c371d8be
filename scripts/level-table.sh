#!/usr/bin/env bash
# The table behind pack's levels: for each level, gzstream pack's output size and wall time
# beside pigz's at the same level (pigz -9 for gzstream's 10 to 12), on the same input, the two
# run alternately ROUNDS times; medians. Prints a Markdown table.
#
# Usage: scripts/level-table.sh GZSTREAM INPUT [ROUNDS]   (ROUNDS default 3)
# LEVELS="1 6 9" measures those levels only (default 1 to 12).
set -euo pipefail
bin=$1 input=$2 rounds=${3:-3}
command -v pigz >/dev/null || { echo "level-table: needs pigz" >&2; exit 1; }
cores=$(nproc)
median() { tr ' ' '\n' <<< "$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
timed() { # command... -> "seconds bytes"
  local start end bytes
  start=${EPOCHREALTIME/./}
  bytes=$("$@" < "$input" | wc -c)
  end=${EPOCHREALTIME/./}
  echo "$(( end - start )) $bytes"
}
echo "| level | gzstream bytes | pigz bytes | size ratio | gzstream s | pigz s | time ratio |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for level in ${LEVELS:-1 2 3 4 5 6 7 8 9 10 11 12}; do
  peer=$(( level > 9 ? 9 : level ))
  ours="" theirs="" our_bytes=0 their_bytes=0
  for ((round = 1; round <= rounds; round++)); do
    read -r us our_bytes <<< "$(timed "$bin" pack -c -n -"$level")"
    read -r them their_bytes <<< "$(timed pigz -c -n -"$peer" -p "$cores")"
    ours+="$us " theirs+="$them "
  done
  awk -v l="$level" -v ob="$our_bytes" -v tb="$their_bytes" -v o="$(median "$ours")" -v t="$(median "$theirs")" \
    'BEGIN { printf "| %d | %d | %d | %.3f | %.2f | %.2f | %.3f |\n", l, ob, tb, ob / tb, o / 1e6, t / 1e6, o / t }'
done
