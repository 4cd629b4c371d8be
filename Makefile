# gzstream — build, test, demo, benchmark, install.
SWIFT ?= swift
PREFIX ?= /usr/local
RELEASE_BIN := .build/release/gzstream

.PHONY: all build test demo bench bench-cache bench-echo fuzz fuzz-build docs install uninstall deps test-deps test-venv clean \
	version-check dependency-test deb deb-deps deb-test test-spark spark-jar

all: build

# The version lives in VERSION, and only there is it changed. `gzstream --version` prints
# toolVersion, a literal copy in Sources/GZStreamCLI/Help/HelpText.swift, so that `swift build`
# alone compiles the right value (no build plugin, no generated source); this check, which build,
# install and deb run first, and the tests (HelpCLITests) fail when the two differ.
VERSION := $(shell cat VERSION)
TOOL_VERSION_SOURCE = Sources/GZStreamCLI/Help/HelpText.swift
version-check:
	@compiled=$$(sed -n 's/^let toolVersion = "\(.*\)"$$/\1/p' $(TOOL_VERSION_SOURCE)); \
	if [ "$$compiled" != "$(VERSION)" ]; then \
	  echo "make: VERSION says '$(VERSION)' but toolVersion in $(TOOL_VERSION_SOURCE) says '$$compiled';" \
	    "make them the same" >&2; \
	  exit 1; \
	fi

# Missing packages are installed with apt-get only when make runs as root (as in CI); anyone
# else is told what is missing and the command to run, and nothing is installed.
APT_GET_INSTALL = apt-get update -qq && apt-get install -y -qq

# The end of a recipe that gathered the Debian packages it lacks in $$missing: as root they are
# installed; otherwise make stops, saying that $(1) needs them and how to install them.
define install_or_stop
if [ -n "$$missing" ]; then \
  if [ "$$(id -u)" = 0 ]; then \
    echo "installing$$missing"; \
    $(APT_GET_INSTALL) $$missing; \
  else \
    echo "make: $(1) needs:$$missing; install them with: sudo apt-get install$$missing" >&2; \
    exit 1; \
  fi; \
fi
endef

# The C libraries' headers are all the build needs beyond the Swift toolchain: zlib (Debian:
# zlib1g-dev), libdeflate (libdeflate-dev), ISA-L (libisal-dev), libsodium (libsodium-dev, for
# the SecretStreams module) and SQLite (libsqlite3-dev, for the RatarmountIndexes module, which
# reads ratarmount's index), found through pkg-config.
# A missing one is an error.
deps:
	@missing=""; \
	for header in zlib.h:zlib1g-dev libdeflate.h:libdeflate-dev isa-l/igzip_lib.h:libisal-dev sodium.h:libsodium-dev sqlite3.h:libsqlite3-dev; do \
	  [ -f /usr/include/$${header%%:*} ] || missing="$$missing $${header##*:}"; \
	done; \
	command -v pkg-config >/dev/null 2>&1 || missing="$$missing pkg-config"; \
	$(call install_or_stop,the build)

# The tests and the benchmark also compare against GNU gzip, pigz, bgzip and igzip (Debian:
# gzip, pigz, tabix, isal), gztool to read its indexes (Debian: gztool) and python3's zlib, use script(1) for a pseudo-terminal (Debian:
# bsdutils), rsync to check pack --rsyncable (Debian: rsync), strace to check --synchronous's order (Debian: strace),
# mandoc and groff to check the manual page (Debian: mandoc, groff-base) and zsh to check its completion (Debian: zsh), and the benchmark measures peak memory with /usr/bin/time (Debian: time). Without
# root a missing one is reported, not installed: the tests that need it are skipped and say so.
test-deps: deps
	@missing=""; \
	for tool in gzip:gzip pigz:pigz bgzip:tabix igzip:isal gztool:gztool python3:python3 script:bsdutils sha256sum:coreutils openssl:openssl rsync:rsync strace:strace mandoc:mandoc groff:groff-base zsh:zsh; do \
	  command -v $${tool%%:*} >/dev/null 2>&1 || missing="$$missing $${tool##*:}"; \
	done; \
	[ -x /usr/bin/time ] || missing="$$missing time"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing$$missing"; \
	    $(APT_GET_INSTALL) $$missing; \
	  else \
	    echo "make: not installed:$$missing (the tests that need them are skipped; make bench needs them);" \
	      "to install them: sudo apt-get install$$missing" >&2; \
	  fi; \
	fi
	@$(MAKE) --no-print-directory test-venv

