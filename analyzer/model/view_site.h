/* A call site as every renderer shows it, resolved once in the model: its labels (the text
 * report's, without the file's directory, and JSON's, with it), where it is, and its stack's
 * frames as far as the view's frame budget allows. Strings point into the stacks analysis (which
 * lives as long as the report) or are the view's own (the labels). A renderer reads this and
 * includes no analysis header. */
#ifndef GA_VIEW_SITE_H
#define GA_VIEW_SITE_H

#include <stddef.h>
#include <stdint.h>

/* Bounds that keep a hostile trace (tens of thousands of sites with 256-frame stacks) from
 * making gigabytes of JSON, set so that ordinary reports are untouched (docs/REPORT_JSON.md,
 * "Bounds"): a site list keeps at most GA_VSITE_LIST_MAX sites (the rest counted); a stack lists
 * at most GA_VSITE_STACK_FRAMES frames; the stacks of one list share GA_VSITE_LIST_FRAMES frames
 * and the sites outside lists (failed allocations, largest allocations, holders) share
 * GA_VSITE_LOOSE_FRAMES per report. */
#define GA_VSITE_LIST_MAX     1000
#define GA_VSITE_STACK_FRAMES 256
#define GA_VSITE_LIST_FRAMES  16384
#define GA_VSITE_LOOSE_FRAMES 16384

struct ga_vframe {
    const char *function, *file, *module, *symbolized_by; /* NULL: not known */
    uint32_t line;                                        /* 0: not known */
    int have_offset;                                      /* offset in module */
    uint64_t offset;
    int inlined;
};

struct ga_vsite {
    /* 0: no call site for the stack (stack 0: none recorded): only the labels mean something */
    int have_site;
    char *text;  /* the text report's label: "<unknown stack>", "<no stack recorded>" without one */
    char *label; /* JSON's "site" (the file's path): "<unknown>" for a site the stack does not
                  * reach a frame of; without a site the text label */
    const char *function, *file, *module, *library, *symbolized_by;
    uint32_t line;
    uint64_t stacks; /* distinct stacks that lead to the site */
    struct ga_vframe *frames; /* the stack's, innermost first, at most the budget */
    size_t n_frames;
    uint64_t frames_truncated; /* frames of the stack not listed */
};

/* One site with a weight. */
struct ga_vsite_amount {
    struct ga_vsite site;
    uint64_t bytes, count;
};

/* Sites in a ranking: at most GA_VSITE_LIST_MAX (their stacks sharing GA_VSITE_LIST_FRAMES),
 * `omitted` left out; total = n + omitted. */
struct ga_vsite_list {
    struct ga_vsite_amount *v;
    size_t n;
    uint64_t omitted;
};

struct ga_site;
struct ga_sites;
struct ga_stacks;
/* Site x (NULL: the site of `stack`, or none) with `stack`'s frames, spending *budget. in_list:
 * x is ranked in a list (its text label says "<unknown stack>" whatever the stack). The
 * stacks' symbolization caches were filled by ga_sites_finish; this only reads them. */
void ga_vsite_make(struct ga_vsite *o, struct ga_stacks *st, const struct ga_sites *s,
                   const struct ga_site *x, uint32_t stack, size_t *budget, int in_list);
void ga_vsite_free(struct ga_vsite *s);
void ga_vsite_list_free(struct ga_vsite_list *l);

#endif
