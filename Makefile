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
AGENT_PURE := agent/encode.c agent/config.c agent/log.c agent/scheduling_parse.c
DECODER_SRC := $(wildcard decoder/*.c)
DECODER_LIB := $(filter-out decoder/main.c,$(DECODER_SRC))
DECODER_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(DECODER_SRC))
PROG_SRC := $(wildcard test/progs/*.c)
PROGS := $(patsubst test/progs/%.c,$(BUILD)/progs/%,$(PROG_SRC))
BENCH_PROGS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
UNIT_SRC := $(wildcard test/unit/*.c)

AGENT := $(BUILD)/libdial9.so
DECODER := $(BUILD)/dial9-decode
UNIT := $(BUILD)/unit/check_dial9
UNIT_TSAN := $(BUILD)/unit/check_dial9_tsan

.PHONY: all deps check test demo bench install clean tsan
all: $(AGENT) $(DECODER) $(PROGS) $(BENCH_PROGS)

deps:
	@scripts/install-deps.sh build

$(BUILD)/obj/agent/%.o $(BUILD)/obj/runtime_shims/%.o: CFLAGS_EXTRA = -fPIC -fvisibility=hidden -ftls-model=initial-exec
$(BUILD)/obj/%.o: %.c $(wildcard include/*.h agent/*.h decoder/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) $(CFLAGS_EXTRA) -c $< -o $@

$(AGENT): $(AGENT_OBJ)
	$(CC) -shared -o $@ $^ -Wl,--no-undefined -Wl,-z,now -llz4 -lpthread

$(DECODER): $(DECODER_OBJ)
	$(CC) -o $@ $^ -llz4 -lm

$(BUILD)/progs/%: test/progs/%.c $(wildcard include/*.h test/progs/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -o $@ $< -lpthread

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -o $@ $< -lpthread

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

check test:
	@scripts/install-deps.sh test
	@$(MAKE) --no-print-directory all $(UNIT) $(UNIT_TSAN)
	@test/run-tests.sh

demo:
	@scripts/install-deps.sh build
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

bench:
	@scripts/install-deps.sh test
	@$(MAKE) --no-print-directory all
	@bench/run.sh

install: $(AGENT) $(DECODER)
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include
	install -m 0755 $(AGENT) $(DESTDIR)$(PREFIX)/lib/libdial9.so
	install -m 0755 $(DECODER) $(DESTDIR)$(PREFIX)/bin/dial9-decode
	install -m 0644 include/dial9.h include/dial9_format.h $(DESTDIR)$(PREFIX)/include/

clean:
	rm -rf $(BUILD)
