/* Unit tests: the trace records that define host stacks and a sited allocation, handed to the
 * stack table and the sites analysis as the reader would (shared by the stack and view tests). */
#ifndef GT_TEST_STACK_EVENTS_H
#define GT_TEST_STACK_EVENTS_H

#include <stdint.h>
#include <string.h>

#include "analyses/sites.h"
#include "analyses/stacks.h"

static void pycode(struct ga_stacks *s, uint32_t id, const char *file, const char *name)
{
    struct ga_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.r = &ev.own;
    ev.type = GT_REC_PYCODE;
    ev.own.pycode.id = id;
    ev.own.pycode.first_line = 1;
    ev.str[0] = file;
    ev.str_len[0] = (uint32_t)strlen(file);
    ev.str[1] = name;
    ev.str_len[1] = (uint32_t)strlen(name);
    ga_stacks_event(s, &ev);
}

/* Nodes first..first+n-1, ips outermost first: the stack of the last is all of them. */
static void nodes(struct ga_stacks *s, uint32_t first, uint32_t parent, const uint64_t *ips,
                  uint32_t n)
{
    struct ga_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.r = &ev.own;
    ev.type = GT_REC_STACK;
    ev.own.stack.first_id = first;
    ev.own.stack.parent = parent;
    ev.own.stack.ips_len = 8 * n;
    ev.str[0] = (const char *)ips;
    ev.str_len[0] = 8 * n;
    ga_stacks_event(s, &ev);
}

static void alloc(struct ga_sites *s, uint32_t stack, uint64_t size)
{
    struct ga_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.r = &ev.own;
    ev.type = GT_REC_ALLOC;
    ev.own.alloc.size = size;
    ev.own.alloc.stack = stack;
    ga_sites_event(s, &ev);
}

#endif
