/* Device memory with exact accounting: linear allocations, managed memory, stream-ordered pools,
 * VMM (reserve/create/map), arrays, host memory, pointer queries. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int g_va_reserved;
static uint64_t g_va_window_end;
static uint64_t g_buffer_id;

struct sim_pool {
    int dev;
    int is_default;
    int alive;
    uint64_t reserved, used, reserved_high, used_high, threshold, max_size;
    int reuse[3];
    unsigned long outstanding;
    struct sim_pool *next;
};
static struct sim_pool *g_pools;

struct sim_vmm {
    int dev;
    uint64_t size;
    int handle_refs; /* cuMemCreate + cuMemRetainAllocationHandle - cuMemRelease */
    int maps;
    CUmemAllocationProp prop;
};

struct sim_map {
    uint64_t start, size;
    struct sim_vmm *h;
    struct sim_map *next;
};

struct sim_alloc {
    uint64_t start, size; /* requested range */
    uint64_t va_len;      /* VA occupied (rounded) */
    uint64_t charged;     /* bytes charged to the device (or to the pool's used count) */
    int kind, dev;
    struct sim_ctx *ctx;
    struct sim_pool *pool;
    void *host;
    size_t host_len;
    unsigned host_flags;
    struct sim_map *maps;
    uint64_t buffer_id;
    struct sim_alloc *l, *r;
    uint32_t prio;
};
enum { AL_HOST = 10, AL_HOSTREG = 11 };

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
static uint64_t gran(void) { return g_cfg.alloc_gran; }
static uint64_t charge_of(uint64_t size) { return round_up(size, gran()); }

/* ---- treap of address ranges ------------------------------------------------------------------ */
static struct sim_alloc *g_root;
static uint32_t g_rng = 2463534242u;
static uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 17;
    g_rng ^= g_rng << 5;
    return g_rng;
}

static struct sim_alloc *t_merge(struct sim_alloc *a, struct sim_alloc *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (a->prio > b->prio) {
        a->r = t_merge(a->r, b);
        return a;
    }
    b->l = t_merge(a, b->l);
    return b;
}

static void t_split(struct sim_alloc *t, uint64_t key, struct sim_alloc **l, struct sim_alloc **r)
{
    if (!t) {
        *l = *r = NULL;
    } else if (t->start < key) {
        t_split(t->r, key, &t->r, r);
        *l = t;
    } else {
        t_split(t->l, key, l, &t->l);
        *r = t;
    }
}

static void t_insert(struct sim_alloc *n)
{
    struct sim_alloc *a, *b;
    n->prio = rnd();
    n->l = n->r = NULL;
    t_split(g_root, n->start, &a, &b);
    g_root = t_merge(t_merge(a, n), b);
}

static void t_erase(struct sim_alloc *n)
{
    struct sim_alloc *a, *b, *m, *c;
    t_split(g_root, n->start, &a, &b);
    t_split(b, n->start + 1, &m, &c);
    g_root = t_merge(a, c);
}

static struct sim_alloc *t_floor(uint64_t addr) /* largest start <= addr */
{
    struct sim_alloc *t = g_root, *best = NULL;
    while (t) {
        if (t->start <= addr) {
            best = t;
            t = t->r;
        } else
            t = t->l;
    }
    return best;
}

static struct sim_alloc *t_after(uint64_t addr) /* smallest start > addr */
{
    struct sim_alloc *t = g_root, *best = NULL;
    while (t) {
        if (t->start > addr) {
            best = t;
            t = t->l;
        } else
            t = t->r;
    }
    return best;
}

static struct sim_alloc *t_containing(uint64_t addr)
{
    struct sim_alloc *a = t_floor(addr);
    return a && addr < a->start + (a->size ? a->size : 1) ? a : NULL;
}

static struct sim_alloc *t_exact(uint64_t addr)
{
    struct sim_alloc *a = t_floor(addr);
    return a && a->start == addr ? a : NULL;
}

static void t_collect(struct sim_alloc *t, struct sim_alloc ***v, size_t *n, size_t *cap)
{
    if (!t)
        return;
    t_collect(t->l, v, n, cap);
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *v = realloc(*v, *cap * sizeof **v);
        if (!*v)
            abort();
    }
    (*v)[(*n)++] = t;
    t_collect(t->r, v, n, cap);
}

/* ---- virtual addresses ------------------------------------------------------------------------- */
static int va_free_at(uint64_t cand, uint64_t len)
{
    struct sim_alloc *p = t_floor(cand);
    if (p && p->start + p->va_len > cand)
        return 0;
    struct sim_alloc *s = t_after(cand);
    return !(s && s->start < cand + len);
}

/* next fit inside the device's window, wrapping once; deterministic for a given call sequence */
static int va_find(int dev, uint64_t len, uint64_t align, uint64_t hint, uint64_t *out)
{
    struct sim_dev *d = &g_dev[dev];
    if (hint && hint % align == 0 && hint >= d->va_base && hint + len <= d->va_end && va_free_at(hint, len)) {
        *out = hint;
        return 1;
    }
    uint64_t cand = round_up(d->va_next, align);
    int wrapped = 0;
    for (;;) {
        if (cand + len > d->va_end || cand + len < cand) {
            if (wrapped)
                return 0;
            wrapped = 1;
            cand = round_up(d->va_base, align);
            continue;
        }
        struct sim_alloc *p = t_floor(cand);
        if (p && p->start + p->va_len > cand) {
            cand = round_up(p->start + p->va_len, align);
            continue;
        }
        struct sim_alloc *s = t_after(cand);
        if (s && s->start < cand + len) {
            cand = round_up(s->start + s->va_len, align);
            continue;
        }
        *out = cand;
        d->va_next = cand + len;
        return 1;
    }
}

