/* Offline symbolization with elfutils (libdwfl/libdw): each module of the trace is opened once,
 * at the path and load bias the trace recorded, and used only when its GNU build-id matches the
 * one recorded (a rebuilt library would name the wrong functions). An ip becomes one frame per
 * inlined function (innermost first): the innermost frame's line is the ip's line, an outer
 * frame's line is the call site of the function inlined into it. Fallbacks, in order: the
 * object's symbol table, the tracer's dladdr names, module+0xoffset, the bare address. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/demangle.h"
#include "analyses/stacks.h"
#include "base/util.h"

#define MAX_INLINE 32 /* logical frames per ip */

static char *debuginfo_path; /* libdwfl's default search (.debug, /usr/lib/debug) */

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

const char *ga_sym_source_name(enum ga_sym_source s)
{
    static const char *const names[] = {"python", "dwarf", "symtab", "dladdr", "offset", "unknown"};
    return s <= GA_SYM_UNKNOWN ? names[s] : "unknown";
}

/* Distinct files opened per report. A session costs what libdw loads for it (16 MB for a libc
 * with its debug info), and module paths come from the trace: 2,000 module records naming the
 * system's libc at different addresses (a 336 KB trace) took 31 GB before each file was opened
 * once and this cap was set. A real stack rarely crosses more than a few dozen objects. */
#define MAX_FILES 128

static uint64_t file_key(const struct ga_module *m)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = m->path; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    for (uint32_t i = 0; i < m->build_id_len; i++)
        h = (h ^ m->build_id[i]) * 0x100000001b3ull;
    return h;
}

static int same_file(const struct ga_module *a, const struct ga_module *b)
{
    return strcmp(a->path, b->path) == 0 && a->build_id_len == b->build_id_len &&
           memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

/* The module that already tried this module's file, or NULL (then m is recorded as the one). */
static const struct ga_module *tried_file(struct ga_stacks *s, struct ga_module *m)
{
    int added = 0;
    uint64_t *v = ga_map_upsert(&s->file_of, file_key(m), 0, (uint64_t)(m - s->mods), &added);
    const struct ga_module *o = &s->mods[*v];
    return !added && o != m && same_file(o, m) ? o : NULL;
}

static void open_module(struct ga_stacks *s, struct ga_module *m)
{
    const unsigned char *bits;
    GElf_Addr vaddr;
    m->tried = 1;
    const struct ga_module *o = tried_file(s, m);
    if (o) { /* the same object loaded at another address, or again: its session, or its why */
        m->dwfl_mod = o->dwfl_mod;
        m->dwfl_base = o->dwfl_base;
        m->why = o->why;
        return;
    }
    if (s->files_opened >= MAX_FILES) {
        m->why = "too many objects to read";
        return;
    }
    s->files_opened++;
    struct stat sb;
    /* The path comes from the trace: never block on a FIFO, open a device (opening some has
     * effects) or read anything but a regular file. */
    int fd = stat(m->path, &sb) == 0 && S_ISREG(sb.st_mode)
                 ? open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
                 : -1;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (fd >= 0) close(fd);
        m->why = "cannot open the file";
        return;
    }
    Dwfl *d = dwfl_begin(&callbacks);
    Dwfl_Module *dm = d ? dwfl_report_elf(d, m->name, m->path, fd, m->base, false) : NULL;
    if (!dm) { /* on failure the fd is ours to close */
        close(fd);
        if (d) dwfl_end(d);
        m->why = "not an ELF object libdw can read";
        return;
    }
    dwfl_report_end(d, NULL, NULL);
    int bl = dwfl_module_build_id(dm, &bits, &vaddr);
    if (m->build_id_len &&
        (bl != (int)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len) != 0)) {
        dwfl_end(d);
        m->why = "build-id differs from the traced object's";
        return;
    }
    m->dwfl = d;
    m->dwfl_mod = dm;
    m->dwfl_base = m->base;
}

const char *ga_stacks_keep(struct ga_stacks *s, char *owned)
{
    s->strings = ga_xgrow(s->strings, &s->strings_cap, s->n_strings, sizeof(*s->strings));
    s->strings[s->n_strings++] = owned;
    return owned;
}

/* The symbolization state first (libdw sessions, the frame cache, its strings), then the table
 * it was made from (stacks.c). */
