/* The memory renderers: they read the memory view alone (model/view_mem.h), with the pools' and
 * NVML's views for what they add to the memory section and to each failure. */
#ifndef GA_RENDER_MEM_H
#define GA_RENDER_MEM_H

#include <stdio.h>

#include "model/view_mem.h"
#include "model/view_nvml.h"
#include "model/view_pools.h"

struct json_object;

/* text_mem.c: the memory section (counts, peaks with sparklines, what filled memory at the peak,
 * temporaries, the pools, PyTorch's allocator, leaks, by API) and the failed allocations (a
 * table, then the first ones explained). */
void ga_text_memory(const struct ga_vmem *v, const struct ga_vpools *pools,
                    const struct ga_vtorch *torch, FILE *o);
void ga_text_ooms(const struct ga_vmem *v, const struct ga_vnvml *nv, FILE *o);
/* json_mem.c: the memory object (docs/REPORT_JSON.md), up to its PyTorch allocators. */
struct json_object *ga_json_memory(const struct ga_vmem *v, const struct ga_vpools *pools,
                                   const struct ga_vnvml *nv);
/* json_peak.c: memory.peak_breakdown, memory.category_series, memory.leaks, memory.temporaries;
 * the evidence fields of one memory.ooms[] entry. */
void ga_json_peak(const struct ga_vmem *v, struct json_object *memory);
void ga_json_oom_evidence(const struct ga_vmem_oom *x, struct json_object *o);

#endif
