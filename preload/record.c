/* Record builders used by the hooks. Each writes one fixed-size record into the calling thread's
 * buffer; the only driver calls made here are cheap queries through the real entry points. */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include <cuda.h>

#include "hooks.h"
#include "shim.h"

typedef CUresult (*ctx_get_current_fn)(CUcontext *);
typedef CUresult (*mem_get_info_fn)(size_t *, size_t *);
typedef CUresult (*func_get_name_fn)(const char **, CUfunction);
typedef CUresult (*kernel_get_name_fn)(const char **, CUkernel);

static uint64_t current_ctx(void)
{
    ctx_get_current_fn f = (ctx_get_current_fn)gt_helper_fn(GT_H_CtxGetCurrent);
    CUcontext c = NULL;
    if (f && f(&c) == CUDA_SUCCESS) return (uint64_t)(uintptr_t)c;
    return 0;
}

#define RESERVE(t, var, type)                                                                      \
    type *var = gt_reserve(t, sizeof(type));                                                       \
    if (!var) return;                                                                              \
    memset(var, 0, sizeof(type))

static inline uint32_t sat32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* t0: the clock just before the call was forwarded; ts (after it returned) - t0 is dur_ns. The
 * record is always written whole (72 bytes): dur_ns is known for every call, so the 64-byte form
 * older writers used for events without a stack is gone. */
void gt_rec_alloc(struct gt_thread *t, unsigned api, uint64_t t0, uint64_t addr, uint64_t size,
                  uint64_t stream, uint64_t aux, uint32_t flags, int device)
{
    uint64_t ts = gt_now();
    uint64_t ctx = current_ctx();
    uint32_t stack = gt_stack(t, GT_STK_ALLOC);
    RESERVE(t, r, struct gt_rec_alloc);
    r->ts = ts;
    r->dur_ns = sat32(ts - t0);
    r->addr = addr;
    r->size = size;
    r->stream = stream;
    r->ctx = ctx;
    r->aux = aux;
    r->device = device;
    r->flags = flags;
    r->stack = stack;
    gt_commit(t, r, GT_REC_ALLOC, (uint16_t)api, sizeof(*r), ts);
    gt_torch_poke();
    gt_torch_poll(t);
}

/* The OOM evidence: what the driver said was free right after the failure. */
void gt_rec_alloc_fail(struct gt_thread *t, unsigned api, uint64_t t0, uint64_t size,
                       uint64_t stream, int result)
{
    uint64_t ts = gt_now();
    size_t fr = 0, total = 0;
    mem_get_info_fn mi = (mem_get_info_fn)gt_helper_fn(GT_H_MemGetInfo);
    if (!mi || mi(&fr, &total) != CUDA_SUCCESS) fr = total = 0;
    uint64_t ctx = current_ctx();
    int device = gt_current_device();
    uint32_t stack = gt_stack(t, GT_STK_ALLOC);
    RESERVE(t, r, struct gt_rec_alloc_fail);
    r->ts = ts;
    r->dur_ns = sat32(ts - t0);
    r->size = size;
    r->stream = stream;
    r->ctx = ctx;
    r->free_bytes = fr;
    r->total_bytes = total;
    r->device = device;
    r->result = result;
    r->stack = stack;
    gt_commit(t, r, GT_REC_ALLOC_FAIL, (uint16_t)api, sizeof(*r), ts);
    if (fr || total) gt_meminfo_after_fail(t, device, fr, total);
}

/* ts: the clock before the call was forwarded (the record's time); the call's end is read here. */
void gt_rec_free(struct gt_thread *t, unsigned api, uint64_t ts, uint64_t addr, uint64_t stream,
                 uint64_t size, int result)
{
    uint64_t t1 = gt_now();
    uint32_t stack = gt_stack(t, GT_STK_FREE);
    RESERVE(t, r, struct gt_rec_free);
    r->ts = ts;
    r->addr = addr;
    r->stream = stream;
    r->size = size;
    r->result = result;
    r->stack = stack;
    r->dur_ns = sat32(t1 - ts);
    gt_commit(t, r, GT_REC_FREE, (uint16_t)api, sizeof(*r), ts);
}

