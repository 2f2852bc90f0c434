/* Host call stacks of a trace: the node tree, the module map and the tracer's dladdr names as
 * read (stacks.c), and offline symbolization of their ips with elfutils' libdw (symbolize.c):
 * function, file:line and inlined frames, cached per ip, modules opened once. */
#ifndef GA_STACKS_H
#define GA_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"
#include "input/records.h"

#define GA_NO_MODULE UINT32_MAX

/* Where a frame's name came from, best first. */
enum ga_sym_source {
    GA_SYM_PYTHON,  /* a Python frame: function and file:line from the trace's gt_rec_pycode */
    GA_SYM_DWARF,   /* debug info of the object on disk (libdw): function and file:line */
    GA_SYM_SYMTAB,  /* the object's symbol table (libdw): function only */
    GA_SYM_DLADDR,  /* the tracer's dladdr names in the trace (object not readable here) */
    GA_SYM_OFFSET,  /* nothing named it: module+0xoffset */
    GA_SYM_UNKNOWN, /* not even a module: the bare address */
};
const char *ga_sym_source_name(enum ga_sym_source s); /* "python", "dwarf", "symtab", ... */

/* One logical frame: an ip expands into several when functions were inlined into each other. */
struct ga_frame {
    uint64_t ip;
    const char *func; /* demangled; NULL when unknown */
    const char *file; /* source file as the debug info names it; NULL when unknown */
    uint32_t line;    /* 0 when unknown */
    uint32_t module;  /* index into ga_stacks.mods, GA_NO_MODULE */
    uint8_t source;   /* enum ga_sym_source */
    uint8_t inlined;  /* this frame was inlined into the next (outer) one */
};

struct ga_module {
    char *path;
    const char *name; /* basename of path */
    uint64_t base, start, size;
    uint8_t build_id[64];
    uint32_t build_id_len;
    void *dwfl;     /* libdw session this module opened (Dwfl *), NULL if none or shared */
    void *dwfl_mod; /* Dwfl_Module * of its file, maybe another module's (same path, build-id) */
    uint64_t dwfl_base; /* the load bias dwfl_mod was reported at: ip - base + dwfl_base */
    int tried;          /* opening was attempted */
    const char *why;    /* why its file could not be used, NULL when it could */
};

struct ga_node {
    uint64_t ip;
    uint32_t parent;
    uint32_t defined; /* a STACK record defined it */
};

struct ga_symbol {
    uint64_t addr, size;
    char *name;
};

/* A Python code object (gt_rec_pycode). */
struct ga_pycode {
    char *file, *name;
    uint32_t first_line;
};

struct ga_stacks {
    /* Nodes by id: ids are dense (1, 2, ... as the tracer made them), so an array indexed by id,
     * grown while ids stay below twice the nodes defined so far (plus slack: chunks of other
     * threads may come later); an id past that, from a corrupt trace, goes to a map instead of
     * making the array as big as the id. */
    struct ga_node *nodes; /* index = node id; [0] unused */
    size_t n_nodes, nodes_cap;
    struct ga_map far_idx; /* id -> index into far, for ids past the array */
    struct ga_node *far;
    size_t n_far, far_cap;
    uint64_t defined; /* nodes defined by STACK records */
    uint64_t stack_records;
    struct ga_module *mods;
    size_t n_mods, mods_cap;
    /* Files opened for symbolization: one session per (path, build-id), at most a fixed number
     * per report (each can take tens of MB), see symbolize.c */
    struct ga_map file_of; /* (hash of path and build-id, 0) -> first module that tried it */
    size_t files_opened;
    /* ga_stacks_module_of's index, built on first use after the modules changed: the address
     * space cut into segments, each with the module that wins there (the latest record) */
    uint64_t *seg_start;
    uint32_t *seg_mod;
    size_t n_segs;
    int segs_ok;
    struct ga_symbol *syms;
    size_t n_syms, syms_cap;
    int syms_sorted;
    struct ga_map py_of; /* (code id, 0) -> index into py */
    struct ga_pycode *py;
    size_t n_py, py_cap;
    /* symbolization cache: ip -> (index into frame_sets << 8 | frame count); each ip's frames
     * are an allocation of their own, so pointers to them stay valid */
    struct ga_map ip_frames;
    struct ga_frame **frame_sets;
    size_t n_sets, sets_cap;
    char **strings; /* every string the frames point to */
    size_t n_strings, strings_cap;
    uint64_t frames_by_source[GA_SYM_UNKNOWN + 1]; /* ips symbolized, by source of the first */
};

void ga_stacks_init(struct ga_stacks *s);
/* The record types ga_stacks_event looks at (bit t: type t); report.c hands it no others. */
#define GA_STACKS_TYPES                                                                            \
    ((1ull << GT_REC_STACK) | (1ull << GT_REC_MODULE) | (1ull << GT_REC_SYMBOL) |                  \
     (1ull << GT_REC_PYCODE))
void ga_stacks_event(struct ga_stacks *s, const struct ga_event *ev);
/* symbolize.c: everything, the symbolization state and then the table (ga_stacks_free_table). */
void ga_stacks_free(struct ga_stacks *s);
/* stacks.c: the table as read (nodes, modules, symbols, Python code); symbolize.c's
 * ga_stacks_free calls it after freeing what it built on top. */
void ga_stacks_free_table(struct ga_stacks *s);

/* The ips of stack `id`, innermost first, at most `max`; returns how many. A node the trace never
 * defined ends the walk (and makes a stack of 0 frames unknown). */
size_t ga_stacks_ips(const struct ga_stacks *s, uint32_t id, uint64_t *ips, size_t max);
/* The Python code object with this id, NULL when the trace does not define it. */
const struct ga_pycode *ga_stacks_pycode(const struct ga_stacks *s, uint32_t id);
/* Module index holding ip, GA_NO_MODULE if none. */
uint32_t ga_stacks_module_of(struct ga_stacks *s, uint64_t ip);

/* symbolize.c: the logical frames of ip, innermost first (cached; valid until ga_stacks_free). */
const struct ga_frame *ga_stacks_frames(struct ga_stacks *s, uint64_t ip, size_t *n);
/* "func", "func (file:line)" style label of a frame into buf; `full_path` 0 keeps the file's
 * basename. */
const char *ga_frame_label(const struct ga_stacks *s, const struct ga_frame *f, char *buf, size_t n,
                           int full_path);
/* A string owned by the table. */
const char *ga_stacks_keep(struct ga_stacks *s, char *owned);

#endif
