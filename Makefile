# dial9 - build, test, demo, install. See README.md.
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc

WARN := -Wall -Wextra -Wno-unused-parameter
CFLAGS ?= -O2 -g
BASE_CFLAGS := $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iagent -Idecoder
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

AGENT_SRC := $(wildcard agent/*.c runtime_shims/*.c)
AGENT_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(AGENT_SRC))
# Agent files that do not interpose anything: unit-testable in a normal binary.
AGENT_PURE := agent/encode.c agent/app_names.c agent/config.c agent/fd_lift.c agent/log.c agent/proc_identity.c \
              agent/scheduling_parse.c
DECODER_SRC := $(wildcard decoder/*.c)
DECODER_LIB := $(filter-out decoder/main.c,$(DECODER_SRC))
DECODER_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(DECODER_SRC))
PROG_SRC := $(wildcard test/progs/*.c)
PROGS := $(patsubst test/progs/%.c,$(BUILD)/progs/%,$(PROG_SRC))
PRELOADS := $(patsubst test/preload/%.c,$(BUILD)/preload/%.so,$(wildcard test/preload/*.c))
BENCH_PROGS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(filter-out bench/passthrough.c,$(wildcard bench/*.c))) \
               $(BUILD)/bench/passthrough.so
UNIT_SRC := $(wildcard test/unit/*.c)

AGENT := $(BUILD)/libdial9.so
DECODER := $(BUILD)/dial9-decode
UNIT := $(BUILD)/unit/check_dial9
UNIT_TSAN := $(BUILD)/unit/check_dial9_tsan
AGENT_TSAN := $(BUILD)/tsan/agent_threads

.PHONY: all deps check test demo bench bench-quick install clean tsan
all: $(AGENT) $(DECODER) $(PROGS) $(PRELOADS) $(BENCH_PROGS)

deps:
	@scripts/install-deps.sh build

# No SLP vectorizing in the agent: it packs an event's two 8-byte stores
# through xmm registers: 2-3 instructions more a push (callgrind).
$(BUILD)/obj/agent/%.o $(BUILD)/obj/runtime_shims/%.o: CFLAGS_EXTRA = -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-tree-slp-vectorize
$(BUILD)/obj/%.o: %.c $(wildcard include/*.h agent/*.h decoder/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) $(CFLAGS_EXTRA) -c $< -o $@

# start-stop-visibility: the bounds of safe_load.h's fixup table are the
# agent's own, hidden (binutils 2.40 makes them protected: bindable).
$(AGENT): $(AGENT_OBJ)
	$(CC) -shared -o $@ $^ -Wl,--no-undefined -Wl,-z,now -Wl,-z,start-stop-visibility=hidden -llz4 -lpthread

$(DECODER): $(DECODER_OBJ)
	$(CC) -o $@ $^ -llz4 -lm

$(BUILD)/progs/%: test/progs/%.c $(wildcard include/*.h test/progs/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -o $@ $< -lpthread

# Interposers the tests load beside the agent.
$(BUILD)/preload/%.so: test/preload/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -shared -fPIC -o $@ $< -ldl

$(BUILD)/bench/%: bench/%.c bench/bench.h test/progs/now.h test/progs/held_cond.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -o $@ $< -lpthread

# The interposition floor of the hot path's syscall rows (bench/run.sh).
$(BUILD)/bench/passthrough.so: bench/passthrough.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -shared -fPIC -o $@ $< -ldl

# The writer's encoder on a recorded trace (read back with the decoder's reader).
$(BUILD)/bench/encode_cpu: bench/encode_cpu.c agent/encode.c agent/app_names.c $(DECODER_LIB) $(wildcard include/*.h agent/*.h decoder/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -o $@ bench/encode_cpu.c agent/encode.c agent/app_names.c $(DECODER_LIB) -llz4 -lm -lpthread

# Unit tests (Check) run under ASan and UBSan.
$(UNIT): $(UNIT_SRC) $(AGENT_PURE) $(DECODER_LIB) $(wildcard include/*.h agent/*.h decoder/*.h test/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(BASE_CFLAGS) $(SAN) -o $@ $(UNIT_SRC) $(AGENT_PURE) $(DECODER_LIB) \
		$$(pkg-config --cflags --libs check) -llz4 -lm -lpthread

# The same unit tests under ThreadSanitizer: the ring's producer/consumer hand-off.
$(UNIT_TSAN): $(UNIT_SRC) $(AGENT_PURE) $(DECODER_LIB) $(wildcard include/*.h agent/*.h decoder/*.h test/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(BASE_CFLAGS) -fsanitize=thread -o $@ $(UNIT_SRC) $(AGENT_PURE) $(DECODER_LIB) \
		$$(pkg-config --cflags --libs check) -llz4 -lm -lpthread

# The agent's threads under TSan: its objects linked into a TSan program
# (test/tsan/agent_threads.c says why not preloaded).
$(BUILD)/tsan/obj/%.o: %.c $(wildcard include/*.h agent/*.h)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(BASE_CFLAGS) -fsanitize=thread -fvisibility=hidden -ftls-model=initial-exec -c $< -o $@

$(BUILD)/tsan/libdial9.a: $(patsubst %.c,$(BUILD)/tsan/obj/%.o,$(AGENT_SRC))
	rm -f $@
	ar rcs $@ $^

# --exclude-libs: the interposers are not exported, so libtsan's own calls
# (mmap, open, ... while it initialises) do not reach instrumented agent code.
$(AGENT_TSAN): test/tsan/agent_threads.c $(BUILD)/tsan/libdial9.a $(wildcard include/*.h test/progs/*.h)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g $(BASE_CFLAGS) -fsanitize=thread -o $@ $< -Wl,--exclude-libs,ALL \
		-Wl,--whole-archive $(BUILD)/tsan/libdial9.a -Wl,--no-whole-archive -llz4 -lpthread

check test:
	@scripts/install-deps.sh test
	@$(MAKE) --no-print-directory all $(UNIT) $(UNIT_TSAN) $(AGENT_TSAN)
	@test/run-tests.sh

demo:
	@scripts/install-deps.sh build
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

# bench: hot path, clocks, demo, real services with peers, memory (BENCHMARKS.md);
# bench-quick (under 2 minutes): the hot path, fewer rounds, and memcached.
bench:
	@scripts/install-deps.sh bench
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) bench/run.sh

bench-quick:
	@scripts/install-deps.sh test
	@$(MAKE) --no-print-directory all
	@BUILD=$(BUILD) BENCH_QUICK=1 bench/run.sh

install: $(AGENT) $(DECODER)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include
	install -m 0755 $(AGENT) $(DESTDIR)$(PREFIX)/lib/libdial9.so
	install -m 0755 $(DECODER) $(DESTDIR)$(PREFIX)/bin/dial9-decode
	install -m 0644 include/dial9.h include/dial9_format.h $(DESTDIR)$(PREFIX)/include/

clean:
	rm -rf $(BUILD)

# ---- Fuzzing (docs/FUZZING.md): libFuzzer target for the decoder's reader,
# built with clang under ASan+UBSan. `make fuzz` builds the seed corpus when
# missing (test/fuzz/make-corpus.sh: real segments recorded under the agent)
# and runs the fuzzer: FUZZ_RUNS executions (0 = no limit) or FUZZ_SECONDS
# seconds (0 = no limit), FUZZ_JOBS parallel jobs (logs in fuzz-N.log; FUZZ_RUNS
# then counts per job), FUZZ_ARGS more flags, FUZZ_MAX_LEN the input size limit.
# New inputs go to $(FUZZ_DIR)/corpus, crashes to $(FUZZ_DIR)/artifacts.
FUZZ_CC ?= clang
FUZZ_DIR ?= $(BUILD)/fuzz
FUZZ_BIN := $(FUZZ_DIR)/fuzz_reader
FUZZ_SEEDS ?= $(FUZZ_DIR)/seeds
FUZZ_RUNS ?= 0
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_ARGS ?=
FUZZ_MAX_LEN ?= 4096
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

.PHONY: fuzz fuzz-build fuzz-corpus
fuzz-build: $(FUZZ_BIN)

$(FUZZ_BIN): test/fuzz/fuzz_reader.c $(DECODER_LIB) $(wildcard include/*.h decoder/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -O1 -g $(BASE_CFLAGS) $(FUZZ_FLAGS) -o $@ test/fuzz/fuzz_reader.c $(DECODER_LIB) -llz4 -lm

$(FUZZ_SEEDS)/.done: test/fuzz/make-corpus.sh
	@$(MAKE) --no-print-directory $(AGENT) $(PROGS)
	test/fuzz/make-corpus.sh $(FUZZ_SEEDS)
	@touch $@

fuzz-corpus: $(FUZZ_SEEDS)/.done

fuzz: $(FUZZ_BIN) $(FUZZ_SEEDS)/.done
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	$(FUZZ_BIN) $(FUZZ_DIR)/corpus $(FUZZ_SEEDS) -dict=test/fuzz/dict -max_len=$(FUZZ_MAX_LEN) -timeout=5 \
		-rss_limit_mb=2048 -malloc_limit_mb=2048 -runs=$(if $(filter 0,$(FUZZ_RUNS)),-1,$(FUZZ_RUNS)) \
		-max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		$(if $(filter-out 0 1,$(FUZZ_JOBS)),-jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS)) \
		-artifact_prefix=$(FUZZ_DIR)/artifacts/ $(FUZZ_ARGS)
