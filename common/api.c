/* The API id table shared by the shim and the analyzer. */
#include "gputrace/trace_api.h"

const struct gt_api_info gt_api_table[GT_API_MAX] = {
#define GT_API_ROW(id, e, nm, fam, kind) [id] = {.name = nm, .family = fam, .mem_kind = kind},
    GT_API_LIST(GT_API_ROW)
#undef GT_API_ROW
};

const char *gt_api_name(unsigned api)
{
    if (api < GT_API_MAX && gt_api_table[api].name) return gt_api_table[api].name;
    return "unknown-api";
}

const char *gt_mem_kind_name(enum gt_mem_kind k)
{
    static const char *const names[GT_MEM_KIND_COUNT] = {
        [GT_MEM_NONE] = "none",         [GT_MEM_DEVICE] = "device",
        [GT_MEM_MANAGED] = "managed",   [GT_MEM_ASYNC] = "async-pool",
        [GT_MEM_VIRTUAL] = "va-reserve", [GT_MEM_PHYSICAL] = "vmm-physical",
        [GT_MEM_ARRAY] = "array",       [GT_MEM_HOST] = "pinned-host",
    };
    return (unsigned)k < GT_MEM_KIND_COUNT ? names[k] : "unknown";
}