void mem_init_devices(void)
{
    for (int i = 0; i < SIM_MAX_DEV; i++) {
        struct sim_dev *d = &g_dev[i];
        d->capacity = g_cfg.mem_bytes;
        d->other = g_cfg.other_bytes;
        d->va_base = SIM_VA_BASE + (uint64_t)i * SIM_VA_SPAN + SIM_VMM_GRAN; /* never hand out the base itself */
        d->va_end = SIM_VA_BASE + (uint64_t)(i + 1) * SIM_VA_SPAN;
        d->va_next = d->va_base;
        if (i < g_cfg.ndev) {
            struct sim_pool *p = calloc(1, sizeof *p);
            if (!p)
                abort();
            p->dev = i;
            p->is_default = 1;
            p->alive = 1;
            p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
            p->next = g_pools;
            g_pools = p;
            handle_add(p, OBJ_POOL, p);
            d->default_pool = d->current_pool = p;
        }
    }
    g_va_window_end = SIM_VA_BASE + (uint64_t)(g_cfg.ndev > 0 ? g_cfg.ndev : 1) * SIM_VA_SPAN;
    /* Best effort: keep the host out of the device window, so that managed memory can be mapped
     * at deterministic addresses and a stray host dereference of a device pointer faults. */
#ifdef MAP_FIXED_NOREPLACE
    size_t len = (size_t)(g_va_window_end - SIM_VA_BASE);
    void *p = mmap((void *)(uintptr_t)SIM_VA_BASE, len, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == (void *)(uintptr_t)SIM_VA_BASE)
        g_va_reserved = 1;
    else if (p != MAP_FAILED)
        munmap(p, len);
#endif
}

static int in_window(uint64_t p) { return p >= SIM_VA_BASE && p < g_va_window_end; }

/* ---- allocation core (under g_lock) -------------------------------------------------------------- */
static struct sim_alloc *alloc_new(int kind, int dev, struct sim_ctx *c, uint64_t size)
{
    struct sim_alloc *a = calloc(1, sizeof *a);
    if (!a)
        abort();
    a->kind = kind;
    a->dev = dev;
    a->ctx = c;
    a->size = size;
    a->buffer_id = ++g_buffer_id;
    return a;
}

static CUresult place(struct sim_alloc *a, uint64_t align, uint64_t hint)
{
    uint64_t start;
    if (!va_find(a->dev, a->va_len, align, hint, &start))
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->start = start;
    return CUDA_SUCCESS;
}

