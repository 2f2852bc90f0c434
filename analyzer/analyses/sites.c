/* Events by stack while reading (an id and a few counters each: memory grows with unique stacks,
 * not events); at the end each stack is symbolized once and folded into its call site and its
 * library (see sites.h). */
#include "analyses/sites.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define MAX_FRAMES 1024 /* logical frames looked at per stack */

/* Framework allocator internals: the allocation's call site is the code that asked them. */
const char ga_default_ignore_frames[] =
    "^(libc10_cuda|libc10|libcublas|libcublasLt|libcudnn[A-Za-z0-9_]*|libcufft|libcufftw|libcurand|"
    "libcusparse|libcusparseLt|libcusolver|libcusolverMg|libnvrtc|libnvJitLink)\\.so"
    "|CUDACachingAllocator|^c10::cuda::|^c10::CachingDeviceAllocator"
    "|^tsl::BFCAllocator|^stream_executor::|^xla::.*Allocator"
    "|/(torch|jax|jaxlib|cupy|cupy_backends|tensorflow|triton|numba)/.*\\.py$";

/* The CUDA driver and runtime and the tracer itself: never the call site, never the library. */
static const char runtime_modules[] = "^lib(cuda|cudart|gputrace)\\.so";
static const char runtime_funcs[] = "^(cudart::|__cudart|cuda[A-Z][A-Za-z0-9_]*$)";

static regex_t rt_mod, rt_func;
static int rt_ready;

int ga_sites_init(struct ga_sites *s, const char *ignore_frames)
{
    memset(s, 0, sizeof(*s));
    if (!rt_ready) {
        rt_ready = regcomp(&rt_mod, runtime_modules, REG_EXTENDED | REG_NOSUB) == 0 &&
                   regcomp(&rt_func, runtime_funcs, REG_EXTENDED | REG_NOSUB) == 0;
    }
    const char *re = ignore_frames ? ignore_frames : ga_default_ignore_frames;
    int rc = *re ? regcomp(&s->ignore, re, REG_EXTENDED | REG_NOSUB) : 0;
    if (rc) {
        regerror(rc, &s->ignore, s->ignore_error, sizeof(s->ignore_error));
        return -1;
    }
    s->ignore_ok = *re != 0;
    return 0;
}

static uint32_t stack_cache_slot(uint32_t stack)
{
    return (stack * 0x9e3779b1u) >> 16 & (GA_SITES_STACK_CACHE - 1);
}

/* stats_of's way through the hash map (the cache missed), out of line. */
__attribute__((noinline)) static struct ga_site_stats *stats_slow(struct ga_sites *s,
                                                                  uint32_t stack)
{
    int added = 0;
    uint32_t c = stack_cache_slot(stack);
    uint64_t *v = ga_map_upsert(&s->by_stack, stack, 0, s->n_stacks, &added);
    if (added) {
        s->per_stack = ga_xgrow(s->per_stack, &s->cap, s->n_stacks, sizeof(*s->per_stack));
        s->stack_ids = ga_xgrow(s->stack_ids, &s->ids_cap, s->n_stacks, sizeof(*s->stack_ids));
        memset(&s->per_stack[s->n_stacks], 0, sizeof(*s->per_stack));
        s->stack_ids[s->n_stacks++] = stack;
    }
    s->have_stacks = 1;
    if (*v <= UINT32_MAX) {
        s->recent_stack[c] = stack;
        s->recent_idx[c] = (uint32_t)*v;
    }
    return &s->per_stack[*v];
}

/* A stack's entry (stack != 0). Programs allocate and launch from a few places many times: the
 * cache answers most lookups without the hash map. */
static struct ga_site_stats *stats_of(struct ga_sites *s, uint32_t stack)
{
    uint32_t c = stack_cache_slot(stack);
    if (s->recent_stack[c] == stack) return &s->per_stack[s->recent_idx[c]];
    return stats_slow(s, stack);
}

