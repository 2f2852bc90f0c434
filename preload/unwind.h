/* Native call stacks of the calling thread: a fast x86-64 frame walker over cached per-pc CFI
 * rules (unwind.c), with libunwind wherever a frame is not simple. Nothing here is exported but
 * the dlclose wrapper. */
#ifndef GT_UNWIND_H
#define GT_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#define GT_UNW_FRAMES_MAX 288 /* longest walk logged (GT_STACK_DEPTH_MAX and some) */

#define GT_UNW_CACHED   64    /* walks a thread keeps for reuse from a few frames in (the cache) */
#define GT_UNW_ARENA    32768 /* words (256 KiB) for their frames and checks, mapped on first use */
#define GT_UNW_PROBE    3     /* the frame at which a walk looks itself up in the cache (the 4th) */

#define GT_UNW_SAME_PREFIX 2 /* gt_unw_thread.same: only the innermost upto frames repeat */

/* The previous walk of a thread (unwind.c: "the walk"). */
struct gt_unw_log {
    uint32_t n, max; /* frames, and the max of the walk */
    uint64_t gen;
    uint64_t stop_lo, stop_len; /* the walk's stop range (gt_unw_thread.stop_lo) */
    int stopped;                /* it ended at a frame in that range */
    uint64_t sp[GT_UNW_FRAMES_MAX], rbp[GT_UNW_FRAMES_MAX], ra[GT_UNW_FRAMES_MAX];
    uint64_t rbp_at[GT_UNW_FRAMES_MAX]; /* where the caller's rbp was read, 0 unchanged */
    uint8_t cfa_rbp[GT_UNW_FRAMES_MAX]; /* the frame's CFA is rbp-based */
    /* The slots that a repeat of its innermost chk_n frames reads, and what they held: made once
     * (chk_n 0: not yet), checked by every later walk from the same place (unwind.c: log_same) */
    uint32_t chk_n, nchk;
    int chk_rbp; /* the rbp the walk enters with counts too */
    uint64_t chk_at[2 * GT_UNW_FRAMES_MAX], chk_val[2 * GT_UNW_FRAMES_MAX];
};

/* A walk kept in the cache (unwind.c: "the cache"): the state entering frame GT_UNW_PROBE and,
 * in the arena at off, the return addresses of frames GT_UNW_PROBE to n-1, then nchk pairs {slot,
 * value} that a walk from that state reads. */
struct gt_unw_cached {
    uint64_t sp, ra, rbp; /* rbp only where chk_rbp */
    uint64_t gen, stop_lo, stop_len;
    uint32_t n, max, nchk, off;
    uint8_t chk_rbp, stopped;
    uint64_t serial; /* this thread's count of entries made when this one was: never reused */
};

/* Per-thread state, zeroed before first use (mmap), owned by its thread. */
struct gt_unw_thread {
    uintptr_t lo, hi; /* the thread's stack; hi == 0 until looked up */
    int log_on;       /* log walks, and reuse them */
    /* 1: the latest gt_unwind gave exactly what the one before it gave (gt_unwind_fast: what the
     * latest walk that succeeded gave); GT_UNW_SAME_PREFIX: its innermost upto frames are those,
     * the ones beyond are the previous walk's, unchecked */
    int same;
    /* set by the caller: it needs only the innermost upto frames when they repeat the previous
     * walk's (0: all) */
    uint32_t upto;
    /* set by the caller: the walk ends at the first frame whose call site (return address - 1)
     * lies in [stop_lo, stop_hi), that frame kept as the last one: the caller replaces it and
     * the frames beyond (stacks.c: Python frames stand for the interpreter's). stopped: the
     * latest walk ended there. A walk by the cached rules holds at most one frame in the range,
     * its last, exactly when stopped; libunwind's (never stopped) walks on to the end. lo == hi:
     * no stop. */
    uintptr_t stop_lo, stop_hi;
    int stopped;
    /* log[cur]: the latest walk; log[old]: the one before it, kept whole (a thread that calls
     * from two places in turn finds each walk in one of them); the third: the walk being made */
    uint32_t cur, old;
    /* Logged walks in a row that walked more frames than they took from the log (a thread whose
     * stack differs from one event to the next); after a few, the next `unlogged` walks are made
     * without the log (its checks and joins cost more than they save there), `backoff` of them
     * the next time (doubling while logging keeps missing, from the minimum after a hit) */
    uint32_t misses, unlogged, backoff;
    uint64_t walked_unlogged; /* walks made so (for tests) */
    uint64_t walked, fell_back; /* gt_unwind's stacks: by the rules, by libunwind */
    uint64_t joined;            /* walks that took their outer frames from the previous one */
    uint64_t older;             /* walks that repeated the one before the previous one */
    uint64_t cached;            /* walks whose frames from GT_UNW_PROBE on came from the cache */
    struct gt_unw_log log[3];
    /* the cache: keys (0: empty slot), entries, the arena (NULL until the first entry) and where
     * its next entry goes, the slot the next entry takes */
    uint64_t ckey[GT_UNW_CACHED];
    struct gt_unw_cached centry[GT_UNW_CACHED];
    uint64_t *arena;
    uint32_t arena_pos, cnext;
    /* the latest walk came from the cache: its entry + 1 (0: it did not), its first frames */
    uint32_t clast;
    uint64_t cfirst[GT_UNW_PROBE];
    /* the serial of the entry the latest walk came from (0: it did not): a walk with this serial
     * and these first GT_UNW_PROBE frames gave exactly these frames, whatever walks came between */
    uint64_t from;
    uint64_t serials; /* entries made */
};

