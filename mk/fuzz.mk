# ---- fuzzing (tests/fuzz; clang only) ----------------------------------------------------------
# Included from the Makefile.
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
