/* Host call stacks: unwinding (unwind.c: cached CFI rules, libunwind where they do not reach),
 * interning into a process-wide trace tree, the module map, and dladdr names at exit. Nothing here
 * symbolizes or formats per event.
 *
 * Interning (heaptrack's trace tree): a node is (ip, parent id) -> id, each new node written once
 * as part of a GT_REC_STACK record; an event carries the id of its innermost frame. The table is
 * a lock-free-readable open-addressing hash of 16-byte entries {ip, parent << 32 | id}, in levels
 * that double in size. Entries are never moved or removed, and a writer stores the value word
 * before publishing the key word (release), so readers need no lock: known stacks cost no lock
 * and no allocation. Inserting new nodes takes one mutex (new stacks are rare after warm-up, and
 * the inserting thread also writes their records); a new level is allocated under it.
 *
 * Each thread also keeps its previous stack and its node ids (root first): a new stack that shares
 * its outer frames with the previous one reuses their ids without touching the table, so a loop
 * that allocates from one place costs one unwind and a compare per event. Other frames are looked
 * up in a small per-thread cache of nodes before the table (whose slots are scattered over
 * hundreds of KiB: a cache miss each). Looking nodes up one by one is a chain of dependent steps
 * (each frame's parent is the frame before), so a thread also keeps its last few stacks whole,
 * found by a hash of all their frames (independent multiplies) and compared in full: a thread
 * that alternates between a few stacks costs a hash and a compare per event.
 *
 * Python (python.c): when the calling thread holds the GIL, the native frames stop at the first
 * one inside the interpreter and the Python frames follow as pseudo-ips (GT_PYFRAME_IP), interned
 * in the same tree. GPUTRACE_STACK_DEPTH bounds the native part and the Python part each. A
 * capture whose native frames above the interpreter and Python frames (code objects, offsets) are
 * those of a recent capture of the thread gets that capture's id from a cache of captures, without
 * the Python frames' pseudo-ips or the interning ("the cache of captures" below). */
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dlnames.h"
#include "python.h"
#include "shim.h"
#include "unwind.h"

#define SKIP_MAX    16 /* room for the shim's own frames above the depth asked for */
#define LEVELS_MAX  20
#define LEVEL0_BITS 14
#define MODULES_MAX 8192
#define MEMO_BITS   10 /* per-thread cache of the node table: 16 KiB */
#define RECENT      64 /* per-thread cache of whole stacks: 130 KiB (a page touched per one used) */
#define STOP_PAUSE  64 /* walks to the end after one that stopped at the interpreter for nothing */
#define PYC         64 /* per-thread cache of captures with Python frames (2-way sets) */
#define PYC_WORDS   (7 * GT_STACK_DEPTH_DEFAULT) /* its key: native ips, then 6 words a frame */
#define NATC        64 /* per-thread cache of native captures from the walk cache (2-way sets) */

unsigned gt_stack_depth = GT_STACK_DEPTH_DEFAULT;
unsigned gt_stack_events = GT_STK_DEFAULT;

struct gt_stk {
    uint32_t n;                       /* frames of the previous stack */
    uint64_t ip[GT_STACK_DEPTH_MAX];  /* previous stack, outermost first */
    uint32_t id[GT_STACK_DEPTH_MAX];  /* its node ids */
    uint64_t cur[GT_STACK_DEPTH_MAX]; /* the stack being interned, innermost first */
    void *raw[GT_STACK_DEPTH_MAX + SKIP_MAX];
    uint32_t last_id;      /* what the latest capture returned (0: nothing to reuse) */
    uint32_t gen;          /* S.gen when last_id was taken */
    uint32_t upto;         /* walk frames up to the first interpreter frame of the latest walk
                              whose Python frames replaced the rest; 0: none */
    uint32_t nostop;       /* walks to make to the end before stopping at the interpreter again */
    uint64_t reused;       /* captures with Python frames answered by last_id (GPUTRACE_DEBUG) */
    uint64_t prefixed;     /* ... by a walk checked or made only up to the interpreter (DEBUG) */
    struct gt_py_chain py; /* the Python frames of the latest capture */
    struct gt_pyc *pyc;    /* the cache of captures with Python frames, mapped on first use */
    uint64_t pyc_clock;    /* use stamps of pyc[] */
    uint64_t pyc_hash;     /* this capture's key hash where it may be kept after interning; 0: */
    uint32_t pyc_cut, pyc_max; /* ... not; its native frames and its Python frames' limit */
    uint64_t pyc_hits;     /* captures answered by pyc[] (GPUTRACE_DEBUG) */
    struct {
        uint64_t serial; /* the walk cache's entry (0: empty) */
        uint64_t first[GT_UNW_PROBE];
        uint64_t used;
        uint32_t id, gen;
    } natc[NATC];         /* the cache of native captures */
    uint64_t natc_clock;  /* use stamps of natc[] */
    uint64_t natc_hits;   /* captures answered by natc[] (GPUTRACE_DEBUG) */
    struct {
        uint64_t ip;
        uint32_t parent, id; /* id 0: empty */
    } memo[1u << MEMO_BITS]; /* nodes this thread looked up lately (ids never change) */
    struct {
        uint64_t hash;
        uint32_t n, id; /* id 0: empty */
        uint64_t used;  /* clock when last found or stored */
        uint64_t ip[GT_STACK_DEPTH_MAX];
    } recent[RECENT]; /* stacks this thread interned lately, by a hash of all their frames */
    uint64_t clock;   /* use stamps of recent[] */
    struct gt_unw_thread unw; /* this thread's unwinder state */
};

