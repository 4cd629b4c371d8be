#!/usr/bin/env bash
# Builds the DocC documentation of the library modules with the toolchain's own docc, nothing
# fetched (no swift-docc-plugin):
#   1. the five modules in a build of their own (.build/docs/build, so the normal build is left
#      alone);
#   2. their symbol graphs with swift-symbolgraph-extract: public symbols (an override without a
#      comment of its own shows its superclass's), extensions of other modules' types, and the
#      modules each one re-exports (`import GzipStreams` gives the ByteStreams types, so its
#      documentation holds them too);
#   3. `docc convert` of each Sources/<Module>/<Module>.docc catalog into
#      .build/docs/<Module>.doccarchive, ready for static hosting;
#   4. a type check of every ```swift block of the articles, each wrapped in a function, against
#      those modules, so the examples cannot drift from the API (a block whose first line is
#      `// Package.swift` is a manifest excerpt and is skipped).
# Any docc warning, or any error or warning in the examples, fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT=${SWIFT:-swift}
toolchain_bin=$(dirname "$(command -v "$SWIFT")")
DOCC=${DOCC:-$toolchain_bin/docc}
EXTRACT=${EXTRACT:-$toolchain_bin/swift-symbolgraph-extract}
SWIFTC=${SWIFTC:-$toolchain_bin/swiftc}
for tool in "$DOCC" "$EXTRACT" "$SWIFTC"; do
  [ -x "$tool" ] || { echo "docs.sh: $tool not found (it ships with the Swift toolchain)" >&2; exit 1; }
done

modules=(ByteStreams ByteStreamsFoundation GzipStreams SecretStreams StreamCache TarArchives RatarmountIndexes)
out=.build/docs
scratch=$out/build
c_modules=(-I Sources/CZlib -I Sources/CLibdeflate -I Sources/CIsal -I Sources/CSodium -I Sources/CSQLite -I Sources/CFileSpace)

# StreamCache depends on every other library module but ByteStreamsFoundation, TarArchives and
# RatarmountIndexes (which builds TarArchives too).
mkdir -p "$out"
for target in StreamCache ByteStreamsFoundation RatarmountIndexes; do
  if ! "$SWIFT" build --scratch-path "$scratch" --target "$target" >"$out/build.log" 2>&1; then
    cat "$out/build.log" >&2
    echo "docs.sh: building $target failed" >&2
    exit 1
  fi
done
bin=$("$SWIFT" build --scratch-path "$scratch" --show-bin-path)
module_dir=$bin/Modules
[ -d "$module_dir" ] || module_dir=$bin
triple=$("$SWIFT" -print-target-info | sed -n 's/.*"triple": *"\([^"]*\)".*/\1/p' | head -n 1)

warnings=0
for module in "${modules[@]}"; do
  case $module in
    GzipStreams) reexported=ByteStreams ;;
    StreamCache) reexported=ByteStreams,SecretStreams ;;
    *) reexported= ;;
  esac
  graphs=$out/symbol-graphs/$module
  rm -rf "$graphs" "$out/$module.doccarchive"
  mkdir -p "$graphs"
  "$EXTRACT" -module-name "$module" -target "$triple" -I "$module_dir" "${c_modules[@]}" \
    -output-dir "$graphs" -minimum-access-level public -emit-extension-block-symbols \
    ${reexported:+-experimental-allowed-reexported-modules=$reexported}
  log=$out/$module.log
  if ! "$DOCC" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs" \
      --output-path "$out/$module.doccarchive" --fallback-display-name "$module" \
      --fallback-bundle-identifier "gzstream.$module" --transform-for-static-hosting >"$log" 2>&1; then
    cat "$log" >&2
    echo "docs.sh: docc convert failed for $module" >&2
    exit 1
  fi
  count=$(grep -c 'warning:' "$log" || true)
  if [ "$count" != 0 ]; then cat "$log" >&2; fi
  echo "$module: $count docc warnings, $out/$module.doccarchive"
  warnings=$((warnings + count))
done

# The articles' and the README's examples, one function per block; imports go to the top of
# the file.
snippets=$out/snippets
rm -rf "$snippets"
mkdir -p "$snippets"
for article in Sources/*/*.docc/*.md README.md; do
  if [ "$article" = README.md ]; then name=README
  else name=$(basename "$(dirname "$article")" .docc)_$(basename "$article" .md); fi
  awk -v name="$name" '
    /^```swift/ { inside = 1; first = 1; body = ""; next }
    /^```/ && inside {
      inside = 0
      if (!skip) { count++; blocks[count] = body; async[count] = (body ~ /await/) }
      skip = 0
      next
    }
    inside {
      if (first && $0 ~ /^\/\/ Package\.swift/) skip = 1
      first = 0
      if ($0 ~ /^import /) imports[$0] = 1
      else body = body "    " $0 "\n"
    }
    END {
      if (count == 0) exit
      for (line in imports) print line
      for (i = 1; i <= count; i++) {
        printf "\nfunc %s_%d() %sthrows {\n%s}\n", name, i, (async[i] ? "async " : ""), blocks[i]
      }
    }' "$article" >"$snippets/$name.swift"
  [ -s "$snippets/$name.swift" ] || rm "$snippets/$name.swift"
done
snippet_log=$out/snippets.log
if ! "$SWIFTC" -typecheck -swift-version 6 -module-name ArticleExamples -target "$triple" \
    -I "$module_dir" "${c_modules[@]}" "$snippets"/*.swift >"$snippet_log" 2>&1; then
  cat "$snippet_log" >&2
  echo "docs.sh: the articles' examples do not compile (wrapped in $snippets)" >&2
  exit 1
fi
snippet_warnings=$(grep -c 'warning:' "$snippet_log" || true)
if [ "$snippet_warnings" != 0 ]; then cat "$snippet_log" >&2; fi
echo "articles' and README's examples: $(ls "$snippets" | wc -l) files type-checked, $snippet_warnings warnings"

if [ "$warnings" != 0 ] || [ "$snippet_warnings" != 0 ]; then
  echo "docs.sh: $warnings docc warnings, $snippet_warnings warnings in the examples" >&2
  exit 1
fi
echo "open: python3 -m http.server --directory $out/GzipStreams.doccarchive 8000," \
  "then http://localhost:8000/documentation/gzipstreams"
