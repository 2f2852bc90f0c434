/* cuGetProcAddress (CUDA 11.3 ABI, 4 arguments) and cuGetProcAddress_v2 (12.0, 5 arguments),
 * driven by the table generated from cudaTypedefs.h (gen_exports.c). */
#include "sim.h"

#include <string.h>


/* first row of base in gtsim_pfns (sorted by base), or -1 */
static long pfn_first(const char *base)
{
    long lo = 0, hi = (long)gtsim_npfns - 1, found = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        int c = strcmp(base, gtsim_pfns[mid].base);
        if (c <= 0) {
            if (!c)
                found = mid;
            hi = mid - 1;
        } else
            lo = mid + 1;
    }
    return found;
}

static CUresult resolve(const char *symbol, void **pfn, int ver, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status, int *exp_idx)
{
    *exp_idx = -1;
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!pfn || !symbol)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    if (ver > g_cfg.driver_version)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    long first = pfn_first(symbol);
    if (first < 0)
        return CUDA_SUCCESS; /* unknown name, or the "" probe */
    int best = -1, best_ver = -1, pt = -1, pt_ver = -1;
    for (size_t i = (size_t)first; i < gtsim_npfns && !strcmp(gtsim_pfns[i].base, symbol); i++) {
        const struct gtsim_pfn *p = &gtsim_pfns[i];
        if (p->version > ver)
            continue;
        if (p->variant == GTSIM_VAR_LEGACY && p->version > best_ver)
            best = p->export_idx, best_ver = p->version;
        else if (p->variant != GTSIM_VAR_LEGACY && p->version > pt_ver)
            pt = p->export_idx, pt_ver = p->version;
    }
    if (best < 0) {
        *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return CUDA_SUCCESS;
    }
    if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && pt >= 0)
        best = pt;
    *exp_idx = best;
    *pfn = sim_export_pointer(best);
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

static CUresult getproc(int which, const char *symbol, void **pfn, int ver, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *symbolStatus, void *ra)
{
    CUdriverProcAddressQueryResult st;
    int idx;
    CUresult rc = resolve(symbol, pfn, ver, flags, &st, &idx);
    if (symbolStatus && (rc == CUDA_SUCCESS))
        *symbolStatus = st;
    sim_log("getproc%d %s %d %llu -> %s status=%d rc=%d caller=%s", which,
            !symbol ? "(null)" : *symbol ? symbol : "\"\"", ver,
            (unsigned long long)flags, idx >= 0 ? gtsim_export_names[idx] : "NULL", (int)st, (int)rc,
            sim_caller_name(ra));
    return rc;
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    void *ra = __builtin_return_address(0);
    SIM_API_NOINIT(cuGetProcAddress, getproc(1, symbol, pfn, cudaVersion, flags, NULL, ra));
}
SIM_EXPORT(cuGetProcAddress)

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus)
{
    void *ra = __builtin_return_address(0);
    SIM_API_NOINIT(cuGetProcAddress_v2, getproc(2, symbol, pfn, cudaVersion, flags, symbolStatus, ra));
}
SIM_EXPORT(cuGetProcAddress_v2)