void ga_stacks_free(struct ga_stacks *s)
{
    for (size_t i = 0; i < s->n_mods; i++)
        if (s->mods[i].dwfl) dwfl_end(s->mods[i].dwfl);
    for (size_t i = 0; i < s->n_sets; i++)
        free(s->frame_sets[i]);
    free(s->frame_sets);
    for (size_t i = 0; i < s->n_strings; i++)
        free(s->strings[i]);
    free(s->strings);
    ga_map_free(&s->ip_frames);
    ga_map_free(&s->file_of);
    ga_stacks_free_table(s);
}

/* A demangled copy of a linkage name, or of the plain name. */
static const char *keep_name(struct ga_stacks *s, const char *name)
{
    if (!name) return NULL;
    char *d = ga_demangle(name);
    return ga_stacks_keep(s, d ? d : ga_xstrdup(name));
}

static const char *die_name(struct ga_stacks *s, Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
        name = dwarf_formstring(&a);
    if (!name && dwarf_attr_integrate(die, DW_AT_name, &a)) name = dwarf_formstring(&a);
    return keep_name(s, name);
}

/* DW_AT_call_file / DW_AT_call_line of an inlined subroutine. */
static void call_site(struct ga_stacks *s, Dwarf_Die *cu, Dwarf_Die *inl, struct ga_frame *f)
{
    Dwarf_Attribute a;
    Dwarf_Word idx = 0, line = 0;
    Dwarf_Files *files;
    size_t nfiles;
    f->file = NULL;
    f->line = 0;
    if (dwarf_attr(inl, DW_AT_call_line, &a) && dwarf_formudata(&a, &line) == 0)
        f->line = (uint32_t)line;
    if (dwarf_attr(inl, DW_AT_call_file, &a) && dwarf_formudata(&a, &idx) == 0 &&
        dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles) {
        const char *fn = dwarf_filesrc(files, idx, NULL, NULL);
        if (fn) f->file = ga_stacks_keep(s, ga_xstrdup(fn));
    }
}

/* Frames of ip from the debug info: returns how many (0: no DWARF for it). dwarf_getscopes
 * lists the innermost inlined instance followed by the scopes of its *abstract* definition, so
 * after each inlined subroutine the walk continues from that instance's real parents
 * (dwarf_getscopes_die), as eu-addr2line -i does. */
static size_t from_dwarf(struct ga_stacks *s, Dwfl_Module *dm, uint64_t ip, struct ga_frame *out)
{
    Dwarf_Addr bias;
    Dwarf_Die *cu = dwfl_module_addrdie(dm, ip, &bias);
    Dwarf_Die *scopes = NULL, inner;
    if (!cu) return 0;
    int ns = dwarf_getscopes(cu, ip - bias, &scopes), have_inner = 0;
    size_t n = 0;
    for (int i = 0; i < ns && n < MAX_INLINE; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
        struct ga_frame *f = &out[n++];
        f->func = die_name(s, &scopes[i]);
        f->source = GA_SYM_DWARF;
        if (have_inner) {
            call_site(s, cu, &inner, f);
            out[n - 2].inlined = 1;
        } else {
            Dwfl_Line *l = dwfl_module_getsrc(dm, ip);
            int line = 0;
            const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
            f->file = file ? ga_stacks_keep(s, ga_xstrdup(file)) : NULL;
            f->line = line > 0 ? (uint32_t)line : 0;
        }
        if (tag == DW_TAG_subprogram) break;
        inner = scopes[i];
        have_inner = 1;
        Dwarf_Die *outer = NULL;
        int no = dwarf_getscopes_die(&inner, &outer);
        free(scopes);
        scopes = outer;
        ns = no;
        i = 0; /* outer[0] is the inlined instance itself */
    }
    free(scopes);
    return n;
}

static size_t from_symtab(struct ga_stacks *s, Dwfl_Module *dm, uint64_t ip, struct ga_frame *f)
{
    GElf_Off off;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(dm, ip, &off, &sym, NULL, NULL, NULL);
    if (!name) return 0;
    f->func = keep_name(s, name);
    f->source = GA_SYM_SYMTAB;
    return 1;
}

