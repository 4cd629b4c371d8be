#!/usr/bin/env bash
# Builds the two libFuzzer targets with the address sanitizer and runs them, one after the other,
# FUZZ_SECONDS (default 600) split between them:
# - .build/fuzz/gzip-input-fuzzer (Fuzz/GzipInputFuzzer.swift, with the indexed path's check in
#   Fuzz/IndexedFuzzCheck.swift): GzipInputStream on any bytes, seeded with every fixture
#   (fuzz-out/corpus); crashes are written to fuzz-out/ as crash-*;
# - .build/fuzz/index-file-fuzzer (Fuzz/IndexFileFuzzer.swift and Fuzz/IndexFuzz*.swift): any
#   bytes as an index file (GZIDX, gztool's, bgzip's .gzi) over fixed files it makes at start-up,
#   every read checked against the true plain bytes; seeded with valid indexes it writes
#   (--write-seeds) and, when gztool is installed, gztool's own (fuzz-out/index-corpus);
#   crashes are written to fuzz-out/ as index-crash-*, and the fixed files it reads to
#   fuzz-out/index-fixed/ (fixed.gz, fixed.bgz), to reproduce a finding with the CLI.
# Turn each crash into a fixture or a test.
#
#   scripts/fuzz.sh            build, then fuzz for FUZZ_SECONDS
#   scripts/fuzz.sh --build    build only (CI runs this, then a few seconds of fuzzing, so the
#                              targets cannot stop compiling unnoticed)
# Other arguments are passed to libFuzzer, for both targets.
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
# CFileSpace: ByteStreams' header-only module for fallocate(2) and fstatfs(2); the modules that
# import ByteStreams must find it too.
c_modules=(-I Sources/CZlib -I Sources/CLibdeflate -I Sources/CIsal -I Sources/CFileSpace)
# Every Swift file of each module, in subfolders too, sorted so builds are reproducible.
sources() { find "Sources/$1" -name '*.swift' | LC_ALL=C sort; }
mapfile -t byte_streams < <(sources ByteStreams)
mapfile -t gzip_streams < <(sources GzipStreams)

# swiftc adds its objects to an existing archive: one left from a build before a source file was
# renamed would still hold the old file's symbols, and the link would see them twice.
rm -f "$out/libByteStreams.a" "$out/libGzipStreams.a"
swiftc "${flags[@]}" -emit-module -emit-library -static -module-name ByteStreams -I Sources/CFileSpace \
  -emit-module-path "$out/ByteStreams.swiftmodule" -o "$out/libByteStreams.a" "${byte_streams[@]}"
swiftc "${flags[@]}" -emit-module -emit-library -static -module-name GzipStreams \
  -I "$out" "${c_modules[@]}" -emit-module-path "$out/GzipStreams.swiftmodule" -o "$out/libGzipStreams.a" \
  "${gzip_streams[@]}"
# lld, the toolchain's linker: gold warns about every local symbol of the sanitizer runtime.
link() {
  local target=$1
  shift
  swiftc "${flags[@]}" -use-ld=lld -I "$out" "${c_modules[@]}" -L "$out" -lGzipStreams -lByteStreams -lz -ldeflate -lisal \
    -o "$out/$target" "$@"
  echo "fuzz.sh: built $out/$target"
}
link gzip-input-fuzzer Fuzz/GzipInputFuzzer.swift Fuzz/IndexedFuzzCheck.swift
link index-file-fuzzer Fuzz/IndexFileFuzzer.swift Fuzz/IndexFuzzFixtures.swift Fuzz/IndexFuzzOracle.swift \
  Fuzz/IndexFuzzSeeds.swift
if $build_only; then exit 0; fi

mkdir -p fuzz-out/corpus
find fixtures \( -name '*.gz' -o -name '*.bgz' \) -size -256k -exec cp {} fuzz-out/corpus/ \;
# The Swift runtime's backtracer reads the crashed process's stack from another thread, which
# the address sanitizer reports as a bad read that hides the real failure; libFuzzer prints
# the stack itself.
export SWIFT_BACKTRACE=enable=no
# Each target gets half the time (at least a second each).
seconds=${FUZZ_SECONDS:-600}
half=$(( seconds / 2 > 0 ? seconds / 2 : 1 ))
status=0
"$out/gzip-input-fuzzer" fuzz-out/corpus -max_total_time="$half" -max_len=65536 \
  -rss_limit_mb=2048 -timeout=10 -artifact_prefix=fuzz-out/ -print_final_stats=1 "$@" || status=$?

mkdir -p fuzz-out/index-corpus fuzz-out/index-fixed
"$out/index-file-fuzzer" --write-seeds fuzz-out/index-corpus --write-fixed fuzz-out/index-fixed
if command -v gztool >/dev/null 2>&1; then
  # gztool's own index of the fixed gzip file (its default span: one point per member start).
  gztool -f -I fuzz-out/index-corpus/gztool.gzi fuzz-out/index-fixed/fixed.gz >/dev/null 2>&1 ||
    echo "fuzz.sh: gztool could not index fuzz-out/index-fixed/fixed.gz; no gztool seed" >&2
fi
# The seeds are up to ~200 KB (GZIDX windows are 32 KiB each): -max_len keeps them whole.
"$out/index-file-fuzzer" fuzz-out/index-corpus -max_total_time="$(( seconds - half > 0 ? seconds - half : 1 ))" \
  -max_len=262144 -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -artifact_prefix=fuzz-out/index- \
  -print_final_stats=1 "$@" || status=$?
exit "$status"