static CUresult managed_back(struct sim_alloc *a)
{
    long pg = sysconf(_SC_PAGESIZE);
    a->host_len = round_up(a->size, (uint64_t)pg);
    if (g_va_reserved) {
        void *p = mmap((void *)(uintptr_t)a->start, a->host_len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        if (p == MAP_FAILED)
            return CUDA_ERROR_OUT_OF_MEMORY;
        a->host = p;
        return CUDA_SUCCESS;
    }
    void *p = mmap(NULL, a->host_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->host = p;
    a->start = (uint64_t)(uintptr_t)p; /* outside the window: the host address is the pointer */
    a->va_len = a->host_len;
    return CUDA_SUCCESS;
}

static void managed_unback(struct sim_alloc *a)
{
    if (!a->host)
        return;
    if (g_va_reserved && in_window((uint64_t)(uintptr_t)a->host))
        mmap(a->host, a->host_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    else
        munmap(a->host, a->host_len);
    a->host = NULL;
}

/* linear device or managed allocation charged to c's device */
static CUresult dev_alloc_locked(struct sim_ctx *c, uint64_t size, int kind, struct sim_alloc **out)
{
    uint64_t ch = charge_of(size);
    if ((int64_t)ch > dev_free_bytes(c->dev))
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct sim_alloc *a = alloc_new(kind, c->dev, c, size);
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t align = kind == AL_MANAGED ? (uint64_t)pg : 512;
    a->va_len = round_up(size, kind == AL_MANAGED ? (uint64_t)pg : (gran() > 512 ? gran() : 512));
    CUresult rc = CUDA_SUCCESS;
    if (kind == AL_MANAGED && !g_va_reserved)
        rc = managed_back(a);
    else {
        rc = place(a, align, 0);
        if (!rc && kind == AL_MANAGED)
            rc = managed_back(a);
    }
    if (rc) {
        free(a);
        return rc;
    }
    a->charged = ch;
    g_dev[c->dev].used += ch;
    t_insert(a);
    *out = a;
    return CUDA_SUCCESS;
}

CUresult mem_device_alloc(struct sim_ctx *c, size_t size, int kind, CUdeviceptr *out)
{
    struct sim_alloc *a;
    CUresult rc = dev_alloc_locked(c, size, kind, &a);
    if (!rc)
        *out = (CUdeviceptr)a->start;
    return rc;
}

static void pool_put(struct sim_pool *p, uint64_t charged);
static void vmm_unref(struct sim_vmm *h);

void mem_free_alloc(struct sim_alloc *a)
{
    t_erase(a);
    switch (a->kind) {
    case AL_POOL:
        pool_put(a->pool, a->charged);
        break;
    case AL_MANAGED:
        managed_unback(a);
        g_dev[a->dev].used -= a->charged;
        break;
    case AL_HOST:
        munmap(a->host, a->host_len);
        break;
    case AL_HOSTREG:
        break;
    case AL_RESERVE:
        while (a->maps) {
            struct sim_map *m = a->maps;
            a->maps = m->next;
            vmm_unref(m->h);
            free(m);
        }
        break;
    default:
        g_dev[a->dev].used -= a->charged;
        break;
    }
    free(a);
}

void mem_ctx_destroyed(struct sim_ctx *c)
{
    struct sim_alloc **v = NULL;
    size_t n = 0, cap = 0;
    t_collect(g_root, &v, &n, &cap);
    for (size_t i = 0; i < n; i++) {
        struct sim_alloc *a = v[i];
        if (a->ctx == c && (a->kind == AL_DEVICE || a->kind == AL_MANAGED || a->kind == AL_HOST ||
                            a->kind == AL_HOSTREG))
            mem_free_alloc(a);
    }
    free(v);
    void **arr;
    size_t na = handle_list(OBJ_ARRAY, &arr);
    for (size_t i = 0; i < na; i++)
        if (mem_array_ctx_is(arr[i], c))
            mem_array_free(arr[i]);
    free(arr);
    na = handle_list(OBJ_MIPARRAY, &arr);
    for (size_t i = 0; i < na; i++)
        if (mem_array_ctx_is(arr[i], c))
            mem_array_free(arr[i]);
    free(arr);
}

/* covered by mappings of a reservation? */
static int reserve_covers(struct sim_alloc *r, uint64_t p, uint64_t n)
{
    uint64_t cur = p, end = p + n;
    while (cur < end) {
        struct sim_map *m;
        for (m = r->maps; m; m = m->next)
            if (cur >= m->start && cur < m->start + m->size)
                break;
        if (!m)
            return 0;
        cur = m->start + m->size;
    }
    return 1;
}

CUresult mem_check_device_range(CUdeviceptr p, size_t n, int *host_ok)
{
    struct sim_alloc *a = t_containing((uint64_t)p);
    *host_ok = 0;
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t end = (uint64_t)p + (n ? n : 1);
    switch (a->kind) {
    case AL_RESERVE:
        return reserve_covers(a, p, n ? n : 1) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case AL_MANAGED:
    case AL_HOST:
    case AL_HOSTREG:
        *host_ok = 1;
        /* fallthrough */
    default:
        return end <= a->start + a->size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
}

int mem_kind_of(uint64_t p, int *host_ok)
{
    struct sim_alloc *a = t_containing(p);
    *host_ok = 0;
    if (a) {
        switch (a->kind) {
        case AL_MANAGED: *host_ok = 1; return GTSIM_MEM_MANAGED;
        case AL_HOST:
        case AL_HOSTREG: *host_ok = 1; return GTSIM_MEM_PINNED;
        default: return GTSIM_MEM_DEVICE;
        }
    }
    if (in_window(p))
        return GTSIM_MEM_DEVICE;
    *host_ok = 1;
    return GTSIM_MEM_PAGEABLE;
}

/* ---- linear allocations ------------------------------------------------------------------------- */
static CUresult mem_alloc(CUdeviceptr *dptr, size_t size, int kind)
{
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    sim_sleep_ns(g_cfg.alloc_latency_ns);
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    if (!rc)
        rc = mem_device_alloc(c, size, kind, dptr);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    SIM_API(cuMemAlloc_v2, mem_alloc(dptr, bytesize, AL_DEVICE));
}
SIM_EXPORT(cuMemAlloc_v2)

static CUresult mem_alloc_managed(CUdeviceptr *dptr, size_t size, unsigned flags)
{
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return mem_alloc(dptr, size, AL_MANAGED);
}
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    SIM_API(cuMemAllocManaged, mem_alloc_managed(dptr, bytesize, flags));
}
SIM_EXPORT(cuMemAllocManaged)

static CUresult mem_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned elem)
{
    if (!dptr || !pitch || !width || !height || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t p = (size_t)round_up(width, 512);
    CUresult rc = mem_alloc(dptr, p * height, AL_DEVICE);
    if (!rc)
        *pitch = p;
    return rc;
}
CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                    unsigned int ElementSizeBytes)
{
    SIM_API(cuMemAllocPitch_v2, mem_alloc_pitch(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes));
}
SIM_EXPORT(cuMemAllocPitch_v2)

static CUresult mem_free(CUdeviceptr p)
{
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    if (!rc) {
        struct sim_alloc *a = t_exact((uint64_t)p);
        if (!a || (a->kind != AL_DEVICE && a->kind != AL_MANAGED && a->kind != AL_POOL))
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            mem_free_alloc(a);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) { SIM_API(cuMemFree_v2, mem_free(dptr)); }
SIM_EXPORT(cuMemFree_v2)

static CUresult mem_get_info(size_t *fr, size_t *total)
{
    if (!fr || !total)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    if (!rc) {
        int64_t f = dev_free_bytes(c->dev);
        *fr = f > 0 ? (size_t)f : 0;
        *total = (size_t)g_dev[c->dev].capacity;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemGetInfo_v2(size_t *free, size_t *total) { SIM_API(cuMemGetInfo_v2, mem_get_info(free, total)); }
SIM_EXPORT(cuMemGetInfo_v2)

static CUresult mem_addr_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    if (!rc) {
        struct sim_alloc *a = t_containing((uint64_t)p);
        if (!a || a->kind == AL_HOST || a->kind == AL_HOSTREG)
            rc = CUDA_ERROR_NOT_FOUND;
        else {
            if (base)
                *base = (CUdeviceptr)a->start;
            if (size)
                *size = (size_t)a->size;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    SIM_API(cuMemGetAddressRange_v2, mem_addr_range(pbase, psize, dptr));
}
SIM_EXPORT(cuMemGetAddressRange_v2)

/* ---- pointer attributes ------------------------------------------------------------------------- */
static CUresult ptr_attr(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    struct sim_alloc *a = t_containing((uint64_t)p);
    if (!a) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    int host = a->kind == AL_HOST || a->kind == AL_HOSTREG;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = (CUcontext)a->ctx; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = p; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!host && a->kind != AL_MANAGED)
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            *(void **)data = (void *)(uintptr_t)p;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = a->buffer_id; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data = a->kind == AL_MANAGED; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = a->dev; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = (CUdeviceptr)a->start; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = (size_t)a->size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = 1; break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(CUmemoryPool *)data = a->kind == AL_POOL ? (CUmemoryPool)a->pool : NULL;
        break;
    default: rc = CUDA_ERROR_INVALID_VALUE; break;
    }
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    SIM_API(cuPointerGetAttribute, ptr_attr(data, attribute, ptr));
}
SIM_EXPORT(cuPointerGetAttribute)

/* ---- stream-ordered pools ----------------------------------------------------------------------- */
static void pool_trim(struct sim_pool *p, uint64_t keep)
{
    uint64_t nr = p->reserved < keep ? p->reserved : keep;
    if (nr < p->used)
        nr = p->used;
    g_dev[p->dev].used -= p->reserved - nr;
    p->reserved = nr;
}

static void pool_put(struct sim_pool *p, uint64_t charged)
{
    p->used -= charged;
    p->outstanding--;
    if (!p->alive && p->outstanding == 0) {
        pool_trim(p, 0);
        struct sim_pool **pp;
        for (pp = &g_pools; *pp; pp = &(*pp)->next)
            if (*pp == p) {
                *pp = p->next;
                break;
            }
        free(p);
    }
}

void mem_pools_release(int dev)
{
    for (struct sim_pool *p = g_pools; p; p = p->next)
        if (p->dev == dev && p->reserved > p->threshold)
            pool_trim(p, p->threshold);
}

static CUresult pool_take(struct sim_pool *p, uint64_t size, struct sim_ctx *c, CUdeviceptr *out)
{
    uint64_t ch = charge_of(size);
    uint64_t avail = p->reserved - p->used, need = ch > avail ? ch - avail : 0;
    if (need) {
        if (p->max_size && p->reserved + need > p->max_size)
            return CUDA_ERROR_OUT_OF_MEMORY;
        if ((int64_t)need > dev_free_bytes(p->dev))
            return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct sim_alloc *a = alloc_new(AL_POOL, p->dev, c, size);
    a->va_len = round_up(size, gran() > 512 ? gran() : 512);
    if (place(a, 512, 0)) {
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    p->reserved += need;
    g_dev[p->dev].used += need;
    p->used += ch;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
    if (p->used > p->used_high)
        p->used_high = p->used;
    p->outstanding++;
    a->pool = p;
    a->charged = ch;
    t_insert(a);
    *out = (CUdeviceptr)a->start;
    return CUDA_SUCCESS;
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUmemoryPool hpool, int use_pool, CUstream hs, int ptsz)
{
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    sim_sleep_ns(g_cfg.alloc_latency_ns);
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s;
    CUresult rc = stream_resolve(hs, ptsz, &s);
    struct sim_pool *p = NULL;
    if (!rc) {
        p = use_pool ? handle_get(hpool, OBJ_POOL) : g_dev[s->ctx->dev].current_pool;
        if (!p)
            rc = CUDA_ERROR_INVALID_VALUE;
    }
    if (!rc)
        rc = pool_take(p, size, s->ctx, dptr);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    SIM_API(cuMemAllocAsync, alloc_async(dptr, bytesize, NULL, 0, hStream, 0));
}
SIM_EXPORT(cuMemAllocAsync)
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    SIM_API(cuMemAllocAsync_ptsz, alloc_async(dptr, bytesize, NULL, 0, hStream, 1));
}
SIM_EXPORT(cuMemAllocAsync_ptsz)
CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    SIM_API(cuMemAllocFromPoolAsync, alloc_async(dptr, bytesize, pool, 1, hStream, 0));
}
SIM_EXPORT(cuMemAllocFromPoolAsync)
CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    SIM_API(cuMemAllocFromPoolAsync_ptsz, alloc_async(dptr, bytesize, pool, 1, hStream, 1));
}
SIM_EXPORT(cuMemAllocFromPoolAsync_ptsz)

static CUresult free_async(CUdeviceptr p, CUstream hs, int ptsz)
{
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s;
    CUresult rc = stream_resolve(hs, ptsz, &s);
    if (!rc) {
        struct sim_alloc *a = t_exact((uint64_t)p);
        if (!a || (a->kind != AL_POOL && a->kind != AL_DEVICE && a->kind != AL_MANAGED))
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            mem_free_alloc(a); /* the free takes effect at call time in this model */
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { SIM_API(cuMemFreeAsync, free_async(dptr, hStream, 0)); }
SIM_EXPORT(cuMemFreeAsync)
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    SIM_API(cuMemFreeAsync_ptsz, free_async(dptr, hStream, 1));
}
SIM_EXPORT(cuMemFreeAsync_ptsz)

static CUresult pool_create(CUmemoryPool *out, const CUmemPoolProps *props)
{
    if (!out || !props)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (dev_check(props->location.id))
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_pool *p = calloc(1, sizeof *p);
    if (!p)
        abort();
    p->dev = props->location.id;
    p->alive = 1;
    p->max_size = props->maxSize;
    p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    pthread_mutex_lock(&g_lock);
    p->next = g_pools;
    g_pools = p;
    handle_add(p, OBJ_POOL, p);
    pthread_mutex_unlock(&g_lock);
    *out = (CUmemoryPool)p;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    SIM_API(cuMemPoolCreate, pool_create(pool, poolProps));
}
SIM_EXPORT(cuMemPoolCreate)

static CUresult pool_destroy(CUmemoryPool h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_pool *p = handle_get(h, OBJ_POOL);
    CUresult rc = CUDA_SUCCESS;
    if (!p || p->is_default)
        rc = CUDA_ERROR_INVALID_VALUE;
    else {
        handle_del(h);
        if (g_dev[p->dev].current_pool == p)
            g_dev[p->dev].current_pool = g_dev[p->dev].default_pool;
        p->alive = 0;
        pool_trim(p, 0);
        if (p->outstanding == 0) {
            p->outstanding = 1;
            pool_put(p, 0); /* unlinks and frees */
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) { SIM_API(cuMemPoolDestroy, pool_destroy(pool)); }
SIM_EXPORT(cuMemPoolDestroy)

static CUresult pool_trim_to(CUmemoryPool h, size_t keep)
{
    pthread_mutex_lock(&g_lock);
    struct sim_pool *p = handle_get(h, OBJ_POOL);
    if (p)
        pool_trim(p, keep);
    pthread_mutex_unlock(&g_lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    SIM_API(cuMemPoolTrimTo, pool_trim_to(pool, minBytesToKeep));
}
SIM_EXPORT(cuMemPoolTrimTo)

static CUresult pool_attr(CUmemoryPool h, CUmemPool_attribute attr, void *value, int set)
{
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    struct sim_pool *p = handle_get(h, OBJ_POOL);
    if (!p) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: {
        int i = (int)attr - (int)CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES;
        if (set)
            p->reuse[i] = *(int *)value != 0;
        else
            *(int *)value = p->reuse[i];
        break;
    }
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        if (set)
            p->threshold = *(cuuint64_t *)value;
        else
            *(cuuint64_t *)value = p->threshold;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        if (set)
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            *(cuuint64_t *)value = p->reserved;
        break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        if (set)
            rc = CUDA_ERROR_INVALID_VALUE;
        else
            *(cuuint64_t *)value = p->used;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        if (set) {
            if (*(cuuint64_t *)value != 0)
                rc = CUDA_ERROR_INVALID_VALUE;
            else
                p->reserved_high = p->reserved;
        } else
            *(cuuint64_t *)value = p->reserved_high;
        break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (set) {
            if (*(cuuint64_t *)value != 0)
                rc = CUDA_ERROR_INVALID_VALUE;
            else
                p->used_high = p->used;
        } else
            *(cuuint64_t *)value = p->used_high;
        break;
    default:
        rc = CUDA_ERROR_INVALID_VALUE;
        break;
    }
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    SIM_API(cuMemPoolGetAttribute, pool_attr(pool, attr, value, 0));
}
SIM_EXPORT(cuMemPoolGetAttribute)
CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    SIM_API(cuMemPoolSetAttribute, pool_attr(pool, attr, value, 1));
}
SIM_EXPORT(cuMemPoolSetAttribute)

static CUresult pool_set_access(CUmemoryPool h, const CUmemAccessDesc *map, size_t count)
{
    if (count && !map)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_pool *p = handle_get(h, OBJ_POOL);
    pthread_mutex_unlock(&g_lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count)
{
    SIM_API(cuMemPoolSetAccess, pool_set_access(pool, map, count));
}
SIM_EXPORT(cuMemPoolSetAccess)

static CUresult pool_get_access(CUmemAccess_flags *flags, CUmemoryPool h, CUmemLocation *loc)
{
    if (!flags || !loc)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_pool *p = handle_get(h, OBJ_POOL);
    if (p)
        *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    pthread_mutex_unlock(&g_lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool, CUmemLocation *location)
{
    SIM_API(cuMemPoolGetAccess, pool_get_access(flags, memPool, location));
}
SIM_EXPORT(cuMemPoolGetAccess)

static CUresult dev_pool(CUmemoryPool *out, CUdevice dev, int dflt)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    *out = (CUmemoryPool)(dflt ? g_dev[dev].default_pool : g_dev[dev].current_pool);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    SIM_API(cuDeviceGetDefaultMemPool, dev_pool(pool_out, dev, 1));
}
SIM_EXPORT(cuDeviceGetDefaultMemPool)
CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev) { SIM_API(cuDeviceGetMemPool, dev_pool(pool, dev, 0)); }
SIM_EXPORT(cuDeviceGetMemPool)

static CUresult dev_set_pool(CUdevice dev, CUmemoryPool h)
{
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    struct sim_pool *p = handle_get(h, OBJ_POOL);
    CUresult rc = !p || p->dev != dev ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (!rc)
        g_dev[dev].current_pool = p;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) { SIM_API(cuDeviceSetMemPool, dev_set_pool(dev, pool)); }
SIM_EXPORT(cuDeviceSetMemPool)

/* ---- virtual memory management ------------------------------------------------------------------- */
static void vmm_unref_maps(struct sim_vmm *h)
{
    if (h->handle_refs == 0 && h->maps == 0) {
        g_dev[h->dev].used -= h->size;
        free(h);
    }
}

static void vmm_unref(struct sim_vmm *h)
{
    h->maps--;
    vmm_unref_maps(h);
}

static CUresult addr_reserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags)
{
    if (!ptr || size == 0 || size % SIM_VMM_GRAN || (align & (align - 1)) || flags > 1)
        return CUDA_ERROR_INVALID_VALUE;
    if (align < SIM_VMM_GRAN)
        align = SIM_VMM_GRAN;
    pthread_mutex_lock(&g_lock);
    struct sim_alloc *a = alloc_new(AL_RESERVE, 0, NULL, size);
    a->va_len = size;
    CUresult rc = place(a, align, (uint64_t)addr);
    if (rc) {
        free(a);
    } else {
        t_insert(a);
        *ptr = (CUdeviceptr)a->start;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags)
{
    SIM_API(cuMemAddressReserve, addr_reserve(ptr, size, alignment, addr, flags));
}
SIM_EXPORT(cuMemAddressReserve)

static CUresult addr_free(CUdeviceptr ptr, size_t size)
{
    pthread_mutex_lock(&g_lock);
    struct sim_alloc *a = t_exact((uint64_t)ptr);
    CUresult rc = CUDA_SUCCESS;
    if (!a || a->kind != AL_RESERVE || a->size != size || a->maps)
        rc = CUDA_ERROR_INVALID_VALUE; /* must match the reservation and be unmapped */
    else
        mem_free_alloc(a);
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) { SIM_API(cuMemAddressFree, addr_free(ptr, size)); }
SIM_EXPORT(cuMemAddressFree)

static CUresult vmm_create(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                           unsigned long long flags)
{
    if (!handle || !prop || size == 0 || size % SIM_VMM_GRAN || flags > CU_MEM_CREATE_USAGE_TILE_POOL)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (dev_check(prop->location.id))
        return CUDA_ERROR_INVALID_DEVICE;
    sim_sleep_ns(g_cfg.alloc_latency_ns);
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_SUCCESS;
    int dev = prop->location.id;
    if ((int64_t)size > dev_free_bytes(dev))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        struct sim_vmm *h = calloc(1, sizeof *h);
        if (!h)
            abort();
        h->dev = dev;
        h->size = size;
        h->handle_refs = 1;
        h->prop = *prop;
        g_dev[dev].used += size;
        handle_add(h, OBJ_VMM, h);
        *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                             unsigned long long flags)
{
    SIM_API(cuMemCreate, vmm_create(handle, size, prop, flags));
}
SIM_EXPORT(cuMemCreate)

static CUresult vmm_release(CUmemGenericAllocationHandle hh)
{
    pthread_mutex_lock(&g_lock);
    struct sim_vmm *h = handle_get((void *)(uintptr_t)hh, OBJ_VMM);
    if (h) {
        if (--h->handle_refs == 0)
            handle_del(h);
        vmm_unref_maps(h);
    }
    pthread_mutex_unlock(&g_lock);
    return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) { SIM_API(cuMemRelease, vmm_release(handle)); }
SIM_EXPORT(cuMemRelease)

static CUresult vmm_map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle hh,
                        unsigned long long flags)
{
    if (flags || size == 0 || size % SIM_VMM_GRAN || offset % SIM_VMM_GRAN || ptr % SIM_VMM_GRAN)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_SUCCESS;
    struct sim_vmm *h = handle_get((void *)(uintptr_t)hh, OBJ_VMM);
    struct sim_alloc *r = t_containing((uint64_t)ptr);
    if (!h || offset + size > h->size || !r || r->kind != AL_RESERVE || ptr + size > r->start + r->size) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    for (struct sim_map *m = r->maps; m; m = m->next)
        if (ptr < m->start + m->size && m->start < ptr + size) {
            rc = CUDA_ERROR_INVALID_VALUE;
            goto out;
        }
    struct sim_map *m = calloc(1, sizeof *m);
    if (!m)
        abort();
    m->start = ptr;
    m->size = size;
    m->h = h;
    m->next = r->maps;
    r->maps = m;
    h->maps++;
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags)
{
    SIM_API(cuMemMap, vmm_map(ptr, size, offset, handle, flags));
}
SIM_EXPORT(cuMemMap)

static CUresult vmm_unmap(CUdeviceptr ptr, size_t size)
{
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_SUCCESS;
    struct sim_alloc *r = t_containing((uint64_t)ptr);
    if (!r || r->kind != AL_RESERVE || !size || ptr + size > r->start + r->size) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    /* every mapping touched must lie wholly inside the range, and the range must be covered */
    if (!reserve_covers(r, ptr, size)) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    for (struct sim_map *m = r->maps; m; m = m->next)
        if (ptr < m->start + m->size && m->start < ptr + size &&
            (m->start < ptr || m->start + m->size > ptr + size)) {
            rc = CUDA_ERROR_INVALID_VALUE;
            goto out;
        }
    for (struct sim_map **mp = &r->maps; *mp;) {
        struct sim_map *m = *mp;
        if (m->start >= ptr && m->start + m->size <= ptr + size) {
            *mp = m->next;
            vmm_unref(m->h);
            free(m);
        } else
            mp = &m->next;
    }
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) { SIM_API(cuMemUnmap, vmm_unmap(ptr, size)); }
SIM_EXPORT(cuMemUnmap)

static CUresult vmm_set_access(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    if (!desc || !count || !size)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_alloc *r = t_containing((uint64_t)ptr);
    CUresult rc = r && r->kind == AL_RESERVE && reserve_covers(r, ptr, size) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; !rc && i < count; i++)
        if (desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE && dev_check(desc[i].location.id))
            rc = CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    SIM_API(cuMemSetAccess, vmm_set_access(ptr, size, desc, count));
}
SIM_EXPORT(cuMemSetAccess)

static CUresult vmm_gran(size_t *g, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags option)
{
    if (!g || !prop || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE && dev_check(prop->location.id))
        return CUDA_ERROR_INVALID_DEVICE;
    *g = SIM_VMM_GRAN;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option)
{
    SIM_API(cuMemGetAllocationGranularity, vmm_gran(granularity, prop, option));
}
SIM_EXPORT(cuMemGetAllocationGranularity)

static CUresult vmm_retain(CUmemGenericAllocationHandle *handle, void *addr)
{
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    struct sim_alloc *r = t_containing((uint64_t)(uintptr_t)addr);
    if (r && r->kind == AL_RESERVE)
        for (struct sim_map *m = r->maps; m; m = m->next)
            if ((uint64_t)(uintptr_t)addr >= m->start && (uint64_t)(uintptr_t)addr < m->start + m->size) {
                if (m->h->handle_refs++ == 0)
                    handle_add(m->h, OBJ_VMM, m->h);
                *handle = (CUmemGenericAllocationHandle)(uintptr_t)m->h;
                rc = CUDA_SUCCESS;
                break;
            }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    SIM_API(cuMemRetainAllocationHandle, vmm_retain(handle, addr));
}
SIM_EXPORT(cuMemRetainAllocationHandle)

static CUresult vmm_props(CUmemAllocationProp *prop, CUmemGenericAllocationHandle hh)
{
    if (!prop)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_vmm *h = handle_get((void *)(uintptr_t)hh, OBJ_VMM);
    if (h)
        *prop = h->prop;
    pthread_mutex_unlock(&g_lock);
    return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)
{
    SIM_API(cuMemGetAllocationPropertiesFromHandle, vmm_props(prop, handle));
}
SIM_EXPORT(cuMemGetAllocationPropertiesFromHandle)

/* ---- arrays --------------------------------------------------------------------------------------- */
struct sim_array {
    struct sim_ctx *ctx;
    int dev;
    int mip;
    unsigned levels;
    uint64_t bytes, charged;
    CUDA_ARRAY3D_DESCRIPTOR desc;
};

static int fmt_bytes(CUarray_format f, unsigned *channels)
{
    switch ((int)f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
    case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: *channels = 1; return 1;
    case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2: *channels = 2; return 1;
    case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4: *channels = 4; return 1;
    case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: *channels = 1; return 2;
    case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2: *channels = 2; return 2;
    case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: *channels = 4; return 2;
    default: return 0;
    }
}

uint64_t mem_array_bytes(void *h)
{
    struct sim_array *a = handle_get(h, OBJ_ARRAY);
    return a ? a->bytes : 0;
}

int mem_array_ctx_is(void *arr, struct sim_ctx *c) { return ((struct sim_array *)arr)->ctx == c; }

void mem_array_free(void *arr)
{
    struct sim_array *a = arr;
    handle_del(a);
    g_dev[a->dev].used -= a->charged;
    free(a);
}

static CUresult array_create(void **out, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels, int mip)
{
    if (!out || !d || !d->Width || (mip && !levels))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned ch = d->NumChannels;
    uint64_t eb = (uint64_t)fmt_bytes(d->Format, &ch);
    if (!eb)
        return CUDA_ERROR_NOT_SUPPORTED; /* packed/compressed formats are not modelled */
    if (ch != d->NumChannels || (ch != 1 && ch != 2 && ch != 4))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t total = 0;
    for (unsigned l = 0; l < (mip ? levels : 1); l++) {
        uint64_t w = d->Width >> l, h = d->Height >> l, z = d->Depth >> l;
        w = w ? w : 1;
        h = d->Height ? (h ? h : 1) : 1;
        z = d->Depth ? (z ? z : 1) : 1;
        total += w * h * z * eb * ch;
    }
    sim_sleep_ns(g_cfg.alloc_latency_ns);
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    uint64_t charged = charge_of(total);
    if (!rc && (int64_t)charged > dev_free_bytes(c->dev))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (!rc) {
        struct sim_array *a = calloc(1, sizeof *a);
        if (!a)
            abort();
        a->ctx = c;
        a->dev = c->dev;
        a->mip = mip;
        a->levels = levels;
        a->bytes = total;
        a->charged = charged;
        a->desc = *d;
        g_dev[c->dev].used += charged;
        handle_add(a, mip ? OBJ_MIPARRAY : OBJ_ARRAY, a);
        *out = a;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static CUresult array_create2d(CUarray *out, const CUDA_ARRAY_DESCRIPTOR *d)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = d->Width, .Height = d->Height, .Depth = 0,
                                  .Format = d->Format, .NumChannels = d->NumChannels, .Flags = 0};
    return array_create((void **)out, &d3, 1, 0);
}
CUresult CUDAAPI cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
    SIM_API(cuArrayCreate_v2, array_create2d(pHandle, pAllocateArray));
}
SIM_EXPORT(cuArrayCreate_v2)
CUresult CUDAAPI cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
    SIM_API(cuArray3DCreate_v2, array_create((void **)pHandle, pAllocateArray, 1, 0));
}
SIM_EXPORT(cuArray3DCreate_v2)
CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                        unsigned int numMipmapLevels)
{
    SIM_API(cuMipmappedArrayCreate, array_create((void **)pHandle, pMipmappedArrayDesc, numMipmapLevels, 1));
}
SIM_EXPORT(cuMipmappedArrayCreate)

