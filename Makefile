# gzstream — build, test, demo, benchmark, install.
SWIFT ?= swift
PREFIX ?= /usr/local
RELEASE_BIN := .build/release/gzstream

.PHONY: all build test demo bench fuzz install deps test-deps clean

all: build

# The C libraries' headers are all the build needs beyond the Swift toolchain: zlib (Debian:
# zlib1g-dev), libdeflate (libdeflate-dev) and ISA-L (libisal-dev), found through pkg-config.
deps:
	@missing=""; \
	for header in zlib.h:zlib1g-dev libdeflate.h:libdeflate-dev isa-l/igzip_lib.h:libisal-dev; do \
	  [ -f /usr/include/$${header%%:*} ] || missing="$$missing $${header##*:}"; \
	done; \
	command -v pkg-config >/dev/null 2>&1 || missing="$$missing pkg-config"; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing"; \
	  apt-get update -qq && apt-get install -y -qq $$missing; \
	fi

# The tests and the benchmark also compare against GNU gzip, pigz, bgzip and igzip (Debian:
# gzip, pigz, tabix, isal), use script(1) for a pseudo-terminal (Debian: bsdutils), and the
# benchmark measures peak memory with /usr/bin/time (Debian: time).
test-deps: deps
	@missing=""; \
	for tool in gzip:gzip pigz:pigz bgzip:tabix igzip:isal script:bsdutils sha256sum:coreutils; do \
	  command -v $${tool%%:*} >/dev/null 2>&1 || missing="$$missing $${tool##*:}"; \
	done; \
	[ -x /usr/bin/time ] || missing="$$missing time"; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing"; \
	  apt-get update -qq && apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build

test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --disable-xctest

# Packs and unpacks a tar of /usr/include with the release binary and checks it with gzip.
demo: deps
	$(SWIFT) build -c release
	scripts/demo.sh $(RELEASE_BIN)

# gzstream beside gzip, pigz, igzip and bgzip on a 256 MiB corpus kept in
# ${XDG_CACHE_HOME:-~/.cache}/gzstream-bench (BENCH_DIR): pack at levels 1, 6, 9, pack BGZF,
# unpack; 3 interleaved rounds (BENCH_RUNS), medians; then gzstream's peak RSS at 1 MiB and
# 4 GiB streamed (BENCH_FLAT_SIZE). Writes bench/results.md and bench/results.svg.
bench: test-deps
	$(SWIFT) build -c release
	scripts/bench.sh $(RELEASE_BIN)

# libFuzzer (with the address sanitizer) on GzipInputStream, seeded with the fixtures;
# FUZZ_SECONDS=600 by default. Crashes land in fuzz-out/.
fuzz: deps
	scripts/fuzz.sh

install: deps
	$(SWIFT) build -c release
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(RELEASE_BIN) $(DESTDIR)$(PREFIX)/bin/gzstream

clean:
	rm -rf .build fuzz-out
