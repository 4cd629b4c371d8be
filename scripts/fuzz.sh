#!/usr/bin/env bash
# Builds the libFuzzer target for GzipInputStream (Fuzz/GzipInputFuzzer.swift, with the indexed
# path's check in Fuzz/IndexedFuzzCheck.swift) with the
# address sanitizer and runs it, seeded with every fixture. FUZZ_SECONDS (default 600) bounds
# the run; crashes are written to fuzz-out/ as crash-*; turn each into a fixture.
#
#   scripts/fuzz.sh            build, then fuzz for FUZZ_SECONDS
#   scripts/fuzz.sh --build    build only (CI runs this, then a few seconds of fuzzing, so the
#                              target cannot stop compiling unnoticed)
# Other arguments are passed to libFuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
if [ "${1:-}" = "--build" ]; then
  build_only=true
  shift
fi

# libFuzzer ships with the toolchain as clang's runtime; without it -sanitize=fuzzer cannot link.
resource_dir=$(dirname "$(command -v swiftc)")/../lib/clang
if ! ls "$resource_dir"/*/lib/*/libclang_rt.fuzzer*.a >/dev/null 2>&1; then
  echo "fuzz.sh: this Swift toolchain has no libFuzzer runtime (libclang_rt.fuzzer) under $resource_dir" >&2
  exit 1
fi

out=.build/fuzz
mkdir -p "$out"
# The modules are compiled by hand, so they must be told the package they belong to: ByteStreams
# exposes its syscall layer to GzipStreams at `package` access, which needs -package-name.
flags=(-sanitize=fuzzer,address -parse-as-library -O -g -package-name gzstream)
c_modules=(-I Sources/CZlib -I Sources/CLibdeflate -I Sources/CIsal)
# Every Swift file of each module, in subfolders too, sorted so builds are reproducible.
sources() { find "Sources/$1" -name '*.swift' | LC_ALL=C sort; }
mapfile -t byte_streams < <(sources ByteStreams)
mapfile -t gzip_streams < <(sources GzipStreams)

swiftc "${flags[@]}" -emit-module -emit-library -static -module-name ByteStreams \
  -emit-module-path "$out/ByteStreams.swiftmodule" -o "$out/libByteStreams.a" "${byte_streams[@]}"
swiftc "${flags[@]}" -emit-module -emit-library -static -module-name GzipStreams \
  -I "$out" "${c_modules[@]}" -emit-module-path "$out/GzipStreams.swiftmodule" -o "$out/libGzipStreams.a" \
  "${gzip_streams[@]}"
# lld, the toolchain's linker: gold warns about every local symbol of the sanitizer runtime.
swiftc "${flags[@]}" -use-ld=lld -I "$out" "${c_modules[@]}" -L "$out" -lGzipStreams -lByteStreams -lz -ldeflate -lisal \
  -o "$out/gzip-input-fuzzer" Fuzz/GzipInputFuzzer.swift Fuzz/IndexedFuzzCheck.swift
echo "fuzz.sh: built $out/gzip-input-fuzzer"
if $build_only; then exit 0; fi

mkdir -p fuzz-out/corpus
find fixtures \( -name '*.gz' -o -name '*.bgz' \) -size -256k -exec cp {} fuzz-out/corpus/ \;
# The Swift runtime's backtracer reads the crashed process's stack from another thread, which
# the address sanitizer reports as a bad read that hides the real failure; libFuzzer prints
# the stack itself.
export SWIFT_BACKTRACE=enable=no
"$out/gzip-input-fuzzer" fuzz-out/corpus -max_total_time="${FUZZ_SECONDS:-600}" -max_len=65536 \
  -rss_limit_mb=2048 -timeout=10 -artifact_prefix=fuzz-out/ -print_final_stats=1 "$@"
