# ---- the shim (preload/, libgputrace.so) and its launcher (launcher/, gputrace) ------------------
# Included from the Makefile. The shim's objects are compiled with hidden visibility and initial-exec
# TLS; tests/cases/layers.sh checks that they form no cycle (docs/CONTRIBUTING.md).
PRELOAD_SRC  := $(wildcard preload/*.c) $(wildcard preload/*.S)
LIB      := $(O)/libgputrace.so
LAUNCHER := $(O)/gputrace

all: $(LIB) $(LAUNCHER)

# The shim exports only the CUDA symbols it wraps, dlsym, sigaction and signal (preload/crash.c),
# the exec family (preload/exec.c), _exit and _Exit (preload/exit.c), the C library's timed and
# signal waits and syscall (preload/waits.c), socket calls that a timeout makes waits
# (preload/sockets.c) and the public API.
$(LIB): $(call obj,$(PRELOAD_SRC) $(COMMON_SRC))
	@echo "  LD      $@"
	$(Q)$(CC) -shared -o $@ $^ $(LDFLAGS) -Wl,--no-undefined -Wl,-z,nodelete -ldl -lpthread -lz $(CRC_LIBS) -lzstd -lunwind

$(LAUNCHER): $(call obj,launcher/gputrace.c)
	@echo "  LD      $@"
	$(Q)$(CC) -o $@ $^ $(LDFLAGS)

# Shim objects: hidden by default, no semantic interposition of our own symbols.
$(O)/obj/preload/%.c.o: CFLAGS += -fvisibility=hidden -fno-semantic-interposition -ftls-model=initial-exec
