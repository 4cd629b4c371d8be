#!/usr/bin/env bash
# Turns the tree `make install` staged (DESTDIR=ROOT PREFIX=/usr, the zsh completion in
# /usr/share/zsh/vendor-completions) into a Debian package, as `make deb` runs it:
#   1. strips the binary (--strip-unneeded: the symbol table and debug information go; nothing
#      the dynamic linker needs) and compresses the manual page with gzip -9n;
#   2. /usr/share/doc/gzstream: copyright in Debian's machine-readable form (DEP-5) from LICENSE
#      and NOTICE, changelog.Debian.gz, and the CHANGELOG as the upstream changelog.gz; and a
#      lintian override, with its reason, for the one warning that does not apply;
#   3. DEBIAN/control (Depends: from dpkg-shlibdeps on the binary, so the libraries it links are
#      the ones named, with the versions their symbols need) and DEBIAN/md5sums;
#   4. dpkg-deb --build --root-owner-group: every file owned by root, whoever builds.
# Timestamps (the changelog's date, the files' mtimes) are the last commit's (SOURCE_DATE_EPOCH
# when set), so two builds of one commit give the same package.
# Usage: scripts/deb.sh ROOT DEBIAN-VERSION OUTPUT.deb; DEB_MAINTAINER names the maintainer.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$1 version=$2 deb=$3
maintainer=${DEB_MAINTAINER:?DEB_MAINTAINER is not set (make deb sets it)}
for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
  command -v "$tool" >/dev/null || { echo "deb.sh: $tool not found (make deb-deps)" >&2; exit 1; }
done
binary=$root/usr/bin/gzstream
man_page=$root/usr/share/man/man1/gzstream.1
for file in "$binary" "$man_page" "$root/usr/share/bash-completion/completions/gzstream" \
    "$root/usr/share/zsh/vendor-completions/_gzstream"; do
  [ -f "$file" ] || { echo "deb.sh: $file is missing: stage with make install (make deb does)" >&2; exit 1; }
done
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH
doc=$root/usr/share/doc/gzstream

# 1. The binary and the manual page.
unstripped=$(stat -c %s "$binary")
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$binary"
stripped=$(stat -c %s "$binary")
gzip -9nf "$man_page"

# 2. The documentation Debian asks for.
install -d -m 755 "$doc"
{
  cat <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: gzstream
Comment: This package holds the gzstream program, its manual page and its bash and
 zsh completions, built from the gzstream sources. The program links zlib,
 ISA-L, libsodium and SQLite as shared libraries, whose packages carry their
 own copyright files. libdeflate (Copyright 2016, 2018 Eric Biggers, Expat
 licence, below) is linked into the program from its static library. The Swift runtime (the standard library, Concurrency,
 Dispatch and FoundationEssentials) is linked into the program
 (--static-swift-stdlib); it is Copyright Apple Inc. and the Swift project
 authors, under the Apache License, Version 2.0 with the Runtime Library
 Exception: "As an exception, if you use this Software to compile your source
 code and portions of this Software are embedded into the binary product as a
 result, you may redistribute such product without providing attribution as
 would otherwise be required by Sections 4(a), 4(b) and 4(d) of the License."
 The test data of the source tree (fixtures/corpus/, under other projects'
 licences, listed in its NOTICE) is not in this package.

Files: *
Copyright: 2026 the gzstream authors
License: Apache-2.0

Files: usr/bin/gzstream
Copyright: 2026 the gzstream authors
 2016, 2018, Eric Biggers (libdeflate, linked in from its static library)
License: Apache-2.0 and Expat

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License. You may obtain a copy of
 the License at
 .
 https://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
 WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
 License for the specific language governing permissions and limitations under
 the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0 can be
 found in the file "/usr/share/common-licenses/Apache-2.0".

License: Expat
 Permission is hereby granted, free of charge, to any person
 obtaining a copy of this software and associated documentation files
 (the "Software"), to deal in the Software without restriction,
 including without limitation the rights to use, copy, modify, merge,
 publish, distribute, sublicense, and/or sell copies of the Software,
 and to permit persons to whom the Software is furnished to do so,
 subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be
 included in all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
 EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
 MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
 NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS
 BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN
 ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
 CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 SOFTWARE.
EOF
} >"$doc/copyright"
# The copyright above restates LICENSE's and NOTICE's first lines; stop if they change.
grep -q "Apache License" LICENSE && grep -q "^Copyright 2026 the gzstream authors$" NOTICE || {
  echo "deb.sh: LICENSE or NOTICE changed: update the copyright text in scripts/deb.sh" >&2; exit 1; }
