/* Types of the generated tables (gen_exports.c). Hand-written; safe to include anywhere. */
#ifndef GTSIM_GEN_TABLES_H
#define GTSIM_GEN_TABLES_H
#include <stddef.h>
#include "gen_exports.h"

enum { GTSIM_VAR_LEGACY = 0, GTSIM_VAR_PTSZ = 1, GTSIM_VAR_PTDS = 2 };

struct gtsim_pfn {
    const char *base;      /* name passed to cuGetProcAddress, e.g. "cuMemAlloc" */
    int version;           /* N of PFN_<base>_v<N>[_ptsz|_ptds] */
    int variant;           /* GTSIM_VAR_* */
    int export_idx;        /* GX_<export> */
};

struct gtsim_errname {
    int code;
    const char *name;
};

#pragma GCC visibility push(hidden)
int gtsim_stub_call(int idx, void *caller);
extern const char *const gtsim_export_names[GTSIM_NEXPORTS];
extern void *const gtsim_export_impl[GTSIM_NEXPORTS];  /* hidden addresses of the implementations */
extern void *const gtsim_export_thunk[GTSIM_NEXPORTS]; /* distinct pointers (NULL if unsupported) */
extern void *const gtsim_export_stub[GTSIM_NEXPORTS];  /* the weak NOT_SUPPORTED stubs */
extern const struct gtsim_pfn gtsim_pfns[];
extern const size_t gtsim_npfns;
extern const struct gtsim_errname gtsim_errnames[];
extern const size_t gtsim_nerrnames;
#pragma GCC visibility pop

#endif
