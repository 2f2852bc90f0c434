/* ga_report_event hands each analysis only the record types of its mask (GA_*_TYPES, declared
 * next to the analysis's event function). Each mask must cover every type its analysis looks at:
 * fed a record of any type outside it, the analysis must leave its state as it was. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/state.h"

static char text[64] = "name\0more\0and more";

/* A record of `type` whose fields are all set (any analysis that read one would act on it). */
static void fill(struct ga_event *ev, unsigned type, unsigned variant)
{
    memset(ev, 0, sizeof(*ev));
    memset(&ev->own, variant ? 0x01 : 0x5a, sizeof(ev->own));
    ev->r = &ev->own;
    ev->type = (uint16_t)type;
    ev->sub = (uint16_t)(variant ? 0 : 3);
    ev->size = 64;
    ev->tid = 1234;
    ev->ts = 5000000000ull + variant;
    ev->order = 7;
    for (int i = 0; i < 3; i++) {
        ev->str[i] = text;
        ev->str_len[i] = 8;
    }
}

typedef void (*event_fn)(void *state, const struct ga_event *ev);

/* For every type outside mask: state (size bytes, freshly set up) does not change. Stops at the
 * first type that changes it, leaving the state as that record made it (what the analysis took
 * is then the caller's to free, with the analysis's own free function). */
static int ignores_others(void *state, size_t size, event_fn fn, uint64_t mask)
{
    unsigned char *before = malloc(size);
    struct ga_event ev;
    int ok = 1;
    memcpy(before, state, size);
    for (unsigned type = 0; type < 64 && ok; type++) {
        if (mask >> type & 1) continue;
        for (unsigned variant = 0; variant < 2 && ok; variant++) {
            fill(&ev, type, variant);
            fn(state, &ev);
            if (memcmp(before, state, size) != 0) {
                printf("     type %u changed the state\n", type);
                ok = 0;
            }
        }
    }
    free(before);
    return ok;
}

/* Each analysis's event function as an event_fn. */
#define EVENT_FN(name, fn)                                                                         \
    static void name(void *s, const struct ga_event *ev)                                           \
    {                                                                                              \
        fn(s, ev);                                                                                 \
    }
EVENT_FN(facts_fn, ga_facts_event)
EVENT_FN(memory_fn, ga_memory_event)
EVENT_FN(timeline_fn, ga_timeline_event)
EVENT_FN(gaps_fn, ga_gaps_event)
EVENT_FN(stacks_fn, ga_stacks_event)
EVENT_FN(sites_fn, ga_sites_event)

static void test_masks(void)
{
    static struct ga_facts facts;
    static struct ga_memory mem;
    static struct ga_timeline tl;
    static struct ga_gaps gaps;
    static struct ga_stacks stacks;
    static struct ga_sites sites;
    ga_facts_init(&facts);
    ga_memory_init(&mem);
    ga_timeline_init(&tl);
    ga_gaps_init(&gaps, GA_GAPS_TOP);
    ga_stacks_init(&stacks);
    ga_sites_init(&sites, NULL);
    CHECK("facts ignores the types outside GA_FACTS_TYPES",
          ignores_others(&facts, sizeof(facts), facts_fn, GA_FACTS_TYPES));
    CHECK("memory ignores the types outside GA_MEMORY_TYPES",
          ignores_others(&mem, sizeof(mem), memory_fn, GA_MEMORY_TYPES));
    CHECK("timeline ignores the types outside GA_TIMELINE_TYPES",
          ignores_others(&tl, sizeof(tl), timeline_fn, GA_TIMELINE_TYPES));
    CHECK("gaps ignores the types outside GA_GAPS_TYPES",
          ignores_others(&gaps, sizeof(gaps), gaps_fn, GA_GAPS_TYPES));
    CHECK("stacks ignores the types outside GA_STACKS_TYPES",
          ignores_others(&stacks, sizeof(stacks), stacks_fn, GA_STACKS_TYPES));
    CHECK("sites ignores the types outside GA_SITES_TYPES",
          ignores_others(&sites, sizeof(sites), sites_fn, GA_SITES_TYPES));
    /* the check sees a change: each analysis acts on a type of its mask */
    CHECK("the check notices facts taking a driver record",
          !ignores_others(&facts, sizeof(facts), facts_fn, ~(1ull << GT_REC_DRIVER)));
    CHECK("the check notices sites taking an allocation",
          !ignores_others(&sites, sizeof(sites), sites_fn, ~(1ull << GT_REC_ALLOC)));
    ga_facts_free(&facts);
    ga_memory_free(&mem);
    ga_timeline_free(&tl);
    ga_gaps_free(&gaps);
    ga_stacks_free(&stacks);
    ga_sites_free(&sites);
}