/* A capture with Python frames, by what its stack is made of: the native frames above the
 * interpreter (ips), and the Python frames as gt_py_chain_same read them: code object, offset
 * and the 4 words that tell the code object from a later one at its address. */
struct gt_pyc {
    uint64_t hash, used;
    uint32_t id, nn, np, max, sgen, pgen; /* id 0: empty */
    uint64_t w[PYC_WORDS];                /* nn ips, 2 * np (code, key), 4 * np identity words */
};

struct level {
    _Atomic uint64_t *w; /* 2 words per slot: ip (0 = empty), parent << 32 | id */
    uint64_t mask;       /* slots - 1 */
};

static struct {
    pthread_mutex_t mu; /* inserts, new levels, the module list */
    struct level lv[LEVELS_MAX];
    _Atomic uint32_t nlv;       /* published levels */
    uint64_t used;              /* slots used in the newest level; under mu */
    uint32_t next_id;           /* last id handed out; under mu */
    uint32_t gen;               /* gt_stacks_forget's count (a fork child that starts afresh) */
    int full;                   /* no more nodes could be added; under mu */
    uintptr_t self_lo, self_hi; /* the shim's own mapping: frames to leave out */
    /* modules written so far: [lo, hi), base; under mu */
    struct {
        uintptr_t lo, hi, base;
    } mod[MODULES_MAX];
    uint32_t n_mod;
    char exe[PATH_MAX];
    char py_path[PATH_MAX]; /* a libpython seen by the latest module scan, "" none; under mu */
    int in_full;            /* GPUTRACE_UNWIND=libunwind: every capture made in full (no cache) */
} S = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- configuration (called from gt_configure, single-threaded) ------------------------------- */

/* The GT_STK_* bits of a GPUTRACE_STACKS value; an unknown word makes it all the default. */
static unsigned parse_events(const char *v)
{
    const char *all = v;
    unsigned m = 0;
    static const struct {
        const char *name;
        unsigned bit;
    } words[] = {
        {"alloc", GT_STK_ALLOC}, {"free", GT_STK_FREE}, {"launch", GT_STK_LAUNCH},
        {"sync", GT_STK_SYNC},   {"all", GT_STK_ALL},   {"none", 0},
    };
    while (*v) {
        size_t len = strcspn(v, ",");
        size_t i;
        for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
            if (strlen(words[i].name) == len && strncmp(v, words[i].name, len) == 0) break;
        if (i < sizeof(words) / sizeof(words[0]))
            m |= words[i].bit;
        else if (len) {
            gt_warn("gputrace: GPUTRACE_STACKS=%s: '%.*s' is not one of alloc, free, launch, "
                    "sync, all, none; using alloc,launch,sync\n",
                    all, (int)len, v);
            return GT_STK_DEFAULT;
        }
        v += len + (v[len] == ',');
    }
    return m;
}

void gt_stacks_configure(unsigned depth, const char *events)
{
    static const char *const walkers[] = {"fast", "libunwind"};
    gt_stack_depth = depth;
    if (events && *events) gt_stack_events = parse_events(events);
    if (!gt_stack_depth || !gt_stack_events) {
        gt_stack_depth = gt_stack_events = 0;
        return;
    }
    gt_object_range((uintptr_t)&gt_stacks_configure, &S.self_lo, &S.self_hi);
    ssize_t n = readlink("/proc/self/exe", S.exe, sizeof(S.exe) - 1);
    S.exe[n > 0 ? n : 0] = 0;
    int w = gt_env_word("GPUTRACE_UNWIND", walkers, 2, 0);
    gt_unwind_configure(walkers[w]);
    S.in_full = w == 1; /* the reference */
}

/* ---- the node table ----------------------------------------------------------------------------
 */

static inline uint64_t slot_hash(uint64_t ip, uint32_t parent)
{
    uint64_t x = ip ^ ((uint64_t)parent * 0x9E3779B97F4A7C15ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 29);
}

static uint32_t lookup(uint64_t ip, uint32_t parent)
{
    uint32_t n = atomic_load_explicit(&S.nlv, memory_order_acquire);
    uint64_t h = slot_hash(ip, parent);
    for (uint32_t l = 0; l < n; l++) {
        const struct level *L = &S.lv[l];
        for (uint64_t i = h & L->mask;; i = (i + 1) & L->mask) {
            uint64_t k = atomic_load_explicit(&L->w[2 * i], memory_order_acquire);
            if (!k) break;
            if (k != ip) continue;
            uint64_t v = atomic_load_explicit(&L->w[2 * i + 1], memory_order_relaxed);
            if ((uint32_t)(v >> 32) == parent) return (uint32_t)v;
        }
    }
    return 0;
}

