/* The model's resolved stacks (model/view_stack.c) and the sites view (model/view_sites.c) on
 * Python frames built by hand: a frame, stack or site asked for twice is resolved once (the same
 * pointer), labels say what ga_frame_label says, a stack keeps GA_VSTACK_FRAMES frames and counts
 * the rest, stack 0 is none and an undefined stack has no frames; the sites view ranks by bytes,
 * and its list's stacks share GA_VSITES_LIST_FRAMES frames in the list's order. */
#include <stdlib.h>
#include <string.h>

#include "analyses/memory.h"
#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "model/view_sites.h"
#include "model/view_stack.h"
#include "check.h"
#include "stack_events.h"

#define SITES 70 /* 70 stacks of 256 frames: past the list's frame budget (64 of them) */

/* Stacks: 1..255 a shared chain of main.py lines (the outer frames); 1000 + k: site k's
 * innermost frame, function fK of /src/s.py, under it (256 frames); 2000..2299: 300 frames. */
static void build(struct ga_stacks *st)
{
    static uint64_t ips[300];
    static char names[SITES][16];
    pycode(st, 1, "/src/main.py", "main");
    for (uint32_t i = 0; i < 255; i++)
        ips[i] = GT_PYFRAME_IP(1, i + 1);
    nodes(st, 1, 0, ips, 255);
    for (uint32_t k = 0; k < SITES; k++) {
        snprintf(names[k], sizeof(names[k]), "f%u", k);
        pycode(st, 10 + k, "/src/s.py", names[k]);
        nodes(st, 1000 + k, 255, (const uint64_t[]){GT_PYFRAME_IP(10 + k, 7)}, 1);
    }
    pycode(st, 2, "/src/deep.py", "recurse");
    for (uint32_t i = 0; i < 300; i++)
        ips[i] = GT_PYFRAME_IP(2, i + 1);
    nodes(st, 2000, 0, ips, 300);
}

static void test_table(struct ga_stacks *st, struct ga_sites *si)
{
    struct ga_vstacks t;
    char label[256];
    ga_vstacks_init(&t, st, si);
    CHECK("stack 0: none", ga_vstacks_stack(&t, 0) == NULL);
    CHECK("site of stack 0: none", ga_vstacks_site_of(&t, 0) == NULL);
    const struct ga_vstack *u = ga_vstacks_stack(&t, 99999);
    CHECK("an undefined stack: no frames", u && u->n == 0 && u->total == 0 && u->id == 99999);
    const struct ga_vstack *d = ga_vstacks_stack(&t, 2299);
    CHECK_U64("300 frames: the first kept", d ? d->n : 0, GA_VSTACK_FRAMES);
    CHECK_U64("300 frames: all counted", d ? d->total : 0, 300);
    CHECK("asked again: the same stack", ga_vstacks_stack(&t, 2299) == d);
    if (d && d->n) {
        const struct ga_vframe *f = d->frames[0];
        CHECK_STR("innermost frame's label", f->label, "recurse (deep.py:300)");
        CHECK_STR("its label with the path", f->label_path, "recurse (/src/deep.py:300)");
        CHECK("python, no module",
              f->python && !f->module && !f->module_path && !f->inlined && f->line == 300);
        CHECK_STR("symbolized by", f->symbolized_by, "python");
        size_t n;
        const struct ga_frame *af = ga_stacks_frames(st, GT_PYFRAME_IP(2, 300), &n);
        CHECK_STR("label: ga_frame_label's", f->label,
                  n ? ga_frame_label(st, af, label, sizeof(label), 0) : NULL);
        CHECK("a frame asked again: the same frame", n && ga_vstacks_frame(&t, af) == f);
    }
    const struct ga_vstack *a = ga_vstacks_stack(&t, 1000), *b = ga_vstacks_stack(&t, 1001);
    CHECK("two stacks share their outer frames",
          a && b && a->n == 256 && b->n == 256 && a->frames[1] == b->frames[1] &&
              a->frames[0] != b->frames[0]);
    const struct ga_vsite *s = ga_vstacks_site_of(&t, 1001);
    CHECK("a site: its frame is the stack's innermost (interned)",
          s && b && s->frame == b->frames[0] && !s->library && s->stacks == 1);
    CHECK("a site asked again: the same site", s && ga_vstacks_site_of(&t, 1001) == s);
    ga_vstacks_free(&t);
}

static void test_sites_view(struct ga_stacks *st, struct ga_sites *si)
{
    struct ga_vstacks t;
    struct ga_vsites v;
    ga_vstacks_init(&t, st, si);
    ga_vsites_build(&v, si, &t);
    const struct ga_vsite_list *l = &v.by_bytes;
    CHECK("stacks recorded", v.have_stacks);
    CHECK_U64("sites listed (and the deep stack's)", l->n, SITES + 1);
    CHECK_U64("none omitted", l->omitted, 0);
    int order = 1;
    size_t frames = 0;
    for (size_t i = 0; i < l->n && i < SITES; i++) {
        char want[24];
        snprintf(want, sizeof(want), "f%zu", i);
        order &= l->rows[i].site && l->rows[i].site->frame &&
                 strcmp(l->rows[i].site->frame->func, want) == 0 &&
                 l->rows[i].st.alloc_bytes == 1000 - i;
        frames += l->rows[i].frames;
    }
    CHECK("by bytes, heaviest first", order);
    CHECK("the deep stack's site last: nothing of the budget left",
          l->n == SITES + 1 && l->rows[SITES].frames == 0 && l->rows[SITES].stack &&
              l->rows[SITES].stack->total == 300);
    CHECK_U64("the list's frames: its budget", frames, GA_VSITES_LIST_FRAMES);
    CHECK_U64("site 63: its whole stack", l->n > 63 ? l->rows[63].frames : 0, 256);
    CHECK("site 64: none left, the stack still whole",
          l->n > 64 && l->rows[64].frames == 0 && l->rows[64].stack &&
              l->rows[64].stack->n == 256);
    CHECK_U64("no launches: no launch sites", v.by_launches.n, 0);
    ga_vsites_free(&v);
    ga_vstacks_free(&t);
}

int main(void)
{
    struct ga_stacks st;
    struct ga_sites si;
    struct ga_memory m;
    ga_stacks_init(&st);
    ga_memory_init(&m);
    build(&st);
    CHECK("built-in pattern compiles", ga_sites_init(&si, NULL) == 0);
    for (uint32_t k = 0; k < SITES; k++)
        alloc(&si, 1000 + k, 1000 - k);
    alloc(&si, 2299, 1);
    ga_sites_finish(&si, &st, &m);
    test_table(&st, &si);
    test_sites_view(&st, &si);
    ga_sites_free(&si);
    ga_memory_free(&m);
    ga_stacks_free(&st);
    printf("%d passed, %d failed\n", check_pass, check_fail);
    return check_fail != 0;
}