static CUresult array_destroy(void *h, int type)
{
    pthread_mutex_lock(&g_lock);
    struct sim_array *a = handle_get(h, type);
    if (a)
        mem_array_free(a);
    pthread_mutex_unlock(&g_lock);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuArrayDestroy(CUarray hArray) { SIM_API(cuArrayDestroy, array_destroy(hArray, OBJ_ARRAY)); }
SIM_EXPORT(cuArrayDestroy)
CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
    SIM_API(cuMipmappedArrayDestroy, array_destroy(hMipmappedArray, OBJ_MIPARRAY));
}
SIM_EXPORT(cuMipmappedArrayDestroy)

static CUresult array_desc(void *out, CUarray h, int three)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_array *a = handle_get(h, OBJ_ARRAY);
    if (a) {
        if (three)
            *(CUDA_ARRAY3D_DESCRIPTOR *)out = a->desc;
        else {
            CUDA_ARRAY_DESCRIPTOR *d = out;
            d->Width = a->desc.Width;
            d->Height = a->desc.Height;
            d->Format = a->desc.Format;
            d->NumChannels = a->desc.NumChannels;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray)
{
    SIM_API(cuArrayGetDescriptor_v2, array_desc(pArrayDescriptor, hArray, 0));
}
SIM_EXPORT(cuArrayGetDescriptor_v2)
CUresult CUDAAPI cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray)
{
    SIM_API(cuArray3DGetDescriptor_v2, array_desc(pArrayDescriptor, hArray, 1));
}
SIM_EXPORT(cuArray3DGetDescriptor_v2)

