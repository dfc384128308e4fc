# kperf - build, run, test, bench, fuzz, install.
# `make run` and `make test` are the two commands a new machine needs.

BUILD    ?= build
SANITIZE ?=
PREFIX   ?= /usr/local
DESTDIR  ?=

CC       ?= gcc
CXX      ?= g++
PKGS     := libmicrohttpd libpq jansson gsl zlib libcurl libxxhash libxml-2.0
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wvla -fno-common
# OPT: the optimisation level (make test builds the sanitizer tree with -O1,
# as the sanitizers' documentation advises: a third less to compile)
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
CFLAGS   += -std=c11 -D_GNU_SOURCE $(WARN) -MMD -MP \
            $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -I$(BUILD)/gen $(SERVER_INC)
# Headers are named from the root, the folder saying where each lives
# ("lib/buf.h", "server/db/db.h"): one -I, as PostgreSQL's src/include.
SERVER_INC  := -I.
# C++ only for lib/dtoa.cc, the wrapper of double-conversion (shortest doubles).
CXXFLAGS ?= $(OPT) -g
CXXFLAGS += -std=c++17 -Wall -Wextra -Werror -Wshadow -Wmissing-declarations -MMD -MP $(SERVER_INC)
LDLIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldouble-conversion -lstdc++ \
            -lpthread -lm
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
CXXFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

SERVER_SRC := $(filter-out server/main.c,$(wildcard server/*.c server/*/*.c)) $(wildcard api/*.c) \
              $(wildcard lib/*.c)
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/lib/dtoa.o \
              $(BUILD)/obj/gen/migrations.o
TEST_SRC   := $(wildcard tests/unit/*.c) $(wildcard tests/integration/*.c)
TEST_OBJ   := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
HA_OBJ     := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/ha/*.c tests/integration/harness*.c))
MIGRATIONS := $(sort $(wildcard migrations/[0-9][0-9][0-9]_*.sql))
VENDOR     := static/vendor/chart.umd.min.js static/vendor/chartjs-plugin-zoom.min.js \
              static/vendor/hammer.min.js

.PHONY: all deps run stop test test-ha test-kernel check headers unit bench bench-detect bench-capacity fuzz install clean vendor
all: $(BUILD)/kperfd $(BUILD)/tests/kperf-tests vendor

$(BUILD)/kperfd: $(BUILD)/obj/server/main.o $(SERVER_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/kperf-tests: $(TEST_OBJ) $(SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcriterion -lcurl

$(BUILD)/tests/kperf-ha-tests: $(HA_OBJ) $(SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcriterion -lcurl

# Criterion finds tests through globals in a linker section; ASan's redzones
# between globals would break that walk, so test objects keep plain globals.
ifneq ($(SANITIZE),)
$(BUILD)/obj/tests/%.o: CFLAGS += --param asan-globals=0
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c -o $@ $<

$(BUILD)/obj/gen/migrations.o: $(BUILD)/gen/migrations.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/migrations.c: $(MIGRATIONS) scripts/gen-migrations.sh
	@mkdir -p $(dir $@)
	scripts/gen-migrations.sh $(MIGRATIONS) > $@.tmp && mv $@.tmp $@

# Chart.js and its zoom plugin come from npm (pinned by package-lock.json)
# and are served by kperfd itself: no CDN at run time.
vendor: $(VENDOR)
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@
static/vendor/chart.umd.min.js: node_modules/.package-lock.json
	@mkdir -p $(dir $@)
	cp node_modules/chart.js/dist/chart.umd.js $@
static/vendor/chartjs-plugin-zoom.min.js: node_modules/.package-lock.json
	@mkdir -p $(dir $@)
	cp node_modules/chartjs-plugin-zoom/dist/chartjs-plugin-zoom.min.js $@
static/vendor/hammer.min.js: node_modules/.package-lock.json
	@mkdir -p $(dir $@)
	cp node_modules/hammerjs/hammer.min.js $@

deps:
	scripts/deps.sh

run: deps
	$(MAKE) all
	scripts/run.sh

stop:
	scripts/run.sh stop

# Everything: unit and end-to-end tests against a real PostgreSQL, then the
# same suite built with AddressSanitizer + UndefinedBehaviorSanitizer.
test:
	scripts/deps.sh test
	$(MAKE) -s headers
	scripts/test.sh

# kperfd on a Patroni cluster (one etcd, two PostgreSQL nodes): failovers,
# switchover, etcd lost, both nodes lost, a point-in-time restore with
# pgBackRest (tests/ha; a few minutes). .ci/run runs it after `make test`.
test-ha:
	scripts/deps.sh test
	scripts/test-ha.sh

# The lab on a real kernel: Debian's linux-source-6.1 built by kperf-collect
# agent --kernel-build and booted in QEMU (tests/kernel; 35-45 min from an
# empty cache, a few minutes with var/kernel-cache filled). .ci/run runs it.
test-kernel:
	scripts/deps.sh kernel
	scripts/test-kernel.sh

# Every header compiles alone, included first in an empty file.
HEADERS := $(wildcard lib/*.h server/*.h server/*/*.h api/*.h collectors/*.h collectors/*/*.h)
headers: $(BUILD)/gen/migrations.c
	@for h in $(HEADERS); do \
		printf '#include "%s"\n' "$$PWD/$$h" | \
		$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -fsyntax-only -x c - || \
		{ echo "$$h does not compile alone" >&2; exit 1; }; \
	done; echo "headers: $(words $(HEADERS)) compile alone"

