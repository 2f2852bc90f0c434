/* Native call stacks, fast: an x86-64 frame walker over cached per-pc CFI rules, with libunwind
 * for every stack it cannot walk exactly.
 *
 * Nearly every frame of compiled code unwinds by one of a few rules: the canonical frame address
 * (CFA) is rsp+k or rbp+k, the return address is at CFA-8, the caller's rbp is unchanged or saved
 * at CFA-n, the caller's rsp is the CFA. libunwind's unw_backtrace knows this too (its "fast
 * trace"), but pays 6-9 ns a frame for its generic cursor; here a frame costs one load of the rule
 * and the loads of the return address (and rbp), ~4 ns. Rules are derived once per return address
 * from the module's .eh_frame (through .eh_frame_hdr's sorted table, in memory, under the loader's
 * lock: no file I/O, no malloc) and kept in a two-way set-associative table of 64-bit words, each
 * {the return address's tag, rule}, so one relaxed atomic load gives a consistent entry and
 * concurrent writers of one set can only replace each other's whole entries. A thread's previous
 * walk is reused where the stack has not changed ("the walk" below), and its last 64 walks are
 * kept by the state in which they passed their fourth frame, for a walk from another place that
 * passes there in that state too ("the cache").
 *
 * Anything else goes to libunwind for the whole stack, so the result is always what libunwind
 * gives: a frame without CFI, a signal frame (CIE augmentation "S"), a CFA or a register given
 * by a DWARF expression (stack realignment), a rule for rsp, a return address that is not at
 * CFA-8, a CFA outside the thread's stack, a return address below 4096. A frame whose return
 * address is undefined (_start, clone3) ends the stack, as it ends libunwind's.
 *
 * Safety: the walker reads only [its own sp, the thread's stack top): every CFA is checked to
 * rise and stay below the top, and each slot it loads lies between the current sp and the CFA.
 * A stale rule can therefore give a wrong frame but never a bad read. Rules go stale when a module
 * is unloaded and another mapped at its addresses: our dlclose wrapper clears the table after the
 * real dlclose, under the writers' mutex (a rule derived from the closing module is either
 * written before the clear or derived after the module left the loader's list). Left open: a
 * concurrent dlopen that maps a new module over the old one between the real dlclose and the
 * clear (microseconds) could let a third thread use a stale rule for a frame of the new module
 * until the clear; the frame would be wrong, not the memory access. */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <stddef.h>
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unwind.h"

#define GT_UNW_STACK_MAX   ((uintptr_t)1 << 30) /* the most of a thread's stack walked */
#define UNW_EXPORT         __attribute__((visibility("default")))
#define GT_UNW_LIKELY(x)   __builtin_expect(!!(x), 1)
#define GT_UNW_UNLIKELY(x) __builtin_expect(!!(x), 0)

#if defined(__x86_64__)
/* ---- the rule table ---------------------------------------------------------------------------
 * Two-way set associative, the set chosen by the low bits of the return address (no hash on the
 * walk's chain of dependent loads), the most recently derived rule in way 0. A word: the return
 * address's other bits (the tag) << RULE_BITS | rule. Return addresses are < 2^47 (x86-64 user
 * space with 4-level page tables; one above gets no entry and goes to libunwind). An empty word
 * (0) matches only a return address below 8 KiB whose rule would be 0: CFA = sp + 0, which the
 * walker refuses, as it refuses any return address below 4 KiB. */
#define PC_BITS   47
#define SET_BITS  13
#define SETS      (1u << SET_BITS)
#define RULE_BITS 30 /* 64 - (PC_BITS - SET_BITS) */
#define RULE_MASK ((1u << RULE_BITS) - 1)
#define SLOTS     (2 * SETS)
#else
#define SLOTS 1u
#endif

/* rule: the CFA offset in bytes (a multiple of 8, at most 0x1fff8) in bits 0-16, whose three low
 * bits hold flags: bit 0 not simple (libunwind, or with bit 1 the end of the stack), bit 2 the CFA
 * is rbp-based (else rsp); bit 17 rbp saved, bits 18-29 its distance below the CFA / 8. So the
 * walker gets the offset with one AND. */
#define R_NOT_SIMPLE 1u
#define R_LIBUNWIND  R_NOT_SIMPLE
#define R_END        (R_NOT_SIMPLE | 2u)
#define R_CFA_RBP    4u
#define R_CFA_OFF(r) ((uintptr_t)((r)&0x1fff8u))
#define R_RBP_SAVED  (1u << 17)
#define R_RBP_OFF(r) ((uintptr_t)(((r) >> 18) & 0xfffu) << 3)

static struct {
    _Atomic uint64_t slot[SLOTS];
    pthread_mutex_t mu; /* rule writers vs the dlclose clear */
    _Atomic int used;   /* some slot may be non-zero */
    _Atomic uint64_t derived, clears;
    int use_libunwind;
} U = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- the loader's lock and fork ----------------------------------------------------------------
 * glibc (2.36 at least) does not reset the lock dl_iterate_phdr holds (dl_load_write_lock) in a
 * forked child: a thread iterating at the moment another forks leaves the child unable ever to
 * iterate, dlopen or unload again (seen: 7 in 100 runs of unit_unwind's fork test, the child stuck
 * in dl_iterate_phdr under our dlclose wrapper). Every walk of the loader's list the tracer makes
 * (rule derivation, the dlclose wrapper, libunwind's walks, module scans, library searches) runs
 * under this read lock, and fork takes it for writing, so no such walk of ours is ever cut by a
 * fork. (The loader's own short holds, inside dlopen and dlclose, remain glibc's.) */
static pthread_rwlock_t loader_lock = PTHREAD_RWLOCK_INITIALIZER;

static void loader_prepare(void)
{
    pthread_rwlock_wrlock(&loader_lock);
}
static void loader_parent(void)
{
    pthread_rwlock_unlock(&loader_lock);
}
static void unw_fork_child(void);
static void register_fork(void)
{
    pthread_atfork(loader_prepare, loader_parent, unw_fork_child);
}
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

int gt_loader_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    pthread_once(&fork_once, register_fork);
    pthread_rwlock_rdlock(&loader_lock);
    int r = dl_iterate_phdr(cb, data);
    pthread_rwlock_unlock(&loader_lock);
    return r;
}

/* ThreadSanitizer cannot see the loader's lock, so its dl_iterate_phdr interceptor clears the race
 * state of each name's first strlen bytes, rounded up to its 8-byte shadow cells, before the
 * callback runs. A name whose length is a multiple of 8 (from a dlopen on another thread) keeps
 * its terminating NUL outside that range, and strlen, strnlen or strstr on it then report a race
 * with the malloc inside that dlopen (CI: libstkalloc.so under a 48-byte path). The loader's lock
 * does order the two; this length is read without instrumentation, and callers touch only the
 * bytes before the NUL. Volatile keeps the loop from being turned into a strnlen call. */
__attribute__((no_sanitize_thread)) size_t gt_dl_name_len(const char *name, size_t max)
{
    const volatile char *p = name;
    size_t n = 0;
    if (p)
        while (n < max && p[n]) n++;
    return n;
}

void gt_load_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < *lo) *lo = a;
        if (a + ph->p_memsz > *hi) *hi = a + ph->p_memsz;
    }
}

struct range_query {
    uintptr_t addr, lo, hi;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct range_query *q = arg;
    uintptr_t lo, hi;
    (void)size;
    gt_load_range(info, &lo, &hi);
    if (q->addr < lo || q->addr >= hi) return 0;
    q->lo = lo;
    q->hi = hi;
    return 1;
}

int gt_object_range(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
    struct range_query q = {.addr = addr};
    if (!gt_loader_iterate(find_range, &q)) return 0;
    *lo = q.lo;
    *hi = q.hi;
    return 1;
}

#if defined(__x86_64__)

