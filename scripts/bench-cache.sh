#!/usr/bin/env bash
# Memory flatness of `gzstream cache` (a measurement, not a test).
#
# With a key file (so entries are gzip-compressed and encrypted), streams a generated input of
# 1 MiB and of 1 GiB through `gzstream cache put` (from a pipe) and `gzstream cache get` (-o
# /dev/null, a device, so the whole entry is checked before the first byte is written, as for
# standard output; and -o to a file, written in one pass beside it), and prints each command's peak RSS (`/usr/bin/time -f %M`, KiB) and the
# difference between the two sizes. Then a CACHE_BENCH_BIG-byte round trip, input and output
# compared by SHA-256. The input is AES-256-CTR keystream from openssl (seeded by a fixed
# passphrase, so every run streams the same bytes; incompressible, the worst case for the
# entry's size). Nothing is written to the repository: the cache, the key and the outputs live
# under a `mktemp -d` directory, removed at the end. About 4 minutes on the 2-core development
# machine; disk: about CACHE_BENCH_BIG bytes for the entry, plus 1 GiB for get -o.
#
# Usage: scripts/bench-cache.sh [path/to/gzstream]   (`make bench-cache` builds release and runs this)
# Environment:
#   CACHE_BENCH_BIG  bytes of the round trip, default 3221225472 (3 GiB)
#   TMPDIR           where the temporary directory is made, default /tmp
set -euo pipefail
export LC_ALL=C

die() { echo "bench-cache: $*" >&2; exit 1; }
log() { echo "bench-cache: $*" >&2; }

bin=$(readlink -f "${1:-.build/release/gzstream}")
big=${CACHE_BENCH_BIG:-3221225472}
small_size=1048576
large_size=1073741824

[[ $big =~ ^[1-9][0-9]*$ ]] || die "CACHE_BENCH_BIG must be a positive number of bytes (got '$big')"
[ -x "$bin" ] || die "no gzstream binary at $bin (run 'make bench-cache', or 'swift build -c release')"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian: apt-get install time)"
for tool in openssl sha256sum; do
  command -v "$tool" >/dev/null || die "$tool is missing (Debian: apt-get install ${tool/sha256sum/coreutils})"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/gzstream-bench-cache.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cache=(--dir "$work/cache" --key-file "$work/key")
head -c 32 /dev/urandom > "$work/key"
chmod 600 "$work/key"

# The first $1 bytes of a fixed keystream.
generate() {
  openssl enc -aes-256-ctr -nosalt -pbkdf2 -pass pass:gzstream-bench-cache -in /dev/zero 2>/dev/null | head -c "$1"
}

# Runs "$@" under /usr/bin/time; prints its peak RSS in KiB and its seconds.
timed() { # label command...
  local label=$1; shift
  /usr/bin/time -f '%M %e' -o "$work/time" "$@" || die "$label failed (status $?)"
  cat "$work/time"
}

# put, get to /dev/null and get -o FILE of $1 bytes: "putKiB getKiB getoKiB putSeconds getSeconds getoSeconds".
measure() { # bytes
  local n=$1 put get geto
  # openssl ends by SIGPIPE once head has its bytes: only put's status counts.
  set +o pipefail
  put=$(generate "$n" | timed "put of $n bytes" "$bin" cache "${cache[@]}" put bench)
  set -o pipefail
  get=$(timed "get of $n bytes" "$bin" cache "${cache[@]}" get bench -o /dev/null)
  geto=$(timed "get -o of $n bytes" "$bin" cache "${cache[@]}" get bench -o "$work/output")
  local got
  got=$(stat -c %s "$work/output")
  [ "$got" = "$n" ] || die "get -o gave $got bytes of $n"
  rm -f "$work/output"
  "$bin" cache "${cache[@]}" clear
  read -r put_kib put_s <<< "$put"
  read -r get_kib get_s <<< "$get"
  read -r geto_kib geto_s <<< "$geto"
  echo "$put_kib $get_kib $geto_kib $put_s $get_s $geto_s"
}

log "1 MiB: put, get, get -o"
small=$(measure "$small_size")   # an assignment, so that a failure stops here
log "1 GiB: put, get, get -o"
large=$(measure "$large_size")
read -r s_put s_get s_geto s_put_s s_get_s s_geto_s <<< "$small"
read -r l_put l_get l_geto l_put_s l_get_s l_geto_s <<< "$large"

# The big round trip: the input's SHA-256 is taken as it streams into put (through tee and a FIFO).
log "$big bytes: put, then get into sha256sum"
mkfifo "$work/hash.fifo"
sha256sum < "$work/hash.fifo" > "$work/input.sha" &
hasher=$!
set +o pipefail
generate "$big" | tee "$work/hash.fifo" | /usr/bin/time -f '%M %e' -o "$work/time.put" "$bin" cache "${cache[@]}" put big
status=("${PIPESTATUS[@]}")
set -o pipefail
wait "$hasher" || die "sha256sum of the input failed"
[ "${status[2]}" = 0 ] || die "put of $big bytes failed (status ${status[2]})"
stored=$("$bin" cache "${cache[@]}" list --json | sed -n 's/.*"storedSize":\([0-9]*\).*/\1/p')
/usr/bin/time -f '%M %e' -o "$work/time.get" "$bin" cache "${cache[@]}" get big | sha256sum > "$work/output.sha"
read -r b_put b_put_s < "$work/time.put"
read -r b_get b_get_s < "$work/time.get"
input_sha=$(cut -d' ' -f1 "$work/input.sha")
output_sha=$(cut -d' ' -f1 "$work/output.sha")
"$bin" cache "${cache[@]}" clear

mib() { awk -v b="$1" 'BEGIN { if (b % 1073741824 == 0) printf "%d GiB", b / 1073741824
                               else printf (b % 1048576 ? "%.1f MiB" : "%d MiB"), b / 1048576 }'; }
echo
echo "gzstream cache, encrypted entries (--key-file), level 6: peak RSS in KiB (seconds)"
echo "$("$bin" --version), $(uname -m), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| input | put (from a pipe) | get -o /dev/null (checked first) | get -o FILE |"
echo "|---|---:|---:|---:|"
echo "| $(mib $small_size) | $s_put ($s_put_s s) | $s_get ($s_get_s s) | $s_geto ($s_geto_s s) |"
echo "| $(mib $large_size) | $l_put ($l_put_s s) | $l_get ($l_get_s s) | $l_geto ($l_geto_s s) |"
printf '| difference | %+d | %+d | %+d |\n' $((l_put - s_put)) $((l_get - s_get)) $((l_geto - s_geto))
echo
echo "Round trip of $(mib "$big") ($big bytes, entry $stored bytes): put $b_put KiB ($b_put_s s), get $b_get KiB ($b_get_s s)"
echo "  input  sha256 $input_sha"
echo "  output sha256 $output_sha"
if [ "$input_sha" = "$output_sha" ]; then
  echo "  equal"
else
  die "the $big-byte round trip changed the data"
fi
