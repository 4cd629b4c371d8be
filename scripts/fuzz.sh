#!/usr/bin/env bash
# Builds the libFuzzer target for GzipInputStream (Fuzz/GzipInputFuzzer.swift) with the
# address sanitizer and runs it, seeded with every fixture. FUZZ_SECONDS (default 600) bounds
# the run; crashes are written to fuzz-out/ as crash-*; turn each into a fixture.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/fuzz
mkdir -p "$out" fuzz-out/corpus
flags=(-sanitize=fuzzer,address -parse-as-library -O -g)
swiftc "${flags[@]}" -emit-module -emit-library -static -module-name ByteStreams \
  -emit-module-path "$out/ByteStreams.swiftmodule" -o "$out/libByteStreams.a" Sources/ByteStreams/*.swift
swiftc "${flags[@]}" -emit-module -emit-library -static -module-name GzipStreams \
  -I "$out" -I Sources/CZlib -I Sources/CLibdeflate -I Sources/CIsal -emit-module-path "$out/GzipStreams.swiftmodule" -o "$out/libGzipStreams.a" \
  Sources/GzipStreams/*.swift
swiftc "${flags[@]}" -I "$out" -I Sources/CZlib -I Sources/CLibdeflate -I Sources/CIsal -L "$out" -lGzipStreams -lByteStreams -lz -ldeflate -lisal \
  -o "$out/gzip-input-fuzzer" Fuzz/GzipInputFuzzer.swift
find fixtures -name '*.gz' -size -256k -exec cp {} fuzz-out/corpus/ \;
"$out/gzip-input-fuzzer" fuzz-out/corpus -max_total_time="${FUZZ_SECONDS:-600}" -max_len=65536 \
  -rss_limit_mb=2048 -timeout=10 -artifact_prefix=fuzz-out/ -print_final_stats=1 "$@"