static uint32_t derive_rule(uintptr_t pc);

/* (always inlined: also into gt_unwind_signal, which ThreadSanitizer does not instrument) */
static inline __attribute__((always_inline)) uint32_t rule_of(uintptr_t ra)
{
    if (GT_UNW_UNLIKELY(ra >> PC_BITS)) return R_LIBUNWIND;
    const _Atomic uint64_t *set = &U.slot[2 * (ra & (SETS - 1))];
    uint64_t tag = ra >> SET_BITS;
    uint64_t w = atomic_load_explicit(&set[0], memory_order_relaxed);
    if (GT_UNW_LIKELY(w >> RULE_BITS == tag)) return (uint32_t)w & RULE_MASK;
    w = atomic_load_explicit(&set[1], memory_order_relaxed);
    if (w >> RULE_BITS == tag) return (uint32_t)w & RULE_MASK;
    return derive_rule(ra);
}

/* ---- .eh_frame: the CFI row at a pc ------------------------------------------------------------
 */

enum { HOW_SAME, HOW_OFFSET, HOW_UNDEF, HOW_OTHER };
enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };

struct row {
    int cfa_reg, cfa_expr;
    int64_t cfa_off;
    int rbp_how, ra_how, rsp_how;
    int64_t rbp_off, ra_off; /* from the CFA, for HOW_OFFSET */
};

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;
    int has_aug, signal;
    const uint8_t *insn, *end;
};

struct cursor {
    const uint8_t *p, *end;
    uintptr_t datarel; /* .eh_frame_hdr's address */
    int bad;
};

static uint64_t get_bytes(struct cursor *c, unsigned n)
{
    uint64_t v = 0;
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return 0;
    }
    memcpy(&v, c->p, n); /* little-endian */
    c->p += n;
    return v;
}

/* LEB128, sign-extended from its last byte where `sign`. */
static uint64_t get_leb(struct cursor *c, int sign)
{
    uint64_t v = 0;
    for (unsigned shift = 0; !c->bad; shift += 7) {
        if (c->p >= c->end || shift > 63) break;
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (sign && shift + 7 < 64 && (b & 0x40)) v |= ~0ull << (shift + 7);
            return v;
        }
    }
    c->bad = 1;
    return 0;
}

static uint64_t get_uleb(struct cursor *c)
{
    return get_leb(c, 0);
}

static int64_t get_sleb(struct cursor *c)
{
    return (int64_t)get_leb(c, 1);
}

/* A DW_EH_PE-encoded pointer (absolute, pc-relative or relative to .eh_frame_hdr; no indirection,
 * which only personality routines use, and those are skipped by size). */
static uint64_t get_enc(struct cursor *c, uint8_t enc)
{
    uintptr_t at = (uintptr_t)c->p, base;
    uint64_t v;
    switch (enc & 0x70) {
    case 0x00:
        base = 0;
        break;
    case 0x10:
        base = at;
        break;
    case 0x30:
        base = c->datarel;
        break;
    default:
        c->bad = 1;
        return 0;
    }
    switch (enc & 0x0f) {
    case 0x00:
        v = get_bytes(c, 8);
        break;
    case 0x01:
        v = get_uleb(c);
        break;
    case 0x02:
        v = get_bytes(c, 2);
        break;
    case 0x03:
        v = get_bytes(c, 4);
        break;
    case 0x04:
        v = get_bytes(c, 8);
        break;
    case 0x09:
        v = (uint64_t)get_sleb(c);
        break;
    case 0x0a:
        v = (uint64_t)(int64_t)(int16_t)get_bytes(c, 2);
        break;
    case 0x0b:
        v = (uint64_t)(int64_t)(int32_t)get_bytes(c, 4);
        break;
    case 0x0c:
        v = get_bytes(c, 8);
        break;
    default:
        c->bad = 1;
        return 0;
    }
    return (enc & 0x80) ? (c->bad = 1, 0) : v + base;
}

/* The length field of a CIE or FDE at c->p; leaves c->end at the entry's end. 0: terminator. */
static uint64_t entry_len(struct cursor *c)
{
    uint64_t len = get_bytes(c, 4);
    if (len == 0xffffffffu) len = get_bytes(c, 8);
    if (c->bad || len > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        return 0;
    }
    c->end = c->p + len;
    return len;
}

static int parse_cie(const uint8_t *at, const uint8_t *limit, struct cie *cie)
{
    struct cursor c = {at, limit, 0, 0};
    if (!entry_len(&c) || get_bytes(&c, 4) != 0) return -1;
    uint8_t version = (uint8_t)get_bytes(&c, 1);
    const char *aug = (const char *)c.p;
    size_t alen = strnlen(aug, (size_t)(c.end - c.p));
    if (c.bad || (version != 1 && version != 3) || alen == (size_t)(c.end - c.p)) return -1;
    c.p += alen + 1;
    if (strstr(aug, "eh")) return -1;
    *cie = (struct cie){.code_align = get_uleb(&c), .data_align = get_sleb(&c), .fde_enc = 0};
    uint64_t ra = version == 1 ? get_bytes(&c, 1) : get_uleb(&c);
    if (ra != DW_RA) return -1;
    cie->has_aug = aug[0] == 'z';
    if (cie->has_aug) {
        uint64_t n = get_uleb(&c);
        if (c.bad || n > (uint64_t)(c.end - c.p)) return -1;
        const uint8_t *data_end = c.p + n;
        for (const char *a = aug + 1; *a && !c.bad; a++) {
            if (*a == 'R')
                cie->fde_enc = (uint8_t)get_bytes(&c, 1);
            else if (*a == 'L')
                get_bytes(&c, 1);
            else if (*a == 'P') {
                uint8_t enc = (uint8_t)get_bytes(&c, 1);
                (void)get_enc(&c, enc & 0x7f); /* skipped: only its size matters */
            } else if (*a == 'S')
                cie->signal = 1;
            else
                return -1;
        }
        c.p = data_end;
    } else if (aug[0])
        return -1;
    cie->insn = c.p;
    cie->end = c.end;
    return c.bad ? -1 : 0;
}

static void set_reg(struct row *r, uint64_t reg, int how, int64_t off)
{
    if (reg == DW_RBP) {
        r->rbp_how = how;
        r->rbp_off = off;
    } else if (reg == DW_RA) {
        r->ra_how = how;
        r->ra_off = off;
    } else if (reg == DW_RSP)
        r->rsp_how = how == HOW_SAME ? HOW_SAME : HOW_OTHER;
}

static void restore_reg(struct row *r, const struct row *init, uint64_t reg)
{
    if (reg == DW_RBP)
        set_reg(r, reg, init->rbp_how, init->rbp_off);
    else if (reg == DW_RA)
        set_reg(r, reg, init->ra_how, init->ra_off);
    else if (reg == DW_RSP)
        r->rsp_how = init->rsp_how;
}

/* A factored offset, wrapping like the hardware would rather than overflowing (malformed CFI:
 * a signed overflow is undefined, and the offset is checked by encode anyway). */
static int64_t scaled(uint64_t v, int64_t align)
{
    return (int64_t)(v * (uint64_t)align);
}

/* Runs CFA instructions from loc until the row that covers pc. init: the CIE's row (for
 * DW_CFA_restore; NULL while running the CIE's own). Returns -1 on anything not understood. */