/* The records with a stack, one out-of-line function per type: a record without one (all of
 * them when the stacks are off) costs no stack frame. */
__attribute__((noinline)) static void site_alloc(struct ga_sites *s, const struct gt_rec_alloc *r)
{
    struct ga_site_stats *st = stats_of(s, r->stack);
    st->allocs++;
    st->alloc_bytes += r->size;
}

__attribute__((noinline)) static void site_fail(struct ga_sites *s, uint32_t stack)
{
    stats_of(s, stack)->alloc_failed++;
}

__attribute__((noinline)) static void site_launch(struct ga_sites *s, const struct gt_rec_launch *r)
{
    struct ga_site_stats *st = stats_of(s, r->stack);
    if (r->result)
        st->launch_failed++;
    else
        st->launches++;
}

__attribute__((noinline)) static void site_span(struct ga_sites *s, const struct gt_rec_span *r)
{
    struct ga_site_stats *st = stats_of(s, r->stack);
    st->syncs++;
    if (r->ts_exit > r->ts_enter) st->sync_ns += r->ts_exit - r->ts_enter;
}

void ga_sites_event(struct ga_sites *s, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_ALLOC:
        if (ev->r->alloc.stack)
            site_alloc(s, &ev->r->alloc);
        else
            s->no_stack_allocs++;
        break;
    case GT_REC_ALLOC_FAIL:
        if (ev->r->alloc_fail.stack) site_fail(s, ev->r->alloc_fail.stack);
        break;
    case GT_REC_LAUNCH:
        if (ga_api_enqueues(ev->sub)) { /* async copies and memsets: a site, no launches */
            if (ev->r->launch.stack) stats_of(s, ev->r->launch.stack);
            break;
        }
        if (ev->r->launch.stack)
            site_launch(s, &ev->r->launch);
        else
            s->no_stack_launches++;
        break;
    case GT_REC_SPAN:
        if (ev->r->span.stack)
            site_span(s, &ev->r->span);
        else
            s->no_stack_syncs++;
        break;
    default:
        break;
    }
}

size_t ga_sites_stack_frames(struct ga_stacks *st, uint32_t stack, const struct ga_frame **out,
                             size_t max)
{
    uint64_t ips[512];
    size_t n = ga_stacks_ips(st, stack, ips, 512), k = 0;
    for (size_t i = 0; i < n && k < max; i++) {
        size_t nf;
        const struct ga_frame *f = ga_stacks_frames(st, ips[i], &nf);
        for (size_t j = 0; j < nf && k < max; j++)
            out[k++] = &f[j];
    }
    return k;
}

static int matches(const regex_t *re, const char *s)
{
    return s && regexec(re, s, 0, NULL, 0) == 0;
}

static int is_runtime(const struct ga_stacks *st, const struct ga_frame *f)
{
    if (!rt_ready || f->source == GA_SYM_PYTHON) return 0;
    if (f->module != GA_NO_MODULE && matches(&rt_mod, st->mods[f->module].name)) return 1;
    return matches(&rt_func, f->func);
}

static int is_ignored(const struct ga_sites *s, const struct ga_stacks *st,
                      const struct ga_frame *f)
{
    if (!s->ignore_ok) return 0;
    if (f->source == GA_SYM_PYTHON && matches(&s->ignore, f->file)) return 1; /* the full path */
    if (f->module != GA_NO_MODULE && matches(&s->ignore, st->mods[f->module].name)) return 1;
    return matches(&s->ignore, f->func);
}

enum { FRAME_RUNTIME = 1, FRAME_IGNORED = 2 };

/* A frame's FRAME_* bits. Stacks share frames (frames are per ip, ips shared by the stacks
 * through the same code), so each frame is matched against the expressions once, not once per
 * stack it is in: a trace of many deep stacks cost stacks x depth regexec calls. */