# indexed_gzip and rapidgzip (PyPI), the readers of the GZIDX index format that the index tests
# check against, in a virtual environment of their own, TEST_VENV: Debian's python is externally
# managed (no pip into it), and `python3 -m venv` needs Debian's python3-venv. Nothing is done
# when the environment already imports both; offline or without python3-venv, what is missing
# is said and the tests that need them are skipped.
TEST_VENV ?= .build/test-venv
TEST_PYPI_PACKAGES ?= indexed_gzip==1.10.3 rapidgzip==0.16.2
test-venv:
	@venv="$(TEST_VENV)"; \
	if [ -x "$$venv/bin/python3" ] && "$$venv/bin/python3" -c 'import indexed_gzip, rapidgzip' 2>/dev/null; then exit 0; fi; \
	if ! command -v python3 >/dev/null 2>&1; then \
	  echo "make: no python3, so no indexed_gzip and rapidgzip (the tests that need them are skipped)" >&2; exit 0; \
	fi; \
	if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing python3-venv"; \
	    $(APT_GET_INSTALL) python3-venv; \
	  else \
	    echo "make: not installed: python3-venv, so no indexed_gzip and rapidgzip (the tests that need them" \
	      "are skipped); to install it: sudo apt-get install python3-venv" >&2; \
	    exit 0; \
	  fi; \
	fi; \
	echo "installing $(TEST_PYPI_PACKAGES) into $$venv"; \
	{ [ -x "$$venv/bin/python3" ] || python3 -m venv "$$venv"; } && \
	"$$venv/bin/python3" -m pip install -q --disable-pip-version-check --retries 1 --timeout 15 \
	  $(TEST_PYPI_PACKAGES) || \
	echo "make: could not install $(TEST_PYPI_PACKAGES) into $$venv (offline?); the tests that need them" \
	  "are skipped" >&2

# The Spark data sources (docs/spark.md): the Python one, integrations/pyspark, and the JVM one,
# integrations/spark-jvm, and their tests in a local Spark: pyspark 4.0.1 with pyarrow, numpy
# and pytest (SPARK_PYPI_PACKAGES, pinned) and the Python package itself (pip install -e) in
# SPARK_VENV, a virtual environment of its own. The first install downloads about 450 MB (3.5
# minutes here); later runs install nothing and need no network. The 130 tests (those through
# Spark run once per source) take 1.7 minutes on the 2-core development machine with a release
# gzstream under a load average of about 8 (86 of them took 5.3 minutes with a debug build
# under about 10), most of it in the Python source's reads. Skipped with exit 0, saying
# why, without Java 17 or later (Spark 4's minimum) or when the packages cannot be installed
# (offline); without javac 17 or later the JVM source is left out, saying so. The tests run
# GZSTREAM, by default this checkout's debug build.
SPARK_VENV ?= .build/spark-venv
SPARK_PYPI_PACKAGES ?= pyspark==4.0.1 pyarrow==26.0.1 numpy==2.4.6 pytest==9.2.0
GZSTREAM ?=
SPARK_JAR ?= .build/spark-jvm/gzstream-spark.jar
SPARK_JVM_SOURCES = integrations/spark-jvm/src

