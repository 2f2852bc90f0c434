/* The stack table as the trace defines it: nodes by id, modules, dladdr symbols. Stacks are
 * resolved at the end of the pass (nodes may be defined after the events that use them). */
#include "analyses/stacks.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define MAX_NODES (1u << 30) /* ids past this in a corrupt trace are ignored */

void ga_stacks_init(struct ga_stacks *s)
{
    memset(s, 0, sizeof(*s));
}

#define DENSE_SLACK 65536 /* ids the array may run ahead of the nodes defined so far */

static const struct ga_node *node_at(const struct ga_stacks *s, uint32_t id)
{
    if (id < s->n_nodes) return &s->nodes[id];
    const uint64_t *v = ga_map_find(&s->far_idx, id, 0);
    return v ? &s->far[*v] : NULL;
}

/* Extends the array to hold id, moving in the nodes the map held for the ids it now covers. */
static void grow_dense(struct ga_stacks *s, uint32_t id)
{
    uint64_t v;
    s->nodes = ga_xgrow(s->nodes, &s->nodes_cap, id, sizeof(*s->nodes));
    memset(s->nodes + s->n_nodes, 0, (id + 1 - s->n_nodes) * sizeof(*s->nodes));
    for (size_t i = s->n_nodes; i <= id && s->far_idx.count; i++)
        if (ga_map_remove(&s->far_idx, i, 0, &v)) s->nodes[i] = s->far[v];
    s->n_nodes = (size_t)id + 1;
}

static struct ga_node *node_put(struct ga_stacks *s, uint32_t id)
{
    int added = 0;
    if (id >= s->n_nodes && id < 2 * s->defined + DENSE_SLACK) grow_dense(s, id);
    if (id < s->n_nodes) return &s->nodes[id];
    uint64_t *v = ga_map_upsert(&s->far_idx, id, 0, s->n_far, &added);
    if (added) {
        s->far = ga_xgrow(s->far, &s->far_cap, s->n_far, sizeof(*s->far));
        memset(&s->far[s->n_far++], 0, sizeof(*s->far));
    }
    return &s->far[*v];
}

static void on_stack(struct ga_stacks *s, const struct ga_event *ev)
{
    const struct gt_rec_stack *r = &ev->r->stack;
    uint64_t count = ev->str_len[0] / 8;
    s->stack_records++;
    if (!r->first_id || r->first_id >= MAX_NODES || count >= MAX_NODES - r->first_id) return;
    for (uint64_t i = 0; i < count; i++) {
        struct ga_node *n = node_put(s, (uint32_t)(r->first_id + i));
        memcpy(&n->ip, ev->str[0] + 8 * i, 8);
        n->parent = i ? (uint32_t)(r->first_id + i - 1) : r->parent;
        if (!n->defined) s->defined++;
        n->defined = 1;
    }
}

static void on_module(struct ga_stacks *s, const struct ga_event *ev)
{
    const struct gt_rec_module *r = &ev->r->module;
    s->mods = ga_xgrow(s->mods, &s->mods_cap, s->n_mods, sizeof(*s->mods));
    struct ga_module *m = &s->mods[s->n_mods++];
    memset(m, 0, sizeof(*m));
    m->path = ga_xstrndup(ev->str[0], ev->str_len[0]);
    const char *slash = strrchr(m->path, '/');
    m->name = slash ? slash + 1 : m->path;
    m->base = r->base;
    m->start = r->start;
    m->size = r->size;
    m->build_id_len = ev->str_len[1] <= sizeof(m->build_id) ? ev->str_len[1] : 0;
    memcpy(m->build_id, ev->str[1], m->build_id_len);
    s->segs_ok = 0;
}

/* A code object; an id defined twice (corrupt trace) keeps its latest names. */
static void on_pycode(struct ga_stacks *s, const struct ga_event *ev)
{
    int added = 0;
    uint64_t *v = ga_map_upsert(&s->py_of, ev->r->pycode.id, 0, s->n_py, &added);
    if (added) {
        s->py = ga_xgrow(s->py, &s->py_cap, s->n_py++, sizeof(*s->py));
    } else {
        free(s->py[*v].file);
        free(s->py[*v].name);
    }
    struct ga_pycode *c = &s->py[*v];
    c->file = ga_xstrndup(ev->str[0], ev->str_len[0]);
    c->name = ga_xstrndup(ev->str[1], ev->str_len[1]);
    c->first_line = ev->r->pycode.first_line;
}

const struct ga_pycode *ga_stacks_pycode(const struct ga_stacks *s, uint32_t id)
{
    const uint64_t *v = ga_map_find(&s->py_of, id, 0);
    return v ? &s->py[*v] : NULL;
}