static unsigned frame_class(struct ga_sites *s, const struct ga_stacks *st,
                            const struct ga_frame *f)
{
    int added = 0;
    uint64_t *v = ga_map_upsert(&s->frame_class, (uint64_t)(uintptr_t)f, 0, 0, &added);
    if (added)
        *v = (is_runtime(st, f) ? FRAME_RUNTIME : 0) | (is_ignored(s, st, f) ? FRAME_IGNORED : 0);
    return (unsigned)*v;
}

unsigned ga_sites_frame_class(struct ga_sites *s, const struct ga_stacks *st,
                              const struct ga_frame *f)
{
    return frame_class(s, st, f);
}

/* Call-site frame and library module of one stack. A stack with Python frames has its site
 * among them: the innermost one outside framework internals (else the innermost one); the
 * library is still the native object that made the CUDA call. */
static const struct ga_frame *classify(struct ga_sites *s, struct ga_stacks *st, uint32_t stack,
                                       uint32_t *library)
{
    static const struct ga_frame *fr[MAX_FRAMES];
    size_t n = ga_sites_stack_frames(st, stack, fr, MAX_FRAMES);
    const struct ga_frame *lib = NULL, *site = NULL, *py = NULL, *py_site = NULL;
    for (size_t i = 0; i < n && !py_site; i++) {
        unsigned c = frame_class(s, st, fr[i]);
        if (fr[i]->source == GA_SYM_PYTHON) {
            if (!py) py = fr[i];
            if (!(c & FRAME_IGNORED)) py_site = fr[i];
            continue;
        }
        if (c & FRAME_RUNTIME) continue;
        if (!lib) lib = fr[i];
        if (!site && !(c & FRAME_IGNORED)) site = fr[i];
    }
    *library = lib ? lib->module : GA_NO_MODULE;
    if (py) return py_site ? py_site : py;
    return site ? site : lib; /* every frame was framework internals: the library's own frame */
}

static void add_stats(struct ga_site_stats *a, const struct ga_site_stats *b)
{
    a->allocs += b->allocs;
    a->alloc_bytes += b->alloc_bytes;
    a->alloc_failed += b->alloc_failed;
    a->leaked_bytes += b->leaked_bytes;
    a->leaked_count += b->leaked_count;
    a->launches += b->launches;
    a->launch_failed += b->launch_failed;
    a->syncs += b->syncs;
    a->sync_ns += b->sync_ns;
    a->peak_bytes += b->peak_bytes;
    a->peak_count += b->peak_count;
    a->temp_count += b->temp_count;
    a->temp_bytes += b->temp_bytes;
}

/* Sites are the same when their frames name the same function at the same line of the same
 * file in the same object (two stacks reaching one call from different callers). */
static int same_site(const struct ga_frame *a, const struct ga_frame *b)
{
    if (!a || !b) return a == b;
    if (a->func || b->func) {
        if (!a->func || !b->func || strcmp(a->func, b->func)) return 0;
    } else if (a->ip != b->ip) {
        return 0;
    }
    if ((a->file == NULL) != (b->file == NULL) || (a->file && strcmp(a->file, b->file))) return 0;
    return a->line == b->line && a->module == b->module;
}