void gt_rec_span(struct gt_thread *t, unsigned api, uint64_t t0, uint64_t t1, uint64_t object,
                 uint64_t bytes, int result)
{
    uint32_t stack = gt_stack(t, GT_STK_SYNC);
    RESERVE(t, r, struct gt_rec_span);
    r->ts_enter = t0;
    r->ts_exit = t1;
    r->object = object;
    r->bytes = bytes;
    r->result = result;
    r->stack = stack;
    gt_commit(t, r, GT_REC_SPAN, (uint16_t)api, sizeof(*r), t0);
    gt_torch_poll(t);
}

void gt_rec_object(struct gt_thread *t, unsigned api, uint64_t ts, uint64_t handle, uint64_t aux,
                   int device, int result)
{
    RESERVE(t, r, struct gt_rec_object);
    r->ts = ts;
    r->handle = handle;
    r->aux = aux;
    r->device = device;
    r->result = result;
    gt_commit(t, r, GT_REC_OBJECT, (uint16_t)api, sizeof(*r), ts);
}

CUresult gt_object_end(struct gt_thread *t, unsigned api, uint64_t ts, CUresult r,
                       uint64_t handle, uint64_t aux, int device)
{
    int saved = errno;
    gt_rec_object(t, api, ts, handle, aux, device, r);
    gt_leave(t);
    errno = saved;
    return r;
}

/* ---- kernel names: one GT_REC_FUNC per handle, process-wide ----------------------------------- */

_Atomic uintptr_t gt_func_set[1u << GT_FUNC_SET_BITS];

/* 1 if this is the first time anyone sees handle h (lock-free insert into a fixed set). When the
 * set is crowded the name is simply written again; the reader keeps one per handle. */
static int func_first_sighting(uintptr_t h)
{
    uint32_t mask = (1u << GT_FUNC_SET_BITS) - 1;
    uint32_t i = gt_func_slot(h);
    for (int probe = 0; probe < 32; probe++, i = (i + 1) & mask) {
        uintptr_t cur = atomic_load_explicit(&gt_func_set[i], memory_order_relaxed);
        if (cur == h) return 0;
        if (cur == 0) {
            uintptr_t expected = 0;
            if (atomic_compare_exchange_strong(&gt_func_set[i], &expected, h)) return 1;
            if (expected == h) return 0;
        }
    }
    return 1;
}

void gt_note_func(struct gt_thread *t, uint64_t handle, uint64_t ts)
{
    t->named_func = handle; /* named now, or by someone before (or not a function: 0) */
    if (!handle || !func_first_sighting((uintptr_t)handle)) return;
    func_get_name_fn fn = (func_get_name_fn)gt_helper_fn(GT_H_FuncGetName);
    kernel_get_name_fn kn = (kernel_get_name_fn)gt_helper_fn(GT_H_KernelGetName);
    const char *name = NULL;
    uint32_t kind = GT_FUNC_UNKNOWN;
    /* A launch may pass a CUkernel cast to CUfunction; ask both ways. */
    if (fn && fn(&name, (CUfunction)(uintptr_t)handle) == CUDA_SUCCESS && name)
        kind = GT_FUNC_FUNCTION;
    else if (kn && kn(&name, (CUkernel)(uintptr_t)handle) == CUDA_SUCCESS && name)
        kind = GT_FUNC_KERNEL;
    else
        name = "";
    struct gt_rec_func r = {.ts = ts, .handle = handle, .kind = kind};
    r.name_len = (uint32_t)strnlen(name, GT_MAX_NAME_BYTES);
    gt_emit_named(t, GT_REC_FUNC, 0, &r, sizeof(r), name, r.name_len);
}

void gt_launch_func_slow(struct gt_thread *t, uint64_t func, uint64_t t0)
{
    if (atomic_load_explicit(&gt_func_set[gt_func_slot(func)], memory_order_relaxed) == func) {
        t->named_func = func; /* named before, found in its first slot */
        return;
    }
    int e = errno; /* asks the driver for the name */
    gt_note_func(t, func, t0);
    errno = e;
}