# Recipe lines that make SPARK_VENV unless it is already complete, leaving its path in $$venv.
# When it cannot be made they say why, after "make: $(1):", and run $(2) (exit 0 to skip, exit
# 1 to fail).
define spark_venv
venv="$(SPARK_VENV)"; \
if ! { [ -x "$$venv/bin/python3" ] && "$$venv/bin/python3" -c 'import pyspark, pyarrow, numpy, pytest, gzstream_spark' 2>/dev/null; }; then \
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then \
    if [ "$$(id -u)" = 0 ]; then \
      $(APT_GET_INSTALL) python3-venv; \
    else \
      echo "make: $(1): no python3-venv; to install it: sudo apt-get install python3-venv" >&2; \
      $(2); \
    fi; \
  fi; \
  echo "installing $(SPARK_PYPI_PACKAGES) and integrations/pyspark into $$venv"; \
  { [ -x "$$venv/bin/python3" ] || python3 -m venv "$$venv"; } && \
  "$$venv/bin/python3" -m pip install -q --disable-pip-version-check --retries 1 --timeout 30 \
    $(SPARK_PYPI_PACKAGES) && \
  "$$venv/bin/python3" -m pip install -q --disable-pip-version-check -e integrations/pyspark || \
  { echo "make: $(1): could not install $(SPARK_PYPI_PACKAGES) into $$venv" \
      "(no package index reachable?)" >&2; $(2); }; \
fi
endef

# Recipe lines that compile SPARK_JAR with javac against the jars of the pyspark in $$venv
# (nothing else is downloaded: Spark ships Hadoop's client API, Jackson and SLF4J), unless it is
# newer than every file under SPARK_JVM_SOURCES. The jar appears whole or not at all.
define spark_jar_build
jars="$$("$$venv/bin/python3" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')" && \
if [ -f "$(SPARK_JAR)" ] && [ -z "$$(find $(SPARK_JVM_SOURCES) -type f -newer "$(SPARK_JAR)")" ]; then \
  echo "$(SPARK_JAR) is up to date"; \
else \
  classes="$(dir $(SPARK_JAR))classes" && rm -rf "$$classes" && mkdir -p "$$classes" && \
  echo "javac $(SPARK_JVM_SOURCES) -> $(SPARK_JAR)" && \
  javac --release 17 -Xlint:all,-path -encoding UTF-8 -d "$$classes" -cp "$$jars/*" \
    $$(find $(SPARK_JVM_SOURCES)/main/java -name '*.java') && \
  cp -R $(SPARK_JVM_SOURCES)/main/resources/. "$$classes/" && \
  jar --create --file "$(SPARK_JAR).tmp" -C "$$classes" . && \
  mv "$(SPARK_JAR).tmp" "$(SPARK_JAR)"; \
fi
endef

# The JVM data source's jar (docs/spark.md): `spark-submit --jars .build/spark-jvm/gzstream-spark.jar`.
spark-jar:
	@$(call spark_venv,spark-jar,exit 1); \
	$(spark_jar_build)