static int run_cfa(struct cursor *c, const struct cie *cie, uintptr_t loc, uintptr_t pc,
                   struct row *r, const struct row *init)
{
    struct row saved[8];
    unsigned depth = 0;
    while (c->p < c->end && !c->bad) {
        uint8_t op = *c->p++;
        uint64_t reg, delta = 0;
        switch (op & 0xc0) {
        case 0x40:
            delta = op & 0x3f;
            goto advance;
        case 0x80:
            set_reg(r, op & 0x3f, HOW_OFFSET, scaled(get_uleb(c), cie->data_align));
            continue;
        case 0xc0:
            if (!init) return -1;
            restore_reg(r, init, op & 0x3f);
            continue;
        }
        switch (op) {
        case 0x00:
            break;
        case 0x01: {
            uintptr_t to = get_enc(c, cie->fde_enc);
            if (to > pc) return 0;
            loc = to;
            break;
        }
        case 0x02:
            delta = get_bytes(c, 1);
            goto advance;
        case 0x03:
            delta = get_bytes(c, 2);
            goto advance;
        case 0x04:
            delta = get_bytes(c, 4);
            goto advance;
        case 0x05:
            reg = get_uleb(c);
            set_reg(r, reg, HOW_OFFSET, scaled(get_uleb(c), cie->data_align));
            break;
        case 0x06:
            if (!init) return -1;
            restore_reg(r, init, get_uleb(c));
            break;
        case 0x07:
            set_reg(r, get_uleb(c), HOW_UNDEF, 0);
            break;
        case 0x08:
            set_reg(r, get_uleb(c), HOW_SAME, 0);
            break;
        case 0x09:
            reg = get_uleb(c);
            get_uleb(c);
            set_reg(r, reg, HOW_OTHER, 0);
            break;
        case 0x0a:
            if (depth == sizeof(saved) / sizeof(saved[0])) return -1;
            saved[depth++] = *r;
            break;
        case 0x0b:
            if (!depth) return -1;
            *r = saved[--depth];
            break;
        case 0x0c:
            r->cfa_reg = (int)get_uleb(c);
            r->cfa_off = (int64_t)get_uleb(c);
            r->cfa_expr = 0;
            break;
        case 0x0d:
            r->cfa_reg = (int)get_uleb(c);
            r->cfa_expr = 0;
            break;
        case 0x0e:
            r->cfa_off = (int64_t)get_uleb(c);
            break;
        case 0x0f: /* stack realignment and the like: libunwind */
            delta = get_uleb(c);
            if (delta > (uint64_t)(c->end - c->p)) return -1;
            c->p += delta;
            r->cfa_expr = 1;
            break;
        case 0x10:
        case 0x16:
            reg = get_uleb(c);
            delta = get_uleb(c);
            if (delta > (uint64_t)(c->end - c->p)) return -1;
            c->p += delta;
            set_reg(r, reg, HOW_OTHER, 0);
            break;
        case 0x11:
            reg = get_uleb(c);
            set_reg(r, reg, HOW_OFFSET, scaled((uint64_t)get_sleb(c), cie->data_align));
            break;
        case 0x12:
            r->cfa_reg = (int)get_uleb(c);
            r->cfa_off = scaled((uint64_t)get_sleb(c), cie->data_align);
            r->cfa_expr = 0;
            break;
        case 0x13:
            r->cfa_off = scaled((uint64_t)get_sleb(c), cie->data_align);
            break;
        case 0x14:
            reg = get_uleb(c);
            get_uleb(c);
            set_reg(r, reg, HOW_OTHER, 0);
            break;
        case 0x15:
            reg = get_uleb(c);
            get_sleb(c);
            set_reg(r, reg, HOW_OTHER, 0);
            break;
        case 0x2e:
            get_uleb(c);
            break;
        case 0x2f:
            reg = get_uleb(c);
            set_reg(r, reg, HOW_OFFSET, scaled(-get_uleb(c), cie->data_align));
            break;
        default:
            return -1;
        }
        continue;
    advance:
        loc += delta * cie->code_align;
        if (loc > pc) return 0;
    }
    return c->bad ? -1 : 0;
}

/* The rule of a row, as the walker encodes it. */
static uint32_t encode(const struct row *r, int signal)
{
    if (signal || r->cfa_expr || r->cfa_reg < 0 || r->rsp_how != HOW_SAME) return R_LIBUNWIND;
    if (r->ra_how == HOW_UNDEF) return R_END;
    if (r->ra_how != HOW_OFFSET || r->ra_off != -8) return R_LIBUNWIND;
    if ((r->cfa_reg != DW_RSP && r->cfa_reg != DW_RBP) || r->cfa_off < 8 || r->cfa_off % 8 ||
        r->cfa_off / 8 > 0x3fff)
        return R_LIBUNWIND;
    uint32_t rule = (uint32_t)r->cfa_off;
    if (r->cfa_reg == DW_RBP) rule |= R_CFA_RBP;
    if (r->rbp_how == HOW_OFFSET) {
        if (r->rbp_off > -8 || r->rbp_off < -0x7ff8 || r->rbp_off % 8 || -r->rbp_off > r->cfa_off)
            return R_LIBUNWIND;
        rule |= R_RBP_SAVED | (uint32_t)(-r->rbp_off / 8) << 18;
    } else if (r->rbp_how != HOW_SAME)
        return R_LIBUNWIND;
    return rule;
}

/* The FDE covering pc in the object whose .eh_frame_hdr is at hdr: the rule at pc. */
static uint32_t rule_from_hdr(const uint8_t *base, const uint8_t *hdr, const uint8_t *limit,
                              uintptr_t pc)
{
    struct cursor c = {hdr + 4, limit, (uintptr_t)hdr, 0};
    if (limit - hdr < 12 || hdr[0] != 1 || hdr[3] != 0x3b) /* a datarel sdata4 table */
        return R_LIBUNWIND;
    (void)get_enc(&c, hdr[1]); /* .eh_frame itself: found through the table */
    uint64_t count = get_enc(&c, hdr[2]);
    if (c.bad || !count || count > (uint64_t)(limit - c.p) / 8) return R_LIBUNWIND;
    const int32_t *tab = (const int32_t *)c.p;
    uint64_t lo = 0, hi = count; /* the last entry with start <= pc */
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if ((uintptr_t)hdr + tab[2 * mid] <= pc)
            lo = mid;
        else
            hi = mid;
    }
    if ((uintptr_t)hdr + tab[2 * lo] > pc) return R_LIBUNWIND;
    const uint8_t *fde = hdr + tab[2 * lo + 1];
    if (fde < base || fde >= limit) return R_LIBUNWIND;
    struct cursor f = {fde, limit, (uintptr_t)hdr, 0};
    if (!entry_len(&f)) return R_LIBUNWIND;
    const uint8_t *id_at = f.p;
    uint32_t cie_off = (uint32_t)get_bytes(&f, 4);
    struct cie cie;
    if (f.bad || !cie_off || cie_off > (uintptr_t)(id_at - base) ||
        parse_cie(id_at - cie_off, limit, &cie) < 0)
        return R_LIBUNWIND;
    uintptr_t start = get_enc(&f, cie.fde_enc);
    uintptr_t range = get_enc(&f, cie.fde_enc & 0x0f);
    if (f.bad || pc < start || pc - start >= range) return R_LIBUNWIND;
    if (cie.has_aug) {
        uint64_t n = get_uleb(&f);
        if (f.bad || n > (uint64_t)(f.end - f.p)) return R_LIBUNWIND;
        f.p += n;
    }
    /* Unspecified: rbp keeps its value (callee-saved), the return address is not known. */
    struct row init = {
        .cfa_reg = -1, .rbp_how = HOW_SAME, .ra_how = HOW_OTHER, .rsp_how = HOW_SAME};
    struct row r;
    struct cursor ci = {cie.insn, cie.end, (uintptr_t)hdr, 0};
    if (run_cfa(&ci, &cie, start, UINTPTR_MAX, &init, NULL) < 0) return R_LIBUNWIND;
    r = init;
    if (run_cfa(&f, &cie, start, pc, &r, &init) < 0) return R_LIBUNWIND;
    return encode(&r, cie.signal);
}

struct find {
    uintptr_t pc;
    uint32_t rule;
};

