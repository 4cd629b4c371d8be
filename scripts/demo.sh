#!/usr/bin/env bash
# The main job on real data: pack and unpack a tar of /usr/include (or of this repository when
# /usr/include is missing), check the result with GNU gzip, and print sizes and ratio.
set -euo pipefail
bin=$(readlink -f "${1:-.build/release/gzstream}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source_dir=/usr/include
[ -d "$source_dir" ] || source_dir=$(pwd)
tar -cf "$work/data.tar" -C "$(dirname "$source_dir")" "$(basename "$source_dir")" 2>/dev/null
plain=$(stat -c %s "$work/data.tar")
cp "$work/data.tar" "$work/original.tar"

start=$(date +%s.%N)
"$bin" pack -v "$work/data.tar"
packed_at=$(date +%s.%N)
packed=$(stat -c %s "$work/data.tar.gz")
gzip -t "$work/data.tar.gz"
rm "$work/data.tar"
"$bin" unpack -v "$work/data.tar.gz"
done_at=$(date +%s.%N)
cmp "$work/data.tar" "$work/original.tar"
gzip -dc "$work/data.tar.gz" | cmp - "$work/original.tar"

echo
echo "input:     tar of $source_dir, $plain bytes"
echo "packed:    $packed bytes ($(awk -v p="$packed" -v u="$plain" 'BEGIN { printf "%.1f%% saved", (1 - p / u) * 100 }'))" \
     "in $(awk -v a="$start" -v b="$packed_at" 'BEGIN { printf "%.2f s", b - a }')"
echo "unpacked:  $plain bytes in $(awk -v a="$packed_at" -v b="$done_at" 'BEGIN { printf "%.2f s", b - a }'), identical to the input"
echo "gzip -t accepts the packed file and gzip -dc gives the same bytes"