/* ---- host memory (real host memory, not charged to the device) ---------------------------------------- */
static CUresult host_alloc(void **pp, size_t size, unsigned flags)
{
    if (!pp || !size || (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    if (!rc) {
        long pg = sysconf(_SC_PAGESIZE);
        size_t len = (size_t)round_up(size, (uint64_t)pg);
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else {
            struct sim_alloc *a = alloc_new(AL_HOST, c->dev, c, size);
            a->start = (uint64_t)(uintptr_t)p;
            a->va_len = len;
            a->host = p;
            a->host_len = len;
            a->host_flags = flags;
            t_insert(a);
            *pp = p;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    SIM_API(cuMemHostAlloc, host_alloc(pp, bytesize, Flags));
}
SIM_EXPORT(cuMemHostAlloc)
CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize) { SIM_API(cuMemAllocHost_v2, host_alloc(pp, bytesize, 0)); }
SIM_EXPORT(cuMemAllocHost_v2)

static CUresult host_free(void *p)
{
    pthread_mutex_lock(&g_lock);
    struct sim_alloc *a = t_exact((uint64_t)(uintptr_t)p);
    CUresult rc = a && a->kind == AL_HOST ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (!rc)
        mem_free_alloc(a);
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemFreeHost(void *p) { SIM_API(cuMemFreeHost, host_free(p)); }
SIM_EXPORT(cuMemFreeHost)

static CUresult host_get_dptr(CUdeviceptr *pd, void *p, unsigned flags)
{
    if (!pd || flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_alloc *a = t_containing((uint64_t)(uintptr_t)p);
    CUresult rc = a && (a->kind == AL_HOST || a->kind == AL_HOSTREG) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (!rc)
        *pd = (CUdeviceptr)(uintptr_t)p;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    SIM_API(cuMemHostGetDevicePointer_v2, host_get_dptr(pdptr, p, Flags));
}
SIM_EXPORT(cuMemHostGetDevicePointer_v2)

static CUresult host_get_flags(unsigned *flags, void *p)
{
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_alloc *a = t_containing((uint64_t)(uintptr_t)p);
    CUresult rc = a && (a->kind == AL_HOST || a->kind == AL_HOSTREG) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (!rc)
        *flags = a->host_flags;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p) { SIM_API(cuMemHostGetFlags, host_get_flags(pFlags, p)); }
SIM_EXPORT(cuMemHostGetFlags)

static CUresult host_register(void *p, size_t size, unsigned flags)
{
    if (!p || !size || (flags & ~0xfu))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    uint64_t s = (uint64_t)(uintptr_t)p;
    if (!rc && !va_free_at(s, size))
        rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    if (!rc) {
        struct sim_alloc *a = alloc_new(AL_HOSTREG, c->dev, c, size);
        a->start = s;
        a->va_len = size;
        a->host = p;
        a->host_flags = flags;
        t_insert(a);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    SIM_API(cuMemHostRegister_v2, host_register(p, bytesize, Flags));
}
SIM_EXPORT(cuMemHostRegister_v2)

static CUresult host_unregister(void *p)
{
    pthread_mutex_lock(&g_lock);
    struct sim_alloc *a = t_exact((uint64_t)(uintptr_t)p);
    CUresult rc = a && a->kind == AL_HOSTREG ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    if (!rc)
        mem_free_alloc(a);
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuMemHostUnregister(void *p) { SIM_API(cuMemHostUnregister, host_unregister(p)); }
SIM_EXPORT(cuMemHostUnregister)

/* module globals: allocated at module load, freed at unload */
CUresult mem_global_alloc(struct sim_ctx *c, size_t size, void **handle, CUdeviceptr *out)
{
    struct sim_alloc *a;
    CUresult rc = dev_alloc_locked(c, size ? size : 1, AL_GLOBAL, &a);
    if (!rc) {
        *handle = a;
        *out = (CUdeviceptr)a->start;
    }
    return rc;
}