static int sym_cmp(const void *a, const void *b)
{
    const struct ga_symbol *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The tracer's dladdr name covering ip (size 0: the nearest one below it in the same module). */
static size_t from_dladdr(struct ga_stacks *s, uint64_t ip, uint32_t mod, struct ga_frame *f)
{
    if (!s->n_syms) return 0; /* (qsort must not see the NULL array) */
    if (!s->syms_sorted) {
        qsort(s->syms, s->n_syms, sizeof(*s->syms), sym_cmp);
        s->syms_sorted = 1;
    }
    size_t lo = 0, hi = s->n_syms; /* first symbol above ip */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->syms[mid].addr <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return 0;
    const struct ga_symbol *y = &s->syms[lo - 1];
    if (y->size ? ip - y->addr >= y->size : ga_stacks_module_of(s, y->addr) != mod) return 0;
    f->func = keep_name(s, y->name);
    f->source = GA_SYM_DLADDR;
    return 1;
}

/* A Python pseudo-frame (GT_PYFRAME_IP): its code object's name and file, the ip's line; a code
 * object the trace does not define (file cut short) is "<python code N>". An ip with reserved bits
 * set is an unknown frame. */
static size_t from_python(struct ga_stacks *s, uint64_t ip, struct ga_frame *f)
{
    f->ip = ip;
    f->module = GA_NO_MODULE;
    f->source = GA_SYM_UNKNOWN;
    if (!GT_IP_IS_PYTHON(ip)) return 1;
    const struct ga_pycode *c = ga_stacks_pycode(s, GT_PYFRAME_CODE(ip));
    char name[48];
    snprintf(name, sizeof(name), "<python code %u>", GT_PYFRAME_CODE(ip));
    f->source = GA_SYM_PYTHON;
    /* copies: a later record with the same id would replace c's strings */
    f->func = ga_stacks_keep(s, ga_xstrdup(c ? c->name : name));
    f->file = c ? ga_stacks_keep(s, ga_xstrdup(c->file)) : NULL;
    f->line = GT_PYFRAME_LINE(ip);
    return 1;
}

static size_t symbolize(struct ga_stacks *s, uint64_t ip, struct ga_frame *out)
{
    memset(out, 0, sizeof(*out));
    if (ip & GT_IP_PYTHON) return from_python(s, ip, out);
    uint32_t mod = ga_stacks_module_of(s, ip);
    struct ga_module *m = mod == GA_NO_MODULE ? NULL : &s->mods[mod];
    size_t n = 0;
    if (m && !m->tried) open_module(s, m);
    if (m && m->dwfl_mod) { /* the address in the session, which may be another load's */
        uint64_t at = ip - m->base + m->dwfl_base;
        n = from_dwarf(s, m->dwfl_mod, at, out);
        if (!n) n = from_symtab(s, m->dwfl_mod, at, out);
    }
    if (!n) n = from_dladdr(s, ip, mod, out);
    if (!n) {
        out->source = m ? GA_SYM_OFFSET : GA_SYM_UNKNOWN;
        n = 1;
    }
    for (size_t i = 0; i < n; i++) {
        out[i].ip = ip;
        out[i].module = mod;
    }
    return n;
}

const struct ga_frame *ga_stacks_frames(struct ga_stacks *s, uint64_t ip, size_t *n)
{
    const uint64_t *v = ga_map_find(&s->ip_frames, ip, 0);
    if (!v) {
        struct ga_frame tmp[MAX_INLINE];
        memset(tmp, 0, sizeof(tmp));
        size_t k = symbolize(s, ip, tmp);
        struct ga_frame *set = ga_xmalloc(k * sizeof(*set));
        memcpy(set, tmp, k * sizeof(*tmp));
        s->frame_sets = ga_xgrow(s->frame_sets, &s->sets_cap, s->n_sets, sizeof(*s->frame_sets));
        s->frame_sets[s->n_sets] = set;
        s->frames_by_source[tmp[0].source]++;
        v = ga_map_upsert(&s->ip_frames, ip, 0, (uint64_t)s->n_sets++ << 8 | k, NULL);
    }
    *n = (size_t)(*v & 0xff);
    return s->frame_sets[*v >> 8];
}

const char *ga_frame_label(const struct ga_stacks *s, const struct ga_frame *f, char *buf, size_t n,
                           int full_path)
{
    const struct ga_module *m = f->module == GA_NO_MODULE ? NULL : &s->mods[f->module];
    char where[512] = "";
    if (f->file) {
        const char *file = f->file, *slash = strrchr(file, '/');
        if (!full_path && slash) file = slash + 1;
        snprintf(where, sizeof(where), " (%s:%u)", file, f->line);
    }
    if (f->func)
        snprintf(buf, n, "%s%s", f->func, where);
    else if (m)
        snprintf(buf, n, "%s+0x%" PRIx64 "%s", m->name, f->ip - m->base, where);
    else
        snprintf(buf, n, "0x%" PRIx64, f->ip);
    return buf;
}