/* Unmaps what th holds beyond itself (the cache's arena); th stays usable. */
void gt_unwind_thread_release(struct gt_unw_thread *th);

/* GPUTRACE_UNWIND: "libunwind" walks every stack with libunwind (comparison, escape hatch);
 * anything else (default "fast") the cached-rule walker. Single-threaded (configuration). */
void gt_unwind_configure(const char *mode);

/* dl_iterate_phdr under the tracer's loader lock, which fork waits for: a child never inherits
 * the loader's list lock from a walk of ours cut by the fork (unwind.c, "the loader's lock"). */
struct dl_phdr_info;
int gt_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);

/* The mapped range [lo, hi) of the object's PT_LOAD segments. */
void gt_load_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi);

/* The length of a loaded object's name (dlpi_name, NULL reads as ""), at most max bytes. Inside
 * a gt_loader_iterate callback, read the name only through this and then only its first len
 * bytes (see unwind.c: ThreadSanitizer and dlopen'ed names). */
size_t gt_dl_name_len(const char *name, size_t max);

/* The range of the loaded object that holds addr (as gt_load_range); 0 when none does. */
int gt_object_range(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

/* Drops every rule derived and libunwind's caches (the dlclose wrapper, after an unload). */
void gt_unwind_forget(void);

/* Looks up the calling thread's stack bounds into th; log: keep and reuse walks. */
void gt_unwind_thread_init(struct gt_unw_thread *th, int log);

/* Return addresses of the calling frames, innermost first, at most max; buf[0] lies inside
 * gt_unwind itself (as with unw_backtrace called from there), buf[1] in its caller. Walks with
 * the cached rules when they cover every frame, else with libunwind. th: the calling thread's
 * (initialized on first use); th->same tells whether the result repeats the previous one (or
 * only its innermost th->upto frames: GT_UNW_SAME_PREFIX). */
int gt_unwind(void **buf, int max, struct gt_unw_thread *th);

/* The fast walker alone, for tests: return addresses from the one into its caller (buf[0]) on;
 * -1 when some frame needs libunwind (no CFI, a signal frame, an expression, a frame outside
 * [th->lo, th->hi)), and then buf holds garbage. Reads no memory outside [its own sp, th->hi).
 * th must be initialized (gt_unwind_thread_init). */
int gt_unwind_fast(void **buf, int max, struct gt_unw_thread *th);

/* Set by a signal handler around its gt_unwind_signal (the sampler thread's walk of a sleeping
 * thread is no handler's): such a walk derives no missing rule (the interrupted code may hold the
 * loader's lock) but notes where it stopped for gt_unwind_learn. */
extern __thread int gt_unw_in_handler;

/* Derives the rules that try-mode walks (handlers', the sampler thread's) missed since the last
 * call, without waiting for a lock (one still busy is noted again); outside any handler and the
 * sampler's lock. The number tried. */
unsigned gt_unwind_learn(void);

/* A signal handler's walk of the code it interrupted, from its registers (pc, sp, rbp): pc then
 * the return addresses minus 1 (call sites), innermost first, at most max; cached rules only, no
 * lock waited for, no libunwind. *partial: the walk stopped before the stack's end. */
int gt_unwind_signal(uint64_t *buf, int max, const struct gt_unw_thread *th, uintptr_t pc,
                     uintptr_t sp, uintptr_t rbp, int *partial);

/* The calling thread's stack bounds (pthread_getattr_np, at most its top 1 GiB); {0, 0} when
 * unknown. */
struct gt_unw_bounds {
    uintptr_t lo, hi;
};
struct gt_unw_bounds gt_unwind_thread_bounds(void);

/* Counters, for tests and GPUTRACE_DEBUG: th's stacks walked by the rules and handed to libunwind,
 * and the process's rules derived from CFI (table misses) and table clears (dlclose). */
struct gt_unw_stats {
    uint64_t fast, fallback, derived, clears, cached;
};
struct gt_unw_stats gt_unwind_stats(const struct gt_unw_thread *th);

#endif
