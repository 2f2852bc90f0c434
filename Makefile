# gputrace — plain Makefile.  make | make test | make demo | make deps | make install PREFIX=/usr/local | make uninstall
#   O=dir       build out of tree (default: build)
#   V=1         show commands
#   DEBUG=1     -O0 -g3 -Werror
#   SAN=address,undefined   build everything with sanitizers
comma    := ,
O        ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CUDA_HOME ?= /usr/local/cuda
CC       ?= cc
PYTHON   ?= python3

ifeq ($(V),1)
Q :=
else
Q := @
endif

WARN    := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wformat=2 -Wno-unused-parameter
OPT     := -O2 -g
ifeq ($(DEBUG),1)
OPT     := -O0 -g3 -Werror
endif
SANFLAGS :=
ifneq ($(SAN),)
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer
endif
CPPFLAGS += -Iinclude -Icommon -Ianalyzer -I$(CUDA_HOME)/include -D_GNU_SOURCE
# CRC-32 of trace chunks: ISA-L (libisal-dev) where installed, >3x zlib's speed; else zlib.
CRC_LIBS := $(if $(wildcard /usr/include/isa-l/crc.h),-lisal)
CPPFLAGS += $(if $(CRC_LIBS),-DGT_HAVE_ISAL)
CFLAGS   += -std=gnu11 $(OPT) $(WARN) $(SANFLAGS) -fPIC -MMD -MP
LDFLAGS  += $(SANFLAGS)