/* ---- resolver lookups and driver facts --------------------------------------------------------- */

void gt_rec_resolve(unsigned how, const char *name, int version, uint64_t flags, unsigned api,
                    unsigned status)
{
    struct gt_thread *t = gt_enter();
    if (!t) return;
    struct gt_rec_resolve r = {.ts = gt_now(), .version = version, .flags = (uint32_t)flags};
    r.api = (uint16_t)api;
    r.status = (uint16_t)status;
    r.name_len = (uint32_t)strnlen(name, 1024);
    gt_emit_named(t, GT_REC_RESOLVE, (uint16_t)how, &r, sizeof(r), name, r.name_len);
    gt_leave(t);
}

typedef CUresult (*drv_ver_fn)(int *);
typedef CUresult (*dev_count_fn)(int *);
typedef CUresult (*dev_get_fn)(CUdevice *, int);
typedef CUresult (*dev_name_fn)(char *, int, CUdevice);
typedef CUresult (*dev_mem_fn)(size_t *, CUdevice);
typedef CUresult (*dev_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*dev_uuid_fn)(CUuuid *, CUdevice);

static void emit_device(struct gt_thread *t, int ordinal)
{
    dev_get_fn get = (dev_get_fn)gt_helper_fn(GT_H_DeviceGet);
    dev_name_fn name_fn = (dev_name_fn)gt_helper_fn(GT_H_DeviceGetName);
    dev_mem_fn mem = (dev_mem_fn)gt_helper_fn(GT_H_DeviceTotalMem);
    dev_attr_fn attr = (dev_attr_fn)gt_helper_fn(GT_H_DeviceGetAttribute);
    dev_uuid_fn uuid = (dev_uuid_fn)gt_helper_fn(GT_H_DeviceGetUuid);
    CUdevice dev = ordinal;
    char name[256] = "";
    size_t total = 0;
    CUuuid u;
    memset(&u, 0, sizeof(u));
    struct gt_rec_device r = {.ts = gt_now(), .ordinal = ordinal, .cc_major = -1, .cc_minor = -1};
    if (get && get(&dev, ordinal) != CUDA_SUCCESS) dev = ordinal;
    if (name_fn && name_fn(name, sizeof(name) - 1, dev) != CUDA_SUCCESS) name[0] = 0;
    if (mem && mem(&total, dev) == CUDA_SUCCESS) r.total_bytes = total;
    if (attr) {
        attr(&r.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        attr(&r.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    }
    if (uuid && uuid(&u, dev) == CUDA_SUCCESS) {
        memcpy(r.uuid, u.bytes, 16);
        gt_nvml_device(ordinal, r.uuid);
    }
    name[sizeof(name) - 1] = 0;
    r.name_len = (uint32_t)strlen(name);
    gt_emit_named(t, GT_REC_DEVICE, 0, &r, sizeof(r), name, r.name_len);
}

static atomic_int driver_info_done;

void gt_rec_forget(void)
{
    memset((void *)gt_func_set, 0, sizeof(gt_func_set));
    atomic_store(&driver_info_done, 0);
}

/* After the first successful cuInit: driver version and every device, once per process. */
void gt_rec_driver_info(struct gt_thread *t)
{
    atomic_int *done = &driver_info_done;
    if (atomic_exchange(done, 1)) return;
    drv_ver_fn ver = (drv_ver_fn)gt_helper_fn(GT_H_DriverGetVersion);
    dev_count_fn count = (dev_count_fn)gt_helper_fn(GT_H_DeviceGetCount);
    struct gt_rec_driver *r = gt_reserve(t, sizeof(*r));
    int n = 0;
    if (r) {
        memset(r, 0, sizeof(*r));
        r->ts = gt_now();
        if (!ver || ver(&r->driver_version) != CUDA_SUCCESS) r->driver_version = 0;
        if (!count || count(&n) != CUDA_SUCCESS) n = 0;
        r->device_count = n;
        gt_commit(t, r, GT_REC_DRIVER, 0, sizeof(*r), r->ts);
    }
    for (int i = 0; i < n && i < 1024; i++) emit_device(t, i);
}