/* dl_iterate_phdr callback; runs under the loader's lock, so the object cannot go away. */
static int find_rule(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct find *q = arg;
    const ElfW(Phdr) *eh = NULL;
    int inside = 0;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_GNU_EH_FRAME) eh = ph;
        if (ph->p_type == PT_LOAD && q->pc >= a && q->pc - a < ph->p_memsz) inside = 1;
    }
    if (!inside) return 0;
    if (!eh) return 1;
    /* Everything read lies in the loaded segment that holds .eh_frame_hdr (as .eh_frame does):
     * an offset pointing elsewhere, even into a gap between segments, gets libunwind instead. */
    uintptr_t at = info->dlpi_addr + eh->p_vaddr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && at >= a && at - a < ph->p_filesz)
            q->rule = rule_from_hdr((const uint8_t *)a, (const uint8_t *)at,
                                    (const uint8_t *)(a + ph->p_filesz), q->pc);
    }
    return 1;
}

/* Cache miss: the rule for the frame that returns to ra (its call instruction ends at ra, so the
 * row of ra - 1 applies, as libunwind uses it). */
/* Set while a timer signal's handler walks (gt_unwind_signal): the interrupted code may hold the
 * locks below (a fork holding the loader's lock for writing, a walk of its own), so they are only
 * tried, and a miss that cannot take them caches nothing. */
static __thread int unw_in_signal __attribute__((tls_model("initial-exec")));
__thread int gt_unw_in_handler __attribute__((tls_model("initial-exec")));

/* Return addresses a walk in try mode (a handler's, the sampler thread's of a sleeping thread)
 * found no rule for and could not derive one without waiting: the code a handler interrupted may
 * hold the loader's lock (a recursive mutex in glibc: dl_iterate_phdr, dlopen, a C++ exception's
 * unwinder take it), and a dl_iterate_phdr from the handler waits for itself where the thread is
 * halfway through taking or releasing it (seen: hostsample_exec at 10 kHz, a sample inside
 * __pthread_mutex_unlock_usercnt). gt_unwind_learn (the sampler thread, each tick, outside the
 * sampler's lock) derives them, also in try mode, so that later samples there walk on. A full
 * slot drops the address: a later miss there notes it again. */
#define MISS_SLOTS 64
static _Atomic uintptr_t unw_miss[MISS_SLOTS];

/* (not instrumented: it runs in the handler, which may interrupt a sanitizer's runtime) */
__attribute__((noinline, no_sanitize("address", "thread"))) static void miss_note(uintptr_t ra)
{
    uintptr_t none = 0;
    atomic_compare_exchange_strong_explicit(&unw_miss[(ra >> 4) % MISS_SLOTS], &none, ra,
                                            memory_order_relaxed, memory_order_relaxed);
}

/* Code a handler must not derive a rule from inside: the dynamic loader's, which changes the list
 * of modules under the loader's lock (ldlock_take below would take it recursively from the very
 * thread that is halfway through that change). A sample inside the mutex's own lock or unlock
 * needs no range: ldlock_take sees the lock halfway taken or released and declines. Set once by
 * gt_unwind_configure. */
static struct {
    uintptr_t lo, hi;
} unw_loader_code;
static __thread int unw_sig_risky __attribute__((tls_model("initial-exec")));

static inline __attribute__((always_inline)) int in_risky(uintptr_t pc)
{
    return pc - unw_loader_code.lo < unw_loader_code.hi - unw_loader_code.lo;
}

static int risky_loader(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    if (info->dlpi_addr != *(uintptr_t *)base) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            unw_loader_code.lo = info->dlpi_addr + ph->p_vaddr;
            unw_loader_code.hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    return 1;
}

/* The loader's lock, which dl_iterate_phdr takes (a recursive mutex, _rtld_global's
 * dl_load_write_lock in glibc: not exported): found once as the mutex in the dynamic loader's
 * writable data that the calling thread owns inside a dl_iterate_phdr callback. NULL where not
 * found: handlers then derive no rule at all. */
static const pthread_mutex_t *unw_ldlock;
struct ldlock_find {
    uintptr_t base;
    pid_t me;
    const pthread_mutex_t *found;
};

static int ldlock_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct ldlock_find *f = arg;
    if (info->dlpi_addr != f->base) return 0;
    for (int i = 0; i < info->dlpi_phnum && !f->found; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7;
        uintptr_t hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        for (uintptr_t a = lo; a + sizeof(pthread_mutex_t) <= hi; a += 8) {
            const pthread_mutex_t *m = (const pthread_mutex_t *)a;
            if (m->__data.__owner == f->me && m->__data.__lock != 0 && m->__data.__count >= 1 &&
                (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP) {
                f->found = m;
                break;
            }
        }
    }
    return 1;
}

static void find_ldlock(uintptr_t base)
{
    struct ldlock_find f = {base, gettid(), NULL};
    if (!base) return;
    dl_iterate_phdr(ldlock_cb, &f);
    if (f.found && f.found->__data.__owner == 0) unw_ldlock = f.found; /* released since */
}

/* A try-mode walk's hold of the loader's lock, so that its dl_iterate_phdr cannot wait: 1 taken
 * (free, or owned whole by this thread: it recurses; pthread_mutex_unlock(unw_ldlock) after),
 * 0 not now (another thread's, or this thread's halfway: locked without an owner while being
 * taken, or owned with a count of 0 while being released; only the owner writes the owner and
 * the count, and the owner is the interrupted code, so what is read is stable), -1 the lock is
 * unknown. */
__attribute__((no_sanitize("address", "thread"))) static int ldlock_take(void)
{
    pthread_mutex_t *m = (pthread_mutex_t *)unw_ldlock;
    if (!m) return -1;
    int ow = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
    if (ow != 0 && ow == gettid() &&
        __atomic_load_n(&m->__data.__count, __ATOMIC_RELAXED) < 1)
        return 0;
    return pthread_mutex_trylock(m) == 0;
}

static void find_risky(void)
{
    uintptr_t base = (uintptr_t)getauxval(AT_BASE);
    if (base) dl_iterate_phdr(risky_loader, &base);
    find_ldlock(base);
}

unsigned gt_unwind_learn(void)
{
    unsigned n = 0;
    unw_in_signal = 1; /* try mode: what cannot be derived now is noted again */
    for (unsigned i = 0; i < MISS_SLOTS; i++) {
        if (!atomic_load_explicit(&unw_miss[i], memory_order_relaxed)) continue;
        uintptr_t ra = atomic_exchange_explicit(&unw_miss[i], 0, memory_order_relaxed);
        if (ra) {
            (void)rule_of(ra);
            n++;
        }
    }
    unw_in_signal = 0;
    return n;
}

