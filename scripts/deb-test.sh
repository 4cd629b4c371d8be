#!/usr/bin/env bash
# Checks the Debian package `make deb` built, on this machine, as `make deb-test` runs it (and
# CI, on a fresh machine): installs it with apt-get (which would fetch a missing dependency),
# runs `gzstream --version` and `man -w gzstream`, loads the bash completion, removes it with
# `dpkg -r` and purges it with `dpkg -P`, and checks that none of the files `dpkg-deb -c` lists
# is left, nor its documentation directory. Then lintian on the package, when it is installed
# (`make deb-test` installs it as root): its output is shown, and an error or a warning fails.
# Root only: it changes the system. A gzstream package installed before is not touched: the
# script stops instead.
# Usage: scripts/deb-test.sh PACKAGE.deb VERSION
set -euo pipefail
deb=$(readlink -f "$1")
version=$2
fail() { echo "deb-test.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root: it installs $1 with apt-get and removes it with dpkg"
[ -f "$deb" ] || fail "$1 not found (make deb)"
if dpkg-query -W -f '${Status}' gzstream 2>/dev/null | grep -q 'installed\|config-files'; then
  fail "a gzstream package is already on this machine; remove it first (dpkg -P gzstream)"
fi

# The package's files (not its directories), as absolute paths. Its one directory of its own,
# /usr/share/doc/gzstream, is checked by name at the end.
mapfile -t files < <(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $NF }' | sed 's|^\./|/|')
[ "${#files[@]}" -ge 6 ] || fail "dpkg-deb -c lists ${#files[@]} files: ${files[*]}"
for file in "${files[@]}"; do
  [ ! -e "$file" ] || fail "$file exists before the package is installed; it would be lost on removal"
done

cleanup() { dpkg -P gzstream >/dev/null 2>&1 || true; }
trap cleanup EXIT
echo "== apt-get install $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$deb"
status=$(dpkg-query -W -f '${Status} ${Version}' gzstream)
[ "$status" = "install ok installed $(dpkg-deb -f "$deb" Version)" ] || fail "dpkg says: $status"

echo "== gzstream --version"
out=$(cd / && env -i PATH=/usr/bin:/bin gzstream --version)
echo "$out"
[ "$(printf '%s\n' "$out" | head -n 1)" = "gzstream $version" ] || fail "--version does not start with gzstream $version"
[ "$(command -v gzstream)" = /usr/bin/gzstream ] || fail "gzstream on PATH is $(command -v gzstream), not /usr/bin/gzstream"
echo "hello" | gzstream pack -c | gzip -dc | grep -qx hello || fail "gzstream pack -c does not round-trip through gzip -d"

echo "== man -w gzstream"
page=$(man -w gzstream)
echo "$page"
[ "$page" = /usr/share/man/man1/gzstream.1.gz ] || fail "man -w gzstream gives $page"
man gzstream 2>/dev/null | grep -q . || fail "man gzstream prints nothing"

echo "== bash completion"
completion=/usr/share/bash-completion/completions/gzstream
[ -f "$completion" ] || fail "$completion is missing"
bash -c "source '$completion' && complete -p gzstream" || fail "$completion does not register a completion"
[ -f /usr/share/zsh/vendor-completions/_gzstream ] || fail "the zsh completion is missing"

echo "== dpkg -r gzstream, dpkg -P gzstream"
dpkg -r gzstream
for file in "${files[@]}"; do
  [ ! -e "$file" ] || fail "$file is left after dpkg -r"
done
# The package has no configuration files, so dpkg -r already forgot it; purge only if it did not.
if dpkg-query -W -f '${Status}' gzstream 2>/dev/null | grep -q config-files; then
  dpkg -P gzstream
else
  echo "dpkg -r left no configuration files: nothing for dpkg -P to purge"
fi
trap - EXIT
left=$(dpkg-query -W -f '${Status}' gzstream 2>/dev/null || true)
[ -z "$left" ] || [ "$left" = "unknown ok not-installed" ] || fail "dpkg still knows gzstream: $left"
for file in "${files[@]}" /usr/share/doc/gzstream; do
  [ ! -e "$file" ] || fail "$file is left after dpkg -P"
done
echo "removed: none of the ${#files[@]} files is left"

if command -v lintian >/dev/null; then
  echo "== lintian $(basename "$deb")"
  # lintian refuses to run as root unless told it may.
  lintian --allow-root --fail-on error,warning --info "$deb" || fail "lintian found errors or warnings"
  echo "lintian: no errors or warnings"
else
  echo "deb-test.sh: lintian is not installed, so the package was not checked by it (Debian package: lintian)" >&2
fi
