/* Host call stacks as the model hands them to every renderer: frames symbolized once into
 * strings (labels, function, file, module), stacks as arrays of those frames, call sites as a
 * frame and a library. A renderer formats these and never reaches the stack table of the
 * analyses. The table (struct ga_vstacks) interns what the views ask for, by the analysis's
 * frame, stack id and site: a frame, stack or site shown by several views is resolved once, and
 * the table holds only what some view shows (its memory: the frames of the listed stacks). */
#ifndef GA_VIEW_STACK_H
#define GA_VIEW_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

#define GA_VSTACK_FRAMES 256  /* frames kept per stack, innermost first */
#define GA_VSTACK_COUNT  4096 /* frames counted per stack (total stops there) */

/* One logical frame (an ip expands into several where functions were inlined). */
struct ga_vframe {
    const char *label;         /* "func (file.c:12)" (the file's basename), "lib.so+0x1f0" when
                                * only the module is known, "0x7f..." when not even that */
    const char *label_path;    /* the same with the file as the debug info names it */
    const char *func;          /* demangled; NULL unknown */
    const char *file;          /* NULL unknown */
    uint32_t line;             /* 0 unknown */
    const char *module;        /* the object's file name; NULL unknown */
    const char *module_path;   /* NULL unknown */
    uint64_t ip, offset;       /* offset: ip - the module's load base, when module_path */
    const char *symbolized_by; /* "python", "dwarf", "symtab", "dladdr", "offset", "unknown" */
    uint8_t python;            /* a Python frame (func, file and line from the interpreter) */
    uint8_t inlined;           /* inlined into the next (outer) frame */
};

/* A stack, innermost frame first: frames[0..n), n = min(total, GA_VSTACK_FRAMES). */
struct ga_vstack {
    uint32_t id;    /* the trace's stack id */
    uint32_t n;     /* frames listed */
    uint32_t total; /* frames the stack has, at most GA_VSTACK_COUNT */
    const struct ga_vframe **frames;
};

/* A call site: the frame events are attributed to (the first outside the CUDA runtime, the tracer
 * and framework internals) and the library that made the CUDA call. */
struct ga_vsite {
    const struct ga_vframe *frame; /* NULL: the stack is unknown */
    const char *library;           /* the library's file name; NULL unknown */
    const char *library_path;      /* NULL unknown */
    uint32_t stacks;               /* distinct stacks that lead here */
};

struct ga_stacks;
struct ga_sites;
struct ga_site;
struct ga_frame;

/* The table that owns the resolved frames, stacks and sites. */
struct ga_vstacks {
    struct ga_stacks *st;                      /* the analysis's table (symbolizes on first use) */
    const struct ga_sites *sites;              /* sites of stacks; NULL: none */
    struct ga_map frame_of, stack_of, site_of; /* analysis object or id -> index + 1 */
    struct ga_vframe **frames;
    struct ga_vstack **stacks;
    struct ga_vsite **vsites;
    size_t n_frames, n_stacks, n_sites, frames_cap, stacks_cap, sites_cap;
};

/* For the view builders (model/), after ga_sites_finish (which symbolized the stacks). */
void ga_vstacks_init(struct ga_vstacks *t, struct ga_stacks *st, const struct ga_sites *sites);
/* The stack with this id; NULL for 0 (no stack recorded). A stack the trace does not define has
 * no frames. */
const struct ga_vstack *ga_vstacks_stack(struct ga_vstacks *t, uint32_t id);
const struct ga_vframe *ga_vstacks_frame(struct ga_vstacks *t, const struct ga_frame *f);
/* The site x; NULL for NULL. */
const struct ga_vsite *ga_vstacks_site(struct ga_vstacks *t, const struct ga_site *x);
/* The site stack `id` leads to; NULL when it has none (or id is 0). */
const struct ga_vsite *ga_vstacks_site_of(struct ga_vstacks *t, uint32_t id);
void ga_vstacks_free(struct ga_vstacks *t);

#endif
