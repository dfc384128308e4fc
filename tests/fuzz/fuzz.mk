# fuzz.mk - the libFuzzer harnesses of tests/fuzz/ (included by the Makefile).
# `make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="ref query"]` builds each with
# clang (ASan + UBSan + libFuzzer; the code under test compiled from source)
# into $(BUILD)/fuzz/<name>, runs it on a scratch copy of its seeds in
# tests/fuzz/corpus/<name>/, and fails naming the harness that crashed.

FUZZ_CC      ?= clang
FUZZ_CXX     ?= clang++
FUZZ_SECONDS ?= 60
# Longest input tried, bytes: above the largest seed (a 59 KB perf report).
FUZZ_MAX_LEN ?= 65536
# Harnesses run side by side, one per core (they are single-threaded).
FUZZ_JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_WORK    ?= $(FUZZ_DIR)/work

# The tree's warning flags (clang 14 takes them all), instrumentation for
# libFuzzer's coverage and both sanitizers, every finding fatal. Clang's
# -Wformat=2 also flags vsnprintf(fmt) in helpers whose format attribute is
# missing (lib/util.c's log helper), which gcc lets pass: off here.
FUZZ_SAN     := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O1 $(WARN) $(FUZZ_SAN) -MMD -MP \
                $(shell pkg-config --cflags libpq jansson libxml-2.0 2>/dev/null) $(SERVER_INC)
# lib/dtoa.cc, the one C++ file (the double-conversion wrapper jsonw.c needs).
FUZZ_CXXFLAGS := -std=c++17 -g -O1 -Wall -Wextra -Werror -Wshadow -Wmissing-declarations \
                 $(FUZZ_SAN) -MMD -MP $(SERVER_INC)
FUZZ_LDFLAGS := -fsanitize=fuzzer,address,undefined

# The code under test, per harness family (the collector's parsers take
# buffers and allocation from lib/, as kperf-collect does).
FUZZ_INGEST_SRC  := lib/ingest_decode.c lib/decode_ctx.c lib/jsonw.c lib/dtoa.cc lib/util.c \
                    lib/buf.c
FUZZ_QUERY_SRC   := api/query.c lib/util.c lib/buf.c
FUZZ_REF_SRC     := api/ref.c api/query.c lib/util.c lib/buf.c
FUZZ_MAIL_SRC    := lib/mail.c lib/mail_hdr.c lib/atom.c lib/patch_subject.c lib/util.c lib/buf.c
FUZZ_COLLECT_SRC := collectors/parse/parse.c $(wildcard collectors/parse/parse_*.c) \
                    collectors/base/cutil.c collectors/parse/metrics.c collectors/parse/rx.c \
                    lib/buf.c lib/util.c
fuzz_obj = $(patsubst %,$(FUZZ_DIR)/obj/%.o,$(basename $(1)))

# One harness per parser of collectors/parse/parse.c's table, read from it:
# the table is the one list of parsers.
FUZZ_PARSERS := $(shell sed -n 's/^\t{"\([^"]*\)", "[^"]*", parse_.*/\1/p' collectors/parse/parse.c)
FUZZ_NAMES   := ingest-runs ingest-commits ref query mail $(addprefix parse-,$(FUZZ_PARSERS))
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-build fuzz-run
# Each `make fuzz` works in its own scratch directory (two may run at once),
# removed when every harness passed, kept with the crash inputs otherwise.
fuzz:
	@$(MAKE) --no-print-directory -j$(FUZZ_JOBS) fuzz-build
	@w=$(FUZZ_DIR)/work-$$$$; rm -rf $$w; \
	if $(MAKE) --no-print-directory -j$(FUZZ_JOBS) -k fuzz-run FUZZ_WORK=$$w; then \
		rm -rf $$w; \
	else \
		echo "fuzz: FAILED (crash inputs and logs under $$w/)" >&2; exit 1; \
	fi

# only the harnesses asked for (all by default)
fuzz-build: $(addprefix $(FUZZ_DIR)/,$(FUZZ_TARGETS))

fuzz-run: $(addprefix fuzz-run-,$(FUZZ_TARGETS))

# Never a file: always runs.
fuzz-run-%: $(FUZZ_DIR)/%
	@tests/fuzz/run.sh $* $(FUZZ_DIR)/$* tests/fuzz/corpus/$* $(FUZZ_WORK)/$* \
		$(FUZZ_SECONDS) $(FUZZ_MAX_LEN)

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/obj/%.o: %.cc
	@mkdir -p $(dir $@)
	$(FUZZ_CXX) $(FUZZ_CXXFLAGS) -c -o $@ $<

$(FUZZ_DIR)/obj/tests/fuzz/parse-%.o: tests/fuzz/fuzz_parse.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_FORMAT='"$*"' -c -o $@ $<

$(FUZZ_DIR)/ingest-runs: $(call fuzz_obj,tests/fuzz/fuzz_ingest_runs.c $(FUZZ_INGEST_SRC))
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ -ljansson -lxxhash -ldouble-conversion -lstdc++ -lm

$(FUZZ_DIR)/ingest-commits: $(call fuzz_obj,tests/fuzz/fuzz_ingest_commits.c $(FUZZ_INGEST_SRC))
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ -ljansson -lxxhash -ldouble-conversion -lstdc++ -lm

$(FUZZ_DIR)/query: $(call fuzz_obj,tests/fuzz/fuzz_query.c $(FUZZ_QUERY_SRC))
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ -ljansson -lxxhash

$(FUZZ_DIR)/ref: $(call fuzz_obj,tests/fuzz/fuzz_ref.c $(FUZZ_REF_SRC))
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ -lpq -ljansson -lxxhash

$(FUZZ_DIR)/mail: $(call fuzz_obj,tests/fuzz/fuzz_mail.c $(FUZZ_MAIL_SRC))
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ $(shell pkg-config --libs libxml-2.0 zlib 2>/dev/null) -lxxhash

$(FUZZ_DIR)/parse-%: $(FUZZ_DIR)/obj/tests/fuzz/parse-%.o $(call fuzz_obj,$(FUZZ_COLLECT_SRC))
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ -ljansson -lxxhash -lm

# Keep objects and binaries of the pattern rules; rebuild on header changes.
.SECONDARY: $(FUZZ_BINS) $(addprefix $(FUZZ_DIR)/obj/tests/fuzz/parse-,$(FUZZ_PARSERS:=.o)) \
            $(call fuzz_obj,$(sort $(FUZZ_INGEST_SRC) $(FUZZ_REF_SRC) $(FUZZ_MAIL_SRC) \
                $(FUZZ_COLLECT_SRC)))
-include $(wildcard $(FUZZ_DIR)/obj/*/*.d $(FUZZ_DIR)/obj/*/*/*.d)