/* A new, empty level (mmap: zeroed, and no malloc inside a hook). Caller holds mu. */
static int add_level(void)
{
    uint32_t n = atomic_load_explicit(&S.nlv, memory_order_relaxed);
    if (n == LEVELS_MAX) return -1;
    uint64_t slots = 1ull << (LEVEL0_BITS + n);
    void *p = mmap(NULL, slots * 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    S.lv[n] = (struct level){p, slots - 1};
    S.used = 0;
    atomic_store_explicit(&S.nlv, n + 1, memory_order_release);
    return 0;
}

/* Adds node (ip, parent); returns its id, 0 when the table cannot grow. Caller holds mu. */
static uint32_t insert_locked(uint64_t ip, uint32_t parent)
{
    uint32_t n = atomic_load_explicit(&S.nlv, memory_order_relaxed);
    if (S.full || S.next_id == UINT32_MAX - 1) return 0;
    if ((n == 0 || S.used + 1 > (S.lv[n - 1].mask + 1) / 2) && add_level() < 0) {
        S.full = 1;
        return 0;
    }
    struct level *L = &S.lv[atomic_load_explicit(&S.nlv, memory_order_relaxed) - 1];
    uint32_t id = ++S.next_id;
    uint64_t i = slot_hash(ip, parent) & L->mask;
    while (atomic_load_explicit(&L->w[2 * i], memory_order_relaxed))
        i = (i + 1) & L->mask;
    atomic_store_explicit(&L->w[2 * i + 1], (uint64_t)parent << 32 | id, memory_order_relaxed);
    atomic_store_explicit(&L->w[2 * i], ip, memory_order_release);
    S.used++;
    return id;
}

void gt_stacks_forget(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    uint32_t n = atomic_load_explicit(&S.nlv, memory_order_relaxed);
    for (uint32_t l = 0; l < n; l++) munmap(S.lv[l].w, (S.lv[l].mask + 1) * 16);
    atomic_store(&S.nlv, 0);
    S.mu = fresh;
    S.used = 0, S.next_id = 0, S.full = 0, S.n_mod = 0;
    S.gen++; /* a thread's last_id from before would be the parent's */
    gt_py_forget();
}

/* ---- modules -----------------------------------------------------------------------------------
 */

static int module_known(uintptr_t ip)
{
    for (uint32_t i = 0; i < S.n_mod; i++)
        if (ip >= S.mod[i].lo && ip < S.mod[i].hi) return 1;
    return 0;
}

/* The GNU build-id note of a loaded object, read from its mapped PT_NOTE segments. */
static const uint8_t *build_id(const struct dl_phdr_info *info, uint32_t *len)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        const uint8_t *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const uint8_t *name = p + sizeof(*nh);
            const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
            if (desc + nh->n_descsz > end) break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                nh->n_descsz <= 64) {
                *len = nh->n_descsz;
                return desc;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    *len = 0;
    return NULL;
}

static void emit_module(struct gt_thread *t, const struct dl_phdr_info *info, uintptr_t lo,
                        uintptr_t hi)
{
    const char *path = info->dlpi_name;
    uint32_t bl, pl = (uint32_t)gt_dl_name_len(path, PATH_MAX);
    if (pl == 0) pl = (uint32_t)strnlen(path = S.exe, PATH_MAX);
    const uint8_t *bid = build_id(info, &bl);
    struct gt_rec_module r = {.ts = gt_now(),
                              .base = info->dlpi_addr,
                              .start = lo,
                              .size = hi - lo,
                              .path_len = pl,
                              .build_id_len = bl};
    uint32_t size = gt_rec_size(sizeof(r), pl + bl);
    uint8_t *p = gt_reserve(t, size);
    if (!p) return;
    memcpy(p, &r, sizeof(r));
    memcpy(p + sizeof(r), path, pl);
    if (bl) memcpy(p + sizeof(r) + pl, bid, bl);
    memset(p + sizeof(r) + pl + bl, 0, size - sizeof(r) - pl - bl);
    gt_commit(t, p, GT_REC_MODULE, 0, size, r.ts);
}

/* dl_iterate_phdr callback: writes every object not written yet. Runs under the loader's lock;
 * writing a record may flush this thread's buffer, which takes none of the loader's locks. */
static int scan_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    uintptr_t lo, hi;
    (void)size;
    gt_load_range(info, &lo, &hi);
    if (lo >= hi || S.n_mod == MODULES_MAX) return 0;
    for (uint32_t i = 0; i < S.n_mod; i++)
        if (S.mod[i].lo == lo && S.mod[i].hi == hi && S.mod[i].base == info->dlpi_addr) return 0;
    S.mod[S.n_mod].lo = lo;
    S.mod[S.n_mod].hi = hi;
    S.mod[S.n_mod].base = info->dlpi_addr;
    S.n_mod++;
    emit_module(arg, info, lo, hi);
    size_t l = gt_dl_name_len(info->dlpi_name, sizeof(S.py_path) - 1);
    if (gt_py_is_libpython(info->dlpi_name, l) && !gt_py_loaded()) {
        memcpy(S.py_path, info->dlpi_name, l);
        S.py_path[l] = 0;
    }
    return 0;
}

