#!/usr/bin/env bash
# Two gzstream binaries (an older build and a newer one) on the same input, interleaved, so that
# both meet the same machine load: pack -6, pack --bgzf -6, unpack of a gzip -6 file and of a
# bgzip file; medians of ROUNDS rounds of wall time, and whether their outputs are identical.
# Uses make bench's mixed corpus (corpus.bin; BENCH_DIR, default ~/.cache/gzstream-bench; run make bench once).
#   scripts/compare-builds.sh OLD_BINARY NEW_BINARY [ROUNDS=5]
# e.g. git worktree add /tmp/old REV && (cd /tmp/old && swift build -c release), then
#   scripts/compare-builds.sh /tmp/old/.build/release/gzstream .build/release/gzstream
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY [ROUNDS]" >&2; exit 2; }
old=$1 new=$2 rounds=${3:-5}
dir=${BENCH_DIR:-$HOME/.cache/gzstream-bench}
corpus=$dir/corpus.bin
[ -f "$corpus" ] || { echo "$0: no corpus at $corpus (run make bench once)" >&2; exit 1; }
work=$(mktemp -d /tmp/ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
gzip -6 -c "$corpus" > "$work/c.gz"
bgzip -@2 -l 6 -c "$corpus" > "$work/c.bgz"
declare -A t
ops=("pack -c -6" "pack -c --bgzf -6" "unpack -c GZ" "unpack -c BGZ")
for r in $(seq "$rounds"); do
  for op in "${ops[@]}"; do
    for v in old new; do
      bin=${!v}
      case $op in
        "unpack -c GZ") in=$work/c.gz; args="unpack -c";;
        "unpack -c BGZ") in=$work/c.bgz; args="unpack -c";;
        *) in=$corpus; args=$op;;
      esac
      s=$(date +%s.%N); $bin $args < "$in" > "$work/out"; e=$(date +%s.%N)
      t["$op|$v"]+="$(echo "$e - $s" | bc) "
      [ "$v" = new ] && [ "$r" = 1 ] && sha256sum < "$work/out" > "$work/new.sum"
      [ "$v" = old ] && [ "$r" = 1 ] && sha256sum < "$work/out" > "$work/old.sum"
    done
    [ "$r" = 1 ] && { cmp -s "$work/old.sum" "$work/new.sum" && echo "$op: old and new output identical" || echo "$op: OUTPUT DIFFERS"; }
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '| operation | old s (median) | new s (median) | new/old |\n|---|---:|---:|---:|\n'
for op in "${ops[@]}"; do
  o=$(echo "${t["$op|old"]}" | median); n=$(echo "${t["$op|new"]}" | median)
  printf '| %s | %.3f | %.3f | %.3f |\n' "$op" "$o" "$n" "$(echo "$n / $o" | bc -l)"
done
