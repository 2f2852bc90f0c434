/* Extent sets as a treap with split/merge (see extents.h). Every node keeps the largest extent
 * length of its subtree, so the largest free extent is the root's and stays exact after every
 * insert, removal, split and coalesce. Recursion depth is the treap's depth: O(log n) expected,
 * since priorities come from our own generator, never from trace data. */
#include "analyses/extents.h"

#include <stdlib.h>

#include "base/util.h"

struct ga_ext_node {
    uint64_t start, end; /* [start, end), end > start */
    uint64_t max;        /* largest end - start in this subtree */
    uint32_t prio;
    struct ga_ext_node *l, *r;
};

typedef struct ga_ext_node node;

static uint64_t len_of(const node *n)
{
    return n->end - n->start;
}

static uint64_t max_of(const node *n)
{
    return n ? n->max : 0;
}

static void pull(node *n)
{
    uint64_t m = len_of(n), a = max_of(n->l), b = max_of(n->r);
    n->max = m > a ? (m > b ? m : b) : (a > b ? a : b);
}

static uint32_t next_prio(struct ga_extents *x)
{
    uint32_t s = x->rng;
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return x->rng = s;
}

static node *make(struct ga_extents *x, uint64_t start, uint64_t end)
{
    node *n = ga_xmalloc(sizeof(*n));
    *n = (node){.start = start, .end = end, .max = end - start, .prio = next_prio(x)};
    return n;
}

/* a: nodes with start < key; b: the rest. */
static void split(node *t, uint64_t key, node **a, node **b)
{
    if (!t) {
        *a = *b = NULL;
    } else if (t->start < key) {
        split(t->r, key, &t->r, b);
        pull(t);
        *a = t;
    } else {
        split(t->l, key, a, &t->l);
        pull(t);
        *b = t;
    }
}

/* Every start in a is below every start in b. */
static node *merge(node *a, node *b)
{
    if (!a) return b;
    if (!b) return a;
    if (a->prio > b->prio) {
        a->r = merge(a->r, b);
        pull(a);
        return a;
    }
    b->l = merge(a, b->l);
    pull(b);
    return b;
}

static node *pop_min(node **t)
{
    node *n = *t;
    if (!n->l) {
        *t = n->r;
        n->r = NULL;
        return n;
    }
    node *m = pop_min(&n->l);
    pull(n);
    return m;
}

static node *pop_max(node **t)
{
    node *n = *t;
    if (!n->r) {
        *t = n->l;
        n->l = NULL;
        return n;
    }
    node *m = pop_max(&n->r);
    pull(n);
    return m;
}

static const node *peek_min(const node *t)
{
    while (t && t->l)
        t = t->l;
    return t;
}

static const node *peek_max(const node *t)
{
    while (t && t->r)
        t = t->r;
    return t;
}

/* The node with the greatest start below `key` (strictly), or NULL. */
static const node *below(const node *t, uint64_t key)
{
    const node *best = NULL;
    while (t) {
        if (t->start < key) {
            best = t;
            t = t->r;
        } else {
            t = t->l;
        }
    }
    return best;
}

/* The node with the smallest start at or above `key`, or NULL. */
static const node *at_or_above(const node *t, uint64_t key)
{
    const node *best = NULL;
    while (t) {
        if (t->start >= key) {
            best = t;
            t = t->l;
        } else {
            t = t->r;
        }
    }
    return best;
}

/* Gives the node that starts at `key` the extent [ns, ne) in place (the caller keeps the order)
 * and fixes the maxima on the way back up: one descent. 1 if found. */
static int reshape(node *t, uint64_t key, uint64_t ns, uint64_t ne)
{
    int found;
    if (!t) return 0;
    if (key < t->start) {
        found = reshape(t->l, key, ns, ne);
    } else if (key > t->start) {
        found = reshape(t->r, key, ns, ne);
    } else {
        t->start = ns;
        t->end = ne;
        found = 1;
    }
    if (found) pull(t);
    return found;
}

/* Inserts node n (no overlap with t): one descent, then a split below where it lands. */
static node *insert(node *t, node *n)
{
    if (!t) return n;
    if (n->prio > t->prio) {
        split(t, n->start, &n->l, &n->r);
        pull(n);
        return n;
    }
    if (n->start < t->start)
        t->l = insert(t->l, n);
    else
        t->r = insert(t->r, n);
    pull(t);
    return t;
}

/* Unlinks the node that starts at `key` into *gone (NULL if none). */
static node *erase(node *t, uint64_t key, node **gone)
{
    if (!t) return NULL;
    if (key == t->start) {
        *gone = t;
        return merge(t->l, t->r);
    }
    if (key < t->start)
        t->l = erase(t->l, key, gone);
    else
        t->r = erase(t->r, key, gone);
    pull(t);
    return t;
}

static void free_tree(node *t)
{
    while (t) { /* the right spine iteratively, the left subtrees recursively (depth O(log n)) */
        node *r = t->r;
        free_tree(t->l);
        free(t);
        t = r;
    }
}

static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

void ga_ext_init(struct ga_extents *x)
{
    *x = (struct ga_extents){.rng = 0x9e3779b9u};
}

void ga_ext_free(struct ga_extents *x)
{
    free_tree(x->root);
    ga_ext_init(x);
}

static void forget(struct ga_extents *x, node *n)
{
    x->total -= len_of(n);
    x->count--;
    free(n);
}

/* ga_ext_add of a range that touches no extent or only borders them (the common case: a block
 * freed between free or used neighbours): in place, no split. 0 when it overlaps something. */