/* ---- interning
 * ----------------------------------------------------------------------------------- */

/* Writes nodes first..first+count-1 (parent of the first: parent; ips outermost first). */
static void emit_nodes(struct gt_thread *t, uint32_t first, uint32_t parent, const uint64_t *ip,
                       uint32_t count)
{
    uint32_t size = gt_rec_size(sizeof(struct gt_rec_stack), 8u * count);
    struct gt_rec_stack *r = gt_reserve(t, size);
    if (!r) return;
    *r = (struct gt_rec_stack){
        .ts = gt_now(), .first_id = first, .parent = parent, .ips_len = 8u * count};
    memcpy(r + 1, ip, 8u * count);
    gt_commit(t, r, GT_REC_STACK, 0, size, r->ts);
}

static void note_full(struct gt_thread *t)
{
    static const char text[] = "the stack table is full: later new stacks are not recorded";
    struct gt_rec_note r = {.ts = gt_now(), .level = GT_NOTE_WARNING, .text_len = sizeof(text) - 1};
    gt_emit_named(t, GT_REC_NOTE, 0, &r, sizeof(r), text, r.text_len);
}

/* Slow path: frames s->ip[j..n) (outermost first) from parent on are not all in the table.
 * Returns the innermost frame's id, or 0 when the table is full. */
static uint32_t insert_stack(struct gt_thread *t, struct gt_stk *s, uint32_t j, uint32_t n,
                             uint32_t parent)
{
    uint32_t first = 0, chain_parent = 0, k;
    int was_full, rescan = 0;
    pthread_mutex_lock(&S.mu);
    was_full = S.full;
    for (; j < n; j++) { /* another thread may have added some meanwhile */
        uint32_t id = lookup(s->ip[j], parent);
        if (!id) break;
        s->id[j] = parent = id;
    }
    chain_parent = parent;
    for (k = j; k < n; k++) {
        uint32_t id = insert_locked(s->ip[k], parent);
        if (!id) break;
        if (k == j) first = id;
        s->id[k] = parent = id;
        rescan |= !GT_IP_IS_PYTHON(s->ip[k]) && !module_known(s->ip[k]);
    }
    char py_path[PATH_MAX] = "";
    if (rescan) {
        gt_loader_iterate(scan_module, t);
        memcpy(py_path, S.py_path, sizeof(py_path));
        S.py_path[0] = 0;
    }
    int now_full = S.full;
    pthread_mutex_unlock(&S.mu);
    if (py_path[0]) gt_py_module_loaded(py_path); /* (dlopen: not under the loader's lock) */
    if (k > j) emit_nodes(t, first, chain_parent, s->ip + j, k - j);
    if (now_full && !was_full) note_full(t);
    s->n = k;
    return k == n ? parent : 0;
}

/* lookup() through the thread's cache. */
static uint32_t lookup_memo(struct gt_stk *s, uint64_t ip, uint32_t parent)
{
    uint32_t h = (uint32_t)slot_hash(ip, parent) & ((1u << MEMO_BITS) - 1);
    if (s->memo[h].ip == ip && s->memo[h].parent == parent && s->memo[h].id) return s->memo[h].id;
    uint32_t id = lookup(ip, parent);
    if (id) {
        s->memo[h].ip = ip;
        s->memo[h].parent = parent;
        s->memo[h].id = id;
    }
    return id;
}

/* A stack's hash: hash_end(n, the xor of hash_frame(ip[i], i) over its n frames), so that a
 * capture can hash its frames as it copies them. */
static inline uint64_t hash_frame(uint64_t ip, uint32_t i)
{
    return (ip + i) * 0x9E3779B97F4A7C15ull;
}

static inline uint64_t hash_end(uint32_t n, uint64_t x)
{
    uint64_t h = n ^ x;
    return h ^ (h >> 29);
}

static uint64_t stack_hash(const uint64_t *ip, uint32_t n)
{
    uint64_t x = 0;
    for (uint32_t i = 0; i < n; i++)
        x ^= hash_frame(ip[i], i);
    return hash_end(n, x);
}

static uint32_t intern_nodes(struct gt_thread *t, struct gt_stk *s, uint32_t n);

/* Interns the innermost-first stack in s->cur[0..n) (h: its stack_hash): a recent one, or node
 * by node. The recent stacks are sets of two ways: two stacks a thread alternates between share a
 * set one time in RECENT / 2, and then keep a way each instead of evicting each other. */
