#!/usr/bin/env bash
# Speed and peak memory of gzstream beside GNU gzip and pigz, on the same inputs in one run.
# Inputs: the first 1 MiB, and 1 GiB, of a stream made by repeating a tar of /usr/include
# (real, compressible text and binaries). Figures: wall seconds, MB/s of uncompressed data,
# peak RSS (KiB) from /usr/bin/time -f %M. Memory flatness: gzstream's peak RSS at 1 GiB minus
# that at 1 MiB, for pack and unpack (the project's bound is 2 MiB).
set -euo pipefail
bin=$(readlink -f "${1:-.build/release/gzstream}")
out=${BENCH_DIR:-bench-out}
mkdir -p "$out"
big_size=${BENCH_BIG_BYTES:-1073741824}
small_size=1048576

if [ ! -s "$out/seed.tar" ]; then
  tar -cf "$out/seed.tar" -C / usr/include 2>/dev/null || tar -cf "$out/seed.tar" .
fi
make_input() { # size path
  [ -s "$2" ] && [ "$(stat -c %s "$2")" = "$1" ] && return
  local seed_size repeats
  seed_size=$(stat -c %s "$out/seed.tar")
  repeats=$(( $1 / seed_size + 1 ))
  { for _ in $(seq "$repeats"); do cat "$out/seed.tar"; done | head -c "$1" > "$2"; } || true
  return 0
}
make_input "$small_size" "$out/small.bin"
make_input "$big_size" "$out/big.bin"

measure() { # label size input output command... ; prints a row, leaves "seconds rss" in $out/last
  local label=$1 size=$2; shift 2
  /usr/bin/time -f "%e %M" -o "$out/time" sh -c 'in=$1; out=$2; shift 2; exec "$@" < "$in" > "$out"' sh "$@"
  read -r seconds rss < "$out/time"
  echo "$seconds $rss" > "$out/last"
  awk -v l="$label" -v s="$seconds" -v r="$rss" -v n="$size" \
    'BEGIN { if (s > 0) t = sprintf("%9.1f MB/s", n / s / 1e6); else t = sprintf("%14s", "(too fast)"); printf "%-34s %8.2f s %s %9d KiB\n", l, s, t, r }'
}

tools=(gzstream gzip)
command -v pigz >/dev/null && tools+=(pigz)
echo "inputs: $small_size and $big_size bytes; gzstream: $bin"
echo "zlib $(python3 -c 'import zlib; print(zlib.ZLIB_RUNTIME_VERSION)' 2>/dev/null || echo '?'), $(gzip --version | head -1), $(pigz --version 2>&1 | head -1)"
printf '%-34s %10s %14s %13s\n' "run" "time" "throughput" "peak RSS"
declare -A rss
for size_name in small big; do
  input="$out/$size_name.bin"
  size=$(stat -c %s "$input")
  gzip -c -6 < "$input" > "$input.ref.gz"   # every tool unpacks the same file
  for tool in "${tools[@]}"; do
    case $tool in
      gzstream) pack=("$bin" pack -c -6); unpack=("$bin" unpack -c) ;;
      gzip) pack=(gzip -c -6); unpack=(gzip -dc) ;;
      pigz) pack=(pigz -c -6); unpack=(pigz -dc) ;;
    esac
    measure "$tool pack -6 ($size_name)" "$size" "$input" "$input.$tool.gz" "${pack[@]}"
    rss[$tool-pack-$size_name]=$(cut -d' ' -f2 "$out/last")
    measure "$tool unpack ($size_name)" "$size" "$input.ref.gz" "$input.out" "${unpack[@]}"
    rss[$tool-unpack-$size_name]=$(cut -d' ' -f2 "$out/last")
    cmp -s "$out/$size_name.bin.out" "$input" || { echo "MISMATCH: $tool unpack ($size_name)"; exit 1; }
    rm -f "$out/$size_name.bin.out"
  done
  gzip -t "$input.gzstream.gz"
  echo "$size_name: gzstream .gz $(stat -c %s "$input.gzstream.gz") bytes, gzip .gz $(stat -c %s "$input.gzip.gz") bytes"
done
echo
for op in pack unpack; do
  small=${rss[gzstream-$op-small]} big=${rss[gzstream-$op-big]}
  delta=$((big - small))
  verdict=$([ "$delta" -le 2048 ] && echo "within 2 MiB" || echo "OVER 2 MiB")
  printf "gzstream %s peak RSS: %d KiB at 1 MiB, %d KiB at %d MiB: %+d KiB (%s)\n" "$op" "$small" "$big" "$((big_size >> 20))" "$delta" "$verdict"
done
