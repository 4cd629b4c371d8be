#!/usr/bin/env bash
# gzstream beside GNU gzip, pigz, igzip, bgzip and rapidgzip on the same inputs, in one run, so
# that every ratio compares tools that met the same machine load; on two corpora, since a speed
# or size measured on one kind of data says little about another: "mixed" (a tar of headers and
# Perl modules, then the toolchain's binaries: ~3.8x by gzip -6) and "text" (a tar of the text
# files of the toolchain's library and of Debian's Python, Perl, headers and documentation, then
# decompressed manual pages: ~6x by gzip -6).
#
# Prints Markdown tables, one per corpus (operation, tool with its exact flags, level, median
# seconds, MB/s of plain data, output bytes, median peak RSS in MiB, for every row), then the
# ratios of gzstream's medians to the other tools' on each corpus (time, and size for pack),
# and writes them to bench/results.md, drawn as a bar chart in bench/results.svg. Rows, on each
# corpus: pack at levels 1, 6, 9 (and at level 1 also `igzip -T CORES`); pack BGZF at level 6;
# unpack of one file made by `gzip -6` and of one made by `bgzip -l 6`, by every tool
# (rapidgzip too); unpack through an index: of the gzip -6 file (gzstream's index, rapidgzip's)
# and of a file made by `gzstream pack --index`. The rows run interleaved (each operation on the
# mixed corpus, then on the text one, then the next operation; then again, every other round in
# reverse, with `sync` before each run), BENCH_RUNS rounds;
# the tables show medians. Every command reads the input file on stdin and writes stdout to a
# file in BENCH_DIR; after each run, untimed, a pack output must pass `gzip -t` (a BGZF one also
# htslib's reader and the EOF member) and an unpack output must equal its corpus byte for byte,
# or the script stops. Then memory flatness, on the mixed corpus: gzstream's peak RSS for pack
# (default and --bgzf) and for unpack of that output, at 1 MiB and at BENCH_FLAT_SIZE bytes
# streamed through pipes; and for unpack through an index (of a file made by `pack --index`,
# then indexed again by `gzstream index`), at both sizes, on disk.
#
# Usage: scripts/bench.sh [path/to/gzstream]        (`make bench` builds release and runs this)
# Environment (sizes in bytes):
#   BENCH_SIZE       the size of each corpus, default 268435456 (256 MiB)
#   BENCH_RUNS       rounds, default 5
#   BENCH_FLAT_SIZE  the big input of the memory check, default 4294967296 (4 GiB)
#   BENCH_DIR        the corpora (corpus.bin, corpus-text.bin) and temporary outputs, outside the
#                    repository; default ${XDG_CACHE_HOME:-$HOME/.cache}/gzstream-bench
set -euo pipefail
export LC_ALL=C

die() { echo "bench: $*" >&2; exit 1; }
log() { echo "bench: $*" >&2; }

bin=$(readlink -f "${1:-.build/release/gzstream}")
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size=${BENCH_SIZE:-268435456}
runs=${BENCH_RUNS:-5}
flat_size=${BENCH_FLAT_SIZE:-4294967296}
dir=${BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gzstream-bench}
cores=$(nproc)
small_flat_size=1048576
started=$(date -u '+%Y-%m-%d %H:%M UTC')

for value in "$size" "$runs" "$flat_size"; do
  [[ $value =~ ^[1-9][0-9]*$ ]] || die "BENCH_SIZE, BENCH_RUNS and BENCH_FLAT_SIZE must be positive integers (got '$value')"
done
[ -x "$bin" ] || die "no gzstream binary at $bin (run 'make bench', or 'swift build -c release')"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian: apt-get install time)"
for tool in gzip pigz igzip bgzip cmp flock; do
  command -v "$tool" >/dev/null || die "$tool is missing ('make test-deps' installs gzip, pigz, igzip, bgzip)"
