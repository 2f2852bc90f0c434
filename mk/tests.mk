# ---- test fixtures (tests/): what tests/run.sh runs against -------------------------------------
# Included from the Makefile. `make fixtures` builds the simulated driver (tests/sim), the simulated
# CUPTI (tests/simcupti), the test programs (tests/progs, C and C++) and libraries (tests/libs), the
# unit tests (tests/unit, linked with the analyzer library), the unwinder test, and through
# tests/simrt/simrt.mk the simulated CUDA runtime and NVML. `make test` (the Makefile) runs them.
SIM_SRC      := $(wildcard tests/sim/*.c)
PROG_SRC     := $(wildcard tests/progs/*.c)
UNIT_SRC     := $(wildcard tests/unit/*.c)
TESTLIB_SRC  := $(wildcard tests/libs/*.c)
SIMCUPTI_SRC := $(wildcard tests/simcupti/*.c)
SIMCUPTI_MAP := $(if $(wildcard tests/simcupti/libcupti.map),-Wl$(comma)--version-script=tests/simcupti/libcupti.map)
SIMLIB   := $(O)/sim/libcuda.so.1
SIMCUPTI := $(if $(SIMCUPTI_SRC),$(O)/simcupti/libcupti.so.13)
PROGS    := $(patsubst tests/progs/%.c,$(O)/tests/%,$(PROG_SRC))
UNITS    := $(patsubst tests/unit/%.c,$(O)/tests/unit_%,$(UNIT_SRC))
TESTLIBS := $(patsubst tests/libs/%.c,$(O)/tests/lib%.so,$(TESTLIB_SRC))

# ---- the simulated driver and the programs that drive it
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