static int add_fast(struct ga_extents *x, uint64_t addr, uint64_t end)
{
    const node *p = below(x->root, addr), *n = at_or_above(x->root, addr);
    if ((p && p->end > addr) || (n && n->start < end)) return 0;
    int join_p = p && p->end == addr, join_n = n && n->start == end;
    if (join_p && join_n) { /* fills the gap between two extents: they become one */
        uint64_t ne = n->end, ps = p->start;
        node *gone = NULL;
        x->root = erase(x->root, n->start, &gone);
        free(gone);
        x->count--;
        reshape(x->root, ps, ps, ne);
    } else if (join_p) {
        reshape(x->root, p->start, p->start, end);
    } else if (join_n) {
        reshape(x->root, n->start, addr, n->end);
    } else {
        x->root = insert(x->root, make(x, addr, end));
        x->count++;
    }
    x->total += end - addr;
    return 1;
}

int ga_ext_carve(struct ga_extents *x, uint64_t addr, uint64_t len)
{
    uint64_t end = addr + len;
    if (!len || end < addr || addr == UINT64_MAX) return -1;
    const node *p = below(x->root, addr + 1); /* the greatest start <= addr */
    if (!p || p->end < end) return -1;
    uint64_t s = p->start, e = p->end;
    if (s == addr && e == end) {
        node *gone = NULL;
        x->root = erase(x->root, s, &gone);
        free(gone);
        x->count--;
    } else if (s == addr) {
        reshape(x->root, s, end, e);
    } else {
        reshape(x->root, s, s, addr);
        if (e > end) {
            x->root = insert(x->root, make(x, end, e));
            x->count++;
        }
    }
    x->total -= len;
    return 0;
}

uint64_t ga_ext_add(struct ga_extents *x, uint64_t addr, uint64_t len)
{
    uint64_t end = addr + len, lo = addr, hi = end, had = 0;
    node *l, *r;
    if (!len || end < addr) return 0;
    if (add_fast(x, addr, end)) return len;
    split(x->root, addr, &l, &r);
    const node *p = peek_max(l);
    if (p && p->end >= addr) { /* overlaps or touches from the left: absorb it */
        node *m = pop_max(&l);
        had += m->end > addr ? min64(m->end, end) - addr : 0;
        lo = m->start;
        hi = max64(hi, m->end);
        forget(x, m);
    }
    for (p = peek_min(r); p && p->start <= hi; p = peek_min(r)) {
        node *m = pop_min(&r);
        had += m->start < end ? min64(m->end, end) - m->start : 0;
        hi = max64(hi, m->end);
        forget(x, m);
    }
    x->total += hi - lo;
    x->count++;
    x->root = merge(merge(l, make(x, lo, hi)), r);
    return len - had;
}

uint64_t ga_ext_remove(struct ga_extents *x, uint64_t addr, uint64_t len)
{
    uint64_t end = addr + len, removed = 0;
    node *l, *r;
    if (!len || end < addr) return 0;
    if (ga_ext_carve(x, addr, len) == 0) return len; /* inside one extent: in place */
    split(x->root, addr, &l, &r);
    const node *p = peek_max(l);
    if (p && p->end > addr) { /* starts before the range and reaches into it: cut it */
        node *m = pop_max(&l);
        removed += min64(m->end, end) - addr;
        if (m->end > end) { /* the range was inside it: its tail is a new extent */
            r = merge(make(x, end, m->end), r);
            x->count++;
        }
        m->end = addr;
        pull(m);
        l = merge(l, m);
    }
    for (p = peek_min(r); p && p->start < end; p = peek_min(r)) {
        node *m = pop_min(&r);
        if (m->end <= end) {
            removed += len_of(m);
            x->count--;
            free(m);
            continue;
        }
        removed += end - m->start;
        m->start = end;
        pull(m);
        r = merge(m, r);
        break;
    }
    x->total -= removed;
    x->root = merge(l, r);
    return removed;
}

int ga_ext_insert(struct ga_extents *x, uint64_t addr, uint64_t len)
{
    node *l, *r;
    if (!len || addr + len < addr || ga_ext_overlaps(x, addr, len)) return -1;
    split(x->root, addr, &l, &r);
    x->root = merge(merge(l, make(x, addr, addr + len)), r);
    x->total += len;
    x->count++;
    return 0;
}

uint64_t ga_ext_take(struct ga_extents *x, uint64_t addr)
{
    node *l, *r;
    uint64_t len = 0;
    const node *p = at_or_above(x->root, addr);
    if (!p || p->start != addr) return 0;
    split(x->root, addr, &l, &r);
    node *m = pop_min(&r);
    len = len_of(m);
    forget(x, m);
    x->root = merge(l, r);
    return len;
}

uint64_t ga_ext_largest(const struct ga_extents *x)
{
    return max_of(x->root);
}

int ga_ext_overlaps(const struct ga_extents *x, uint64_t addr, uint64_t len)
{
    uint64_t end = addr + len;
    if (!len) return 0;
    if (end < addr) end = UINT64_MAX; /* a wrapping query: everything from addr up */
    const node *p = below(x->root, end);
    return p && p->end > addr;
}

/* No extent holds the address UINT64_MAX (ends are exclusive and never wrap). */
int ga_ext_covers(const struct ga_extents *x, uint64_t addr, uint64_t len)
{
    if (!len || addr + len < addr || addr == UINT64_MAX) return 0;
    const node *p = below(x->root, addr + 1); /* the greatest start <= addr */
    return p && p->end >= addr + len;
}

int ga_ext_next(const struct ga_extents *x, uint64_t addr, uint64_t *start, uint64_t *len)
{
    if (addr == UINT64_MAX) return 0;
    const node *p = below(x->root, addr + 1);
    if (!p || p->end <= addr) p = at_or_above(x->root, addr + 1);
    if (!p) return 0;
    *start = p->start;
    *len = len_of(p);
    return 1;
}
