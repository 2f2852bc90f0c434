# gputrace — plain Makefile.  make | make test | make demo | make deps | make install PREFIX=/usr/local | make uninstall
#   also: make check-san | make fuzz (mk/fuzz.mk) | make bench (mk/bench.mk) | make torch-env (tests/simrt/simrt.mk)
# This file holds the configuration, the compile rules and the top-level targets; each area's
# programs are built by its own makefile under mk/ (preload, analyzer, tests, bench, fuzz).
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

obj = $(patsubst %,$(O)/obj/%.o,$(1))

# The default goal; each area's makefile adds its programs to it.
all:

# ---- compiling: one object per source, under $(O)/obj, with its dependency file ----------------
$(O)/obj/common/%.c.o: CFLAGS += -fvisibility=hidden

$(O)/obj/%.c.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/obj/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(CPPFLAGS) -c -o $@ $<

# ---- the areas, each in its own makefile (each says at its top what it builds) -----------------
include mk/preload.mk
include mk/analyzer.mk
include mk/tests.mk
include mk/bench.mk
include mk/fuzz.mk

# ---- running: the suite, the suite under sanitizers, the demo ----------------------------------
test: all fixtures
	$(Q)O=$(O) PYTHON=$(PYTHON) CUDA_HOME=$(CUDA_HOME) sh tests/run.sh

# The whole suite again with AddressSanitizer+UBSan and with ThreadSanitizer (shim, analyzer,
# fixtures and test programs all instrumented).
check-san:
	$(MAKE) SAN=address,undefined O=$(O)-asan test
	$(MAKE) SAN=thread O=$(O)-tsan test

# The fixtures from a new make: after `make deps` in the same command the PyTorch venv is new, and
# the simulated NVML's header (NVML_INC, from the venv's nvidia-nvml-dev wheel) was looked for
# before it existed (the PyTorch demo then said "no PyTorch demo").
demo: all
	$(Q)$(MAKE) --no-print-directory fixtures
	$(Q)O=$(O) sh tests/demo.sh

# ---- installing: build dependencies, install/uninstall, clean, format ---------------------------
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