# The fast way in: the plain build's tests whose suite/test name matches
# the glob T (e.g. make check T='compare/*'), no ASan, no browser.
check:
	scripts/check.sh '$(T)'

# Speed as ratios against a baseline measured in the same run.
bench: $(BUILD)/kperfd $(BUILD)/bench/ingest $(BUILD)/bench/load $(BUILD)/bench/minimal \
       $(BUILD)/bench/burst
	BUILD=$(BUILD) tests/bench/bench.sh

# The capacity plan's numbers (README, Operations): bytes per sample, reads at
# 50 M stored samples and at the largest size the disk holds (about 13 minutes
# and 60 GiB of disk at the default CAPACITY_STEPS), then an archive.
bench-capacity: $(BUILD)/kperfd $(BUILD)/bench/load
	BUILD=$(BUILD) tests/bench/capacity.sh

$(BUILD)/bench/ingest: tests/bench/ingest.c tests/bench/bench.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lcurl -lpq -lpthread

$(BUILD)/bench/burst: tests/bench/burst.c tests/bench/bench.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lcurl -lpq -lpthread

$(BUILD)/bench/load: tests/bench/load.c tests/bench/bench.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lcurl -lpthread

$(BUILD)/bench/minimal: tests/bench/minimal.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $$(pkg-config --libs libmicrohttpd)

# The regression detectors (LKP's rule, Welch, kperf's verdict) on simulated
# histories with known truth.
$(BUILD)/bench/detect: $(BUILD)/obj/tests/bench/detect.o $(BUILD)/obj/tests/bench/detect_sim.o \
                      $(SERVER_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

bench-detect: $(BUILD)/bench/detect
	$(BUILD)/bench/detect

install: $(BUILD)/kperfd
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/kperf/static
	install -m 755 $(BUILD)/kperfd $(DESTDIR)$(PREFIX)/bin/kperfd
	cp -r static/. $(DESTDIR)$(PREFIX)/share/kperf/static/

clean:
	rm -rf build build-asan

# Dependency files come from the compiler (-MMD), never from a rule: without
# this, make would try to remake an included fuzz/parse-*.d through its
# built-in %: %.o chain.
%.d: ;
-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/obj/*/*/*.d)

# kperf-collect, the lab-machine collector (its own sources and tests).
include collectors/collect.mk

# libFuzzer harnesses (clang): `make fuzz FUZZ_SECONDS=60`.
include tests/fuzz/fuzz.mk

# make install: binaries, migrations, static files, man pages, config example,
# systemd units (packaging/).
include packaging/install.mk