static uint32_t intern_hashed(struct gt_thread *t, struct gt_stk *s, uint32_t n, uint64_t h)
{
    __typeof__(s->recent[0]) *r = &s->recent[(h >> 32) % (RECENT / 2) * 2];
    for (int w = 0; w < 2; w++)
        if (r[w].id && r[w].hash == h && r[w].n == n && memcmp(r[w].ip, s->cur, 8u * n) == 0) {
            r[w].used = ++s->clock;
            return r[w].id;
        }
    r += r[1].used < r[0].used; /* the way used less lately */
    uint32_t id = intern_nodes(t, s, n);
    if (id) {
        r->used = ++s->clock;
        r->hash = h;
        r->n = n;
        r->id = id;
        memcpy(r->ip, s->cur, 8u * n);
    }
    return id;
}

static uint32_t intern(struct gt_thread *t, struct gt_stk *s, uint32_t n)
{
    return intern_hashed(t, s, n, stack_hash(s->cur, n));
}

static uint32_t intern_nodes(struct gt_thread *t, struct gt_stk *s, uint32_t n)
{
    uint32_t j = 0, parent = 0;
    while (j < n && j < s->n && s->ip[j] == s->cur[n - 1 - j])
        parent = s->id[j++];
    if (j == n && n == s->n) return parent;
    for (; j < n; j++) {
        uint64_t ip = s->cur[n - 1 - j];
        uint32_t id = lookup_memo(s, ip, parent);
        s->ip[j] = ip;
        if (!id) break;
        s->id[j] = parent = id;
    }
    if (j == n) {
        s->n = n;
        return parent;
    }
    for (uint32_t k = j + 1; k < n; k++)
        s->ip[k] = s->cur[n - 1 - k];
    return insert_stack(t, s, j, n, parent);
}

/* ---- the cache of captures with Python frames ----------------------------------------------------
 * A training step launches from dozens of places, on the main thread with Python frames, and
 * repeats them at the next step: each capture differs from the previous one, so last_id does not
 * answer it, and a full capture looks up each Python frame's pseudo-ip (under the pseudo-ip
 * table's lock) and interns the whole stack. Its stack is fixed by the native frames above the
 * interpreter and the Python frames that gt_py_chain_same has just read (gt_py_chain_fresh says
 * why): a capture made of the same ones, in the same generations of both tables, has the same
 * id. Kept in 2-way sets by a hash of those words, compared in full. */

static uint64_t pyc_hash(const struct gt_stk *s, uint32_t cut)
{
    uint64_t x = 0;
    uint32_t i = 0, np = s->py.n;
    for (uint32_t k = 0; k < cut; k++, i++)
        x ^= hash_frame(s->cur[k], i);
    for (uint32_t k = 0; k < 2 * np; k++, i++)
        x ^= hash_frame(s->py.f[k], i);
    /* (not the identity words: they tell a code object from a later one at its address, and
     * are compared, but two entries that differ only there are not worth hashing 4 words a
     * frame for) */
    return hash_end(cut ^ (np << 16), x) | 1;
}

static int pyc_same(const struct gt_stk *s, const struct gt_pyc *e, uint32_t cut, uint32_t max)
{
    uint32_t np = s->py.n;
    return e->nn == cut && e->np == np && e->max == max && e->sgen == S.gen &&
           e->pgen == s->py.gen && memcmp(e->w, s->cur, 8u * cut) == 0 &&
           memcmp(e->w + cut, s->py.f, 16u * np) == 0 &&
           memcmp(e->w + cut + 2 * np, s->py.id, 32u * np) == 0;
}

static const struct gt_pyc *pyc_find(struct gt_stk *s, uint64_t h, uint32_t cut, uint32_t max)
{
    if (!s->pyc) return NULL;
    struct gt_pyc *r = &s->pyc[(h >> 32) % (PYC / 2) * 2];
    for (int w = 0; w < 2; w++)
        if (r[w].id && r[w].hash == h && pyc_same(s, &r[w], cut, max)) {
            r[w].used = ++s->pyc_clock;
            return &r[w];
        }
    return NULL;
}

