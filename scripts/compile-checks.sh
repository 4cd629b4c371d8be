#!/usr/bin/env bash
# Compiles (to SIL) the snippets of Tests/CompileChecks against the debug build's modules (run
# `swift build --build-tests` first): each Refused-*.swift must fail with a data-race
# diagnostic, Accepted.swift must pass with no warning. So sharing a stream between two tasks
# or threads keeps failing to compile, and moving one into a task keeps compiling.
# A few seconds: one swiftc -emit-sil per snippet, no build.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
SWIFTC=${SWIFTC:-$(dirname "$(command -v "$SWIFT")")/swiftc}
modules="$("$SWIFT" build --show-bin-path)/Modules"
[ -f "$modules/ByteStreams.swiftmodule" ] || {
  echo "compile-checks: no ByteStreams module in $modules; run swift build --build-tests first" >&2
  exit 1
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# -emit-sil, not -typecheck: region-based isolation (`sending`) is checked on SIL.
# ByteStreams imports the header-only C module CFileSpace, which a client of the built module
# must find too (SwiftPM passes its module map to the targets that depend on ByteStreams).
typecheck() { "$SWIFTC" -emit-sil -o /dev/null -swift-version 6 -I "$modules" -I Sources/CFileSpace "$@" >"$log" 2>&1; }

failures=0
for snippet in Tests/CompileChecks/Refused-*.swift; do
  if typecheck "$snippet"; then
    echo "compile-checks: $snippet compiled; the compiler must refuse it" >&2
    failures=$((failures + 1))
  elif ! grep -Eq "error: .*(risks causing data races|non-Sendable|does not conform to the 'Sendable' protocol)" "$log"; then
    echo "compile-checks: $snippet failed without a data-race diagnostic:" >&2
    cat "$log" >&2
    failures=$((failures + 1))
  fi
done
if ! typecheck Tests/CompileChecks/Accepted.swift || [ -s "$log" ]; then
  echo "compile-checks: Tests/CompileChecks/Accepted.swift must type-check with no warning:" >&2
  cat "$log" >&2
  failures=$((failures + 1))
fi
[ "$failures" = 0 ] || exit 1
echo "compile-checks: $(ls Tests/CompileChecks/Refused-*.swift | wc -l) refused as data races, Accepted.swift accepted"
