/* Python frames for host call stacks (python.c). The CPython API is looked up at run time (never
 * linked); stacks.c asks for the frames of the calling thread, which python.c walks through the
 * API when the thread holds the GIL and by struct offsets when it does not. */
#ifndef GT_PYTHON_H
#define GT_PYTHON_H

#include <stddef.h>
#include <stdint.h>

struct gt_thread;

/* Looks for an interpreter already in the process (the python executable or a libpython it
 * links); from the shim's constructor (lifecycle.c), single-threaded, whatever the stacks. */
void gt_py_configure(void);
/* A newly seen object at `path` may be a libpython loaded later: look there too. Called by
 * stacks.c outside the loader's locks. */
void gt_py_module_loaded(const char *path);
/* Whether the object named by the len bytes at name (a path) is a libpython: its base name
 * starts with "libpython3". */
int gt_py_is_libpython(const char *name, size_t len);
/* Where none was found yet, looks at the objects loaded now for a libpython (one the program
 * dlopen'ed itself, as an embedding application does, is otherwise found only by the stacks'
 * module scan, which does not run with GPUTRACE_STACKS=none). From the cuInit hook. */
void gt_py_rescan(void);
/* Whether Python frames can be taken at all (an interpreter of a supported version was found,
 * and GPUTRACE_PYTHON is not 0). */
int gt_py_available(void);
/* Whether that interpreter was found, whatever GPUTRACE_PYTHON says: what the framework bridge
 * (torch.c, gt_py_sym and below) needs. */
int gt_py_loaded(void);
/* Whether a native ip lies inside the interpreter's object. */
int gt_py_interp_ip(uint64_t ip);
/* That object's range [lo, hi), where gt_py_available(). */
void gt_py_interp_range(uintptr_t *lo, uintptr_t *hi);
/* The index of the first of ip[0..n) inside it (n: none): where Python frames take over from the
 * native ones (a handler may call it). */
uint32_t gt_py_interp_first(const uint64_t *ip, uint32_t n);
/* From the cuInit hook: when the calling thread runs the initialized interpreter, asks the main
 * thread now for the atexit guard the walk by offsets waits for, so that the program's first
 * call made without the GIL (often its largest allocation: the weights) has its Python frames. */
void gt_py_early(void);
/* A forked child that traces into its own file: forget the code objects written to the parent's
 * (their references stay taken: a leak of the child's, never a use after free). */
void gt_py_forget(void);
/* The calling thread's Python frames, innermost first, as GT_PYFRAME_IP pseudo-ips in out (at
 * most max); new code objects are written to t first. Returns 0 (nothing done) unless the thread
 * runs an initialized main interpreter (holding its GIL, or not when the walk by offsets is on
 * and its atexit guard registered and not yet run: see python.c). Never takes the GIL or waits
 * for anything but python.c's own short table lock, never leaves a Python exception set or errno
 * changed. The first call asks the main thread (Py_AddPendingCall) to register that guard: the
 * program sees one more atexit callback. */
struct gt_py_chain;
/* c: the thread's chain, where gt_py_chain_same(c, max) was called for this very capture: the
 * frames it read without the GIL are taken from it instead of being read again (NULL: read). */
uint32_t gt_py_frames(struct gt_thread *t, uint64_t *out, uint32_t max,
                      const struct gt_py_chain *c);

/* The previous capture's Python frame chain, so that a capture from the same place can reuse its
 * stack id (stacks.c, one per thread): each frame's code object (and the fields its fingerprint
 * hashes) and instruction offset, as the walk by offsets reads them. */
#define GT_PY_CHAIN_MAX 256u
#define GT_PY_CHAIN_OK  2
struct gt_py_chain {
    uint32_t n, max; /* frames read, at most max */
    uint32_t gen;    /* gt_py_forget's generation when read */
    int ok;          /* GT_PY_CHAIN_OK: a full capture was made from these frames since */
    int gil;         /* read with the GIL (the full capture then walks through the API) */
    uint64_t f[2 * GT_PY_CHAIN_MAX];   /* code, key */
    uint64_t id[4 * GT_PY_CHAIN_MAX];  /* what tells each code object from a later one there */
    uint64_t tmp[2 * GT_PY_CHAIN_MAX]; /* the frames being compared: code, key */
};
/* Whether the calling thread's Python frames (at most max) are exactly those of c, read by the
 * previous call (with the GIL held or not, as now) and marked ok by gt_py_chain_done since: then
 * gt_py_frames would give the very pseudo-ips it gave then. Otherwise c now holds the current
 * frames, not ok. Reads the thread's own frames by offsets (no API call, no lock, no allocation):
 * with the GIL only after the self-checks passed, without it only when gt_py_frames would. */
int gt_py_chain_same(struct gt_py_chain *c, uint32_t max);
/* 1 when gt_py_frames called now on this thread would give no frames and do nothing else: Python
 * stacks are off, or the thread holds no GIL and has no Python state or no Python frame
 * (PyTorch's autograd thread), or the interpreter is closing. 0 otherwise (it may give frames). */