/* Launches of more handles than the timeline's handle cache holds, interleaved so that slots
 * change hands all the time: every handle keeps its own count. */
static void test_timeline_handles(void)
{
    static struct ga_timeline tl;
    enum { HANDLES = 3 * GA_TL_HANDLE_CACHE + 5 };
    struct ga_event ev;
    uint64_t total = 0;
    int counts_ok = 1;
    ga_timeline_init(&tl);
    memset(&ev, 0, sizeof(ev));
    ev.r = &ev.own;
    ev.type = GT_REC_LAUNCH;
    ev.sub = GT_API_cuLaunchKernel;
    for (unsigned round = 0; round < HANDLES; round++)
        for (unsigned h = round; h < HANDLES; h++) { /* handle h: h + 1 launches */
            ev.own.launch.func = 0x7f0000000000ull + (uint64_t)h * 0x40;
            ga_timeline_event(&tl, &ev);
        }
    ga_timeline_finish(&tl);
    CHECK_U64("one kernel per handle", tl.n_kernels, HANDLES);
    for (size_t i = 0; i < tl.n_kernels; i++) {
        unsigned long long handle = 0;
        if (sscanf(tl.kernels[i].name, "<unknown %llx>", &handle) != 1 ||
            tl.kernels[i].count != (handle - 0x7f0000000000ull) / 0x40 + 1)
            counts_ok = 0;
        total += tl.kernels[i].count;
    }
    CHECK("each handle's launches counted", counts_ok);
    CHECK_U64("all launches counted", total, (uint64_t)HANDLES * (HANDLES + 1) / 2);
    ga_timeline_free(&tl);
}

/* Allocations at more stacks than the sites' stack cache holds, interleaved so that cache slots
 * change hands all the time: every stack keeps its own counts. */
static void test_site_stacks(void)
{
    static struct ga_sites sites;
    enum { STACKS = 3 * GA_SITES_STACK_CACHE + 5 };
    struct ga_event ev;
    int counts_ok = 1;
    ga_sites_init(&sites, NULL);
    memset(&ev, 0, sizeof(ev));
    ev.r = &ev.own;
    ev.type = GT_REC_ALLOC;
    ev.own.alloc.size = 10;
    for (uint32_t round = 1; round <= STACKS; round++)
        for (uint32_t k = round; k <= STACKS; k++) { /* stack k: k allocations */
            ev.own.alloc.stack = k;
            ga_sites_event(&sites, &ev);
        }
    CHECK_U64("one entry per stack", sites.n_stacks, STACKS);
    for (uint32_t k = 1; k <= STACKS; k++) {
        const uint64_t *i = ga_map_find(&sites.by_stack, k, 0);
        if (!i || sites.per_stack[*i].allocs != k || sites.per_stack[*i].alloc_bytes != 10 * k)
            counts_ok = 0;
    }
    CHECK("each stack's allocations counted", counts_ok);
    ga_sites_free(&sites);
}

int main(void)
{
    test_masks();
    test_timeline_handles();
    test_site_stacks();
    printf("%d passed, %d failed\n", check_pass, check_fail);
    return check_fail != 0;
}
