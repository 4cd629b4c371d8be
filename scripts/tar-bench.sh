#!/usr/bin/env bash
# gzstream beside GNU tar on one .tar.gz made by `tar | pigz` (not by gzstream): listing every
# member, extracting one member near the end, and extracting the whole tree, ROUNDS interleaved
# rounds of wall-clock seconds. gzstream reads through the GZIDX and member index that
# `gzstream index` writes first (its time is printed too). The archive is
# `tar -C / -cf - usr/share usr/include usr/lib/python3.*` through `pigz -6`, made once in DIR.
#
# Usage: scripts/tar-bench.sh path/to/gzstream [DIR] [ROUNDS]    (DIR default /var/tmp/gzstream-tar-bench)
set -euo pipefail
bin=$(readlink -f "${1:?usage: scripts/tar-bench.sh path/to/gzstream [DIR] [ROUNDS]}")
dir=${2:-/var/tmp/gzstream-tar-bench}
rounds=${3:-3}
mkdir -p "$dir" && cd "$dir"
if [ ! -s big.tar.gz ]; then
  tar -C / -cf - usr/share usr/include $(cd / && ls -d usr/lib/python3.* | head -n 1) 2>/dev/null | pigz -6 > big.tar.gz
fi
rm -f big.tar.gz.gzidx big.tar.gz.tarix
start=$(date +%s.%N); "$bin" index big.tar.gz; echo "index: $(echo "$(date +%s.%N) - $start" | bc) s"
last=$(tar -tzf big.tar.gz | grep -v '/$' | tail -n 1)
echo "archive: $(stat -c %s big.tar.gz) bytes, $(tar -tzf big.tar.gz | wc -l) members; one member: $last"
t() { local s; s=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; echo "$(echo "$(date +%s.%N) - $s" | bc) s"; }
for round in $(seq 1 "$rounds"); do
  echo "round $round: list    gzstream $(t "$bin" list --members big.tar.gz)  tar $(t tar -tzf big.tar.gz)"
  rm -rf x1 x2; mkdir x1 x2
  echo "round $round: one     gzstream $(t "$bin" unpack big.tar.gz "$last" -C x1)  tar $(t tar -xzf big.tar.gz -C x2 "$last")"
  cmp "x1/$last" "x2/$last"
  rm -rf x1 x2; mkdir x1 x2; sync
  echo "round $round: extract gzstream $(t "$bin" unpack --extract --links-outside big.tar.gz -C x1)  tar $(t tar -xzf big.tar.gz -C x2)"
done
rm -rf x1 x2