__attribute__((noinline)) static uint32_t derive_rule(uintptr_t ra)
{
    struct find q = {ra - 1, R_LIBUNWIND};
    _Atomic uint64_t *set = &U.slot[2 * (ra & (SETS - 1))];
    if (unw_in_signal) {
#if defined(__SANITIZE_THREAD__)
        /* no lock from a handler that may interrupt ThreadSanitizer's runtime */
        if (gt_unw_in_handler) unw_sig_risky = 1;
#endif
        /* A handler's walk, the sampler thread's walk of a sleeping thread (under the sampler's
         * lock) and gt_unwind_learn wait for no lock: what they cannot take now is noted as a
         * miss and derived at a later learn (see unw_miss, unw_loader_code). */
        if ((gt_unw_in_handler && unw_sig_risky) || pthread_mutex_trylock(&U.mu) != 0) {
            miss_note(ra);
            return R_LIBUNWIND;
        }
        if (pthread_rwlock_tryrdlock(&loader_lock) != 0) {
            pthread_mutex_unlock(&U.mu);
            miss_note(ra);
            return R_LIBUNWIND;
        }
        int lk = ldlock_take(); /* (unknown: only where no handler is interrupting anything) */
        if (lk == 0 || (lk < 0 && gt_unw_in_handler)) {
            pthread_rwlock_unlock(&loader_lock);
            pthread_mutex_unlock(&U.mu);
            miss_note(ra);
            return R_LIBUNWIND;
        }
        atomic_store_explicit(&U.used, 1, memory_order_relaxed);
        dl_iterate_phdr(find_rule, &q);
        if (lk > 0) pthread_mutex_unlock((pthread_mutex_t *)unw_ldlock);
        pthread_rwlock_unlock(&loader_lock);
    } else {
        pthread_mutex_lock(&U.mu);
        /* used before the loader's lock: a dlclose that removes the module after
         * dl_iterate_phdr read it takes that lock later, so it sees used and clears (set after
         * the iteration, a relaxed store was unordered with it and the first rules could outlive
         * their module) */
        atomic_store_explicit(&U.used, 1, memory_order_relaxed);
        gt_loader_iterate(find_rule, &q);
    }
    /* (each word is whole: a reader racing with these stores sees an old or a new entry) */
    atomic_store_explicit(&set[1], atomic_load_explicit(&set[0], memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&set[0], (uint64_t)(ra >> SET_BITS) << RULE_BITS | q.rule,
                          memory_order_relaxed);
    pthread_mutex_unlock(&U.mu);
    atomic_fetch_add_explicit(&U.derived, 1, memory_order_relaxed);
    return q.rule;
}

/* dl_iterate_phdr callback: the loader's count of objects unloaded so far (dlpi_subs), or
 * UINT64_MAX where the loader's struct is too old to carry it. */
static int read_subs(struct dl_phdr_info *info, size_t size, void *p)
{
    *(uint64_t *)p = size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)
                         ? (uint64_t)info->dlpi_subs
                         : UINT64_MAX;
    return 1;
}

static uint64_t unloads(void)
{
    uint64_t n = UINT64_MAX;
    gt_loader_iterate(read_subs, &n);
    return n;
}

static void clear_rules(void)
{
    /* the generation first: a walk that starts from now on reuses no older walk */
    atomic_fetch_add_explicit(&U.clears, 1, memory_order_relaxed);
    for (unsigned i = 0; i < SLOTS; i++)
        atomic_store_explicit(&U.slot[i], 0, memory_order_relaxed);
}

void gt_unwind_forget(void)
{
    pthread_mutex_lock(&U.mu);
    clear_rules();
    pthread_mutex_unlock(&U.mu);
    /* libunwind's caches too (unw_backtrace's per-thread trace cache keeps rules by address) */
    unw_flush_cache(unw_local_addr_space, 0, 0);
}

/* Clears the rules only when the call unloaded something: most dlclose calls (the tracer's own
 * RTLD_NOLOAD lookups in resolve.c among them) drop a reference and unmap nothing, and clearing
 * 16K rules and libunwind's caches for each would make every following walk derive its rules
 * again. A concurrent unload by another thread is seen by that thread's own call. */
UNW_EXPORT int dlclose(void *handle)
{
    static int (*_Atomic real)(void *);
    int (*fn)(void *) = atomic_load_explicit(&real, memory_order_acquire);
    if (!fn) {
        fn = (int (*)(void *))dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.34");
        if (!fn) fn = (int (*)(void *))dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.2.5");
        if (!fn) return -1;
        atomic_store_explicit(&real, fn, memory_order_release);
    }
    int e = errno;
    /* No rule yet (nor in a forked child, whose table starts empty): no walk of the loader's
     * list, which a child must not make before it needs to (see "the loader's lock") */
    uint64_t before = atomic_load_explicit(&U.used, memory_order_relaxed) ? unloads() : UINT64_MAX;
    errno = e;
    int rc = fn(handle);
    if (atomic_load_explicit(&U.used, memory_order_relaxed)) {
        e = errno;
        uint64_t after = unloads();
        if (before != UINT64_MAX && after == before) {
            errno = e;
            return rc;
        }
        gt_unwind_forget();
        errno = e;
    }
    return rc;
}

/* ---- the walk ----------------------------------------------------------------------------------
 * Each walk is logged per thread: the state entering each frame (sp: the CFA of the frame below,
 * rbp, the return address), where the frame's saved rbp was read and whether its CFA came from
 * rbp. A later walk that reaches the same state at the same sp (rbp only where the logged walk
 * used it before restoring it) walks on exactly as the logged one did, provided the stack slots
 * the logged walk read from there on still hold what it read and the rules are the same (no
 * clear since): the walk reads each slot at an address determined by the state and the rule, so
 * by induction it would read the same slots and values. Those checks are independent loads, not
 * a chain of dependent ones, and a thread that calls from the same place again (a loop) verifies
 * the whole stack that way. Every slot checked lies at or above the sp where the walks joined,
 * below the stack top. */

int gt_unwind_walk(void **buf, int max, struct gt_unw_thread *th, uintptr_t sp, uintptr_t rbp);

/* Entry: rsp at entry points at our return address and rbp is still the caller's; the C walker
 * is reached by a jump, so its return goes straight back to our caller. */
__asm__(".text\n"
        ".globl gt_unwind_fast\n"
        ".hidden gt_unwind_fast\n"
        ".type gt_unwind_fast, @function\n"
        "gt_unwind_fast:\n"
        "  .cfi_startproc\n"
        "  movq %rsp, %rcx\n"
        "  movq %rbp, %r8\n"
        "  jmp gt_unwind_walk\n"
        "  .cfi_endproc\n"
        ".size gt_unwind_fast, .-gt_unwind_fast\n");

/* Does the logged walk p hold for its frames j to n-1 (n <= p->n), for a walk that entered frame
 * j with rbp? Each return-address slot it read must hold what it read; a saved-rbp slot only
 * where the value is live, i.e. some later frame's CFA uses it before another frame restores rbp
 * (code built without frame pointers keeps anything in rbp: a loop counter must not defeat the
 * reuse), and rbp itself only where it is live at frame j. last_live: frame n-1 is walked anew
 * (its rbp counts as live), else the walk ends there (as the logged one did, or because the
 * caller needs no frame beyond it). Returns 0 when it holds, else the first frame at which a join
 * can still succeed (those below it all need the slot that changed). The return addresses are
 * checked innermost first: a stack that changed, changed near its top. */
__attribute__((no_sanitize_address)) static uint32_t
log_check(const struct gt_unw_log *p, uint32_t j, uint32_t n, uint64_t rbp, int last_live)
{
    for (uint32_t k = j; k + 1 < n; k++)
        if (*(const uint64_t *)(p->sp[k + 1] - 8) != p->ra[k + 1]) return k + 1;
    uint32_t bad = 0;
    int live = last_live;
    for (uint32_t k = n - 1; k-- > j;) {
        if (p->rbp_at[k]) {
            if (live && !bad && *(const uint64_t *)p->rbp_at[k] != p->rbp[k + 1]) bad = k + 1;
            live = p->cfa_rbp[k];
        } else
            live |= p->cfa_rbp[k];
    }
    if (bad) return bad;
    return live && rbp != p->rbp[j] ? j + 1 : 0;
}

/* What a walk that repeats the logged walk p's frames j to n-1 (the last one walked anew) reads:
 * each slot into at[i * step], the value it wants there into val[i * step] (at NULL: only
 * counted); returns how many.
 * Whether a saved rbp is live depends on the log alone (log_check), so a loop that walks from one
 * place again and again compares slots without working it out each time. *live: the rbp entering
 * frame j counts too. */
static uint32_t slot_pairs(const struct gt_unw_log *p, uint32_t j, uint32_t n, uint64_t *at,
                           uint64_t *val, uint32_t step, int *live_out)
{
    uint32_t m = 0;
    for (uint32_t k = j; k + 1 < n; k++, m++)
        if (at) at[m * step] = p->sp[k + 1] - 8, val[m * step] = p->ra[k + 1];
    int live = 0;
    for (uint32_t k = n - 1; k-- > j;) {
        if (p->rbp_at[k]) {
            if (live) {
                if (at) at[m * step] = p->rbp_at[k], val[m * step] = p->rbp[k + 1];
                m++;
            }
            live = p->cfa_rbp[k];
        } else
            live |= p->cfa_rbp[k];
    }
    *live_out = live;
    return m;
}

