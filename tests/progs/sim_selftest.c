/* Self-test of the simulated CUDA driver (tests/sim), run directly against it without any shim.
 * Prints one line per check ("ok ..." / "FAIL ...") and exits 1 if any check failed.
 * Usage: sim_selftest            all checks (re-executes itself for the GTSIM_DISTINCT_POINTERS part)
 *        sim_selftest distinct   only the distinct-pointer checks (expects GTSIM_DISTINCT_POINTERS=1) */
#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../sim/gtsim.h"

static int failures, checks;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s ", ok ? "ok  " : "FAIL");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    checks++;
    if (!ok)
        failures++;
}

#define RC(call, want)                                                                    \
    do {                                                                                  \
        CUresult r_ = (call);                                                             \
        check(r_ == (want), "%s -> %d (want %d)", #call, (int)r_, (int)(want));           \
    } while (0)
#define MUST(call)                                                                        \
    do {                                                                                  \
        CUresult r_ = (call);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                         \
            printf("FAIL %s -> %d (setup step; giving up)\n", #call, (int)r_);           \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void *g_lib; /* dlopen handle of the simulated libcuda */

static size_t mem_free_now(void)
{
    size_t fr = 0, tot = 0;
    MUST(cuMemGetInfo(&fr, &tot));
    return fr;
}

/* ---- resolver -------------------------------------------------------------------------------- */
struct rcase {
    const char *sym;
    int ver;
    unsigned flags;
    const char *want; /* export name, NULL for no pointer */
    int status;
    CUresult rc;
};

static void resolver_checks(void)
{
    static const struct rcase cases[] = {
        {"cuMemAlloc", 2000, 0, "cuMemAlloc", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuMemAlloc", 3019, 0, "cuMemAlloc", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuMemAlloc", 13000, 2, "cuMemAlloc_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxCreate", 2000, 0, "cuCtxCreate", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxCreate", 3020, 0, "cuCtxCreate_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxCreate", 11040, 0, "cuCtxCreate_v3", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxCreate", 12049, 0, "cuCtxCreate_v3", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxCreate", 12050, 0, "cuCtxCreate_v4", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxCreate", 1000, 0, NULL, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, CUDA_SUCCESS},
        {"cuLaunchKernel", 4000, 0, "cuLaunchKernel", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuLaunchKernel", 7000, 0, "cuLaunchKernel", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuLaunchKernel", 7000, 1, "cuLaunchKernel", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuLaunchKernel", 6050, 2, "cuLaunchKernel", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuLaunchKernel", 7000, 2, "cuLaunchKernel_ptsz", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuLaunchKernel", 3990, 2, NULL, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, CUDA_SUCCESS},
        {"cuMemcpyHtoD", 2000, 2, "cuMemcpyHtoD", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuMemcpyHtoD", 3020, 2, "cuMemcpyHtoD_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuMemcpyHtoD", 7000, 2, "cuMemcpyHtoD_v2_ptds", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuMemcpyHtoD", 7000, 0, "cuMemcpyHtoD_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxGetDevice", 12090, 0, "cuCtxGetDevice", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuGraphInstantiate", 10000, 0, "cuGraphInstantiate", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuGraphInstantiate", 11000, 0, "cuGraphInstantiate_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuGraphLaunch", 10000, 2, "cuGraphLaunch_ptsz", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuMemAllocAsync", 11020, 2, "cuMemAllocAsync_ptsz", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuMemAllocAsync", 11010, 0, NULL, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, CUDA_SUCCESS},
        {"cuLaunchKernelEx", 11060, 2, "cuLaunchKernelEx_ptsz", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuStreamGetCaptureInfo", 11030, 2, "cuStreamGetCaptureInfo_v2_ptsz", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuGetProcAddress", 11030, 0, "cuGetProcAddress", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"cuProfilerStart", 4000, 0, "cuProfilerStart", CU_GET_PROC_ADDRESS_SUCCESS, CUDA_SUCCESS},
        {"", 0, 0, NULL, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, CUDA_SUCCESS},
        {"cuNoSuchFunction", 12000, 0, NULL, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, CUDA_SUCCESS},
        {"cuMemAlloc_v2", 12000, 0, NULL, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, CUDA_SUCCESS},
        {"cuInit", 13010, 0, NULL, -1, CUDA_ERROR_INVALID_VALUE},
        {"cuInit", 13000, 4, NULL, -1, CUDA_ERROR_INVALID_VALUE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct rcase *c = &cases[i];
        void *p = (void *)1;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)77;
        CUresult rc = cuGetProcAddress_v2(c->sym, &p, c->ver, c->flags, &st);
        void *want = c->want ? dlsym(g_lib, c->want) : NULL;
        int ok = rc == c->rc && p == want && (c->status < 0 || (int)st == c->status) && (!c->want || want);
        check(ok, "getproc2 \"%s\"@%d flags=%u -> %s rc=%d status=%d (want %s rc=%d status=%d)", c->sym, c->ver,
              c->flags, p == want ? (c->want ? c->want : "NULL") : "other", (int)rc, (int)st,
              c->want ? c->want : "NULL", (int)c->rc, c->status);
        /* the 4-argument ABI gives the same answers */
        typedef CUresult (*getproc1_t)(const char *, void **, int, cuuint64_t);
        getproc1_t gp1 = (getproc1_t)dlsym(g_lib, "cuGetProcAddress");
        void *p1 = (void *)1;
        CUresult rc1 = gp1(c->sym, &p1, c->ver, c->flags);
        check(rc1 == c->rc && p1 == want, "getproc1 \"%s\"@%d flags=%u agrees", c->sym, c->ver, c->flags);
    }
    void *p;
    RC(cuGetProcAddress_v2("cuInit", NULL, 2000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    RC(cuGetProcAddress_v2("cuInit", &p, 2000, 0, NULL), CUDA_SUCCESS); /* symbolStatus may be NULL */

    /* self-lookup, then resolve through the returned resolver as cudart does */
    PFN_cuGetProcAddress_v12000 gp2 = NULL;
    MUST(cuGetProcAddress_v2("cuGetProcAddress", (void **)&gp2, 12000, 0, NULL));
    PFN_cuMemAlloc_v3020 ma = NULL;
    CUdriverProcAddressQueryResult st;
    RC(gp2("cuMemAlloc", (void **)&ma, 12000, 0, &st), CUDA_SUCCESS);
    check(ma == dlsym(g_lib, "cuMemAlloc_v2") && st == CU_GET_PROC_ADDRESS_SUCCESS,
          "second-stage resolver resolves cuMemAlloc@12000 to cuMemAlloc_v2");

    /* every export: the resolver's internal pointer is the dlsym address (no GTSIM_DISTINCT_POINTERS) */
    int all = 1, n = 0, impl = 0;
    for (int i = 0; gtsim_export_name(i); i++, n++) {
        const char *e = gtsim_export_name(i);
        if (dlsym(g_lib, e) != gtsim_internal_pointer(e)) {
            printf("     mismatch for %s\n", e);
            all = 0;
        }
        impl += gtsim_export_implemented(e) == 1;
    }
    check(all && n == 637, "all %d exports: resolver pointer == dlsym address (%d implemented)", n, impl);
}

/* ---- the GTSIM_DISTINCT_POINTERS child ------------------------------------------------------------ */
static int distinct_checks(void)
{
    g_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    check(g_lib != NULL, "libcuda.so.1 is loaded");
    PFN_cuDriverGetVersion_v2020 dv = NULL;
    MUST(cuGetProcAddress_v2("cuDriverGetVersion", (void **)&dv, 13000, 0, NULL));
    check(dv && (void *)dv != dlsym(g_lib, "cuDriverGetVersion"), "distinct: resolver pointer differs from dlsym");
    unsigned long before = gtsim_call_count("cuDriverGetVersion");
    int v = 0;
    RC(dv(&v), CUDA_SUCCESS);
    check(v == 13000 && gtsim_call_count("cuDriverGetVersion") == before + 1,
          "distinct: internal pointer behaves like the export (version %d, counted)", v);
    PFN_cuGetProcAddress_v12000 gp2 = NULL;
    MUST(cuGetProcAddress_v2("cuGetProcAddress", (void **)&gp2, 12000, 0, NULL));
    check((void *)gp2 != dlsym(g_lib, "cuGetProcAddress_v2"), "distinct: self-lookup returns an internal resolver");
    void *p = NULL;
    RC(gp2("cuLaunchKernel", &p, 7000, 2, NULL), CUDA_SUCCESS);
    check(p && p != dlsym(g_lib, "cuLaunchKernel_ptsz") && p == gtsim_internal_pointer("cuLaunchKernel_ptsz"),
          "distinct: cuLaunchKernel@7000/ptsz is the internal _ptsz pointer");
    printf("distinct: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}

static void run_distinct_child(const char *self)
{
    pid_t pid = fork();
    if (pid == 0) {
        setenv("GTSIM_DISTINCT_POINTERS", "1", 1);
        execl(self, self, "distinct", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "GTSIM_DISTINCT_POINTERS=1 child passed");
}

/* ---- API callback ------------------------------------------------------------------------------ */
static atomic_uint g_cb_enter, g_cb_exit, g_last_launch_corr;
static void api_cb(int enter, const char *api, unsigned corr, void *arg)
{
    (void)arg;
    if (enter) {
        atomic_fetch_add(&g_cb_enter, 1);
        if (!strcmp(api, "cuLaunchKernel"))
            atomic_store(&g_last_launch_corr, corr);
    } else
        atomic_fetch_add(&g_cb_exit, 1);
}

/* ---- host function --------------------------------------------------------------------------- */
static atomic_ullong g_hostfn_ran_at;
static pthread_t g_main_thread;
static atomic_int g_hostfn_other_thread;
static void host_fn(void *arg)
{
    (void)arg;
    atomic_store(&g_hostfn_other_thread, !pthread_equal(pthread_self(), g_main_thread));
    atomic_store(&g_hostfn_ran_at, gtsim_now_ns());
}

/* ---- threads ------------------------------------------------------------------------------------ */
static CUcontext g_ctx;
static atomic_int g_thread_errors;
static void *alloc_thread(void *arg)
{
    (void)arg;
    if (cuCtxSetCurrent(g_ctx) != CUDA_SUCCESS) {
        atomic_fetch_add(&g_thread_errors, 1);
        return NULL;
    }
    enum { N = 10000 };
    CUdeviceptr *p = malloc(N * sizeof *p);
    for (int i = 0; i < N; i++)
        if (cuMemAlloc(&p[i], 1000 + (size_t)i % 3000) != CUDA_SUCCESS || (p[i] & 511))
            atomic_fetch_add(&g_thread_errors, 1);
    for (int i = 0; i < N; i++)
        if (cuMemFree(p[i]) != CUDA_SUCCESS)
            atomic_fetch_add(&g_thread_errors, 1);
    free(p);
    return NULL;
}

static const char *MODULE_TEXT =
    "# gtsim module\n"
    "kernel k_a 20000000\n"
    "kernel k_b 30000000\n"
    "kernel k_long 100000000\n"
    "kernel k_default\n"
    "global g_table 4096\n";

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && !strcmp(argv[1], "distinct"))
        return distinct_checks();

    const uint64_t MiB = 1ull << 20, CAP = 1024 * MiB, OTHER = 100 * MiB, OVH = 10 * MiB;
    setenv("GTSIM_MEM_BYTES", "1G", 1);
    setenv("GTSIM_OTHER_BYTES", "100M", 1);
    setenv("GTSIM_CTX_OVERHEAD_BYTES", "10M", 1);
    setenv("GTSIM_DEVICES", "2", 1);
    setenv("GTSIM_LOG", "sim.log", 1);
    unlink("sim.log");
    g_main_thread = pthread_self();

    /* ---- before cuInit ---- */
    int count = -1, ver = 0;
    RC(cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
    RC(cuDriverGetVersion(&ver), CUDA_SUCCESS);
    check(ver == 13000, "driver version %d", ver);
    void *p0 = NULL;
    RC(cuGetProcAddress_v2("cuInit", &p0, 2000, 0, NULL), CUDA_SUCCESS); /* works before cuInit */
    RC(cuInit(1), CUDA_ERROR_INVALID_VALUE);
    RC(cuInit(0), CUDA_SUCCESS);

    g_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    check(g_lib != NULL, "libcuda.so.1 is the loaded driver");

    /* ---- devices ---- */
    RC(cuDeviceGetCount(&count), CUDA_SUCCESS);
    check(count == 2, "GTSIM_DEVICES=2 -> %d devices", count);
    CUdevice dev;
    RC(cuDeviceGet(&dev, 5), CUDA_ERROR_INVALID_DEVICE);
    MUST(cuDeviceGet(&dev, 0));
    char name[64];
    MUST(cuDeviceGetName(name, sizeof name, dev));
    check(!strcmp(name, "gputrace simulated GPU"), "device name \"%s\"", name);
    size_t total = 0;
    MUST(cuDeviceTotalMem(&total, dev));
    check(total == CAP, "cuDeviceTotalMem = %zu", total);
    int major = 0, minor = -1, sms = 0, a = 0;
    MUST(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    MUST(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    MUST(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    check(major == 9 && minor == 0 && sms > 0, "compute capability %d.%d, %d SMs", major, minor, sms);
    RC(cuDeviceGetAttribute(&a, (CUdevice_attribute)100000, dev), CUDA_ERROR_INVALID_VALUE);
    RC(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7), CUDA_ERROR_INVALID_DEVICE);
    CUuuid u1, u2;
    typedef CUresult (*uuid_t_)(CUuuid *, CUdevice);
    MUST(((uuid_t_)dlsym(g_lib, "cuDeviceGetUuid"))(&u1, dev));
    MUST(cuDeviceGetUuid_v2(&u2, dev));
    check(!memcmp(&u1, &u2, sizeof u1), "cuDeviceGetUuid and _v2 agree");

    /* ---- errors ---- */
    const char *s = NULL;
    MUST(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s));
    check(s && !strcmp(s, "out of memory"), "cuGetErrorString(2) = \"%s\"", s ? s : "");
    MUST(cuGetErrorName(CUDA_ERROR_INVALID_HANDLE, &s));
    check(s && !strcmp(s, "CUDA_ERROR_INVALID_HANDLE"), "cuGetErrorName(400) = %s", s ? s : "");
    RC(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    const void *tbl = (void *)1;
    CUuuid id = {{0}};
    check(cuGetExportTable(&tbl, &id) != CUDA_SUCCESS, "cuGetExportTable refuses");

    /* ---- resolver ---- */
    resolver_checks();

    /* ---- contexts ---- */
    CUdeviceptr dp = 0;
    RC(cuMemAlloc(&dp, 4096), CUDA_ERROR_INVALID_CONTEXT);
    size_t fr, tt;
    RC(cuMemGetInfo(&fr, &tt), CUDA_ERROR_INVALID_CONTEXT);
    CUcontext ctx = NULL, cur = NULL;
    MUST(cuCtxCreate_v4(&ctx, NULL, 0, dev));
    g_ctx = ctx;
    MUST(cuCtxGetCurrent(&cur));
    check(cur == ctx, "cuCtxCreate_v4 makes the context current");
    CUdevice d2 = -1;
    MUST(cuCtxGetDevice_v2(&d2, ctx));
    check(d2 == 0, "cuCtxGetDevice_v2(ctx) = %d", d2);
    RC(cuCtxGetDevice_v2(&d2, (CUcontext)0x1234), CUDA_ERROR_INVALID_CONTEXT);
    RC(cuCtxCreate(&cur, NULL, 0x1000, dev), CUDA_ERROR_INVALID_VALUE);

    /* ---- exact memory accounting ---- */
    fr = mem_free_now();
    check(fr == CAP - OTHER - OVH, "free after one context = capacity - other - overhead (%zu)", fr);
    MUST(cuMemAlloc(&dp, 1000));
    check(mem_free_now() == fr - 1024 && dp % 512 == 0, "1000-byte allocation costs 1024 bytes, aligned to 512");
    CUdeviceptr dp2 = 0;
    MUST(cuMemAlloc(&dp2, 512));
    check(dp2 != dp && (dp2 >= dp + 1000 || dp2 + 512 <= dp), "distinct, non-overlapping addresses");
    size_t before = mem_free_now();
    CUdeviceptr big = 0;
    RC(cuMemAlloc(&big, before + 1), CUDA_ERROR_OUT_OF_MEMORY);
    check(mem_free_now() == before, "failed allocation allocates nothing");
    MUST(cuMemAlloc(&big, before - 512 * 4)); /* leaves exactly 2048 bytes */
    check(mem_free_now() == 2048, "free is exactly 2048 after filling");
    CUdeviceptr small = 0;
    RC(cuMemAlloc(&small, 4096), CUDA_ERROR_OUT_OF_MEMORY);
    MUST(cuMemFree(big));
    RC(cuMemAlloc(&small, 4096), CUDA_SUCCESS);
    MUST(cuMemFree(small));
    check(mem_free_now() == before, "free restored after cuMemFree");
    gtsim_set_other_bytes(0, OTHER + 5 * MiB);
    check(mem_free_now() == before - 5 * MiB, "gtsim_set_other_bytes shrinks free exactly");
    gtsim_set_other_bytes(0, OTHER);
    RC(cuMemAlloc(NULL, 16), CUDA_ERROR_INVALID_VALUE);
    RC(cuMemAlloc(&small, 0), CUDA_ERROR_INVALID_VALUE);
    RC(cuMemFree(0xdeadbeef000ull), CUDA_ERROR_INVALID_VALUE);
    RC(cuMemFree(dp2), CUDA_SUCCESS);
    RC(cuMemFree(dp2), CUDA_ERROR_INVALID_VALUE); /* double free */
    size_t pitch = 0;
    CUdeviceptr pp = 0;
    before = mem_free_now();
    MUST(cuMemAllocPitch(&pp, &pitch, 1000, 10, 4));
    check(pitch == 1024 && mem_free_now() == before - 10240, "pitched allocation: pitch %zu", pitch);
    MUST(cuMemFree(pp));
    CUdeviceptr base = 0;
    size_t bsz = 0;
    MUST(cuMemGetAddressRange(&base, &bsz, dp + 100));
    check(base == dp && bsz == 1000, "cuMemGetAddressRange of an interior pointer");

    /* managed memory is host-accessible and really copied */
    CUdeviceptr mg = 0;
    MUST(cuMemAllocManaged(&mg, 8192, CU_MEM_ATTACH_GLOBAL));
    char *mh = (char *)(uintptr_t)mg;
    strcpy(mh, "managed");
    char buf[16] = {0};
    MUST(cuMemcpy((CUdeviceptr)(uintptr_t)buf, mg, 8));
    check(!strcmp(buf, "managed"), "cuMemcpy managed->host copies real bytes");
    MUST(cuMemsetD8(mg, 'x', 3));
    check(!memcmp(mh, "xxxaged", 7), "cuMemsetD8 on managed memory sets real bytes");
    RC(cuMemAllocManaged(&mg, 8192, 7), CUDA_ERROR_INVALID_VALUE);
    MUST(cuMemFree((CUdeviceptr)(uintptr_t)mh));

    /* host memory: real, not charged */
    before = mem_free_now();
    void *hp = NULL;
    MUST(cuMemHostAlloc(&hp, 1 << 20, 0));
    memset(hp, 1, 1 << 20);
    check(mem_free_now() == before, "page-locked host memory is not device memory");
    RC(cuMemFreeHost((char *)hp + 1), CUDA_ERROR_INVALID_VALUE);
    MUST(cuMemFreeHost(hp));

    /* arrays */
    CUarray arr;
    CUDA_ARRAY_DESCRIPTOR ad = {.Width = 100, .Height = 10, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4};
    before = mem_free_now();
    MUST(cuArrayCreate(&arr, &ad));
    check(mem_free_now() == before - 16384, "100x10 float4 array costs 16000 -> 16384 bytes");
    MUST(cuArrayDestroy(arr));
    RC(cuArrayDestroy(arr), CUDA_ERROR_INVALID_HANDLE);
    check(mem_free_now() == before, "array destroyed");

    /* VMM */
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    size_t gran = 0;
    MUST(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    check(gran == 2 * MiB, "VMM granularity %zu", gran);
    CUmemGenericAllocationHandle vh;
    RC(cuMemCreate(&vh, MiB, &prop, 0), CUDA_ERROR_INVALID_VALUE);
    before = mem_free_now();
    MUST(cuMemCreate(&vh, 4 * MiB, &prop, 0));
    check(mem_free_now() == before - 4 * MiB, "cuMemCreate charges 4 MiB");
    CUdeviceptr va = 0;
    MUST(cuMemAddressReserve(&va, 8 * MiB, 0, 0, 0));
    check(mem_free_now() == before - 4 * MiB && va % (2 * MiB) == 0, "address reservation costs nothing");
    MUST(cuMemMap(va, 4 * MiB, 0, vh, 0));
    RC(cuMemMap(va + 2 * MiB, 2 * MiB, 0, vh, 0), CUDA_ERROR_INVALID_VALUE); /* overlaps */
    CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    MUST(cuMemSetAccess(va, 4 * MiB, &acc, 1));
    RC(cuMemSetAccess(va, 8 * MiB, &acc, 1), CUDA_ERROR_INVALID_VALUE); /* partly unmapped */
    MUST(cuMemRelease(vh));
    check(mem_free_now() == before - 4 * MiB, "released handle stays charged while mapped");
    MUST(cuMemsetD32(va, 7, 1024)); /* mapped VMM memory is a valid target */
    MUST(cuMemUnmap(va, 4 * MiB));
    check(mem_free_now() == before, "unmapping the last mapping frees the memory");
    MUST(cuMemAddressFree(va, 8 * MiB));

    /* ---- stream-ordered pool ---- */
    CUmemoryPool pool;
    MUST(cuDeviceGetDefaultMemPool(&pool, dev));
    CUstream s1, s2, snb;
    MUST(cuStreamCreate(&s1, 0));
    MUST(cuStreamCreate(&s2, 0));
    MUST(cuStreamCreate(&snb, CU_STREAM_NON_BLOCKING));
    before = mem_free_now();
    CUdeviceptr ap = 0;
    MUST(cuMemAllocAsync(&ap, MiB + 1, s1));
    cuuint64_t res = 0, used = 0;
    MUST(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res));
    MUST(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    check(res == MiB + 512 && used == MiB + 512 && mem_free_now() == before - res,
          "pool after alloc: reserved %llu used %llu", (unsigned long long)res, (unsigned long long)used);
    MUST(cuMemFreeAsync(ap, s1));
    MUST(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res));
    MUST(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
    check(res == MiB + 512 && used == 0 && mem_free_now() == before - res, "pool keeps freed memory reserved");
    MUST(cuMemAllocAsync(&ap, 1000, s1));
    check(mem_free_now() == before - res, "pool reuses reserved memory");
    MUST(cuMemFreeAsync(ap, s1));
    MUST(cuStreamSynchronize(s1));
    MUST(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res));
    check(res == 0 && mem_free_now() == before, "release threshold 0: released at synchronize");
    cuuint64_t thr = 64 * MiB;
    MUST(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
    MUST(cuMemAllocAsync(&ap, 2 * MiB, s1));
    MUST(cuMemFreeAsync(ap, s1));
    MUST(cuStreamSynchronize(s1));
    MUST(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res));
    check(res == 2 * MiB, "below the threshold: kept across synchronize");
    MUST(cuMemPoolTrimTo(pool, 0));
    MUST(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res));
    check(res == 0 && mem_free_now() == before, "cuMemPoolTrimTo(0) releases it");
    MUST(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &res));
    check(res == 2 * MiB, "reserved high watermark %llu", (unsigned long long)res);
    CUmemPoolProps pprops = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                             .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CUmemoryPool mine;
    MUST(cuMemPoolCreate(&mine, &pprops));
    MUST(cuMemAllocFromPoolAsync(&ap, 4096, mine, s2));
    check(mem_free_now() == before - 4096, "allocation from a created pool");
    MUST(cuMemPoolDestroy(mine)); /* outstanding allocation keeps it alive */
    MUST(cuMemFreeAsync(ap, s2));
    check(mem_free_now() == before, "destroyed pool released after its last free");
    RC(cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE); /* default pool */
    RC(cuMemAllocAsync(&ap, 16, (CUstream)0x777), CUDA_ERROR_INVALID_HANDLE);

    /* ---- modules, kernels, timing ---- */
    CUmodule mod;
    RC(cuModuleLoadData(&mod, "\x7f" "ELF binary"), CUDA_ERROR_INVALID_IMAGE);
    RC(cuModuleLoadData(&mod, "warp 10\n"), CUDA_ERROR_INVALID_IMAGE);
    RC(cuModuleLoadData(&mod, "kernel k 10x\n"), CUDA_ERROR_INVALID_IMAGE);
    RC(cuModuleLoadData(&mod, "# nothing\n\n"), CUDA_ERROR_INVALID_IMAGE);
    RC(cuModuleLoad(&mod, "/nonexistent/module.txt"), CUDA_ERROR_FILE_NOT_FOUND);
    before = mem_free_now();
    MUST(cuModuleLoadData(&mod, MODULE_TEXT));
    check(mem_free_now() == before - 4096, "module global is device memory");
    CUdeviceptr gp = 0;
    size_t gsz = 0;
    MUST(cuModuleGetGlobal(&gp, &gsz, mod, "g_table"));
    check(gp && gsz == 4096, "cuModuleGetGlobal");
    CUfunction ka, kb, kd, klong;
    MUST(cuModuleGetFunction(&klong, mod, "k_long"));
    MUST(cuModuleGetFunction(&ka, mod, "k_a"));
    MUST(cuModuleGetFunction(&kb, mod, "k_b"));
    MUST(cuModuleGetFunction(&kd, mod, "k_default"));
    RC(cuModuleGetFunction(&kd, mod, "nope"), CUDA_ERROR_NOT_FOUND);
    RC(cuModuleGetFunction(&kd, (CUmodule)0x31, "k_a"), CUDA_ERROR_INVALID_VALUE);
    const char *fname = NULL;
    RC(cuFuncGetName(&fname, NULL), CUDA_ERROR_INVALID_VALUE);
    RC(cuFuncGetName(&fname, (CUfunction)0x31), CUDA_ERROR_INVALID_HANDLE);
    MUST(cuFuncGetName(&fname, kb));
    check(fname && !strcmp(fname, "k_b"), "cuFuncGetName = %s", fname ? fname : "");
    RC(cuLaunchKernel((CUfunction)0x4242, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
    RC(cuLaunchKernel(ka, 0, 1, 1, 1, 1, 1, 0, s1, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    RC(cuLaunchKernel(ka, 1, 1, 1, 0, 1, 1, 0, s1, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    RC(cuLaunchKernel(ka, 1, 1, 1, 1, 1, 1, 0, (CUstream)0x999, NULL, NULL), CUDA_ERROR_INVALID_HANDLE);
    RC(cuStreamSynchronize((CUstream)0x999), CUDA_ERROR_INVALID_HANDLE);
    RC(cuEventRecord((CUevent)0x999, s1), CUDA_ERROR_INVALID_HANDLE);

    struct gtsim_activity act[64];
    MUST(cuCtxSynchronize());
    gtsim_activity_drain(act, 64); /* discard earlier records */
    gtsim_set_api_callback(api_cb, NULL);

    /* Checks on simulated times use the activity log (exact by construction); checks that
     * depend on the host getting there in time use long kernels and wide margins. */
    CUevent e0, e1, e2;
    MUST(cuEventCreate(&e0, 0));
    MUST(cuEventCreate(&e1, 0));
    MUST(cuEventCreate(&e2, 0));
    MUST(cuEventRecord(e0, s1));
    MUST(cuLaunchKernel(ka, 4, 1, 1, 128, 1, 1, 0, s1, NULL, NULL)); /* 20 ms */
    unsigned corr_first = atomic_load(&g_last_launch_corr);
    MUST(cuEventRecord(e1, s1));
    MUST(cuLaunchKernel(ka, 4, 1, 1, 128, 1, 1, 0, s1, NULL, NULL)); /* 20 ms, after the first */
    MUST(cuLaunchKernel(kb, 1, 1, 1, 32, 1, 1, 0, s2, NULL, NULL));  /* 30 ms, concurrent */
    MUST(cuStreamWaitEvent(s2, e1, 0));
    MUST(cuLaunchKernel(kd, 1, 1, 1, 32, 1, 1, 0, s2, NULL, NULL)); /* default duration, after kb and e1 */
    MUST(cuEventRecord(e2, s1));
    unsigned long long t1 = gtsim_now_ns();
    MUST(cuStreamSynchronize(s1));
    unsigned long long t2 = gtsim_now_ns();
    RC(cuStreamQuery(s1), CUDA_SUCCESS);
    RC(cuEventQuery(e1), CUDA_SUCCESS);
    float ms = 0;
    MUST(cuEventElapsedTime(&ms, e0, e1));
    check(ms >= 20.0f && ms < 70.0f, "elapsed e0..e1 = %.3f ms (one 20 ms kernel)", ms);
    MUST(cuEventElapsedTime(&ms, e0, e2));
    check(ms >= 40.0f && ms < 90.0f, "elapsed e0..e2 = %.3f ms (two serialized kernels)", ms);
    MUST(cuStreamSynchronize(s2));
    size_t na = gtsim_activity_drain(act, 64);
    check(na == 4, "activity: %zu kernel records", na);
    if (na == 4) {
        const struct gtsim_activity *A1 = &act[0], *A2 = &act[1], *B = &act[2], *D = &act[3];
        check(A1->kind == GTSIM_ACT_KERNEL && !strcmp(A1->name, "k_a") && A1->end_ns - A1->start_ns == 20000000,
              "record 1: k_a, 20 ms");
        check(A2->start_ns >= A1->end_ns, "same stream serializes (gap %lld ns)",
              (long long)A2->start_ns - (long long)A1->end_ns);
        check(B->start_ns < A1->end_ns && B->stream_id != A1->stream_id, "other stream runs concurrently");
        check(!strcmp(D->name, "k_default") && D->end_ns - D->start_ns == 10000, "default kernel duration 10 us");
        check(D->start_ns >= B->end_ns && D->start_ns >= A1->end_ns, "event wait: starts after e1 and after k_b");
        check(A1->correlation_id == corr_first && A2->correlation_id != A1->correlation_id,
              "correlation ids match the API callback (%u)", corr_first);
        check(A1->grid[0] == 4 && A1->block[0] == 128 && A1->device == 0 && !strcmp(A1->api, "cuLaunchKernel"),
              "launch geometry and api name recorded");
        check(t2 >= A2->end_ns && t2 - A2->end_ns < 200000000ull,
              "cuStreamSynchronize blocked until the queued work ended (%.3f ms wait, returned %.3f ms after the end)",
              (double)(t2 - t1) / 1e6, (double)(t2 - A2->end_ns) / 1e6);
        unsigned long long cid = 0, sid = 0;
        MUST(cuCtxGetId(ctx, &cid));
        MUST(cuStreamGetId(s1, &sid));
        check(A1->context_id == cid && A1->stream_id == sid, "context and stream ids match cuCtxGetId/cuStreamGetId");
    }
    gtsim_set_api_callback(NULL, NULL);
    check(atomic_load(&g_cb_enter) == atomic_load(&g_cb_exit) && atomic_load(&g_cb_enter) > 10,
          "API callback saw %u enters and %u exits", atomic_load(&g_cb_enter), atomic_load(&g_cb_exit));

    /* queries while work is pending (a 100 ms kernel) */
    MUST(cuEventRecord(e0, s1));
    MUST(cuLaunchKernel(klong, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    MUST(cuEventRecord(e1, s1));
    RC(cuStreamQuery(s1), CUDA_ERROR_NOT_READY);
    RC(cuEventQuery(e1), CUDA_ERROR_NOT_READY);
    RC(cuEventElapsedTime(&ms, e0, e1), CUDA_ERROR_NOT_READY);
    MUST(cuEventSynchronize(e1));
    RC(cuEventQuery(e1), CUDA_SUCCESS);
    gtsim_activity_drain(act, 64);

    /* legacy default stream: waits for blocking streams, not for non-blocking ones */
    MUST(cuLaunchKernel(kb, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));   /* 30 ms on a blocking stream */
    MUST(cuLaunchKernel(kd, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL)); /* legacy: after it */
    MUST(cuLaunchKernel(kd, 1, 1, 1, 1, 1, 1, 0, snb, NULL, NULL));  /* non-blocking: at once */
    MUST(cuLaunchKernel(kd, 1, 1, 1, 1, 1, 1, 0, s2, NULL, NULL));   /* blocking: after the legacy one */
    MUST(cuCtxSynchronize());
    na = gtsim_activity_drain(act, 64);
    if (na == 4) {
        check(act[1].start_ns >= act[0].end_ns, "legacy stream waits for the blocking stream");
        check(act[2].start_ns < act[1].start_ns, "non-blocking stream does not wait for the legacy stream");
        check(act[3].start_ns >= act[1].end_ns, "blocking stream waits for the legacy stream");
    } else
        check(0, "legacy stream test: %zu records", na);

    /* the log hands out completed work oldest first, at most max per call, and keeps what still
     * runs (a 100 ms kernel ahead of three short ones on a non-blocking stream) in its place */
    MUST(cuLaunchKernel(klong, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    for (int i = 0; i < 3; i++)
        MUST(cuLaunchKernel(kd, 1, 1, 1, 1, 1, 1, 0, snb, NULL, NULL));
    MUST(cuStreamSynchronize(snb));
    size_t first = gtsim_activity_drain(act, 2), left = gtsim_activity_pending();
    na = first + gtsim_activity_drain(act + first, 64);
    MUST(cuCtxSynchronize());
    na += gtsim_activity_drain(act + na, 64);
    /* klong is last unless this thread stalled for its 100 ms before the first drain */
    size_t at = na == 4 && act[0].name && !strcmp(act[0].name, "k_long") ? 0 : 3;
    int order = na == 4 && act[at].name && !strcmp(act[at].name, "k_long");
    for (size_t i = 0, prev = SIZE_MAX; order && i < 4; i++)
        if (i != at) {
            order = act[i].stream_id != act[at].stream_id &&
                    (prev == SIZE_MAX || act[i].correlation_id > act[prev].correlation_id);
            prev = i;
        }
    check(first == 2 && left == 2 && order,
          "drain: %zu then %zu pending, %zu in all, completed work oldest first", first, left, na);

    /* per-thread default stream through the resolver; gtsim_call_count */
    PFN_cuLaunchKernel_v7000_ptsz lk = NULL;
    MUST(cuGetProcAddress_v2("cuLaunchKernel", (void **)&lk, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    unsigned long c_ptsz = gtsim_call_count("cuLaunchKernel_ptsz"), c_leg = gtsim_call_count("cuLaunchKernel");
    MUST(lk(kd, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    MUST(cuLaunchKernel(kd, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_PER_THREAD, NULL, NULL));
    check(gtsim_call_count("cuLaunchKernel_ptsz") == c_ptsz + 1 && gtsim_call_count("cuLaunchKernel") == c_leg + 1,
          "gtsim_call_count: the per-thread pointer reached cuLaunchKernel_ptsz");
    MUST(cuCtxSynchronize());
    na = gtsim_activity_drain(act, 64);
    unsigned long long legacy_id = 0;
    MUST(cuStreamGetId(NULL, &legacy_id));
    check(na == 2 && act[0].stream_id == act[1].stream_id && act[0].stream_id != legacy_id &&
              !strcmp(act[0].api, "cuLaunchKernel_ptsz"),
          "_ptsz with NULL and CU_STREAM_PER_THREAD use the per-thread stream, not the legacy one");

    /* copies: synchronous ones block and are logged */
    char host[4096];
    CUdeviceptr cd = 0;
    MUST(cuMemAlloc(&cd, 4096));
    t1 = now_ns();
    MUST(cuMemcpyHtoD(cd, host, 4096));
    t2 = now_ns();
    check(t2 - t1 >= 409, "cuMemcpyHtoD blocked for the copy (%llu ns)", t2 - t1);
    RC(cuMemcpyHtoD(cd + 4000, host, 200), CUDA_ERROR_INVALID_VALUE); /* past the allocation */
    MUST(cuMemcpyDtoHAsync(host, cd, 2048, s2));
    MUST(cuMemsetD32Async(cd, 0, 1024, s2));
    MUST(cuStreamSynchronize(s2));
    MUST(cuCtxSynchronize());
    na = gtsim_activity_drain(act, 64);
    check(na == 3 && act[0].kind == GTSIM_ACT_MEMCPY && act[0].copy_kind == GTSIM_COPY_HTOD && act[0].bytes == 4096 &&
              act[0].end_ns - act[0].start_ns == 409 && !act[0].is_async && act[1].copy_kind == GTSIM_COPY_DTOH &&
              act[1].is_async && act[2].kind == GTSIM_ACT_MEMSET && act[2].bytes == 4096,
          "memcpy/memset records (%zu)", na);

    /* host function runs on a driver thread when the stream reaches it */
    MUST(cuLaunchKernel(ka, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    MUST(cuLaunchHostFunc(s1, host_fn, NULL));
    MUST(cuStreamSynchronize(s1));
    unsigned long long ran_at = atomic_load(&g_hostfn_ran_at);
    na = gtsim_activity_drain(act, 64);
    check(na == 1 && ran_at && ran_at >= act[0].end_ns && atomic_load(&g_hostfn_other_thread),
          "host function ran after the kernel, on another thread, before synchronize returned");

    /* after fork, as with the real driver: the child of an initialized parent cannot use the
     * driver, cuInit included ("initialization error"); the version query still answers */
    pid_t pid = fork();
    if (pid == 0) {
        CUdeviceptr cp = 0;
        int v = 0;
        int ok = cuMemAlloc(&cp, 4096) == CUDA_ERROR_NOT_INITIALIZED &&
                 cuLaunchHostFunc(s1, host_fn, NULL) == CUDA_ERROR_NOT_INITIALIZED &&
                 cuInit(0) == CUDA_ERROR_NOT_INITIALIZED && cuMemAlloc(&cp, 4096) == CUDA_ERROR_NOT_INITIALIZED &&
                 cuDriverGetVersion(&v) == CUDA_SUCCESS && v == 13000;
        _exit(ok ? 0 : 1);
    }
    int wst = 0;
    waitpid(pid, &wst, 0);
    check(WIFEXITED(wst) && WEXITSTATUS(wst) == 0,
          "forked child: cuMemAlloc, cuLaunchHostFunc and cuInit return CUDA_ERROR_NOT_INITIALIZED");

    /* libraries and CUkernel handles */
    CUlibrary lib;
    MUST(cuLibraryLoadData(&lib, "kernel lib_k 50000\n", NULL, NULL, 0, NULL, NULL, 0));
    CUkernel kk;
    MUST(cuLibraryGetKernel(&kk, lib, "lib_k"));
    MUST(cuKernelGetName(&fname, kk));
    check(!strcmp(fname, "lib_k"), "cuKernelGetName = %s", fname);
    MUST(cuLaunchKernel((CUfunction)kk, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL)); /* CUkernel as CUfunction */
    CUfunction kf;
    MUST(cuKernelGetFunction(&kf, kk));
    gtsim_func_set_duration(kf, 70000);
    MUST(cuLaunchKernel(kf, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
    CUlaunchAttribute coop = {.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE, .value.cooperative = 1};
    CUlaunchConfig cfg = {.gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64, .blockDimY = 1,
                          .blockDimZ = 1, .hStream = s1, .attrs = &coop, .numAttrs = 1};
    MUST(cuLaunchKernelEx(&cfg, ka, NULL, NULL));
    MUST(cuStreamSynchronize(s1));
    na = gtsim_activity_drain(act, 64);
    check(na == 3 && !strcmp(act[0].name, "lib_k") && act[0].end_ns - act[0].start_ns == 50000 &&
              act[1].end_ns - act[1].start_ns == 70000 && act[2].launch_type == 1 && act[2].grid[0] == 2,
          "library kernel launches, gtsim_func_set_duration, cuLaunchKernelEx cooperative (%zu)", na);

    /* graphs */
    CUgraph g;
    MUST(cuGraphCreate(&g, 0));
    CUDA_KERNEL_NODE_PARAMS np = {.func = ka, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
                                  .blockDimY = 1, .blockDimZ = 1};
    CUgraphNode n1, n2;
    MUST(cuGraphAddKernelNode(&n1, g, NULL, 0, &np));
    np.func = kb;
    MUST(cuGraphAddKernelNode(&n2, g, &n1, 1, &np));
    np.gridDimX = 0;
    RC(cuGraphAddKernelNode(&n2, g, &n1, 1, &np), CUDA_ERROR_INVALID_VALUE);
    CUgraphExec ge;
    MUST(cuGraphInstantiate(&ge, g, 0));
    MUST(cuGraphLaunch(ge, s2));
    MUST(cuStreamSynchronize(s2));
    na = gtsim_activity_drain(act, 64);
    check(na == 2 && act[0].graph_id && act[0].graph_id == act[1].graph_id && act[0].graph_node_id != act[1].graph_node_id &&
              act[0].correlation_id == act[1].correlation_id && act[1].start_ns >= act[0].end_ns &&
              !strcmp(act[1].name, "k_b"),
          "graph launch runs its kernels in order with graph ids and one correlation id");
    RC(cuGraphLaunch((CUgraphExec)0x55, s2), CUDA_ERROR_INVALID_VALUE);
    RC(cuGraphLaunch(ge, (CUstream)0x55), CUDA_ERROR_INVALID_HANDLE);
    MUST(cuGraphExecDestroy(ge));
    MUST(cuGraphDestroy(g));

    /* stubs */
    typedef CUresult (*noarg_t)(void);
    noarg_t ps = (noarg_t)dlsym(g_lib, "cuProfilerStart");
    RC(ps(), CUDA_ERROR_NOT_SUPPORTED);
    check(gtsim_export_implemented("cuProfilerStart") == 0 && gtsim_export_implemented("cuMemAlloc_v2") == 1,
          "gtsim_export_implemented");

    /* 8 threads x 10,000 allocations, exact accounting afterwards */
    before = mem_free_now();
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, alloc_thread, NULL);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    check(atomic_load(&g_thread_errors) == 0 && mem_free_now() == before,
          "8 threads x 10000 allocations: %d errors, accounting exact", atomic_load(&g_thread_errors));

    /* primary context */
    CUcontext pctx;
    MUST(cuDevicePrimaryCtxRetain(&pctx, 1));
    unsigned pflags;
    int active = 0;
    MUST(cuDevicePrimaryCtxGetState(1, &pflags, &active));
    check(active == 1, "primary context of device 1 active after retain");
    MUST(cuCtxPushCurrent(pctx));
    fr = mem_free_now();
    check(fr == CAP - OTHER - OVH, "device 1 accounting independent (free %zu)", fr);
    MUST(cuMemAlloc(&dp, 4096));
    MUST(cuDevicePrimaryCtxRelease(1));
    MUST(cuDevicePrimaryCtxGetState(1, &pflags, &active));
    check(active == 0, "primary context inactive after the last release");
    RC(cuMemAlloc(&dp, 16), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CUcontext popped;
    MUST(cuCtxPopCurrent(&popped));
    check(popped == pctx, "cuCtxPopCurrent returns the primary context");

    /* cuCtxDestroy frees everything allocated in the context */
    MUST(cuMemAlloc(&dp, 100 * MiB));
    MUST(cuCtxDestroy(ctx));
    CUcontext ctx2;
    PFN_cuCtxCreate_v3020 create_v2 = (PFN_cuCtxCreate_v3020)dlsym(g_lib, "cuCtxCreate_v2");
    MUST(create_v2(&ctx2, 0, dev));
    fr = mem_free_now();
    check(fr == CAP - OTHER - OVH, "after cuCtxDestroy everything is free again (%zu)", fr);
    RC(cuCtxDestroy(ctx), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    MUST(cuCtxDestroy(ctx2));

    /* the GTSIM_LOG file */
    FILE *lf = fopen("sim.log", "r");
    int saw_getproc = 0, saw_stub = 0;
    char line[1024];
    while (lf && fgets(line, sizeof line, lf)) {
        if (!strncmp(line, "getproc2 cuLaunchKernel 7000 2 -> cuLaunchKernel_ptsz status=0 rc=0 caller=", 75) &&
            strstr(line, "sim_selftest"))
            saw_getproc = 1;
        if (!strncmp(line, "stub cuProfilerStart rc=801 caller=", 35))
            saw_stub = 1;
    }
    if (lf)
        fclose(lf);
    check(saw_getproc && saw_stub, "GTSIM_LOG has resolver lines with the caller and stub lines");

    run_distinct_child(argv[0]);

    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