COMMON_SRC   := $(wildcard common/*.c)
PRELOAD_SRC  := $(wildcard preload/*.c) $(wildcard preload/*.S)
# analyzer/main.c is the report tool; everything else under analyzer/ (folders by stage, see
# analyzer/README.md) goes into the static library every tool links.
ANALYZER_SRC := $(filter-out analyzer/main.c,$(wildcard analyzer/*.c analyzer/*/*.c analyzer/*/*.S))
SIM_SRC      := $(wildcard tests/sim/*.c)
PROG_SRC     := $(wildcard tests/progs/*.c)
UNIT_SRC     := $(wildcard tests/unit/*.c)
TESTLIB_SRC  := $(wildcard tests/libs/*.c)
SIMCUPTI_SRC := $(wildcard tests/simcupti/*.c)
SIMCUPTI_MAP := $(if $(wildcard tests/simcupti/libcupti.map),-Wl$(comma)--version-script=tests/simcupti/libcupti.map)

obj = $(patsubst %,$(O)/obj/%.o,$(1))

LIB      := $(O)/libgputrace.so
ANALYZER := $(O)/libgputrace-analyzer.a
# What a program linked with the analyzer library needs after it.
ANALYZER_LIBS := -ljson-c -lz $(CRC_LIBS) -lzstd -lm -lstdc++ -ldw -lelf
REPORT   := $(O)/gputrace-report
LAUNCHER := $(O)/gputrace
SIMLIB   := $(O)/sim/libcuda.so.1
SIMCUPTI := $(if $(SIMCUPTI_SRC),$(O)/simcupti/libcupti.so.13)
PROGS    := $(patsubst tests/progs/%.c,$(O)/tests/%,$(PROG_SRC))
UNITS    := $(patsubst tests/unit/%.c,$(O)/tests/unit_%,$(UNIT_SRC))
TESTLIBS := $(patsubst tests/libs/%.c,$(O)/tests/lib%.so,$(TESTLIB_SRC))

all: $(LIB) $(REPORT) $(LAUNCHER)

# The shim exports only the CUDA symbols it wraps, dlsym, sigaction and signal (preload/crash.c)
# and the public API.
$(LIB): $(call obj,$(PRELOAD_SRC) $(COMMON_SRC))
	@echo "  LD      $@"
	$(Q)$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,--no-undefined -Wl,-z,nodelete -ldl -lpthread -lz $(CRC_LIBS) -lzstd -lunwind

# The analyzer and the trace codec it shares with the shim, as one archive: gputrace-report,
# the unit tests and bench_decode link it (the fuzz targets link their own, built by clang).
$(ANALYZER): $(call obj,$(ANALYZER_SRC) $(COMMON_SRC))
	@echo "  AR      $@"
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(REPORT): $(call obj,analyzer/main.c) $(ANALYZER)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) $(ANALYZER_LIBS)

$(LAUNCHER): $(call obj,launcher/gputrace.c)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDFLAGS)

# Shim objects: hidden by default, no semantic interposition of our own symbols.
$(O)/obj/preload/%.c.o: CFLAGS += -fvisibility=hidden -fno-semantic-interposition -ftls-model=initial-exec
$(O)/obj/common/%.c.o: CFLAGS += -fvisibility=hidden

$(O)/obj/%.c.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The HTML page's stylesheet and script are linked in with .incbin.
$(O)/obj/analyzer/render/html_assets.S.o: analyzer/render/html/report.css analyzer/render/html/report.js

$(O)/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(CPPFLAGS) -c -o $@ $<

# ---- test fixtures: the simulated driver and the programs that drive it -------------------------
$(SIMLIB): $(call obj,$(SIM_SRC))
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (simulated driver)"
	$(Q)$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,-soname,libcuda.so.1 -Wl,--no-undefined -lpthread -ldl
	$(Q)ln -sf libcuda.so.1 $(O)/sim/libcuda.so

# The simulated CUPTI: real cupti headers, real record layouts, fed by the simulated driver's
# activity log (looked up at run time, never linked).
$(O)/simcupti/libcupti.so.13: $(call obj,$(SIMCUPTI_SRC))
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (simulated CUPTI)"
	$(Q)$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,-soname,libcupti.so.13 $(SIMCUPTI_MAP) -Wl,--no-undefined -lpthread -ldl
	$(Q)ln -sf libcupti.so.13 $(O)/simcupti/libcupti.so

$(O)/tests/%: $(O)/obj/tests/progs/%.c.o $(SIMLIB)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $< $(LDFLAGS) -L$(O)/sim -Wl,-rpath-link,$(O)/sim -lcuda -ldl -lpthread

$(O)/tests/lib%.so: $(O)/obj/tests/libs/%.c.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared -o $@ $< $(LDFLAGS) -ldl

# Links two test libraries before libcuda, in that order (RTLD_NEXT test).
$(O)/tests/rtld_next: $(O)/obj/tests/progs/rtld_next.c.o $(O)/tests/librnext_a.so $(O)/tests/librnext_b.so $(SIMLIB)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $< $(LDFLAGS) -L$(O)/tests -L$(O)/sim -Wl,--no-as-needed -lrnext_a -lrnext_b -lcuda -Wl,-rpath,'$$ORIGIN' -ldl

$(O)/tests/unit_%: $(O)/obj/tests/unit/%.c.o $(ANALYZER)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) $(ANALYZER_LIBS) -lpthread

fixtures: $(SIMLIB) $(SIMCUPTI) $(TESTLIBS) $(PROGS) $(UNITS) $(O)/bench/gen_trace
include tests/simrt/simrt.mk

test: all fixtures
	$(Q)O=$(O) PYTHON=$(PYTHON) CUDA_HOME=$(CUDA_HOME) sh tests/run.sh

# The whole suite again with AddressSanitizer+UBSan and with ThreadSanitizer (shim, analyzer,
# fixtures and test programs all instrumented).
check-san:
	$(MAKE) SAN=address,undefined O=$(O)-asan test
	$(MAKE) SAN=thread O=$(O)-tsan test

demo: all fixtures
	$(Q)O=$(O) sh tests/demo.sh

# Build dependencies on Debian/Ubuntu (run as root or with sudo available).
# chromium: the tests open the --html page in it (headless).
DEB_PKGS := build-essential zlib1g-dev libisal-dev libzstd-dev libjson-c-dev python3 python3-venv pkg-config libunwind-dev libdw-dev libelf-dev chromium
deps:
	$(Q)if command -v apt-get >/dev/null 2>&1; then \
	  S=""; [ "$$(id -u)" = 0 ] || S=sudo; \
	  missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then $$S apt-get update -q && DEBIAN_FRONTEND=noninteractive $$S apt-get install -y -q $$missing; \
	  else echo "deps: all present ($(DEB_PKGS))"; fi; \
	else echo "deps: no apt-get here; install: $(DEB_PKGS)"; fi
	$(Q)$(MAKE) --no-print-directory torch-env || echo "deps: torch-env failed: the torch tests will skip"

# Installed besides the programs: manual pages, the Python helpers (PYDIR: add it to PYTHONPATH, or
# give a site-packages folder), README and docs/. uninstall removes exactly these files.
MANDIR   ?= $(PREFIX)/share/man
PYDIR    ?= $(PREFIX)/share/gputrace/python
DOCDIR   ?= $(PREFIX)/share/doc/gputrace
INST_HDR := $(notdir $(wildcard include/gputrace/*.h))
INST_MAN := $(notdir $(wildcard man/*.1))
INST_PY  := $(notdir $(wildcard python/*.py))
INST_DOC := README.md $(notdir $(wildcard docs/*.md))

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include/gputrace
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 0755 $(REPORT) $(LAUNCHER) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 include/gputrace/*.h $(DESTDIR)$(PREFIX)/include/gputrace/
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(PYDIR) $(DESTDIR)$(DOCDIR)
	install -m 0644 $(addprefix man/,$(INST_MAN)) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(addprefix python/,$(INST_PY)) $(DESTDIR)$(PYDIR)/
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/lib/libgputrace.so $(addprefix $(DESTDIR)$(PREFIX)/bin/,gputrace gputrace-report)
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/include/gputrace/,$(INST_HDR))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(INST_MAN)) $(addprefix $(DESTDIR)$(DOCDIR)/,$(INST_DOC))
	rm -f $(addprefix $(DESTDIR)$(PYDIR)/,$(INST_PY) $(INST_PY:.py=.pyc))
	rm -rf $(DESTDIR)$(PYDIR)/__pycache__
	-rmdir $(DESTDIR)$(PREFIX)/include/gputrace $(DESTDIR)$(DOCDIR) $(DESTDIR)$(PYDIR) $(DESTDIR)$(PREFIX)/share/gputrace 2>/dev/null

clean:
	rm -rf $(O)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

.PHONY: all test demo deps install uninstall clean format fixtures check-san
# Objects are never removed as intermediate files (make would otherwise delete the test programs'
# objects after linking them and rebuild them at the next make).
.SECONDARY:
-include $(shell find $(O)/obj -name '*.d' 2>/dev/null)

# ---- fuzzing (tests/fuzz; clang only) ----------------------------------------------------------
#   make fuzz [FUZZ_SECONDS=120] [FUZZ_JOBS=1]  libFuzzer (ASan+UBSan) on a copy of the corpus for
#       FUZZ_SECONDS; new inputs land in $(O)/fuzz/corpus, crash/leak/timeout/oom inputs in
#       $(O)/fuzz/ (the run fails). Add what is worth keeping to tests/fuzz/corpus (-merge=1).
#   make fuzz-regress  every corpus file through the same entry point, without libFuzzer.
#   make fuzz-seeds    regenerate the synthetic seeds (tests/fuzz/gen_seeds.c) into the corpus.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 120
FUZZ_JOBS    ?= 1
FUZZ_FLAGS   ?=
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 -O1 -g $(WARN) -MMD -MP
FUZZ_LIBSRC  := $(ANALYZER_SRC) $(COMMON_SRC)
# Absolute, so that targets match the dependency files whether O was given relative (make O=build)
# or absolute (tests/run.sh): stale objects after a header change crashed the regression run.
FUZZ_DIR     := $(abspath $(O))/fuzz
FUZZ_BIN     := $(FUZZ_DIR)/fuzz_reader
FUZZ_REGRESS := $(FUZZ_DIR)/fuzz_regress
FUZZ_SEEDGEN := $(FUZZ_DIR)/gen_seeds
FUZZ_CORPUS  := tests/fuzz/corpus
FUZZ_OPTS    := -dict=tests/fuzz/trace.dict -rss_limit_mb=1024 -timeout=10 -print_final_stats=1
fuzz_obj = $(patsubst %,$(FUZZ_DIR)/$(1)/%.o,$(2))

# Two object sets: with libFuzzer's coverage instrumentation (lf) and without it (asan).
$(FUZZ_DIR)/lf/%.c.o: %.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $<"
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_DIR)/asan/%.c.o: %.c
	@mkdir -p $(dir $@)
	@echo "  ASANCC  $<"
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) $(FUZZ_SAN) -c -o $@ $<

# The analyzer's assembly (the HTML page's assets) has nothing to instrument.
$(FUZZ_DIR)/lf/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -c -o $@ $<

$(FUZZ_DIR)/asan/%.S.o: %.S
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) -c -o $@ $<

# The analyzer library of each object set.
$(FUZZ_DIR)/lf/libgputrace-analyzer.a: $(call fuzz_obj,lf,$(FUZZ_LIBSRC))
$(FUZZ_DIR)/asan/libgputrace-analyzer.a: $(call fuzz_obj,asan,$(FUZZ_LIBSRC))
$(FUZZ_DIR)/lf/libgputrace-analyzer.a $(FUZZ_DIR)/asan/libgputrace-analyzer.a:
	@echo "  AR      $@"
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_BIN): $(call fuzz_obj,lf,tests/fuzz/fuzz_reader.c) $(FUZZ_DIR)/lf/libgputrace-analyzer.a
	@echo "  LD      $@"
	$(Q)$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $^ $(ANALYZER_LIBS)

$(FUZZ_REGRESS): $(call fuzz_obj,asan,tests/fuzz/fuzz_reader.c tests/fuzz/regress_main.c) $(FUZZ_DIR)/asan/libgputrace-analyzer.a
	@echo "  LD      $@"
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -o $@ $^ $(ANALYZER_LIBS)

$(FUZZ_SEEDGEN): $(call fuzz_obj,asan,$(COMMON_SRC) tests/fuzz/gen_seeds.c)
	@echo "  LD      $@"
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -o $@ $^ -lz $(CRC_LIBS) -lzstd

fuzz: $(FUZZ_BIN)
	$(Q)rm -rf $(FUZZ_DIR)/corpus && mkdir -p $(FUZZ_DIR)/corpus && cp $(FUZZ_CORPUS)/* $(FUZZ_DIR)/corpus/
	$(FUZZ_BIN) $(FUZZ_OPTS) -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(FUZZ_DIR)/ \
	  $(if $(filter-out 1,$(FUZZ_JOBS)),-fork=$(FUZZ_JOBS)) $(FUZZ_FLAGS) $(FUZZ_DIR)/corpus

fuzz-regress: $(FUZZ_REGRESS)
	$(Q)ASAN_OPTIONS=detect_leaks=1:$(ASAN_OPTIONS) $(FUZZ_REGRESS) $(FUZZ_CORPUS)

fuzz-seeds: $(FUZZ_SEEDGEN)
	$(Q)$(FUZZ_SEEDGEN) $(FUZZ_CORPUS)

.PHONY: fuzz fuzz-regress fuzz-seeds
-include $(shell find $(FUZZ_DIR) -name '*.d' 2>/dev/null)
# ---- end of fuzzing -----------------------------------------------------------------------------

# ---- benchmarks (bench/; see bench/README.md) --------------------------------------------------
# make bench: builds the programs below and runs bench/run.sh, which writes bench/RESULTS.md.
# BENCH_QUICK=1 for a run under a minute. The LTTng-UST peer is built only where liblttng-ust-dev
# is installed (pkg-config lttng-ust); the runner says so when it is not.
BENCH_LTTNG := $(shell pkg-config --exists lttng-ust 2>/dev/null && echo yes)
BENCH_PROGS := $(O)/bench/bench_launch $(O)/bench/gen_trace $(O)/bench/bench_decode $(O)/bench/rusage \
               $(O)/bench/nulldrv/libcuda.so.1 $(O)/bench/bench_parts $(O)/bench/bench_stack $(if $(BENCH_LTTNG),$(O)/bench/bench_launch_lttng)

$(O)/bench/bench_launch: $(O)/obj/bench/bench_launch.c.o $(SIMLIB)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $< $(LDFLAGS) -L$(O)/sim -Wl,-rpath-link,$(O)/sim -lcuda -lpthread

# Allocations from a 32-deep call chain, for the side-by-side with heaptrack.
$(O)/bench/bench_stack: $(O)/obj/bench/bench_stack.c.o $(SIMLIB)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $< $(LDFLAGS) -L$(O)/sim -Wl,-rpath-link,$(O)/sim -lcuda

# The same loop with an LTTng-UST tracepoint after each launch (and the provider linked in).
$(O)/bench/bench_launch_lttng: bench/bench_launch.c bench/lttng_tp.c bench/lttng_tp.h $(SIMLIB)
	@mkdir -p $(dir $@)
	@echo "  CCLD    $@ (LTTng-UST)"
	$(Q)$(CC) $(CPPFLAGS) -Ibench $$(pkg-config --cflags lttng-ust) $(CFLAGS) \
	  -DBENCH_LTTNG -o $@ bench/bench_launch.c bench/lttng_tp.c $(LDFLAGS) -L$(O)/sim \
	  -Wl,-rpath-link,$(O)/sim -lcuda $$(pkg-config --libs lttng-ust) -lpthread

# A driver with no shared state, to see the shim's thread scaling without the simulated driver's lock.
$(O)/bench/nulldrv/libcuda.so.1: $(O)/obj/bench/nulldrv.c.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@ (null driver)"
	$(Q)$(CC) -shared -o $@ $< $(LDFLAGS) -Wl,-soname,libcuda.so.1 -Wl,--no-undefined

$(O)/bench/gen_trace: $(O)/obj/bench/gen_trace.c.o $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) -lz $(CRC_LIBS) -lzstd

$(O)/bench/bench_parts: $(O)/obj/bench/bench_parts.c.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $< $(LDFLAGS) -lz

$(O)/bench/rusage: $(O)/obj/bench/rusage.c.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDFLAGS)

$(O)/bench/bench_decode: $(O)/obj/bench/bench_decode.c.o $(ANALYZER)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) $(ANALYZER_LIBS)

# Records stored into a shared mapping of the file instead of private buffers (issue 22, SIGKILL).
BENCH_PROGS += $(O)/bench/shared_map
$(O)/bench/shared_map: $(O)/obj/bench/shared_map.c.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $< $(LDFLAGS)

bench-progs: $(BENCH_PROGS)

bench: all fixtures bench-progs
	$(Q)O=$(O) BENCH_LTTNG=$(BENCH_LTTNG) sh bench/run.sh

.PHONY: bench bench-progs
# make bench-torch VENV=dir: the real PyTorch under gputrace vs torch.profiler (bench/torch_overhead.sh)
bench-torch: all fixtures
	$(Q)O=$(O) GT_VENV=$(abspath $(VENV)) sh bench/torch_overhead.sh $(or $(BENCH_ROUNDS),3)
.PHONY: bench-torch
# ---- end of benchmarks --------------------------------------------------------------------------

# ---- C++ test programs (tests/progs/*.cc; demangled call sites in the stacks tests) -------------
# -O2 -g like the C ones.
CXX       ?= c++
PROG_CXX  := $(patsubst tests/progs/%.cc,$(O)/tests/%,$(wildcard tests/progs/*.cc))

$(O)/tests/%: tests/progs/%.cc $(SIMLIB)
	@mkdir -p $(dir $@)
	@echo "  CXXLD   $@"
	$(Q)$(CXX) $(CPPFLAGS) -O2 -g -Wall -Wextra $(SANFLAGS) -o $@ $< $(LDFLAGS) -L$(O)/sim -Wl,-rpath-link,$(O)/sim -lcuda

fixtures: $(PROG_CXX)
# ---- end of C++ test programs -------------------------------------------------------------------

# ---- the fast unwinder against libunwind (tests/unit/unwind.c, tests/unwind/) ------------------
# unit_unwind compiles preload/unwind.c in and links call-chain steps built with different flags,
# a C++ step, and two variants of a dlopen'ed library (argument: their directory).
UNW_VARIANTS := o0 o1 o2 o2fp
UNW_FLAGS_o0   := -O0
UNW_FLAGS_o1   := -O1 -fomit-frame-pointer -fno-inline
UNW_FLAGS_o2   := -O2 -fomit-frame-pointer
UNW_FLAGS_o2fp := -O2 -fno-omit-frame-pointer
UNW_OBJS := $(patsubst %,$(O)/obj/tests/unwind/chain_%.o,$(UNW_VARIANTS)) $(O)/obj/tests/unwind/cxx.o

$(O)/obj/tests/unwind/chain_%.o: tests/unwind/chain.c tests/unwind/chain.h
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) -std=gnu11 -g -Wall -Wextra $(SANFLAGS) -fPIC $(UNW_FLAGS_$*) -DVARIANT=$* -c -o $@ $<

$(O)/obj/tests/unwind/cxx.o: tests/unwind/cxx.cc tests/unwind/chain.h
	@mkdir -p $(dir $@)
	@echo "  CXX     $@"
	$(Q)$(CXX) $(CPPFLAGS) -O2 -g -Wall -Wextra $(SANFLAGS) -fPIC -c -o $@ $<

$(O)/tests/libunwa.so $(O)/tests/libunwb.so: tests/unwind/dlib.c
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(CPPFLAGS) -O2 -g $(SANFLAGS) -fomit-frame-pointer -fPIC -shared \
	  -DFRAME=$(if $(findstring unwa,$@),512,4096) -o $@ $< $(LDFLAGS)

$(O)/tests/unit_unwind: $(O)/obj/tests/unit/unwind.c.o $(UNW_OBJS) | $(O)/tests/libunwa.so $(O)/tests/libunwb.so
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CXX) -o $@ $^ $(LDFLAGS) -lunwind -ldl -lpthread
# ---- end of the unwinder test -------------------------------------------------------------------
