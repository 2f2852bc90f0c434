/* Python frames in the analyzer: gt_rec_pycode records and GT_PYFRAME_IP nodes become frames
 * "function (file:line)" marked python; the call site of a stack with Python frames is its
 * innermost Python frame outside framework packages; hostile ips and records (unknown code ids,
 * reserved bits, ids defined twice, the largest line) stay harmless. */
#include <stdlib.h>
#include <string.h>

#include "analyses/memory.h"
#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "check.h"
#include "stack_events.h"

static const struct ga_frame *frame(struct ga_stacks *s, uint64_t ip)
{
    size_t n;
    const struct ga_frame *f = ga_stacks_frames(s, ip, &n);
    return n == 1 ? f : NULL;
}

static void test_frames(void)
{
    struct ga_stacks s;
    char label[256];
    ga_stacks_init(&s);
    pycode(&s, 1, "/src/train.py", "Trainer.step");
    pycode(&s, 2, "/src/old.py", "old");
    pycode(&s, 2, "/src/model.py", "forward"); /* defined twice: the latest wins */
    const struct ga_frame *f = frame(&s, GT_PYFRAME_IP(1, 88));
    CHECK("python frame", f && f->source == GA_SYM_PYTHON && f->module == GA_NO_MODULE);
    CHECK_STR("function", f ? f->func : NULL, "Trainer.step");
    CHECK_STR("file", f ? f->file : NULL, "/src/train.py");
    CHECK_U64("line", f ? f->line : 0, 88);
    CHECK_STR("label", f ? ga_frame_label(&s, f, label, sizeof(label), 0) : NULL,
              "Trainer.step (train.py:88)");
    f = frame(&s, GT_PYFRAME_IP(2, GT_PY_LINE_MAX));
    CHECK_STR("redefined id: latest name", f ? f->func : NULL, "forward");
    CHECK_U64("largest line", f ? f->line : 0, GT_PY_LINE_MAX);
    f = frame(&s, GT_PYFRAME_IP(7, 3));
    CHECK("undefined code id: still python",
          f && f->source == GA_SYM_PYTHON && f->file == NULL && f->line == 3);
    CHECK_STR("undefined code id: name", f ? f->func : NULL, "<python code 7>");
    f = frame(&s, GT_PYFRAME_IP(1, 5) | 1ull << 60);
    CHECK("reserved bits: unknown frame", f && f->source == GA_SYM_UNKNOWN && !f->func);
    f = frame(&s, GT_IP_PYTHON | 0xffffffffull << 24);
    CHECK_STR("code id 2^32-1", f ? f->func : NULL, "<python code 4294967295>");
    ga_stacks_free(&s);
}

/* Sites: stack A = native 0x1000 (no module), torch's empty, alloc_weights, train_step,
 * <module>; stack B = native, torch's empty only; stack C = native only. */
static void test_sites(void)
{
    struct ga_stacks st;
    struct ga_sites si;
    struct ga_memory m;
    ga_stacks_init(&st);
    ga_memory_init(&m);
    pycode(&st, 1, "train.py", "<module>");
    pycode(&st, 2, "train.py", "train_step");
    pycode(&st, 3, "train.py", "alloc_weights");
    pycode(&st, 4, "/usr/lib/python3/dist-packages/torch/__init__.py", "empty");
    const uint64_t a[] = {GT_PYFRAME_IP(1, 90), GT_PYFRAME_IP(2, 20), GT_PYFRAME_IP(3, 12),
                          GT_PYFRAME_IP(4, 5), 0x1000};
    nodes(&st, 1, 0, a, 5);                          /* A = node 5 */
    nodes(&st, 6, 0, a + 3, 2);                      /* B = node 7 */
    nodes(&st, 8, 0, (const uint64_t[]){0x2000}, 1); /* C = node 8 */
    CHECK("built-in pattern compiles", ga_sites_init(&si, NULL) == 0);
    alloc(&si, 5, 100);
    alloc(&si, 7, 10);
    alloc(&si, 8, 1);
    ga_sites_finish(&si, &st, &m);
    size_t n;
    const struct ga_site **v = ga_sites_sorted(&si, GA_SITES_BY_BYTES, &n);
    CHECK_U64("sites", n, 3);
    if (n == 3) {
        CHECK_STR("framework frame skipped", v[0]->frame->func, "alloc_weights");
        CHECK_U64("its line", v[0]->frame->line, 12);
        CHECK_U64("library: none (the native frame has no module)", v[0]->library, GA_NO_MODULE);
        CHECK_STR("only framework frames: the innermost", v[1]->frame->func, "empty");
        CHECK("native only: the native frame",
              v[2]->frame->source == GA_SYM_UNKNOWN && v[2]->frame->ip == 0x2000);
    }
    free(v);
    ga_sites_free(&si);
    /* --ignore-frames replaces the list: torch is no longer skipped, alloc_weights is. */
    CHECK("custom pattern compiles", ga_sites_init(&si, "^alloc_weights$") == 0);
    alloc(&si, 5, 100);
    ga_sites_finish(&si, &st, &m);
    v = ga_sites_sorted(&si, GA_SITES_BY_BYTES, &n);
    CHECK("custom pattern: torch's frame is the site",
          n == 1 && strcmp(v[0]->frame->func, "empty") == 0 && v[0]->frame->line == 5);
    free(v);
    ga_sites_free(&si);
    ga_memory_free(&m);
    ga_stacks_free(&st);
}

int main(void)
{
    test_frames();
    test_sites();
    printf("%d passed, %d failed\n", check_pass, check_fail);
    return check_fail != 0;
}
