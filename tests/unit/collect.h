/* A reader sink for the unit tests: keeps a copy of every event (strings included). */
#ifndef GT_TEST_COLLECT_H
#define GT_TEST_COLLECT_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/reader.h"

struct coll {
    struct ga_event *ev;
    size_t n, cap;
};

static inline void coll_sink(void *p, const struct ga_event *ev)
{
    struct coll *c = p;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->ev = realloc(c->ev, c->cap * sizeof(*c->ev));
        if (!c->ev) abort();
    }
    struct ga_event *e = &c->ev[c->n++];
    ga_event_keep(e, ev);
    for (int i = 0; i < 3; i++) {
        char *s = malloc(ev->str_len[i] + 1);
        if (!s) abort();
        if (ev->str_len[i]) memcpy(s, ev->str[i], ev->str_len[i]);
        s[ev->str_len[i]] = 0;
        e->str[i] = s;
    }
}

static inline void coll_clear(struct coll *c)
{
    for (size_t i = 0; i < c->n; i++)
        for (int k = 0; k < 3; k++)
            free((void *)c->ev[i].str[k]);
    c->n = 0;
}

static inline void coll_free(struct coll *c)
{
    coll_clear(c);
    free(c->ev);
    memset(c, 0, sizeof(*c));
}

/* A fresh temporary file name under $TMPDIR (the file exists, empty). */
static inline const char *tmp_path(char buf[256], const char *tag)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, 256, "%s/gt-unit-%s-XXXXXX", dir && *dir ? dir : "/tmp", tag);
    int fd = mkstemp(buf);
    if (fd < 0) abort();
    close(fd);
    return buf;
}

#endif
