# ---- benchmarks (bench/; see bench/README.md) --------------------------------------------------
# Included from the Makefile.
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
# make bench-torch VENV=dir: the real PyTorch under gputrace vs torch.profiler (bench/torch_overhead.sh);
# BENCH_ROUNDS (3), BENCH_SCALE (5: at 1 the op loop lasts 44 ms, too short for its CPU figure)
bench-torch: all fixtures
	$(Q)O=$(O) GT_VENV=$(abspath $(VENV)) sh bench/torch_overhead.sh $(or $(BENCH_ROUNDS),3) $(or $(BENCH_SCALE),5)
# make bench-torch-instr VENV=dir: the same workloads counted in instructions by callgrind
# (bench/torch_instr.sh; BENCH_SCALE, 5: 250 steps, 5,000 ops and allocations; ~20 min)
bench-torch-instr: all fixtures
	$(Q)O=$(O) GT_VENV=$(abspath $(VENV)) sh bench/torch_instr.sh $(or $(BENCH_SCALE),5)
.PHONY: bench-torch bench-torch-instr