chmod 644 "$doc/copyright"
{
  printf 'gzstream (%s) unstable; urgency=medium\n\n' "$version"
  printf '  * Built from the gzstream sources with make deb; the changes of this\n'
  printf '    version are in changelog.gz.\n\n'
  printf ' -- %s  %s\n' "$maintainer" "$(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$doc/changelog.Debian.gz"
gzip -9n <CHANGELOG.md >"$doc/changelog.gz"
chmod 644 "$doc/changelog.Debian.gz" "$doc/changelog.gz"
# lintian's one warning on this package, with the reason it does not apply.
install -d -m 755 "$root/usr/share/lintian/overrides"
cat >"$root/usr/share/lintian/overrides/gzstream" <<'EOF'
# Not a Debian upload: this package is built from the gzstream sources by make deb, and there
# is no "intent to package" bug in Debian's tracker for its changelog to close.
gzstream: initial-upload-closes-no-bugs
EOF
chmod 644 "$root/usr/share/lintian/overrides/gzstream"

# 3. The control files. dpkg-shlibdeps wants a debian/control to read; a minimal one will do.
shlibs=$(mktemp -d)
trap 'rm -rf "$shlibs"' EXIT
mkdir "$shlibs/debian"
printf 'Source: gzstream\n\nPackage: gzstream\nArchitecture: any\n' >"$shlibs/debian/control"
absolute_binary=$(readlink -f "$binary")
depends=$(cd "$shlibs" && dpkg-shlibdeps -O "$absolute_binary" 2>"$shlibs/log") || {
  cat "$shlibs/log" >&2; exit 1; }
depends=${depends#shlibs:Depends=}
# libdeflate is linked in (Sources/CLibdeflate/module.modulemap): libdeflate0 must not be there.
case ", $depends," in *", libdeflate0"[\ ,]*)
  echo "deb.sh: the binary links libdeflate's shared library ($depends)" >&2; exit 1 ;;
esac
for library in zlib1g libisal2 libsodium23 libsqlite3-0; do
  case ", $depends" in
    *", $library "*|*", $library,"*|*", $library") ;;
    *) echo "deb.sh: dpkg-shlibdeps does not name $library ($depends)" >&2; exit 1 ;;
  esac
done
# As dpkg-gencontrol counts: KiB per file, rounded up, and one per directory.
installed_size=$(find "$root" -path "$root/DEBIAN" -prune -o \( -type f -printf '%s\n' -o -printf '0\n' \) |
  awk '{ total += int(($1 + 1023) / 1024); if ($1 == 0) total += 1 } END { print total }')
install -d -m 755 "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<EOF
Package: gzstream
Version: $version
Architecture: $(dpkg --print-architecture)
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends
Section: utils
Priority: optional
Description: streaming gzip compressor and decompressor for every core
 gzstream packs and unpacks gzip (RFC 1952) data of any size in constant
 memory: it deflates on every core into one gzip member, and reads what every
 gzip producer writes (gzip, pigz, bgzip, zlib, multi-member files), checking
 the CRC-32 and ISIZE of every member.
 .
 Without a command it behaves as GNU gzip, for tar -I or through links named
 gzip, gunzip and zcat. It also writes and reads BGZF with its .gzi index,
 indexes any gzip file for random access (GZIDX, as indexed_gzip and rapidgzip
 read it), sends and receives over TCP, and keeps a compressed, optionally
 encrypted cache.
EOF
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

# 4. The package: directories 755, files 644, the program 755, whatever the umask was.
find "$root" -type d -exec chmod 755 {} +
find "$root" -type f -exec chmod 644 {} +
chmod 755 "$binary"
find "$root" -newermt "@$SOURCE_DATE_EPOCH" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb"
echo "deb.sh: $deb: $(stat -c %s "$deb") bytes; the binary $unstripped bytes, $stripped stripped;" \
  "Installed-Size $installed_size KiB; Depends: $depends"