/* What log_check(p, 0, n, rbp, 0) reads, made once per log and length. */
static void log_list(struct gt_unw_log *p, uint32_t n)
{
    p->nchk = slot_pairs(p, 0, n, p->chk_at, p->chk_val, 1, &p->chk_rbp);
    p->chk_n = n;
}

/* log_check(p, 0, n, rbp, 0) == 0, by the list. */
__attribute__((no_sanitize_address, always_inline)) static inline int
log_same(struct gt_unw_log *p, uint32_t n, uint64_t rbp)
{
    if (p->chk_n != n) log_list(p, n);
    if (p->chk_rbp && rbp != p->rbp[0]) return 0;
    const uint64_t *at = p->chk_at, *val = p->chk_val;
    for (uint32_t i = 0, m = p->nchk; i < m; i++)
        if (*(const uint64_t *)at[i] != val[i]) return 0;
    return 1;
}

#define MISSES_MAX   4    /* logged walks in a row that walked most of their frames anew */
#define UNLOGGED_MIN 16   /* then that many walks without the log, */
#define UNLOGGED_MAX 4096 /* doubling up to this while logging keeps missing */

/* A logged walk's outcome (hit: it took at least half its frames from the log). The log costs a
 * walk that does not repeat the previous one a join attempt and five stores per frame; where the
 * stack changes at every event (two call paths taken in turn) that is most of the walk's cost and
 * saves nothing: the thread then walks without the log for a while. A walk without the log
 * leaves none (the next logged one starts afresh), so "same" is never claimed across it. */
static void log_outcome(struct gt_unw_thread *th, int hit)
{
    if (hit) {
        th->misses = 0;
        th->backoff = UNLOGGED_MIN;
    } else if (++th->misses >= MISSES_MAX) {
        th->misses = 0;
        th->unlogged = th->backoff < UNLOGGED_MIN ? UNLOGGED_MIN : th->backoff;
        th->backoff = th->unlogged < UNLOGGED_MAX / 2 ? 2 * th->unlogged : UNLOGGED_MAX;
    }
}

/* ---- the cache ---------------------------------------------------------------------------------
 * The logs above answer a loop that calls from one place, or two in turn. A training step calls
 * from dozens of places (each kernel launch of the forward pass, of the backward pass on the
 * autograd thread) and repeats them all at the next step: each walk differs from the previous
 * one from a few frames below the hook on, and joins it only deep down. So a thread also keeps
 * its last GT_UNW_CACHED walks by their state entering frame GT_UNW_PROBE (sp, return address),
 * the frames from there on and the list of slots those frames were read from, with their values.
 * A walk that reaches frame GT_UNW_PROBE in the state of a kept walk (rbp too where it is live),
 * with the same max, stop range and rules, whose listed slots still hold those values, would walk
 * on exactly as that one did (the induction of "the walk" above): it takes the rest of its frames
 * from there. Its first GT_UNW_PROBE frames are its own. Entries are made from logged walks that
 * reached the probe frame before joining the previous walk, went beyond it and did not come from
 * the cache; they take the slots in turn and their frames a ring of words, an entry whose words
 * are overwritten leaves the cache. The probe frame is the fourth (GT_UNW_PROBE 3), the hook's
 * caller's: the first three are the shim's own (gt_unwind, gt_stack_slow, the hook), so a walk
 * from the cache walks none of the program's frames itself (the sixth, before: 24% of the
 * walker's own instructions were the three frames more, bench/README.md "step 14"). Walks that
 * share their state at the probe frame and differ beyond it are told apart by their slots; a walk
 * from the cache says "same" only where its first frames and its entry are the previous walk's
 * (cache_find). */

static inline uint64_t cache_key(uintptr_t sp, uintptr_t ra)
{
    return ((sp * 0x9E3779B97F4A7C15ull) ^ ra) | 1;
}

/* The entry that the walk in state (sp, ra, rbp) at frame GT_UNW_PROBE would repeat: its frames
 * from there on go to buf; returns the walk's length, 0 when none is found. The walk repeats the
 * latest one (th->same) where that came from the same entry and its first frames are these. */
__attribute__((no_sanitize_address)) static int
cache_find(struct gt_unw_thread *th, void **buf, uintptr_t sp, uintptr_t ra, uintptr_t rbp, int max,
           uint64_t gen, uint64_t stop_lo, uint64_t stop_len, uint32_t clast)
{
    uint64_t key = cache_key(sp, ra);
    for (uint32_t i = 0; i < GT_UNW_CACHED; i++) {
        if (th->ckey[i] != key) continue;
        const struct gt_unw_cached *e = &th->centry[i];
        if (e->sp != sp || e->ra != ra || e->gen != gen || e->max != (uint32_t)max ||
            e->stop_lo != stop_lo || e->stop_len != stop_len || (e->chk_rbp && e->rbp != rbp))
            continue;
        const uint64_t *w = th->arena + e->off, *c = w + (e->n - GT_UNW_PROBE);
        uint32_t k = 0;
        while (k < e->nchk && *(const uint64_t *)c[2 * k] == c[2 * k + 1])
            k++;
        if (k < e->nchk) continue;
        memcpy(buf + GT_UNW_PROBE, w, sizeof(void *) * (e->n - GT_UNW_PROBE));
        th->stopped = e->stopped;
        th->cached++;
        th->from = e->serial;
        th->same = clast == i + 1 && memcmp(th->cfirst, buf, sizeof(th->cfirst)) == 0;
        if (!th->same) memcpy(th->cfirst, buf, sizeof(th->cfirst));
        th->clast = i + 1;
        return (int)e->n;
    }
    return 0;
}

/* Keeps the logged walk L (n frames, more than GT_UNW_PROBE) in the cache: its frames from the
 * probe frame on, and what a walk from there reads (as log_list, from that frame). */