int gt_py_no_frames(void);
/* Whether c holds frames (at least one) that gt_py_chain_same read for this very capture without
 * the GIL, at this max, since the last gt_py_forget: gt_py_frames(.., max, c) would then give the
 * pseudo-ips of those frames, which are those an earlier capture got from the same frames (the
 * same code objects, told apart by the words in c->id, at the same offsets) in this generation:
 * entries of the pseudo-ip table never change. The key of stacks.c's cache of captures. */
int gt_py_chain_fresh(const struct gt_py_chain *c, uint32_t max);
/* After the capture that followed a gt_py_chain_same returning 0: gt_py_frames(.., max) gave
 * `frames` frames. Marks c ok when those are the frames c holds, all of them. */
void gt_py_chain_done(struct gt_py_chain *c, uint32_t max, uint32_t frames);

/* Host samples (hostsample.c). A sample's Python frames are read by offsets from a thread state,
 * async-signal-safely (every read a copy that fails cleanly), and carry everything their write-out
 * needs from the code objects: the write-out comes at the thread's next hooked call, when a code
 * object sampled may have been freed, and it never reads one. Per frame: the code object's
 * address and fingerprint (which the code table is keyed by), its instruction offset, and where
 * the thread's hints (hashes of the frames its earlier write-outs found in the table) do not
 * already say the table knows them, its line and its code's facts (file, name, first line). */
#define GT_PY_SAMPLE_FRAMES 48        /* Python frames kept per sample */
#define GT_PY_SAMPLE_TEXT   4096      /* bytes of code facts one sample may carry */
#define GT_PY_HINTS         1024      /* a thread's hints (a power of 2) */
#define GT_PY_NO_LINE       INT32_MIN /* gt_py_sframe.line not read */
struct gt_py_sframe {
    uint64_t code, fp; /* the code object's address, its fingerprint */
    int64_t key;       /* instruction offset (or traced line): the line cache's key */
    int32_t line;      /* its line, or GT_PY_NO_LINE */
    uint32_t facts;    /* 1 + the offset in text of its code's facts; 0: none copied */
};
/* process_vm_readv calls a sample spends on what the owner's table may lack (lines, code facts),
 * innermost frames first, before it leaves the rest to later samples: a deep stack of new code
 * with long line tables took milliseconds (tests/cases/hostsample_deep.sh) */
#define GT_PY_SAMPLE_COPIES 64
struct gt_py_sample {
    int32_t n;       /* frames read; -1: none */
    uint32_t used;   /* bytes of text */
    uint32_t capped; /* 1: frames left without their line or facts (GT_PY_SAMPLE_COPIES) */
    uint32_t pad;
    struct gt_py_sframe f[GT_PY_SAMPLE_FRAMES];
    char text[GT_PY_SAMPLE_TEXT]; /* facts: int32 first line, uint16 file and name lengths, texts */
};
/* gt_py_sample_read's working memory (its copies of the target's memory, the frames read): 5 KiB a
 * signal handler keeps off the interrupted thread's stack, which may be small. */
#define GT_PY_READ_SCRATCH 5120
struct gt_py_read_scratch {
    _Alignas(16) unsigned char b[GT_PY_READ_SCRATCH];
};
/* The calling thread's Python thread state (0: none), and that state's id (0: not known for this
 * interpreter): the state of another thread is read only while it is found alive with that id. */
uintptr_t gt_py_thread_state(void);
uint64_t gt_py_thread_state_id(uintptr_t ts);
/* Reads the frames of thread state ts into s (innermost first): from a signal handler on its own
 * thread (id 0), or from the sampler thread for a thread asleep in a system call (id: the one its
 * owner published with ts; 0 for the main thread's where ids are not known: its state lives until
 * finalization, which the read is guarded against). No lock, no allocation, no API call but the
 * interpreter's state getters. hints: the sampled thread's; scratch: the caller's alone while the
 * read runs. Returns s->n. */
int gt_py_sample_read(uintptr_t ts, uint64_t id, struct gt_py_sample *s, _Atomic uint64_t *hints,
                      struct gt_py_read_scratch *scratch);
/* Later, by the sampled thread at a hooked call (takes the table lock, may write code records):
 * the pseudo-ips of s's frames into out (at most max), from the table and what s carries; the
 * frames from the first one neither resolves on are dropped. Returns the count. */
uint32_t gt_py_sample_frames(struct gt_thread *t, const struct gt_py_sample *s,
                             _Atomic uint64_t *hints, uint64_t *out, uint32_t max);

/* For the framework bridge (torch.c), which runs Python code of its own at a safe point. */
/* A CPython API function or object by name, from the interpreter found; NULL without one. */
void *gt_py_sym(const char *name);
/* Asks the main thread to run fn(arg) between two bytecodes with the GIL (Py_AddPendingCall),
 * only while the interpreter is initialized and not finalizing. 0: queued. */
int gt_py_pending(int (*fn)(void *), void *arg);
/* Whether the calling thread holds the GIL of the initialized, not finalizing, main interpreter. */
int gt_py_safe_here(void);
/* The exception being raised, set aside while the tracer calls the API and put back after. */
struct gt_py_err {
    int had;
    void *exc, *et, *ev, *tb;
};
void gt_py_err_save(struct gt_py_err *e);
void gt_py_err_restore(struct gt_py_err *e);

#endif