/* Keeps the capture just interned as id (with_python left its key's hash in s->pyc_hash). */
static void pyc_put(struct gt_stk *s, uint32_t id)
{
    if (!s->pyc) {
        void *p = mmap(NULL, sizeof(struct gt_pyc) * PYC, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return;
        s->pyc = p;
    }
    uint64_t h = s->pyc_hash;
    uint32_t cut = s->pyc_cut, np = s->py.n;
    struct gt_pyc *r = &s->pyc[(h >> 32) % (PYC / 2) * 2];
    r += r[1].used < r[0].used; /* the way used less lately */
    r->id = 0;
    memcpy(r->w, s->cur, 8u * cut);
    memcpy(r->w + cut, s->py.f, 16u * np);
    memcpy(r->w + cut + 2 * np, s->py.id, 32u * np);
    r->hash = h, r->nn = cut, r->np = np, r->max = s->pyc_max;
    r->sgen = S.gen, r->pgen = s->py.gen;
    r->used = ++s->pyc_clock;
    r->id = id;
}

/* ---- the cache of native captures --------------------------------------------------------------
 * PyTorch's autograd thread launches the backward pass's kernels from dozens of places a step,
 * with no Python frames and 64-frame stacks: its walks come from the walk cache (unwind.c), and
 * each capture then copied, hashed and interned 64 frames. A walk from the cache is fixed by its
 * entry (the serial, never reused) and its own first GT_UNW_PROBE frames: a capture whose walk is
 * that one again, in the same generation of the node table, without Python frames now
 * (gt_py_no_frames: the autograd thread has a Python state but no frame) and not stopped at the
 * interpreter, is the stack of the capture kept, whose id it takes. */

static uint32_t natc_slot(uint64_t serial)
{
    return (uint32_t)(serial * 0x9E3779B97F4A7C15ull >> 40) % (NATC / 2) * 2;
}

static uint32_t natc_find(struct gt_stk *s, int py)
{
    uint32_t r = natc_slot(s->unw.from);
    for (uint32_t w = r; w < r + 2; w++) {
        __typeof__(s->natc[0]) *e = &s->natc[w];
        if (e->serial != s->unw.from || e->gen != S.gen ||
            memcmp(e->first, s->raw, sizeof(e->first)) != 0)
            continue;
        /* Python frames now (a thread that took a Python state since): the full capture */
        if (py && !gt_py_no_frames())
            return 0;
        if (py) s->py.ok = 0; /* as a full capture that read no chain leaves it */
        e->used = ++s->natc_clock;
        s->natc_hits++;
        return e->id;
    }
    return 0;
}

static void natc_put(struct gt_stk *s, uint32_t id)
{
    uint32_t r = natc_slot(s->unw.from);
    __typeof__(s->natc[0]) *e = &s->natc[r];
    e += e[1].used < e[0].used; /* the way used less lately */
    e->serial = s->unw.from;
    memcpy(e->first, s->raw, sizeof(e->first));
    e->gen = S.gen;
    e->id = id;
    e->used = ++s->natc_clock;
}

/* The native frames s->cur[0..n) down to the first one inside the interpreter, then the Python
 * frames; s->cur unchanged when the thread does not hold the GIL. Returns the new count; *cut:
 * the first interpreter frame's index in s->cur when Python frames replaced it and the frames
 * beyond, else UINT32_MAX. `read`: s->py already holds this capture's Python frames, read with
 * the previous capture's limit. */
static uint32_t with_python(struct gt_thread *t, struct gt_stk *s, uint32_t n, int read,
                            uint32_t *cut_out, uint32_t *id_out, uint32_t *m_out)
{
    uint32_t cut = gt_py_interp_first(s->cur, n);
    uint32_t room = GT_STACK_DEPTH_MAX - cut;
    uint32_t max = room < gt_stack_depth ? room : gt_stack_depth;
    if (!read || s->py.max != max) gt_py_chain_same(&s->py, max);
    s->pyc_hash = 0;
    if (!S.in_full && gt_py_chain_fresh(&s->py, max) && cut + 6 * s->py.n <= PYC_WORDS) {
        uint64_t h = pyc_hash(s, cut);
        const struct gt_pyc *e = pyc_find(s, h, cut, max);
        if (e) {
            /* the stack of an earlier capture made of the same frames: its id, without reading
             * the frames' pseudo-ips or interning */
            gt_py_chain_done(&s->py, max, s->py.n);
            s->pyc_hits++;
            *cut_out = cut < n ? cut : UINT32_MAX;
            *id_out = e->id;
            *m_out = s->py.n;
            return cut + s->py.n;
        }
        s->pyc_hash = h, s->pyc_cut = cut, s->pyc_max = max;
    }
    uint32_t m = gt_py_frames(t, s->cur + cut, max, &s->py);
    gt_py_chain_done(&s->py, max, m);
    *cut_out = m && cut < n ? cut : UINT32_MAX;
    *m_out = m;
    return m ? cut + m : n;
}

/* The index in s->raw[k..got) of s->cur[i] (the copy skips null return addresses). */
static uint32_t raw_index(const struct gt_stk *s, int k, int got, uint32_t i)
{
    for (uint32_t c = 0; k < got; k++)
        if ((uintptr_t)s->raw[k] > 1 && c++ == i) return (uint32_t)k;
    return UINT32_MAX;
}

/* The id of the calling thread's stack. With Python frames, only the native frames above the
 * first interpreter frame count (the Python frames replace the rest): a walk that repeats the
 * previous one there (unwind.c checks only those, s->upto) is enough. */
uint32_t gt_stack_slow(struct gt_thread *t)
{
    struct gt_stk *s = t->stk;
    if (!s) {
        s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (s == MAP_FAILED) return 0;
        t->stk = s; /* zeroed: an empty previous stack */
    }
    int py = gt_py_available(), read = 0;
    s->unw.upto = py ? s->upto : 0;
    /* With Python frames, the walk may end at the first frame inside the interpreter: the Python
     * frames replace it and the ones beyond (with_python), a third to half of a PyTorch launch's
     * walk. Where they did not (a thread whose Python frames cannot be read), the walk is made
     * again to the end, and so are the thread's next STOP_PAUSE walks at once. */
    s->unw.stop_lo = s->unw.stop_hi = 0;
    if (py && !s->nostop)
        gt_py_interp_range(&s->unw.stop_lo, &s->unw.stop_hi);
    else if (s->nostop)
        s->nostop--;
walk:;
    int got = gt_unwind(s->raw, (int)(gt_stack_depth + SKIP_MAX), &s->unw);
    if (GT_UNLIKELY(s->gen != S.gen)) s->last_id = 0, s->gen = S.gen;
    /* The very stack of the latest capture: its id again. With Python, only when the Python
     * frames are also the very ones of the latest capture (same code objects and instruction
     * offsets): the id a full capture would intern, without the API walk and the interning. */
    if (s->unw.same && s->last_id) {
        if (!py) return s->last_id;
        read = 1;
        if (gt_py_chain_same(&s->py, s->py.max)) {
            s->reused++;
            s->prefixed += s->unw.same == GT_UNW_SAME_PREFIX || s->unw.stopped;
            return s->last_id;
        }
    }
    if (s->unw.from && !s->unw.stopped && !S.in_full) {
        uint32_t id = natc_find(s, py);
        if (id) {
            s->upto = 0;
            s->last_id = py ? 0 : id; /* (with py, as a full capture without Python frames) */
            return id;
        }
    }
    int k = 0;
    while (k < got && (uintptr_t)s->raw[k] >= S.self_lo && (uintptr_t)s->raw[k] < S.self_hi)
        k++;
    int k0 = k;
    uint32_t n = 0, cut = UINT32_MAX, cached = 0;
    uint64_t x = 0; /* the native frames' hash, taken while copying them */
    for (; k < got && n < gt_stack_depth; k++) {
        uint64_t ip = (uint64_t)(uintptr_t)s->raw[k];
        if (ip > 1) {
            s->cur[n] = ip - 1;
            x ^= hash_frame(ip - 1, n++);
        }
    }
    uint32_t pym = 0; /* Python frames */
    if (py) n = with_python(t, s, n, read, &cut, &cached, &pym);
    uint32_t kc = cut == UINT32_MAX ? UINT32_MAX : raw_index(s, k0, got, cut);
    if (cut == UINT32_MAX && s->unw.stopped) {
        /* stopped at an interpreter frame that no Python frames replaced: the frames beyond it
         * are needed */
        s->unw.stop_lo = s->unw.stop_hi = 0;
        s->nostop = STOP_PAUSE;
        s->unw.upto = 0;
        s->last_id = 0;
        read = 0;
        goto walk;
    }
    if (s->unw.same == GT_UNW_SAME_PREFIX && (kc == UINT32_MAX || kc >= s->unw.upto)) {
        /* frames beyond the checked ones are needed: walk them (a full capture: s->py now
         * holds this capture's frames, which the previous id does not stand for) */
        s->unw.upto = 0;
        s->last_id = 0;
        read = 0;
        goto walk;
    }
    s->upto = kc == UINT32_MAX ? 0 : kc + 1;
    uint32_t id = cached;
    if (!id) {
        id = !n ? 0 : py ? intern(t, s, n) : intern_hashed(t, s, n, hash_end(n, x));
        /* a full capture of a fresh chain, all of whose frames got their pseudo-ips */
        if (py && id && s->pyc_hash && s->py.ok == GT_PY_CHAIN_OK && n == s->pyc_cut + s->py.n)
            pyc_put(s, id);
        /* a native one whose walk came from the walk cache, made in one go */
        else if (id && s->unw.from && !s->unw.stopped && !pym && !S.in_full)
            natc_put(s, id);
    }
    s->last_id = !py || s->py.ok == GT_PY_CHAIN_OK ? id : 0;
    return id;
}

/* A stack walked elsewhere (hostsample.c: a timer sample's, ips innermost first) as a node id,
 * interned by its thread outside any signal handler. */
uint32_t gt_stack_intern_ips(struct gt_thread *t, const uint64_t *ips, uint32_t n)
{
    struct gt_stk *s = t->stk;
    if (!s) {
        s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (s == MAP_FAILED) return 0;
        t->stk = s;
    }
    if (n > gt_stack_depth) n = gt_stack_depth;
    memcpy(s->cur, ips, 8u * n);
    /* last_id, the walker's log and the Python chain stay the latest capture's: a sample walked
     * elsewhere changes neither, so the next capture may still reuse that id */
    return n ? intern(t, s, n) : 0;
}

/* GPUTRACE_DEBUG: how this thread's stacks were walked. */
static void log_unwind(const struct gt_stk *s, uint32_t tid)
{
    struct gt_unw_stats st = gt_unwind_stats(&s->unw);
    gt_log("gputrace: thread %u: %llu stacks walked by the cached rules, %llu by libunwind "
           "(process: %llu rules derived, %llu clears), %llu of them finished from the cache; %llu "
           "reused with their Python frames, %llu of those with native frames checked only up to "
           "the interpreter\n",
           tid, (unsigned long long)st.fast, (unsigned long long)st.fallback,
           (unsigned long long)st.derived, (unsigned long long)st.clears,
           (unsigned long long)st.cached, (unsigned long long)s->reused, (unsigned long long)s->prefixed);
    if (s->pyc)
        gt_log("gputrace: thread %u: %llu stacks with Python frames found in the cache of captures\n",
               tid, (unsigned long long)s->pyc_hits);
    if (s->natc_hits)
        gt_log("gputrace: thread %u: %llu native stacks found in the cache of captures\n", tid,
               (unsigned long long)s->natc_hits);
}

void gt_stack_thread_exit(struct gt_thread *t)
{
    if (t->stk) log_unwind(t->stk, t->tid);
    if (t->stk) {
        gt_unwind_thread_release(&t->stk->unw);
        if (t->stk->pyc) munmap(t->stk->pyc, sizeof(struct gt_pyc) * PYC);
        munmap(t->stk, sizeof(*t->stk));
    }
    t->stk = NULL;
}

/* ---- names at exit ------------------------------------------------------------------------------
 */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every distinct ip in the table, sorted (malloc is fine here: we are in the exit path). */
static uint64_t *all_ips(size_t *count)
{
    uint32_t nlv = atomic_load(&S.nlv);
    size_t n = 0, cap = 0;
    for (uint32_t l = 0; l < nlv; l++)
        cap += S.lv[l].mask + 1;
    uint64_t *ips = cap ? malloc(cap / 2 * sizeof(*ips) + 8) : NULL;
    if (!ips) return NULL;
    for (uint32_t l = 0; l < nlv; l++)
        for (uint64_t i = 0; i <= S.lv[l].mask; i++) {
            uint64_t ip = atomic_load_explicit(&S.lv[l].w[2 * i], memory_order_relaxed);
            if (ip && !GT_IP_IS_PYTHON(ip) && n < cap / 2 + 1) ips[n++] = ip;
        }
    qsort(ips, n, sizeof(*ips), cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || ips[u - 1] != ips[i]) ips[u++] = ips[i];
    *count = u;
    return ips;
}

/* Appends one symbol record to out (cap bytes); returns its size, 0 if it does not fit. */
static uint32_t put_symbol(uint8_t *out, uint32_t room, uint64_t addr, uint64_t size,
                           const char *name)
{
    uint32_t nl = (uint32_t)strnlen(name, GT_MAX_NAME_BYTES);
    uint32_t rs = gt_rec_size(sizeof(struct gt_rec_symbol), nl);
    if (rs > room) return 0;
    struct gt_rec_symbol r = {
        .h = {GT_REC_SYMBOL, 0, rs}, .ts = gt_now(), .addr = addr, .size = size, .name_len = nl};
    memcpy(out, &r, sizeof(r));
    memcpy(out + sizeof(r), name, nl);
    memset(out + sizeof(r) + nl, 0, rs - sizeof(r) - nl);
    return rs;
}

void gt_stacks_exit(void (*emit)(const void *p, uint32_t size))
{
    enum { BUF = 1u << 20 };
    size_t n = 0, written = 0, looked = 0;
    uint64_t t0 = gt_debug ? gt_now() : 0;
    if (gt_tls_thread && gt_tls_thread->stk) log_unwind(gt_tls_thread->stk, gt_tls_thread->tid);
    uint64_t *ips = gt_stack_depth ? all_ips(&n) : NULL;
    uint8_t *buf = ips ? malloc(BUF) : NULL;
    struct gt_dlname *names = buf ? malloc((n ? n : 1) * sizeof(*names)) : NULL;
    if (names) gt_dlnames(ips, n, names, &looked); /* dladdr1's names, an object at a time */
    uint32_t used = 0;
    uint64_t last = 0;
    for (size_t i = 0; names && i < n; i++) {
        uint64_t a = names[i].addr, sz = names[i].size;
        if (!names[i].name || !a) continue;
        if (a == last || (sz && ips[i] >= a + sz)) continue; /* same function, or not inside it */
        last = a;
        uint32_t w = put_symbol(buf + used, BUF - used, a, sz, names[i].name);
        if (!w) {
            emit(buf, used);
            used = 0;
            w = put_symbol(buf, BUF, a, sz, names[i].name);
        }
        used += w;
        written++;
    }
    if (used) emit(buf, used);
    free(names);
    free(buf);
    free(ips);
    /* dladdr1 alone searched an object's whole dynamic symbol table for each address: 0.36 ms an
     * address at the exit of bench/torch_overhead.py's step workload (PyTorch on the simulated
     * stack, 2026-12-06's VM), 187 ms for its 521 */
    if (gt_debug)
        gt_log("gputrace: names at exit: %zu native addresses, %zu of them looked up with dladdr1 "
               "(the rest from their objects' symbol tables at once), %zu names written, %.1f "
               "ms\n",
               n, looked, written, (double)(gt_now() - t0) / 1e6);
}