static void cache_put(struct gt_unw_thread *th, const struct gt_unw_log *L, uint32_t n)
{
    const uint32_t j = GT_UNW_PROBE;
    int live;
    uint32_t nchk = slot_pairs(L, j, n, NULL, NULL, 0, &live);
    uint32_t words = (n - j) + 2 * nchk;
    if (words > GT_UNW_ARENA / 4) return; /* (a walk of more than ~2,700 frames) */
    if (!th->arena) {
        void *a = mmap(NULL, sizeof(uint64_t) * GT_UNW_ARENA, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (a == MAP_FAILED) return;
        th->arena = a;
    }
    if (th->arena_pos + words > GT_UNW_ARENA) th->arena_pos = 0;
    uint32_t off = th->arena_pos, end = off + words;
    th->arena_pos = end;
    uint32_t slot = th->cnext;
    th->cnext = (slot + 1) % GT_UNW_CACHED;
    for (uint32_t i = 0; i < GT_UNW_CACHED; i++) { /* entries whose words these overwrite */
        const struct gt_unw_cached *e = &th->centry[i];
        uint32_t ew = (e->n - GT_UNW_PROBE) + 2 * e->nchk;
        if (th->ckey[i] && e->off < end && off < e->off + ew) th->ckey[i] = 0;
    }
    th->ckey[slot] = 0;
    if (th->clast && !th->ckey[th->clast - 1]) th->clast = 0;
    uint64_t *w = th->arena + off;
    memcpy(w, L->ra + j, sizeof(uint64_t) * (n - j));
    uint32_t m = slot_pairs(L, j, n, w + (n - j), w + (n - j) + 1, 2, &live); /* pairs */
    struct gt_unw_cached *e = &th->centry[slot];
    e->sp = L->sp[j], e->ra = L->ra[j], e->rbp = L->rbp[j];
    e->gen = L->gen, e->stop_lo = L->stop_lo, e->stop_len = L->stop_len;
    e->n = n, e->max = L->max, e->nchk = m, e->off = off;
    e->chk_rbp = live != 0, e->stopped = (uint8_t)L->stopped;
    e->serial = ++th->serials;
    th->ckey[slot] = cache_key(e->sp, e->ra);
}

/* Stack slots are read with plain loads: the walker checks their bounds itself, and ASan has
 * nothing to say about return-address and saved-rbp slots. */
__attribute__((no_sanitize_address, visibility("hidden"))) int
gt_unwind_walk(void **buf, int max, struct gt_unw_thread *th, uintptr_t sp, uintptr_t rbp)
{
    uintptr_t lo = th->lo, hi = th->hi;
    uint32_t clast = th->clast;
    th->stopped = 0;
    th->clast = 0;
    th->from = 0;
    if (sp < lo || sp >= hi || (sp & 7) || max <= 0) return -1;
    /* the stop range: a walk is found in a log only where that log was made with the same one */
    uint64_t stop_lo = th->stop_lo, stop_len = th->stop_hi > th->stop_lo ? th->stop_hi - stop_lo : 0;
    int stopped = 0;
    uint64_t gen = atomic_load_explicit(&U.clears, memory_order_relaxed);
    int logging = th->log_on && max <= GT_UNW_FRAMES_MAX;
    struct gt_unw_log *p = &th->log[th->cur];
    if (GT_UNW_UNLIKELY(th->unlogged) && logging) {
        th->unlogged--;
        th->walked_unlogged++;
        logging = 0;
        p->n = 0; /* the latest walk is no longer the logged one */
    }
    /* (a log made with another stop range is not used at all: a walk then holds at most one
     * frame in its range, the last one, exactly when it stopped there) */
    uint32_t j = 0, jmin = 0, taken = 0;
    uint32_t pn = logging && p->gen == gen && p->stop_lo == stop_lo && p->stop_len == stop_len
                      ? p->n
                      : 0;
    uintptr_t ra = *(const uintptr_t *)sp;
    int n = 0;
    th->same = 0;
    sp += 8;
    /* The very walk of last time (a loop calling from one place): it ended at its last frame
     * because of max, the stop range or an end-of-stack rule, all as they are now; its log
     * stands as it is.
     * Where the caller needs only the innermost th->upto frames, only those are checked. */
    uint32_t upto = th->upto && th->upto < pn ? th->upto : pn;
    if (pn && p->max == (uint32_t)max && p->sp[0] == sp && p->ra[0] == ra && ra >= 4096) {
        if (log_same(p, upto, rbp)) {
            memcpy(buf, p->ra, sizeof(void *) * pn);
            th->same = upto < pn ? GT_UNW_SAME_PREFIX : 1;
            th->stopped = p->stopped;
            th->misses = 0;
            return (int)pn;
        }
        jmin = log_check(p, 0, upto, rbp, 0);
    }
    /* The walk before it, whole (the caller gets every frame: not "same"); it becomes the
     * latest, the latest the one before. (Not after a walk from the cache: the cache tells
     * whether this one repeats that.) */
    struct gt_unw_log *o = &th->log[th->old];
    if (logging && !clast && o != p && o->gen == gen && o->n && o->max == (uint32_t)max && o->sp[0] == sp &&
        o->ra[0] == ra && ra >= 4096 && o->stop_lo == stop_lo && o->stop_len == stop_len &&
        log_same(o, o->n, rbp)) {
        memcpy(buf, o->ra, sizeof(void *) * o->n);
        th->stopped = o->stopped;
        th->old = th->cur;
        th->cur = (uint32_t)(o - th->log);
        th->older++;
        th->misses = 0;
        return (int)o->n;
    }
    /* the third log: this walk's (cur == old only in a state never initialized) */
    uint32_t lc = th->cur == th->old ? (th->cur + 1) % 3 : 3 - th->cur - th->old;
    struct gt_unw_log *L = &th->log[lc];
    /* (jmin: no join below the frame whose slot changed; a stricter check than the joins') */
    int probed = 0; /* reached the probe frame before joining the previous walk */
    for (;;) {
        if (GT_UNW_UNLIKELY(ra < 4096)) return -1;
        if (n == GT_UNW_PROBE && (probed = 1, th->arena)) {
            int m = cache_find(th, buf, sp, ra, rbp, max, gen, stop_lo, stop_len, clast);
            if (m) {
                /* the latest walk is not logged: the next one does not join it. The thread's
                 * walks repeat: log them again (the cache takes only logged walks). */
                th->log[th->cur].n = 0;
                th->unlogged = 0;
                log_outcome(th, 1);
                return m;
            }
        }
        if (logging) {
            while (j < pn && p->sp[j] < sp)
                j++;
            uint32_t m = 1;
            if (j + 1 < pn && j >= jmin && p->sp[j] == sp && p->ra[j] == ra &&
                (m = log_check(p, j, p->n, rbp, 1)) != 0)
                jmin = m;
            if (m == 0) {
                /* (rbp values copied where they differ from this walk's are dead ones) */
                th->same = n == 0 && j == 0;
                th->joined++;
                taken = (uint32_t)n;
                for (; j + 1 < pn && n < max; j++, n++) {
                    buf[n] = (void *)(uintptr_t)p->ra[j];
                    L->sp[n] = p->sp[j];
                    L->rbp[n] = p->rbp[j];
                    L->ra[n] = p->ra[j];
                    L->rbp_at[n] = p->rbp_at[j];
                    L->cfa_rbp[n] = p->cfa_rbp[j];
                }
                taken = (uint32_t)n - taken;
                if (n == max) goto done;
                sp = p->sp[j];
                rbp = p->rbp[j];
                ra = p->ra[j];
                pn = 0; /* the rest is walked (it ends where the logged walk ended) */
            }
            L->sp[n] = sp;
            L->rbp[n] = rbp;
            L->ra[n] = ra;
            L->rbp_at[n] = 0;
            L->cfa_rbp[n] = 0;
        }
        buf[n++] = (void *)ra;
        if (GT_UNW_UNLIKELY(ra - 1 - stop_lo < stop_len)) {
            stopped = 1;
            goto done;
        }
        if (n == max) goto done;
        uint32_t rule = rule_of(ra);
        if (GT_UNW_UNLIKELY(rule & R_NOT_SIMPLE)) {
            if (rule == R_END) goto done;
            return -1;
        }
        uintptr_t cfa = ((rule & R_CFA_RBP) ? rbp : sp) + R_CFA_OFF(rule);
        if (logging) L->cfa_rbp[n - 1] = (rule & R_CFA_RBP) != 0;
        if (GT_UNW_UNLIKELY(cfa <= sp || cfa > hi || (cfa & 7))) return -1;
        if (rule & R_RBP_SAVED) {
            uintptr_t at = cfa - R_RBP_OFF(rule);
            if (GT_UNW_UNLIKELY(at < sp)) return -1;
            rbp = *(const uintptr_t *)at;
            if (logging) L->rbp_at[n - 1] = at;
        }
        ra = *(const uintptr_t *)(cfa - 8);
        sp = cfa;
    }
done:
    th->stopped = stopped;
    if (logging) {
        L->chk_n = 0;
        L->n = (uint32_t)n;
        L->max = (uint32_t)max;
        L->gen = gen;
        L->stop_lo = stop_lo, L->stop_len = stop_len, L->stopped = stopped;
        th->same &= p->n == (uint32_t)n;
        th->old = th->cur;
        th->cur = lc;
        log_outcome(th, 2 * taken >= (uint32_t)n);
        /* (a walk that joined the previous one sooner was cheap, and is that one's frames) */
        if (probed && n > GT_UNW_PROBE) cache_put(th, L, (uint32_t)n);
    }
    return n;
}

/* From a signal handler: the interrupted frame (pc, sp, rbp from its ucontext) and its callers,
 * by the cached rules only (deriving a missing one with try-locks), no logging, no libunwind.
 * Stops at the first frame the rules do not cover and says so in *partial. Reads only
 * [sp, th->hi) of the interrupted stack. Also the host sampler's walk of a thread asleep in a
 * system call: reading another thread's stack is a race by design there (the sampler keeps the
 * walk only if the thread's sp and pc did not move meanwhile), so ThreadSanitizer is not told. */
__attribute__((no_sanitize_address, no_sanitize_thread)) int
gt_unwind_signal(uint64_t *buf, int max, const struct gt_unw_thread *th, uintptr_t pc, uintptr_t sp,
                 uintptr_t rbp, int *partial)
{
    uintptr_t hi = th->hi;
    int n = 0;
    *partial = 1;
    if (sp < th->lo || sp >= hi || max <= 0) return 0;
    unw_in_signal = 1;
    unw_sig_risky = 0;
    /* The interrupted pc is not a return address: its row is that of pc itself (pc + 1 - 1). */
    uintptr_t ra = pc + 1;
    buf[n++] = pc;
    for (;;) {
        if (gt_unw_in_handler && in_risky(ra - 1)) unw_sig_risky = 1; /* (for derive_rule) */
        uint32_t rule = rule_of(ra);
        if (rule & R_NOT_SIMPLE) {
            if (rule == R_END) *partial = 0;
            break;
        }
        uintptr_t cfa = ((rule & R_CFA_RBP) ? rbp : sp) + R_CFA_OFF(rule);
        if (cfa <= sp || cfa > hi || (cfa & 7)) break;
        if (rule & R_RBP_SAVED) {
            uintptr_t at = cfa - R_RBP_OFF(rule);
            if (at < sp) break;
            rbp = *(const uintptr_t *)at;
        }
        ra = *(const uintptr_t *)(cfa - 8);
        sp = cfa;
        if (ra < 4096) {
            *partial = 0;
            break;
        }
        if (n == max) {
            *partial = 0;
            break;
        }
        buf[n++] = ra - 1;
    }
    unw_in_signal = 0;
    return n;
}

#else /* not x86-64: libunwind always */

unsigned gt_unwind_learn(void)
{
    return 0;
}
int gt_unwind_signal(uint64_t *buf, int max, const struct gt_unw_thread *th, uintptr_t pc,
                     uintptr_t sp, uintptr_t rbp, int *partial)
{
    (void)th;
    (void)sp;
    (void)rbp;
    *partial = 1;
    if (max <= 0) return 0;
    buf[0] = pc;
    return 1;
}

int gt_unwind_fast(void **buf, int max, struct gt_unw_thread *th)
{
    (void)buf;
    (void)max;
    (void)th;
    return -1;
}
#endif

/* ---- libunwind, and the choice -----------------------------------------------------------------
 */

/* Under ThreadSanitizer, unw_backtrace's per-thread trace cache (a TSD destructor that runs after
 * TSan finished the thread) crashes at thread exit, so the plain cursor walk is used there.
 * always_inline: the first address must lie in gt_unwind, as unw_backtrace's does. */
static inline __attribute__((always_inline)) int libunwind_backtrace(void **buf, int max)
{
#if defined(__SANITIZE_THREAD__)
    unw_context_t uc;
    unw_cursor_t c;
    unw_word_t ip;
    int n = 0;
    if (max <= 0 || unw_getcontext(&uc) != 0) return 0;
    pthread_rwlock_rdlock(&loader_lock); /* (its cache misses walk the loader's list) */
    if (unw_init_local(&c, &uc) >= 0) {
        do {
            if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0) break;
            buf[n++] = (void *)(uintptr_t)ip;
        } while (n < max && unw_step(&c) > 0);
    }
    pthread_rwlock_unlock(&loader_lock);
    return n;
#else
    pthread_rwlock_rdlock(&loader_lock); /* (its cache misses walk the loader's list) */
    int n = unw_backtrace(buf, max);
    pthread_rwlock_unlock(&loader_lock);
    __asm__ volatile("" ::: "memory"); /* no tail call: the caller's frame stays the first */
    return n;
#endif
}