test-spark:
	@java_major=$$(java -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1); \
	if [ -z "$$java_major" ] || [ "$$java_major" -lt 17 ]; then \
	  echo "make: test-spark skipped: Spark 4 needs Java 17 or later (found: $${java_major:-none});" \
	    "to install it: sudo apt-get install openjdk-17-jre-headless" >&2; \
	  exit 0; \
	fi; \
	$(call spark_venv,test-spark skipped,exit 0); \
	jar=""; \
	javac_major=$$(javac -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p' | head -n 1); \
	if [ -n "$$javac_major" ] && [ "$$javac_major" -ge 17 ]; then \
	  { $(spark_jar_build); } || exit 1; \
	  jar="$(CURDIR)/$(SPARK_JAR)"; \
	else \
	  echo "make: test-spark: the JVM source is not tested: it needs javac 17 or later (found:" \
	    "$${javac_major:-none}); to install it: sudo apt-get install openjdk-17-jdk-headless" >&2; \
	fi; \
	binary="$(GZSTREAM)"; \
	if [ -z "$$binary" ]; then \
	  $(SWIFT) build --product gzstream && binary="$(CURDIR)/.build/debug/gzstream" || exit 1; \
	fi; \
	case "$$binary" in /*) ;; */*) binary="$(CURDIR)/$$binary" ;; esac; \
	python="$$(cd "$$venv" && pwd)/bin/python3"; \
	cd integrations/pyspark && GZSTREAM="$$binary" GZSTREAM_SPARK_JAR="$$jar" \
	  "$$python" -m pytest -q -p no:cacheprovider tests

build: deps version-check
	$(SWIFT) build

# Tests that block a thread (child processes, big files, waits) run on threads of their own
# (TestSupport's `.onDedicatedThreads`), not on Swift concurrency's cooperative pool, so a busy
# 2-core machine cannot starve other suites past their time limits. Off the pool nothing else
# bounds how many run at once, and Swift Testing (6.3) starts every test case together unless
# given a width: TEST_WIDTH test cases at a time, twice the cores by default. One run: the
# cache's tests (files of up to 2 GiB, 8 threads) had a run of their own only because they held
# the pool's threads; now they block only their own.
TEST_WIDTH ?= $(shell echo $$(( 2 * $$(nproc 2>/dev/null || echo 2) )))
test: test-deps
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/compile-checks.sh
	SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=$(TEST_WIDTH) $(SWIFT) test --skip-build --disable-xctest

# The README's dependency line, `.package(url: …, from: "<VERSION>")`, in a scratch package
# against a clone of this repository tagged VERSION (the tag is made in the clone only): it
# resolves and builds offline, and the program runs. A clean build of the library (52 s on the
# busy 2-core development machine), so `make test` reports it skipped, naming this target; CI
# runs this target.
dependency-test: deps
	$(SWIFT) build --build-tests
	GZSTREAM_DEPENDENCY_TEST=1 $(SWIFT) test --skip-build --disable-xctest --filter PackageDependencyTests

# Packs and unpacks a tar of /usr/include with the release binary and checks it with gzip.
demo: deps
	$(SWIFT) build -c release
	scripts/demo.sh $(RELEASE_BIN)

# gzstream beside gzip, pigz, igzip, bgzip and rapidgzip on two 256 MiB corpora kept in
# ${XDG_CACHE_HOME:-~/.cache}/gzstream-bench (BENCH_DIR), a mixed one (text and binaries) and a
# text one (source code and documentation): on each, pack at levels 1, 6, 9 (and igzip -T at 1),
# pack BGZF, unpack, unpack through an index; every row's time, output size and peak RSS, 5
# rounds interleaved across both corpora (BENCH_RUNS), medians, and gzstream's ratios to the
# others per corpus; then gzstream's peak RSS at 1 MiB and 4 GiB streamed (BENCH_FLAT_SIZE).
# About half an hour. Writes bench/results.md and bench/results.svg. The binary measured is the
# one `make install` installs (Swift runtime linked in: 3 ms less per start).
bench: test-deps
	$(SWIFT) build -c release --static-swift-stdlib --product gzstream
	scripts/bench.sh $(RELEASE_BIN)

# gzstream cache's peak RSS for put and get (encrypted entries) at 1 MiB and 1 GiB, and a
# CACHE_BENCH_BIG-byte round trip (default 3 GiB) compared by SHA-256; needs openssl for the
# input. Temporary data under mktemp -d (TMPDIR), removed at the end; about 4 minutes here.
bench-cache: test-deps
	$(SWIFT) build -c release
	scripts/bench-cache.sh $(RELEASE_BIN)

# The sockets in Swift concurrency under load: BENCH_ECHO_CONNECTIONS (1000) concurrent loopback
# connections in one process, each echoing BENCH_ECHO_BYTES (1 MiB) of text through gzip both
# ways (GzipOutputStream to the server, which inflates and deflates it back), every byte
# checked, at deflate levels 6 and 1; wall time and peak RSS from /usr/bin/time -v. A few
# minutes on 2 cores. bench/echo.md holds the last run's numbers.
BENCH_ECHO_CONNECTIONS ?= 1000
BENCH_ECHO_BYTES ?= 1048576
bench-echo:
	$(SWIFT) build -c release --product echo-bench
	@for level in 6 1; do \
	  /usr/bin/time -v -o .build/echo-bench.time .build/release/echo-bench --connections $(BENCH_ECHO_CONNECTIONS) \
	    --bytes $(BENCH_ECHO_BYTES) --level $$level || exit 1; \
	  grep -E 'Elapsed|Maximum resident|User time|System time' .build/echo-bench.time; \
	done

# libFuzzer (with the address sanitizer) on two targets, one after the other, FUZZ_SECONDS
# (600 by default) split between them: GzipInputStream on any bytes, seeded with the fixtures;
# and index files (GZIDX, gztool's, bgzip's .gzi) read beside fixed gzip and BGZF files the
# target makes, every read checked against the true bytes, seeded with valid indexes it writes
# (fuzz-out/index-corpus). Crashes land in fuzz-out/ (crash-*, index-crash-*). CI runs it for a
# few seconds (.ci/run), so the targets cannot stop building unnoticed.
fuzz: deps
	scripts/fuzz.sh

# Builds the fuzzers without running them (.build/fuzz/gzip-input-fuzzer, index-file-fuzzer).
fuzz-build: deps
	scripts/fuzz.sh --build

# DocC documentation of the library modules, built with the toolchain's own docc (nothing is
# fetched): .build/docs/<Module>.doccarchive for ByteStreams, ByteStreamsFoundation,
# GzipStreams, SecretStreams and StreamCache, each ready for static hosting. Fails on any docc
# warning and on any article example that does not compile. The modules are built in
# .build/docs/build, apart from the normal build.
docs: deps
	scripts/docs.sh

# Only the gzstream product is built: a build of every target would include the tests'
# TestSupport, which imports Testing, of which the toolchain has no static library.
# The Swift runtime is linked in (--static-swift-stdlib): the installed binary runs on machines
# without the Swift toolchain, needing only libc, libstdc++, zlib, ISA-L's, libsodium's and
# SQLite's shared libraries (Debian: zlib1g, libisal2, libsodium23, libsqlite3-0); libdeflate is
# linked in from libdeflate-dev's static library (Sources/CLibdeflate/module.modulemap says why).
# Beside it: the manual page (man/gzstream.1, mdoc) and the bash and zsh completions.
# What make install writes and make uninstall removes: one list, so the two cannot drift apart.
INSTALLED_BIN = $(DESTDIR)$(PREFIX)/bin/gzstream
INSTALLED_MAN = $(DESTDIR)$(PREFIX)/share/man/man1/gzstream.1
INSTALLED_BASH_COMPLETION = $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gzstream
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/site-functions
INSTALLED_ZSH_COMPLETION = $(DESTDIR)$(ZSH_COMPLETION_DIR)/_gzstream
INSTALLED_FILES = $(INSTALLED_BIN) $(INSTALLED_MAN) $(INSTALLED_BASH_COMPLETION) $(INSTALLED_ZSH_COMPLETION)
# The directories make install created (each one that did not exist before it, one a line),
# kept in the checkout, not in the installed tree (a .deb would ship it): make uninstall
# removes only those, and only when empty.
INSTALL_RECORD = .build/installed-directories

install: deps version-check
	$(SWIFT) build -c release --static-swift-stdlib --product gzstream
	@mkdir -p $(dir $(INSTALL_RECORD)); \
	for file in $(INSTALLED_FILES); do \
	  dir=$$(dirname "$$file"); \
	  while [ ! -d "$$dir" ]; do echo "$$dir"; dir=$$(dirname "$$dir"); done; \
	done | sort -u >> $(INSTALL_RECORD)
	install -d $(dir $(INSTALLED_FILES))
	install -m 755 $(RELEASE_BIN) $(INSTALLED_BIN)
	install -m 644 man/gzstream.1 $(INSTALLED_MAN)
	install -m 644 completions/gzstream.bash $(INSTALLED_BASH_COMPLETION)
	install -m 644 completions/_gzstream $(INSTALLED_ZSH_COMPLETION)

# Removes the four files `make install` installs (same DESTDIR and PREFIX); then, walking up
# from each file's directory, each directory that make install created (INSTALL_RECORD) and is
# now empty: share/man/man1, the completion directories and their parents when the install
# made them (a $(PREFIX)/share that was not there before it, under a DESTDIR or a new PREFIX).
# Never $(PREFIX) itself or $(PREFIX)/bin, nor a directory that was there before the install
# (it may be another package's, as Debian's zsh owns /usr/local/share/zsh/site-functions), nor
# one holding anything. Without the record (make clean) the directories stay.
uninstall:
	rm -f $(INSTALLED_FILES)
	@for file in $(INSTALLED_FILES); do \
	  dir=$$(dirname "$$file"); \
	  while [ "$$dir" != "$(DESTDIR)$(PREFIX)" ] && [ "$$dir" != "$(DESTDIR)$(PREFIX)/bin" ] \
	      && [ -f $(INSTALL_RECORD) ] && grep -Fqx -- "$$dir" $(INSTALL_RECORD) \
	      && [ -d "$$dir" ] && [ -z "$$(ls -A "$$dir")" ]; do \
	    rmdir "$$dir" && echo "rmdir $$dir" || exit 1; \
	    grep -Fvx -- "$$dir" $(INSTALL_RECORD) > $(INSTALL_RECORD).new; mv $(INSTALL_RECORD).new $(INSTALL_RECORD); \
	    dir=$$(dirname "$$dir"); \
	  done; \
	done

# The Debian package, gzstream_<VERSION>-<DEB_REVISION>_<arch>.deb in the checkout, from a tree
# that `make install` stages (DESTDIR, PREFIX=/usr, the zsh completion where Debian's zsh looks):
# scripts/deb.sh strips the binary, compresses the manual page, writes the copyright (DEP-5),
# the changelogs and DEBIAN/control (Depends: from dpkg-shlibdeps) and runs dpkg-deb. It needs
# dpkg-dev and binutils (Debian; installed when run as root, as the other deps are).
# make deb-test installs it with apt-get, checks it, removes and purges it, and checks that
# nothing is left (scripts/deb-test.sh; root only, as it changes the system), then runs lintian.
DEB_REVISION ?= 1
DEB_VERSION = $(VERSION)-$(DEB_REVISION)
DEB_ARCH = $(shell dpkg --print-architecture)
DEB_FILE = gzstream_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_ROOT = .build/deb/root
DEB_MAINTAINER ?= gzstream maintainers <maintainers@users.noreply.a-seed-f651f3c8.example>

deb-deps:
	@missing=""; \
	for tool in dpkg-deb:dpkg dpkg-shlibdeps:dpkg-dev strip:binutils; do \
	  command -v $${tool%%:*} >/dev/null 2>&1 || missing="$$missing $${tool##*:}"; \
	done; \
	$(call install_or_stop,make deb)

deb: deb-deps version-check
	rm -rf $(DEB_ROOT)
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(DEB_ROOT) PREFIX=/usr \
	  ZSH_COMPLETION_DIR=/usr/share/zsh/vendor-completions
	DEB_MAINTAINER="$(DEB_MAINTAINER)" scripts/deb.sh $(DEB_ROOT) $(DEB_VERSION) $(DEB_FILE)

# lintian (Debian: lintian) is installed when run as root and missing.
deb-test: deb
	@command -v lintian >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || $(APT_GET_INSTALL) lintian
	scripts/deb-test.sh $(DEB_FILE) $(VERSION)

clean:
	rm -rf .build fuzz-out gzstream_*.deb
