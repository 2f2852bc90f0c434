# ---- the analyzer (analyzer/: libgputrace-analyzer.a, gputrace-report) --------------------------
# Included from the Makefile. analyzer/main.c is the report tool; everything else under analyzer/
# (folders by stage, see analyzer/README.md) goes into the static library every tool links:
# gputrace-report, the unit tests (mk/tests.mk), bench_decode (mk/bench.mk); the fuzz targets
# (mk/fuzz.mk) build their own with clang.
ANALYZER_SRC := $(filter-out analyzer/main.c,$(wildcard analyzer/*.c analyzer/*/*.c analyzer/*/*.S))
ANALYZER := $(O)/libgputrace-analyzer.a
# What a program linked with the analyzer library needs after it.
ANALYZER_LIBS := -ljson-c -lz $(CRC_LIBS) -lzstd -lm -lstdc++ -ldw -lelf
REPORT   := $(O)/gputrace-report

all: $(REPORT)

# The analyzer and the trace codec it shares with the shim, as one archive.
$(ANALYZER): $(call obj,$(ANALYZER_SRC) $(COMMON_SRC))
	@echo "  AR      $@"
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(REPORT): $(call obj,analyzer/main.c) $(ANALYZER)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDFLAGS) $(ANALYZER_LIBS)

# The HTML page's stylesheet and script are linked in with .incbin.
$(O)/obj/analyzer/render/html_assets.S.o: analyzer/render/html/report.css analyzer/render/html/report.js