/* The child: the forking thread holds the loader lock (loader_prepare), and no thread of the
 * child will ever release the writers' mutex if one held it (deriving a rule, clearing after a
 * dlclose), so both start afresh. A clear in progress, or one still to come after an unload the
 * parent's other thread just made, would never happen in the child: its table starts empty. */
static void unw_fork_child(void)
{
    pthread_rwlock_init(&loader_lock, NULL);
    pthread_mutex_init(&U.mu, NULL);
    clear_rules();
    atomic_store_explicit(&U.used, 0, memory_order_relaxed);
}

void gt_unwind_configure(const char *mode)
{
    pthread_once(&fork_once, register_fork);
    U.use_libunwind = mode && strcmp(mode, "libunwind") == 0;
#if defined(__x86_64__)
    static pthread_once_t risky_once = PTHREAD_ONCE_INIT;
    pthread_once(&risky_once, find_risky);
#endif
#if defined(__SANITIZE_THREAD__)
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_GLOBAL);
#else
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
#endif
}

struct gt_unw_bounds gt_unwind_thread_bounds(void)
{
    struct gt_unw_bounds b = {0, 0};
    pthread_attr_t a;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return b;
    if (pthread_attr_getstack(&a, &addr, &size) == 0) {
        b.lo = (uintptr_t)addr;
        b.hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&a);
    /* With RLIMIT_STACK unlimited, glibc gives the main thread everything down to the mapping
     * below its stack, in the bottom-up layout the brk heap, which then grows into that range: a
     * coroutine stack malloc'ed there would pass the walker's bounds while [sp, top) crosses
     * unmapped pages. Nothing but the stack lies within GT_UNW_STACK_MAX of its top; a deeper
     * sp gets libunwind. */
    if (b.hi - b.lo > GT_UNW_STACK_MAX) b.lo = b.hi - GT_UNW_STACK_MAX;
    return b;
}

void gt_unwind_thread_init(struct gt_unw_thread *th, int log)
{
    struct gt_unw_bounds b = gt_unwind_thread_bounds();
    th->lo = b.lo;
    th->hi = b.hi ? b.hi : 1; /* unknown: never a valid sp, libunwind always */
    th->log_on = log;
    th->log[0].n = th->log[1].n = th->log[2].n = 0;
    th->cur = 0, th->old = 1;
}

void gt_unwind_thread_release(struct gt_unw_thread *th)
{
    if (th->arena) munmap(th->arena, sizeof(uint64_t) * GT_UNW_ARENA);
    th->arena = NULL;
    th->arena_pos = th->cnext = th->clast = 0;
    memset(th->ckey, 0, sizeof(th->ckey));
}

__attribute__((noinline)) int gt_unwind(void **buf, int max, struct gt_unw_thread *th)
{
    th->same = 0;
    if (!U.use_libunwind) {
        if (GT_UNW_UNLIKELY(!th->hi)) gt_unwind_thread_init(th, 1);
        /* The fast walk's first address is its return address here, in gt_unwind. */
        int n = gt_unwind_fast(buf, max, th);
        if (GT_UNW_LIKELY(n >= 0)) {
            th->walked++;
            return n;
        }
        th->same = 0;
        th->log[th->cur].n = 0; /* the latest walk is no longer the previous stack */
    }
    th->stopped = 0; /* (libunwind walks on to the end) */
    th->from = 0;
    th->fell_back++;
    return libunwind_backtrace(buf, max);
}

struct gt_unw_stats gt_unwind_stats(const struct gt_unw_thread *th)
{
    return (struct gt_unw_stats){th->walked, th->fell_back, atomic_load(&U.derived),
                                 atomic_load(&U.clears), th->cached};
}