static void on_symbol(struct ga_stacks *s, const struct ga_event *ev)
{
    s->syms = ga_xgrow(s->syms, &s->syms_cap, s->n_syms, sizeof(*s->syms));
    s->syms[s->n_syms++] = (struct ga_symbol){ev->r->symbol.addr, ev->r->symbol.size,
                                              ga_xstrndup(ev->str[0], ev->str_len[0])};
    s->syms_sorted = 0;
}

void ga_stacks_event(struct ga_stacks *s, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_STACK:
        on_stack(s, ev);
        break;
    case GT_REC_MODULE:
        on_module(s, ev);
        break;
    case GT_REC_SYMBOL:
        on_symbol(s, ev);
        break;
    case GT_REC_PYCODE:
        on_pycode(s, ev);
        break;
    default:
        break;
    }
}

size_t ga_stacks_ips(const struct ga_stacks *s, uint32_t id, uint64_t *ips, size_t max)
{
    size_t n = 0;
    const struct ga_node *node;
    /* max also bounds a parent cycle in a corrupt trace */
    while (id && (node = node_at(s, id)) != NULL && node->defined && n < max) {
        ips[n++] = node->ip;
        id = node->parent;
    }
    return n;
}

/* ---- which module holds an address ---------------------------------------------------------
 * The latest module record covering ip wins (an object loaded where another was unloaded).
 * Looking at every module for every ip cost modules x ips (a trace can name a million of
 * each), so the ranges are cut once into segments with their winner: a sweep over the sorted
 * range ends with a max-heap of the modules open there, then a binary search per lookup. */

struct edge {
    uint64_t at;
    uint32_t mod;
    uint32_t open; /* 1: the range starts here, 0: it ends here */
};

static int by_at(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
    size_t i = (*n)++;
    for (; i && h[(i - 1) / 2] < v; i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
    uint32_t v = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] > h[c]) c++;
        if (h[c] <= v) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = v;
}

static void add_segment(struct ga_stacks *s, uint64_t at, uint32_t mod, size_t *cap)
{
    if (s->n_segs && s->seg_mod[s->n_segs - 1] == mod) return; /* the same winner goes on */
    size_t c = *cap;
    s->seg_start = ga_xgrow(s->seg_start, cap, s->n_segs, sizeof(*s->seg_start));
    s->seg_mod = ga_xgrow(s->seg_mod, &c, s->n_segs, sizeof(*s->seg_mod));
    s->seg_start[s->n_segs] = at;
    s->seg_mod[s->n_segs++] = mod;
}

static void build_segments(struct ga_stacks *s)
{
    struct edge *e = ga_xcalloc(2 * s->n_mods + 1, sizeof(*e));
    uint32_t *heap = ga_xcalloc(s->n_mods + 1, sizeof(*heap));
    uint8_t *open = ga_xcalloc(s->n_mods + 1, 1);
    size_t ne = 0, nh = 0, cap = 0;
    for (size_t i = 0; i < s->n_mods; i++) {
        const struct ga_module *m = &s->mods[i];
        if (!m->size) continue;
        e[ne++] = (struct edge){m->start, (uint32_t)i, 1};
        if (m->start + m->size > m->start) /* else it runs to the end of the address space */
            e[ne++] = (struct edge){m->start + m->size, (uint32_t)i, 0};
    }
    qsort(e, ne, sizeof(*e), by_at);
    s->n_segs = 0;
    for (size_t i = 0; i < ne;) {
        uint64_t at = e[i].at;
        for (; i < ne && e[i].at == at; i++) {
            open[e[i].mod] = (uint8_t)e[i].open;
            if (e[i].open) heap_push(heap, &nh, e[i].mod);
        }
        while (nh && !open[heap[0]]) /* ranges that ended: dropped when they reach the top */
            heap_pop(heap, &nh);
        add_segment(s, at, nh ? heap[0] : GA_NO_MODULE, &cap);
    }
    free(e);
    free(heap);
    free(open);
    s->segs_ok = 1;
}

uint32_t ga_stacks_module_of(struct ga_stacks *s, uint64_t ip)
{
    if (!s->segs_ok) build_segments(s);
    size_t lo = 0, hi = s->n_segs; /* first segment starting above ip */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->seg_start[mid] <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? s->seg_mod[lo - 1] : GA_NO_MODULE;
}

void ga_stacks_free_table(struct ga_stacks *s)
{
    for (size_t i = 0; i < s->n_mods; i++)
        free(s->mods[i].path);
    for (size_t i = 0; i < s->n_syms; i++)
        free(s->syms[i].name);
    for (size_t i = 0; i < s->n_py; i++) {
        free(s->py[i].file);
        free(s->py[i].name);
    }
    free(s->py);
    ga_map_free(&s->py_of);
    free(s->nodes);
    free(s->far);
    ga_map_free(&s->far_idx);
    free(s->seg_start);
    free(s->seg_mod);
    free(s->mods);
    free(s->syms);
    memset(s, 0, sizeof(*s));
}
