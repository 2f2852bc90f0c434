/* Events by host call site and by library as every renderer shows them (the text report's site
 * sections, JSON's memory.by_site/by_library, timeline.launch_sites/sync_sites and the stacks
 * object): the sites analysis's results ranked, capped and resolved into the model's stacks
 * (model/view_stack.h) once, at the end of the pass. A renderer reads this and includes no
 * analysis header. */
#ifndef GA_VIEW_SITES_H
#define GA_VIEW_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "model/view_stack.h"

/* Bounds that keep a hostile trace (tens of thousands of sites with 256-frame stacks) from making
 * gigabytes of report, set so that ordinary reports are untouched (docs/REPORT_JSON.md,
 * "Bounds"): a list keeps at most GA_VSITES_MAX sites and counts the rest; the stacks of one list
 * list at most GA_VSITES_LIST_FRAMES frames together. */
#define GA_VSITES_MAX         1000
#define GA_VSITES_LIST_FRAMES 16384

#define GA_VSYM_SOURCES 6 /* python, dwarf, symtab, dladdr, offset, unknown */

/* What happened at one site or one library. */
struct ga_vsite_stats {
    uint64_t allocs, alloc_bytes, alloc_failed, leaked_bytes, leaked_count;
    uint64_t launches, launch_failed;
    uint64_t syncs, sync_ns;
};

struct ga_vsite_row {
    const struct ga_vsite *site;
    const struct ga_vstack *stack; /* the stack that weighs most in the list's kind; NULL none */
    uint32_t frames;               /* of stack's frames, those the list lists (its budget) */
    struct ga_vsite_stats st;
};

/* Heaviest first (bytes, launches, blocking time). */
struct ga_vsite_list {
    struct ga_vsite_row *rows;
    size_t n;       /* at most GA_VSITES_MAX */
    size_t omitted; /* sites past the cap */
};

struct ga_vlibrary {
    const char *name, *path; /* NULL: unknown */
    struct ga_vsite_stats st;
};

struct ga_vsites {
    int have_stacks; /* some event carried a stack; without, the text report has no site section */
    struct ga_vsite_list by_bytes, by_launches, by_sync;
    struct ga_vlibrary *libs; /* libraries with allocations, by bytes, at most GA_VSITES_MAX */
    size_t n_libs, libs_omitted;
    /* the stack table's figures */
    uint64_t unique_stacks, nodes, modules, dladdr_symbols;
    uint64_t frames_by_source[GA_VSYM_SOURCES];
    const char *source_names[GA_VSYM_SOURCES];
    uint64_t allocs_without_stack, launches_without_stack, syncs_without_stack;
};

struct ga_sites;
/* After ga_sites_finish; stacks and sites resolved into t (which must outlive v). */
void ga_vsites_build(struct ga_vsites *v, const struct ga_sites *s, struct ga_vstacks *t);
void ga_vsites_free(struct ga_vsites *v);

#endif