done
# rapidgzip (PyPI): from PATH, else the environment `make test-deps` makes.
rapidgzip=$(command -v rapidgzip || echo "$repo/.build/test-venv/bin/rapidgzip")
[ -x "$rapidgzip" ] || die "rapidgzip is missing ('make test-deps' installs it into .build/test-venv)"
case $(readlink -f "$dir")/ in
  "$repo"/*) die "BENCH_DIR must be outside the repository ($dir)" ;;
esac

mkdir -p "$dir"
exec 9>"$dir/lock"
flock -n 9 || die "another benchmark is running in $dir"
work=$(mktemp -d "$dir/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the corpora ------------------------------------------------------------------------------
# Two kinds of data, since a speed or size measured on one kind says little about another:
# "mixed" (half text, half machine code) and "text" (source code and documentation). Both are
# built once from files every machine with this toolchain and `make test-deps`' packages has, in
# a fixed order, and kept in BENCH_DIR; a corpus is rebuilt only when its size is not BENCH_SIZE.
corpora=(mixed text)
declare -A corpus_file=([mixed]=$dir/corpus.bin [text]=$dir/corpus-text.bin)

# mixed: a tar of /usr/include and /usr/share/perl, then the toolchain's binaries. Its recipe
# stays as it was, so that its bytes, and the results measured on them, stay comparable.
corpus_sources_mixed() {
  tar -cf - --sort=name -C / usr/include usr/share/perl
  local file
  for file in /opt/swift/usr/bin/*; do   # sorted (LC_ALL=C); symbolic links would repeat files
    if [ -f "$file" ] && [ ! -L "$file" ]; then cat "$file"; fi
  done
}
# text: a tar of the files that grep -I takes for text (no NUL byte in the first buffer) and that
# are not gzip files, folder by folder, each sorted by name: the toolchain's first (the same
# bytes on every machine with this toolchain: Swift interfaces, C and C++ headers, JSON), then
# Debian's (Python's standard library, Perl's modules, /usr/include, /usr/share/doc); then the
# manual pages of /usr/share/man, decompressed (about 100 MiB: the tar alone may fall short of
# 256 MiB on a machine with fewer -dev packages). Owners and times are fixed, so the bytes
# depend only on the files' contents, names and modes.
text_files() { # run in /
  local folder
  for folder in opt/swift/usr/lib/swift opt/swift/usr/lib/clang opt/swift/usr/share usr/lib/python3.[0-9]* \
      usr/share/perl usr/include usr/share/doc; do
    [ -d "$folder" ] || continue
    # xargs says 123 when a batch held no text (grep's 1); anything else (a closed pipe, once
    # the corpus is cut to size) ends the list.
    find "$folder" -type f ! -name '*.gz' -print0 | sort -z | { xargs -0 -r grep -IlZ -e '' 2>/dev/null || [ $? = 123 ]; } \
      || return
  done
}
text_tar() {
  (cd / && text_files | tar -cf - --null --no-recursion -T - --mtime=@0 --owner=0 --group=0 --numeric-owner)
}
corpus_sources_text() {
  text_tar
  # One gzip reads the pages concatenated (a run of gzip members), so that cutting the corpus
  # to size ends the pipeline with SIGPIPE, as it does the tar (xargs would report cat's).
  find /usr/share/man -type f -name '*.gz' -print0 | sort -z | xargs -0 -r cat 2>/dev/null | gzip -dc
}
build_corpus() { # name
  local name=$1 corpus=${corpus_file[$1]} status got
  if [ "$(stat -c %s "$corpus" 2>/dev/null || echo 0)" = "$size" ]; then return; fi
  log "building the $size-byte $name corpus in $corpus"
  set +o pipefail
  (set -e; "corpus_sources_$name") | head -c "$size" > "$corpus.tmp"
  status=("${PIPESTATUS[@]}")
  set -o pipefail
  # The sources end early with SIGPIPE (141) once head has what it needs.
  [ "${status[0]}" = 0 ] || [ "${status[0]}" = 141 ] || die "reading the $name corpus' sources failed (status ${status[0]})"
  [ "${status[1]}" = 0 ] || die "writing $corpus.tmp failed"
  got=$(stat -c %s "$corpus.tmp")
  [ "$got" = "$size" ] || { rm -f "$corpus.tmp"; die "the $name corpus' sources give only $got bytes; lower BENCH_SIZE"; }
  mv "$corpus.tmp" "$corpus"
}
for c in "${corpora[@]}"; do build_corpus "$c"; done
# What each corpus is made of, for the report: the tar's share of it, and the share of bytes
# that are printable ASCII, tab, LF or CR (a plain measure of "text" that needs no file names).
declare -A tar_bytes text_share
tar_bytes[mixed]=$(tar -cf - --sort=name -C / usr/include usr/share/perl | wc -c)
tar_bytes[text]=$(text_tar | wc -c)
for c in "${corpora[@]}"; do
  text_share[$c]=$(python3 -c 'import sys
printable = bytes(range(32, 127)) + b"\t\n\r"
total = text = 0
with open(sys.argv[1], "rb") as f:
    while chunk := f.read(1 << 20):
        total += len(chunk)
        text += len(chunk) - len(chunk.translate(None, printable))
print("%.1f" % (100 * text / total))' "${corpus_file[$c]}")
done

# --- the reference files every tool unpacks (made once per run, deleted at the end) -----------
bgzf_eof=1f8b08040000000000ff0600424302001b0003000000000000000000   # SAM/BAM spec §4.1.2
check_bgzf() { # file: BGZF as htslib reads it, ending with the EOF member
  [ "$(tail -c 28 "$1" | od -An -v -tx1 | tr -d ' \n')" = "$bgzf_eof" ] || return 1
  bgzip -r -I "$work/check.gzi" "$1" 2>/dev/null || return 1
  rm -f "$work/check.gzi"
}
# Per corpus: the gzip -6 and bgzip -l 6 files; gzstream's GZIDX index of the gzip -6 file,
# rapidgzip's (GZIDX too, with sparse windows), and a file packed by `gzstream pack --index`
# with its index. Made once and untimed by the rows (gzstream index is timed alone).
declare -A reference_gzip reference_bgzf gzstream_index rapidgzip_index packed_indexed index_us
for c in "${corpora[@]}"; do
  corpus=${corpus_file[$c]}
  reference_gzip[$c]=$work/$c.gz reference_bgzf[$c]=$work/$c.bgz
  log "$c corpus: making the reference files (gzip -6, bgzip -l 6) and the indexes"
  gzip -c -6 < "$corpus" > "${reference_gzip[$c]}"
  bgzip -c -@ "$cores" -l 6 < "$corpus" > "${reference_bgzf[$c]}"
  gzip -dc < "${reference_gzip[$c]}" | cmp -s - "$corpus" || die "gzip -dc does not give back the $c corpus"
  gzip -dc < "${reference_bgzf[$c]}" | cmp -s - "$corpus" || die "gzip -dc does not give back the $c corpus from the BGZF file"
  check_bgzf "${reference_bgzf[$c]}" || die "bgzip's output is not BGZF"
  index_start=${EPOCHREALTIME/./}
  "$bin" index "${reference_gzip[$c]}" || die "gzstream index failed"
  index_us[$c]=$(( ${EPOCHREALTIME/./} - index_start ))
  gzstream_index[$c]=${reference_gzip[$c]}.gzidx
  rapidgzip_index[$c]=$work/$c.rgidx
  "$rapidgzip" -d -c -P "$cores" --export-index "${rapidgzip_index[$c]}" "${reference_gzip[$c]}" | cmp -s - "$corpus" \
    || die "rapidgzip does not give back the $c corpus"
  packed_indexed[$c]=$work/$c-packed.gz
  "$bin" pack -6 --index -o "${packed_indexed[$c]}" < "$corpus" || die "gzstream pack --index failed"
done

# igzip compresses with threads only when ISA-L was built with them; otherwise -T is accepted
# and ignored. Threaded igzip deflates 1 MiB blocks apart, so its output differs from the
# single-threaded one's beyond 1 MiB: the same bytes mean -T did nothing, and the table says so.
igzip_threads_note="igzip level 1 of 0–3"
head -c 4194304 "${corpus_file[mixed]}" > "$work/threads.in"
if cmp -s <(igzip -c -1 < "$work/threads.in") <(igzip -c -1 -T "$cores" < "$work/threads.in"); then
  igzip_threads_note+="; built without threads: -T ignored, the same output"
fi
rm -f "$work/threads.in"

# --- the rows ---------------------------------------------------------------------------------
# Each row: corpus, operation, level, tool, key (the tool's name in the ratios), input, check
# (pack, pack-bgzf, unpack), command, note. Commands are single words separated by spaces;
# "gzstream" stands for the binary under test. Rows are added operation by operation, each on
# the mixed corpus and then on the text one, so that a round meets both within minutes.
corpus_of=() ops=() levels=() tools=() keys=() inputs=() checks=() cmds=() notes=()
add_row() {
  corpus_of+=("$1"); ops+=("$2"); levels+=("$3"); tools+=("$4"); keys+=("$5"); inputs+=("$6"); checks+=("$7")
  cmds+=("$8"); notes+=("${9:-}")
}
declare -A igzip_level=([1]=1 [6]=2 [9]=3)   # igzip has levels 0-3 only: its nearest
for level in 1 6 9; do
  for c in "${corpora[@]}"; do
    corpus=${corpus_file[$c]}
    add_row "$c" pack "$level" gzstream gzstream "$corpus" pack "gzstream pack -c -$level"
    add_row "$c" pack "$level" gzip gzip "$corpus" pack "gzip -c -$level"
    add_row "$c" pack "$level" pigz pigz "$corpus" pack "pigz -c -$level -p $cores"
    add_row "$c" pack "$level" igzip igzip "$corpus" pack "igzip -c -${igzip_level[$level]}" \
      "igzip level ${igzip_level[$level]} of 0–3"
    if [ "$level" = 1 ]; then
      add_row "$c" pack 1 igzip "igzip -T" "$corpus" pack "igzip -c -1 -T $cores" "$igzip_threads_note"
    fi
    add_row "$c" pack "$level" bgzip bgzip "$corpus" pack-bgzf "bgzip -c -@ $cores -l $level"
  done
done
for c in "${corpora[@]}"; do
  add_row "$c" "pack BGZF" 6 gzstream gzstream "${corpus_file[$c]}" pack-bgzf "gzstream pack -c --bgzf -6"
  add_row "$c" "pack BGZF" 6 bgzip bgzip "${corpus_file[$c]}" pack-bgzf "bgzip -c -@ $cores -l 6"
done
for format in gzip BGZF; do
  for c in "${corpora[@]}"; do
    if [ "$format" = gzip ]; then input=${reference_gzip[$c]} op="unpack gzip -6 file"
    else input=${reference_bgzf[$c]} op="unpack BGZF file"; fi
    add_row "$c" "$op" – gzstream gzstream "$input" unpack "gzstream unpack -c"
    add_row "$c" "$op" – gzip gzip "$input" unpack "gzip -dc"
    add_row "$c" "$op" – pigz pigz "$input" unpack "pigz -dc -p $cores"
    add_row "$c" "$op" – igzip igzip "$input" unpack "igzip -dc"
    add_row "$c" "$op" – bgzip bgzip "$input" unpack "bgzip -dc -@ $cores"
    add_row "$c" "$op" – rapidgzip rapidgzip "$input" unpack "$rapidgzip -dc -P $cores"
  done
done
# Building an index: alone (gzstream index, against one igzip decode of the file), and as a
# by-product of unpack (--write-index, against unpack alone). The latter reads a hard link of
# the gzip -6 file, so that the index it writes beside it is not the one the indexed rows read.
for c in "${corpora[@]}"; do
  op="index gzip -6 file" input=${reference_gzip[$c]}
  add_row "$c" "$op" – gzstream gzstream "$input" index "gzstream index -f -o $work/row.gzidx $input"
  add_row "$c" "$op" – igzip igzip "$input" unpack "igzip -dc" "one decode, for scale"
  ln -f "$input" "$work/$c-write-index.gz"
  op="unpack gzip -6 file, writing its index" input=$work/$c-write-index.gz
  add_row "$c" "$op" – gzstream "gzstream --write-index" "$input" unpack-write-index "gzstream unpack -c --write-index $input"
  add_row "$c" "$op" – gzstream gzstream "$input" unpack "gzstream unpack -c"
done
for c in "${corpora[@]}"; do
  op="unpack gzip -6 file, indexed" input=${reference_gzip[$c]}
  add_row "$c" "$op" – gzstream gzstream "$input" unpack "gzstream unpack -c --index ${gzstream_index[$c]} $input" \
    "index by gzstream index"
  add_row "$c" "$op" – rapidgzip rapidgzip "$input" unpack "$rapidgzip -dc -P $cores --import-index ${rapidgzip_index[$c]}" \
    "its own index"
  add_row "$c" "$op" – igzip igzip "$input" unpack "igzip -dc" "no index"
done
for c in "${corpora[@]}"; do
  op="unpack pack --index file, indexed" input=${packed_indexed[$c]}
  add_row "$c" "$op" – gzstream gzstream "$input" unpack "gzstream unpack -c --index $input.gzidx $input"
  add_row "$c" "$op" – igzip igzip "$input" unpack "igzip -dc" "no index"
done

# --- the runs, interleaved --------------------------------------------------------------------
times=() rss=() bytes=()
disk_peak_kib=0
output=$work/output
run_row() { # index
  local i=$1 words start end peak
  read -ra words <<< "${cmds[i]}"
  if [ "${words[0]}" = gzstream ]; then words[0]=$bin; fi
  rm -f "$output"
  # unpack --write-index refuses to replace an index: each run writes a new one.
  if [ "${checks[i]}" = unpack-write-index ]; then rm -f "${inputs[i]}.gzidx"; fi
  # Untimed: no run pays for writing back what the run before it left (a run of gzstream once
  # took 1.88 s against 0.33-0.42 s in the other rounds, with no sync between runs).
  sync
  start=${EPOCHREALTIME/./}
  /usr/bin/time -f %M -o "$work/rss" "${words[@]}" < "${inputs[i]}" > "$output" \
    || die "'${cmds[i]}' (${ops[i]}, ${corpus_of[i]} corpus) failed: $(tr '\n' ' ' < "$work/rss")"
  end=${EPOCHREALTIME/./}
  case ${checks[i]} in
    pack)
      gzip -t "$output" || die "'${cmds[i]}': gzip -t rejects the output"
      if [ "${tools[i]}" = gzstream ] && [ "$(member_count "$output")" != 1 ]; then
        die "'${cmds[i]}': the output is not one gzip member"
      fi ;;
    pack-bgzf)
      gzip -t "$output" || die "'${cmds[i]}': gzip -t rejects the output"
      check_bgzf "$output" || die "'${cmds[i]}': the output is not BGZF (htslib's reader or the EOF member)" ;;
    unpack) cmp -s "$output" "${corpus_file[${corpus_of[i]}]}" \
      || die "'${cmds[i]}' (${ops[i]}): the output differs from the ${corpus_of[i]} corpus" ;;
    unpack-write-index)
      cmp -s "$output" "${corpus_file[${corpus_of[i]}]}" \
        || die "'${cmds[i]}' (${ops[i]}): the output differs from the ${corpus_of[i]} corpus"
      index_reads_right "${inputs[i]}.gzidx" "${inputs[i]}" "${corpus_of[i]}" || die "'${cmds[i]}': its index reads wrong bytes" ;;
    index) index_reads_right "$work/row.gzidx" "${inputs[i]}" "${corpus_of[i]}" || die "'${cmds[i]}': the index reads wrong bytes" ;;
  esac
  peak=$(du -sk "$dir" | cut -f1)
  if [ "$peak" -gt "$disk_peak_kib" ]; then disk_peak_kib=$peak; fi
  times[i]+="$((end - start)) "
  rss[i]+="$(tail -n 1 "$work/rss") "
  bytes[i]+="$(stat -c %s "$output") "
  rm -f "$output"
  log "round $round/$runs: $(awk -v corpus="${corpus_of[i]}" -v op="${ops[i]}" -v command="${cmds[i]//$work\//}" -v us="$((end - start))" \
    'BEGIN { printf "%-5s %-20s %-30s %8.2f s", corpus, op, command, us / 1e6 }')"
}
# Whether 64 KiB from the middle of the plain data, read through the index, are the corpus's.
index_reads_right() { # index file corpus
  cmp -s <("$bin" unpack -c --index "$1" --offset $((size / 2)) --length 65536 "$2") \
    <(tail -c +$((size / 2 + 1)) "${corpus_file[$3]}" | head -c 65536)
}
# The number of gzip members in a file, by python's zlib (each member decoded in turn).
member_count() { # file
  python3 -c 'import sys, zlib
data, count = open(sys.argv[1], "rb").read(), 0
while data:
    member = zlib.decompressobj(31)
    member.decompress(data)
    data, count = member.unused_data, count + 1
print(count)' "$1"
}
bench_start=$SECONDS
# Odd rounds run the rows in order, even ones in reverse, so that no tool always runs first
# after the operation before (gzstream leads each operation's rows).
order=("${!cmds[@]}")
for ((round = 1; round <= runs; round++)); do
  if ((round % 2 == 1)); then rows=("${order[@]}"); else rows=(); for ((k = ${#order[@]} - 1; k >= 0; k--)); do rows+=("${order[k]}"); done; fi
  for i in "${rows[@]}"; do
    run_row "$i"
  done
done
bench_seconds=$((SECONDS - bench_start))

median() { # "numbers separated by spaces"
  tr ' ' '\n' <<< "$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
declare -A row_of   # "corpus|operation|level|key" -> index
med_us=() med_rss=() med_bytes=()
for i in "${!cmds[@]}"; do
  row_of["${corpus_of[i]}|${ops[i]}|${levels[i]}|${keys[i]}"]=$i
  med_us[i]=$(median "${times[i]}") med_rss[i]=$(median "${rss[i]}") med_bytes[i]=$(median "${bytes[i]}")
done

# --- memory flatness: pipes only, the big input is the mixed corpus repeated ------------------
# Prints "pack-RSS unpack-RSS" in KiB for `corpus repeated | head -c N | pack | unpack | wc -c`.
flat_measure() { # size pack-options...
  local n=$1 status count; shift
  set +o pipefail
  { while cat "${corpus_file[mixed]}"; do :; done; } | head -c "$n" \
    | /usr/bin/time -f %M -o "$work/rss.pack" "$bin" pack -c "$@" \
    | /usr/bin/time -f %M -o "$work/rss.unpack" "$bin" unpack -c | wc -c > "$work/count"
  status=("${PIPESTATUS[@]}")
  set -o pipefail
  if [ "${status[1]}" != 0 ] || [ "${status[2]}" != 0 ] || [ "${status[3]}" != 0 ]; then
    die "memory check, gzstream pack -c $* at $n bytes failed (statuses ${status[*]})"
  fi
  count=$(cat "$work/count")
  [ "$count" = "$n" ] || die "memory check, gzstream pack -c $*: $count bytes came back of $n"
  echo "$(tail -n 1 "$work/rss.pack") $(tail -n 1 "$work/rss.unpack")"
}
flat_rows=()
declare -A flat_unpack   # variant -> "small-KiB big-KiB" of the unpack side
declare -A flat_pack     # variant -> "small-KiB big-KiB" of the pack side
flat_start=$SECONDS
for variant in default bgzf; do
  if [ "$variant" = bgzf ]; then options=(--bgzf) label="gzstream pack -c --bgzf"; else options=() label="gzstream pack -c"; fi
  log "memory check: $label, $small_flat_size and $flat_size bytes"
  small=$(flat_measure "$small_flat_size" "${options[@]}")   # an assignment, so a failure stops here
  big=$(flat_measure "$flat_size" "${options[@]}")
  read -r small_pack small_unpack <<< "$small"
  read -r big_pack big_unpack <<< "$big"
  flat_rows+=("| \`$label\` | $small_pack | $big_pack | $(printf '%+d' $((big_pack - small_pack))) |")
  flat_rows+=("| \`gzstream unpack -c\` of that | $small_unpack | $big_unpack | $(printf '%+d' $((big_unpack - small_unpack))) |")
  flat_unpack[$variant]="$small_unpack $big_unpack"
  flat_pack[$variant]="$small_pack $big_pack"
done
# Parallel pack holds up to two chunks per thread in flight: its pipeline is full from a few
# MiB of input on, so flatness is also shown from 64 MiB (the bound) to the big input.
mid_flat_size=67108864
read -r mid_pack _ <<< "$(flat_measure "$mid_flat_size")"
# Unpack through an index reads the file at offsets, so the file is on disk: the corpus repeated,
# packed with --index (window-less points), then indexed again by gzstream index (points with
# windows). Prints "pack-index-RSS gzstream-index-RSS" in KiB of `unpack -c --index`.
flat_indexed() { # size
  local n=$1 file=$work/flat.gz rss_pack rss_index count
  set +o pipefail
  { while cat "${corpus_file[mixed]}"; do :; done; } | head -c "$n" | "$bin" pack --index -o "$file"
  set -o pipefail
  [ -s "$file.gzidx" ] || die "memory check: gzstream pack --index at $n bytes wrote no index"
  count=$(/usr/bin/time -f %M -o "$work/rss.indexed" "$bin" unpack -c --index "$file.gzidx" "$file" | wc -c)
  [ "$count" = "$n" ] || die "memory check: unpack through the pack --index index gave $count bytes of $n"
  rss_pack=$(tail -n 1 "$work/rss.indexed")
  # --no-tar: the corpus repeated starts with a tar that ends early, which index would warn of.
  "$bin" index -f --no-tar "$file" || die "memory check: gzstream index at $n bytes failed"
  count=$(/usr/bin/time -f %M -o "$work/rss.indexed" "$bin" unpack -c --index "$file.gzidx" "$file" | wc -c)
  [ "$count" = "$n" ] || die "memory check: unpack through gzstream index's index gave $count bytes of $n"
  rss_index=$(tail -n 1 "$work/rss.indexed")
  rm -f "$file" "$file.gzidx"
  echo "$rss_pack $rss_index"
}
log "memory check: unpack through an index, $small_flat_size and $flat_size bytes"
# Assignments, so that a failure in the function stops the script here.
small_indexed=$(flat_indexed "$small_flat_size")
big_indexed=$(flat_indexed "$flat_size")
read -r small_packidx small_gzidx <<< "$small_indexed"
read -r big_packidx big_gzidx <<< "$big_indexed"
flat_rows+=("| \`gzstream unpack -c --index\` (a \`pack --index\` file) | $small_packidx | $big_packidx | $(printf '%+d' $((big_packidx - small_packidx))) |")
flat_rows+=("| \`gzstream unpack -c --index\` (that file, \`gzstream index\`) | $small_gzidx | $big_gzidx | $(printf '%+d' $((big_gzidx - small_gzidx))) |")
flat_seconds=$((SECONDS - flat_start))

# --- the report -------------------------------------------------------------------------------
mib() { # bytes -> "256 MiB", "4 GiB"
  awk -v b="$1" 'BEGIN { if (b % 1073741824 == 0) printf "%d GiB", b / 1073741824
                         else printf (b % 1048576 ? "%.1f MiB" : "%d MiB"), b / 1048576 }'
}
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
memory=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit+=" with uncommitted changes"
# --version prints the libraries on lines of their own; the header wants them on one.
gzstream_version=$("$bin" --version | paste -sd, - | sed 's/,/, /g')
libdeflate_version=$(dpkg-query -W -f '${Version}' libdeflate-dev 2>/dev/null || echo "?")
gzip_version=$(gzip --version | head -n 1)
pigz_version=$(pigz --version 2>&1 | head -n 1)
igzip_version="igzip $(igzip --version 2>&1 | awk '{ print $NF; exit }') (ISA-L)"
bgzip_version=$(bgzip --version | head -n 1)
rapidgzip_version="rapidgzip $("$rapidgzip" --version 2>&1 | awk '{ print $NF; exit }')"
declare -A corpus_words=(
  [mixed]="a tar of /usr/include and /usr/share/perl, then the Swift toolchain's binaries (/opt/swift/usr/bin/*), concatenated and cut to size"
  [text]="a tar of the text files (as \`grep -I\` judges) of the toolchain's /opt/swift/usr/lib/swift, lib/clang and share, then of /usr/lib/python3.*, /usr/share/perl, /usr/include and /usr/share/doc (no *.gz), each folder sorted, owners and times fixed; then the manual pages of /usr/share/man decompressed; cut to size"
)

ratio() { # numerator-index denominator-index field(us|bytes)
  local a=$1 b=$2 field=$3 x y
  if [ -z "$a" ] || [ -z "$b" ]; then echo "n/a"; return; fi
  if [ "$field" = us ]; then x=${med_us[a]} y=${med_us[b]}; else x=${med_bytes[a]} y=${med_bytes[b]}; fi
  awk -v x="$x" -v y="$y" 'BEGIN { printf "%.3f", x / y }'
}
row() { echo "${row_of[$1]:-}"; }
shown_command() { # index: the command as the tables show it (no temporary folder, no venv path)
  local shown=${cmds[$1]//$work\//}
  echo "${shown//$rapidgzip_folder\//}"
}
rapidgzip_folder=$(dirname "$rapidgzip")
# The ratio summary: one line per comparison, a time and a size column per corpus ("–" where a
# size says nothing, as for unpack). Each: label, target, gzstream's row, the other's, sizes?
summary_line() { # label target gzstream-key other-key sizes(yes|no)
  local label=$1 target=$2 line c a b
  line="| $label |"
  for c in "${corpora[@]}"; do
    a=$(row "$c|$3") b=$(row "$c|$4")
    line+=" $(ratio "$a" "$b" us) |"
    if [ "$5" = yes ]; then line+=" $(ratio "$a" "$b" bytes) |"; else line+=" – |"; fi
  done
  echo "$line $target |"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", 100 * a / b }'; }

mkdir -p "$repo/bench"
{
  echo "# gzstream beside gzip, pigz, igzip, bgzip and rapidgzip, on two corpora"
  echo
  echo "Measured from $started on $cpu, $cores cores (nproc: the CORES in -p, -@ and -T below), $memory RAM,"
  echo "Linux $(uname -r). ${gzstream_version} (libdeflate linked in from Debian libdeflate-dev $libdeflate_version), commit $commit, release build as \`make install\` links it;"
  echo "$gzip_version; $pigz_version; $igzip_version; $bgzip_version; $rapidgzip_version."
  echo
  echo "Inputs, $size bytes ($(mib "$size")) each, built once and kept in BENCH_DIR:"
  echo
  for c in "${corpora[@]}"; do
    tar_part=$(( tar_bytes[$c] < size ? tar_bytes[$c] : size ))
    echo "- **$c** (\`$(basename "${corpus_file[$c]}")\`): ${corpus_words[$c]} ($tar_part bytes of tar)."
    echo "  ${text_share[$c]}% of its bytes are printable ASCII, tab, LF or CR. \`gzip -6\` makes it"
    echo "  $(stat -c %s "${reference_gzip[$c]}") bytes ($(awk -v p="$size" -v z="$(stat -c %s "${reference_gzip[$c]}")" 'BEGIN { printf "%.2f", p / z }')× smaller), \`bgzip -l 6\` $(stat -c %s "${reference_bgzf[$c]}") bytes (BGZF): the files every tool unpacks."
    echo "  \`gzstream index\` of the gzip -6 file took $(awk -v us="${index_us[$c]}" 'BEGIN { printf "%.2f", us / 1e6 }') s and wrote $(stat -c %s "${gzstream_index[$c]}") bytes"
    echo "  ($(pct "$(stat -c %s "${gzstream_index[$c]}")" "$(stat -c %s "${reference_gzip[$c]}")")% of the file); rapidgzip's (\`--export-index\`) is $(stat -c %s "${rapidgzip_index[$c]}") bytes."
    echo "  The \`pack --index\` file is \`gzstream pack -6 --index\` of the corpus ($(stat -c %s "${packed_indexed[$c]}") bytes, index $(stat -c %s "${packed_indexed[$c]}.gzidx") bytes)."
  done
  echo
  echo "Every command reads the input file on stdin and writes stdout to a file (page cache, plenty of"
  echo "RAM); after each run, untimed, a pack output must pass \`gzip -t\` (a BGZF one also htslib's reader,"
  echo "\`bgzip -r\`, and the EOF member) and an unpack output must be byte-identical to its corpus (\`cmp\`)."
  echo "The rows ran interleaved, BENCH_RUNS=$runs rounds of every row: each operation on the mixed corpus,"
  echo "then the same on the text corpus, then the next operation, so that the tools met the same load;"
  echo "odd rounds in that order, even rounds in reverse, with \`sync\` (untimed) before every run."
  echo "Seconds (wall clock) and peak RSS (\`/usr/bin/time -f %M\`, KiB / 1024) are medians."
  echo "MB/s = input size (plain bytes) / seconds / 10^6, for pack and unpack alike. gzstream packs with"
  echo "all cores by default; igzip has levels 0–3 only, and runs single-threaded unless given -T."
  echo "Disk: at most $((disk_peak_kib / 1024)) MiB in the benchmark folder during the runs (the two corpora, their"
  echo "unpack inputs and one output at a time)."
  for c in "${corpora[@]}"; do
    echo
    echo "## The $c corpus"
    echo
    echo "| operation | tool | level | seconds | MB/s | output bytes | peak RSS (MiB) |"
    echo "|---|---|---|---:|---:|---:|---:|"
    for i in "${!cmds[@]}"; do
      [ "${corpus_of[i]}" = "$c" ] || continue
      tool="\`$(shown_command "$i")\`${notes[i]:+ (${notes[i]})}"
      awk -v op="${ops[i]}" -v tool="$tool" -v level="${levels[i]}" -v us="${med_us[i]}" \
          -v plain="$size" -v out="${med_bytes[i]}" -v rss="${med_rss[i]}" \
        'BEGIN { printf "| %s | %s | %s | %.2f | %.1f | %d | %.1f |\n", op, tool, level, us / 1e6, plain / us, out, rss / 1024 }'
    done
  done
  echo
  echo "## Ratios"
  echo
  echo "gzstream's median over the other tool's, on each corpus (below 1: gzstream faster or smaller;"
  echo "each target is the one the project set itself; sizes only where the output is compared)."
  echo
  header="| gzstream / other |" rule="|---|"
  for c in "${corpora[@]}"; do header+=" $c: time | $c: size |"; rule+="---:|---:|"; done
  echo "$header target |"
  echo "$rule---|"
  summary_line "pack -1 / \`pigz -1 -p $cores\`" "time ≤ 0.6" "pack|1|gzstream" "pack|1|pigz" yes
  summary_line "pack -6 / \`pigz -6 -p $cores\`" "time ≤ 0.6, size ≤ 1.0" "pack|6|gzstream" "pack|6|pigz" yes
  summary_line "pack -9 / \`pigz -9 -p $cores\`" "time ≤ 0.75, size ≤ 1.0" "pack|9|gzstream" "pack|9|pigz" yes
  summary_line "pack -1 / \`igzip -1 -T $cores\`" "time ≤ 1.0 at ≤ its size" "pack|1|gzstream" "pack|1|igzip -T" yes
  summary_line "pack --bgzf -6 / \`bgzip -l 6 -@ $cores\`" "time ≤ 1.0, size ≤ 1.01" "pack BGZF|6|gzstream" "pack BGZF|6|bgzip" yes
  summary_line "pack --bgzf -6 / \`pigz -6 -p $cores\`" "time ≤ 0.6" "pack BGZF|6|gzstream" "pack|6|pigz" no
  summary_line "unpack gzip -6 file / \`igzip -d\`" "time ≤ 0.8" "unpack gzip -6 file|–|gzstream" "unpack gzip -6 file|–|igzip" no
  summary_line "unpack gzip -6 file / \`rapidgzip -P $cores\`" "–" "unpack gzip -6 file|–|gzstream" "unpack gzip -6 file|–|rapidgzip" no
  summary_line "\`gzstream index\` of a gzip -6 file / \`igzip -d\` of it" "time ≤ 1.1" "index gzip -6 file|–|gzstream" "index gzip -6 file|–|igzip" no
  summary_line "\`unpack --write-index\` / \`unpack\`" "time ≤ 1.05" "unpack gzip -6 file, writing its index|–|gzstream --write-index" "unpack gzip -6 file, writing its index|–|gzstream" no
  summary_line "unpack gzip -6 file through gzstream index's index / \`igzip -d\`" "time ≤ 0.6" "unpack gzip -6 file, indexed|–|gzstream" "unpack gzip -6 file, indexed|–|igzip" no
  summary_line "the same / \`rapidgzip -P $cores\` with its own index" "–" "unpack gzip -6 file, indexed|–|gzstream" "unpack gzip -6 file, indexed|–|rapidgzip" no
  summary_line "unpack a pack --index file through its index / \`igzip -d\`" "time ≤ 0.52" "unpack pack --index file, indexed|–|gzstream" "unpack pack --index file, indexed|–|igzip" no
  summary_line "unpack BGZF file / \`igzip -d\`" "time ≤ 0.6" "unpack BGZF file|–|gzstream" "unpack BGZF file|–|igzip" no
  summary_line "unpack BGZF file / \`bgzip -d -@ $cores\`" "time ≤ 1.0" "unpack BGZF file|–|gzstream" "unpack BGZF file|–|bgzip" no
  line="| \`gzstream index\`'s index, % of the gzip -6 file |"
  for c in "${corpora[@]}"; do
    line+=" – | $(awk -v i="$(stat -c %s "${gzstream_index[$c]}")" -v f="$(stat -c %s "${reference_gzip[$c]}")" 'BEGIN { printf "%.3f%%", 100 * i / f }') |"
  done
  echo "$line ≤ 1% |"
  echo
  echo "## Memory flatness"
  echo
  echo "gzstream's peak RSS (KiB) at $small_flat_size bytes and at $flat_size bytes ($(mib "$flat_size")) of input, one run"
  echo "each: the mixed corpus repeated, through \`head -c\` into \`gzstream pack -c\` on stdin, its output"
  echo "piped into \`gzstream unpack -c\` and counted (no file is written); unpack through an index reads"
  echo "a file on disk."
  echo
  echo "| command | at $(mib "$small_flat_size") | at $(mib "$flat_size") | difference |"
  echo "|---|---:|---:|---:|"
  printf '%s\n' "${flat_rows[@]}"
  echo
  read -r small_kib big_kib <<< "${flat_pack[default]}"
  awk -v s="$small_kib" -v m="$mid_pack" -v b="$big_kib" -v big="$(mib "$flat_size")" -v cores="$cores" 'BEGIN {
    printf "- gzstream pack (%d threads), peak RSS: %.1f MiB at 1 MiB, %.1f MiB at 64 MiB (its pipeline full), %.1f MiB at %s, difference from 64 MiB %+.1f MiB (target ≤ 32 MiB, difference ≤ 2 MiB)\n", cores, s / 1024, m / 1024, b / 1024, big, (b - m) / 1024 }'
  for variant in default bgzf; do
    read -r small_kib big_kib <<< "${flat_unpack[$variant]}"
    name=$([ "$variant" = bgzf ] && echo "BGZF" || echo "gzip")
    awk -v name="$name" -v s="$small_kib" -v b="$big_kib" -v big="$(mib "$flat_size")" 'BEGIN {
      printf "- gzstream unpack of %s, peak RSS: %.1f MiB at 1 MiB, %.1f MiB at %s, difference %+.1f MiB (target ≤ 32 MiB, difference ≤ 2 MiB)\n", name, s / 1024, b / 1024, big, (b - s) / 1024 }'
  done
  awk -v ps="$small_packidx" -v pb="$big_packidx" -v gs="$small_gzidx" -v gb="$big_gzidx" -v big="$(mib "$flat_size")" 'BEGIN {
    printf "- gzstream unpack through an index, peak RSS: %.1f / %.1f MiB at 1 MiB, %.1f / %.1f MiB at %s (pack --index / gzstream index; target ≤ 32 MiB, flat)\n", ps / 1024, gs / 1024, pb / 1024, gb / 1024, big }'

} > "$work/results.md"

# --- the chart: horizontal bars of MB/s, one panel (own scale) per operation, level and corpus --
for i in "${!cmds[@]}"; do
  case ${ops[i]} in
    pack) group="pack, level ${levels[i]}" ;;
    "pack BGZF") group="pack BGZF, level ${levels[i]}" ;;
    *) group=${ops[i]} ;;
  esac
  group+=" — ${corpus_of[i]} corpus"
  label="$(shown_command "$i")${notes[i]:+ (${notes[i]})}"
  value=$(awk -v p="$size" -v us="${med_us[i]}" 'BEGIN { printf "%.1f", p / us }')
  printf '%s\t%s\t%s\t%s\n' "$group" "${tools[i]}" "$label" "$value"
done > "$work/chart.tsv"
awk -F'\t' -v title="gzstream beside gzip, pigz, igzip, bgzip and rapidgzip: MB/s of plain data (higher is faster)" \
    -v subtitle="$(mib "$size") mixed and text corpora; medians of $runs interleaved rounds; $cpu, $cores cores; ${started%% *}" '
function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
function floor_(x,   f) { f = int(x); return (f > x) ? f - 1 : f }
function nice_step(max,   raw, p, m) {
  raw = max / 5; p = 10 ^ floor_(log(raw) / log(10)); m = raw / p
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p
}
{
  n++; group[n] = $1; tool[n] = $2; label[n] = $3; value[n] = $4; rows[$1]++
  if (!($1 in seen)) { seen[$1] = 1; groups++; group_name[groups] = $1; group_max[$1] = 0 }
  if ($4 != "" && $4 + 0 > group_max[$1]) group_max[$1] = $4 + 0
  if (length($3) > longest) longest = length($3)
}
END {
  split("gzstream gzip pigz igzip bgzip rapidgzip", order, " ")
  colour["gzstream"] = "#D55E00"; colour["gzip"] = "#999999"; colour["pigz"] = "#0072B2"
  colour["igzip"] = "#009E73"; colour["bgzip"] = "#E69F00"; colour["rapidgzip"] = "#CC79A7"
  left = 24 + longest * 7.3; bar_width = 520; width = left + bar_width + 110
  bar = 16; step = 22; y = 78
  body = ""
  for (g = 1; g <= groups; g++) {
    name = group_name[g]; max = group_max[name]; if (max <= 0) max = 1
    tick = nice_step(max); axis_max = tick * int(max / tick)
    if (axis_max < max) axis_max += tick
    y += 26
    body = body sprintf("<text x=\"12\" y=\"%d\" class=\"group\">%s</text>\n", y, esc(name))
    y += 8; bottom = y + rows[name] * step
    for (t = 0; t <= axis_max + tick / 2; t += tick) {   # the grid first, under the bars
      x = left + t / axis_max * bar_width
      body = body sprintf("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>\n", x, y - 2, x, bottom)
      body = body sprintf("<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%s</text>\n", x, bottom + 14, (tick >= 1 ? sprintf("%d", t) : sprintf("%g", t)))
    }
    for (i = 1; i <= n; i++) if (group[i] == name) {
      body = body sprintf("<text x=\"%.1f\" y=\"%d\" class=\"label\" text-anchor=\"end\">%s</text>\n", left - 8, y + 12, esc(label[i]))
      if (value[i] == "") {
        body = body sprintf("<text x=\"%.1f\" y=\"%d\" class=\"na\">n/a (not in this build)</text>\n", left + 4, y + 12)
      } else {
        w = value[i] / axis_max * bar_width
        body = body sprintf("<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", left, y, w, bar, colour[tool[i]])
        body = body sprintf("<text x=\"%.1f\" y=\"%d\" class=\"value\">%s</text>\n", left + w + 5, y + 12, value[i])
      }
      y += step
    }
    body = body sprintf("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"axis\"/>\n", left, y, left + bar_width, y)
    body = body sprintf("<text x=\"%.1f\" y=\"%d\" class=\"tick\">MB/s</text>\n", left + bar_width + 20, y + 14)
    y += 20
  }
  height = y + 16
  printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", width, height, width, height
  print "<style>"
  print "text { font-family: DejaVu Sans, Helvetica, Arial, sans-serif; font-size: 12px; fill: #222 }"
  print ".title { font-size: 16px; font-weight: bold } .subtitle { fill: #555 } .group { font-size: 13px; font-weight: bold }"
  print ".label { font-family: DejaVu Sans Mono, Menlo, Consolas, monospace; font-size: 11.5px }"
  print ".value, .tick { font-size: 11px } .na { fill: #888; font-style: italic }"
  print ".grid { stroke: #ddd; stroke-width: 1 } .axis { stroke: #444; stroke-width: 1 }"
  print "</style>"
  printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height
  printf "<text x=\"12\" y=\"24\" class=\"title\">%s</text>\n", esc(title)
  printf "<text x=\"12\" y=\"43\" class=\"subtitle\">%s</text>\n", esc(subtitle)
  x = 12
  for (k = 1; k <= 6; k++) {
    printf "<rect x=\"%d\" y=\"56\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, colour[order[k]]
    printf "<text x=\"%d\" y=\"66\">%s</text>\n", x + 17, order[k]
    x += 30 + length(order[k]) * 8
  }
  printf "<text x=\"%d\" y=\"66\" class=\"subtitle\">each panel has its own scale</text>\n", x + 20
  printf "%s", body
  print "</svg>"
}' "$work/chart.tsv" > "$work/results.svg"

mv "$work/results.md" "$repo/bench/results.md"
mv "$work/results.svg" "$repo/bench/results.svg"
cat "$repo/bench/results.md"
log "wrote bench/results.md and bench/results.svg; timed rounds took ${bench_seconds} s, the memory check ${flat_seconds} s"
log "disk: at most $((disk_peak_kib / 1024)) MiB in $dir during the runs (the corpora, ${#corpora[@]} of $(mib "$size"), stay there)"
