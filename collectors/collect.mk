# collect.mk - kperf-collect, the lab-machine collector, the workloads it
# runs (collectors/workloads/) and its Criterion tests; included by the
# top-level Makefile, whose $(BUILD), $(CC), $(CFLAGS) and $(LDFLAGS)
# (warnings, sanitizers, -MMD) it uses as they are.

COLLECT_SRC      := $(filter-out collectors/workloads/%,$(wildcard collectors/*.c collectors/*/*.c))
# What kperfd and kperf-collect share (lib/: buffers, allocation, the
# JSON writer with shortest doubles) and the ingest contract's decoder: a run
# kperf-collect sends is checked by the code kperfd accepts it with.
COLLECT_SHARED   := $(BUILD)/obj/lib/buf.o $(BUILD)/obj/lib/util.o \
                    $(BUILD)/obj/lib/metric_role.o $(BUILD)/obj/lib/command.o \
                    $(BUILD)/obj/lib/jsonw.o $(BUILD)/obj/lib/dtoa.o \
                    $(BUILD)/obj/lib/ingest_decode.o $(BUILD)/obj/lib/decode_ctx.o
COLLECT_OBJ      := $(COLLECT_SRC:%.c=$(BUILD)/obj/%.o) $(COLLECT_SHARED) $(BUILD)/obj/gen/kconfig.o
COLLECT_LIB_OBJ  := $(filter-out $(BUILD)/obj/collectors/main.o,$(COLLECT_OBJ))
COLLECT_TEST_SRC := $(wildcard tests/collect/*.c)
COLLECT_TEST_OBJ := $(COLLECT_TEST_SRC:%.c=$(BUILD)/obj/%.o) \
                    $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/integration/harness*.c))

# /proc/config.gz is read with zlib when its headers are there, else via zcat.
COLLECT_ZLIB     := $(shell pkg-config --exists zlib 2>/dev/null && echo yes)
COLLECT_LIBS     := -lcurl -ljansson $(if $(COLLECT_ZLIB),-lz) -lxxhash -ldouble-conversion \
                    -lstdc++ -lm
ifneq ($(COLLECT_ZLIB),)
$(BUILD)/obj/collectors/host/kernel.o: CFLAGS += -DKPERF_HAVE_ZLIB
$(BUILD)/obj/tests/collect/test_kernel.o: CFLAGS += -DKPERF_HAVE_ZLIB
endif

# The kernel config fragments kperf-collect merges (packaging/kernel/), carried in the binary.
$(BUILD)/gen/kconfig.c: packaging/kernel/kperf.config packaging/kernel/vm.config scripts/gen-kconfig.sh
	@mkdir -p $(dir $@)
	scripts/gen-kconfig.sh packaging/kernel/kperf.config packaging/kernel/vm.config > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/kconfig.o: $(BUILD)/gen/kconfig.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# Workloads: one program per file in collectors/workloads/, none linked
# into kperf-collect.
WORKLOADS        := $(BUILD)/readtwice

.PHONY: install-collect
all: $(BUILD)/kperf-collect $(BUILD)/tests/collect-tests $(WORKLOADS)

$(BUILD)/kperf-collect: $(COLLECT_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(COLLECT_LIBS)

$(BUILD)/readtwice: $(BUILD)/obj/collectors/workloads/readtwice.o
	$(CC) $(LDFLAGS) -o $@ $^

# The end-to-end tests run the workloads of the same build (scripts/test.sh
# builds only the test binary for build-asan/), hence the order-only needs.
$(BUILD)/tests/collect-tests: $(COLLECT_TEST_OBJ) $(COLLECT_LIB_OBJ) | $(WORKLOADS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcriterion -lpq $(COLLECT_LIBS)

# The lab on a real kernel (make test-kernel): its own binary, outside make test.
KERNEL_TEST_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/kernel/*.c)) \
                    $(BUILD)/obj/tests/collect/agent_lab.o $(BUILD)/obj/tests/collect/robot_lab.o \
                    $(BUILD)/obj/tests/collect/testutil.o \
                    $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/integration/harness*.c))
$(BUILD)/tests/kernel-tests: $(KERNEL_TEST_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ -lcriterion -lpq $(COLLECT_LIBS)

install: install-collect
install-collect: $(BUILD)/kperf-collect $(WORKLOADS)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BUILD)/kperf-collect $(DESTDIR)$(PREFIX)/bin/kperf-collect
	install -m 755 $(BUILD)/readtwice $(DESTDIR)$(PREFIX)/bin/readtwice