static void top(uint32_t *id, uint64_t *w, uint32_t stack, uint64_t weight)
{
    if (weight > *w) *id = stack, *w = weight;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

/* A hash of what same_site compares; candidates are still checked with same_site. */
static uint64_t site_hash(const struct ga_frame *f, uint32_t lib)
{
    uint64_t h = fnv(0xcbf29ce484222325ull, &lib, sizeof(lib));
    if (!f) return h;
    if (f->func)
        h = fnv(h, f->func, strlen(f->func));
    else
        h = fnv(h, &f->ip, sizeof(f->ip));
    if (f->file) h = fnv(h, f->file, strlen(f->file));
    h = fnv(h, &f->line, sizeof(f->line));
    return fnv(h, &f->module, sizeof(f->module));
}

static size_t add_to_site(struct ga_sites *s, const struct ga_frame *f, uint32_t lib, uint32_t stack,
                          const struct ga_site_stats *st)
{
    uint64_t h = site_hash(f, lib), *v;
    size_t i = s->n_sites;
    for (uint64_t probe = 0; (v = ga_map_find(&s->site_of, h, probe)); probe++)
        if (same_site(s->sites[*v].frame, f) && s->sites[*v].library == lib) {
            i = (size_t)*v;
            break;
        }
    if (i == s->n_sites) {
        uint64_t probe = 0;
        while (ga_map_find(&s->site_of, h, probe))
            probe++;
        ga_map_upsert(&s->site_of, h, probe, i, NULL);
        s->sites = ga_xgrow(s->sites, &s->sites_cap, i, sizeof(*s->sites));
        memset(&s->sites[i], 0, sizeof(*s->sites));
        s->sites[i].frame = f;
        s->sites[i].library = lib;
        s->n_sites++;
    }
    struct ga_site *x = &s->sites[i];
    add_stats(&x->st, st);
    x->stacks++;
    top(&x->top_alloc, &x->top_alloc_w, stack, st->alloc_bytes + st->allocs + st->alloc_failed);
    top(&x->top_launch, &x->top_launch_w, stack, st->launches + st->launch_failed);
    top(&x->top_sync, &x->top_sync_w, stack, st->sync_ns + st->syncs);
    return i;
}

static void add_to_library(struct ga_sites *s, uint32_t lib, const struct ga_site_stats *st)
{
    int added = 0;
    uint64_t *i = ga_map_upsert(&s->lib_of, lib, 0, s->n_libs, &added);
    if (added) {
        s->libs = ga_xgrow(s->libs, &s->libs_cap, s->n_libs, sizeof(*s->libs));
        memset(&s->libs[s->n_libs], 0, sizeof(*s->libs));
        s->libs[s->n_libs++].module = lib;
    }
    add_stats(&s->libs[*i].st, st);
}

/* Device memory still live at the end, by the stack that allocated it. */
static void add_leaks(struct ga_sites *s, const struct ga_memory *m)
{
    const struct ga_map_slot *slot;
    for (size_t i = 0; ga_map_next(&m->live, &i, &slot);) {
        const struct ga_live *e = &m->slab[slot->value];
        if (!e->stack || !ga_kind_is_device(e->kind) || e->cached) continue;
        struct ga_site_stats *st = stats_of(s, e->stack);
        st->leaked_bytes += e->size;
        st->leaked_count++;
    }
}

/* What each stack held at the process peak, and its temporary allocations. */
static void add_peak(struct ga_sites *s, const struct ga_memory *m)
{
    for (size_t i = 0; i < m->peak.n_by_stack; i++) {
        const struct ga_holder *h = &m->peak.by_stack[i];
        if (!h->stack) continue;
        struct ga_site_stats *st = stats_of(s, h->stack);
        st->peak_bytes += h->bytes;
        st->peak_count += h->count;
    }
    for (size_t i = 0; i < m->n_temps; i++) {
        if (!m->temps[i].stack) continue;
        struct ga_site_stats *st = stats_of(s, m->temps[i].stack);
        st->temp_count += m->temps[i].count;
        st->temp_bytes += m->temps[i].bytes;
    }
}

void ga_sites_finish(struct ga_sites *s, struct ga_stacks *st, const struct ga_memory *m)
{
    add_leaks(s, m);
    add_peak(s, m);
    for (size_t i = 0; i < s->n_stacks; i++) {
        uint32_t lib;
        const struct ga_frame *f = classify(s, st, s->stack_ids[i], &lib);
        size_t site = add_to_site(s, f, lib, s->stack_ids[i], &s->per_stack[i]);
        ga_map_upsert(&s->site_of_stack, s->stack_ids[i], 0, site, NULL);
        add_to_library(s, lib, &s->per_stack[i]);
    }
}

const struct ga_site *ga_sites_of_stack(const struct ga_sites *s, uint32_t stack)
{
    const uint64_t *v = stack ? ga_map_find(&s->site_of_stack, stack, 0) : NULL;
    return v && *v < s->n_sites ? &s->sites[*v] : NULL;
}

static uint64_t weight(const struct ga_site_stats *s, enum ga_site_order k)
{
    switch (k) {
    case GA_SITES_BY_BYTES:
        return s->alloc_bytes;
    case GA_SITES_BY_LAUNCHES:
        return s->launches;
    case GA_SITES_BY_SYNC:
        return s->sync_ns;
    case GA_SITES_BY_PEAK:
        return s->peak_bytes;
    case GA_SITES_BY_TEMP:
        return s->temp_count;
    case GA_SITES_BY_LEAK:
        return s->leaked_bytes;
    }
    return 0;
}

static int has(const struct ga_site_stats *t, enum ga_site_order k)
{
    switch (k) {
    case GA_SITES_BY_BYTES:
        return t->allocs || t->alloc_failed;
    case GA_SITES_BY_LAUNCHES:
        return t->launches || t->launch_failed;
    case GA_SITES_BY_SYNC:
        return t->syncs != 0;
    case GA_SITES_BY_PEAK:
        return t->peak_bytes || t->peak_count;
    case GA_SITES_BY_TEMP:
        return t->temp_count != 0;
    case GA_SITES_BY_LEAK:
        return t->leaked_count != 0;
    }
    return 0;
}

static enum ga_site_order sort_key; /* qsort has no context argument */

static int cmp_sites(const void *a, const void *b)
{
    const struct ga_site *x = *(const struct ga_site *const *)a;
    const struct ga_site *y = *(const struct ga_site *const *)b;
    uint64_t wx = weight(&x->st, sort_key), wy = weight(&y->st, sort_key);
    if (wx != wy) return wx > wy ? -1 : 1;
    return x < y ? -1 : x > y; /* first seen first */
}

const struct ga_site **ga_sites_sorted(const struct ga_sites *s, enum ga_site_order k, size_t *n)
{
    const struct ga_site **v = ga_xcalloc(s->n_sites + 1, sizeof(*v));
    *n = 0;
    for (size_t i = 0; i < s->n_sites; i++)
        if (has(&s->sites[i].st, k)) v[(*n)++] = &s->sites[i];
    sort_key = k;
    qsort(v, *n, sizeof(*v), cmp_sites);
    return v;
}

static int cmp_libs(const void *a, const void *b)
{
    const struct ga_library *x = a, *y = b;
    if (x->st.alloc_bytes != y->st.alloc_bytes)
        return x->st.alloc_bytes > y->st.alloc_bytes ? -1 : 1;
    return x->module < y->module ? -1 : x->module > y->module;
}

struct ga_library *ga_libraries_sorted(const struct ga_sites *s, size_t *n)
{
    struct ga_library *v = ga_xcalloc(s->n_libs + 1, sizeof(*v));
    *n = 0;
    for (size_t i = 0; i < s->n_libs; i++)
        if (has(&s->libs[i].st, GA_SITES_BY_BYTES)) v[(*n)++] = s->libs[i];
    qsort(v, *n, sizeof(*v), cmp_libs);
    return v;
}

void ga_sites_free(struct ga_sites *s)
{
    if (s->ignore_ok) regfree(&s->ignore);
    ga_map_free(&s->by_stack);
    ga_map_free(&s->site_of);
    ga_map_free(&s->lib_of);
    ga_map_free(&s->frame_class);
    ga_map_free(&s->site_of_stack);
    free(s->per_stack);
    free(s->stack_ids);
    free(s->sites);
    free(s->libs);
    memset(s, 0, sizeof(*s));
}
