/* Collects the facts of facts.h from their records. */
#include "analyses/facts.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void ga_facts_init(struct ga_facts *f)
{
    memset(f, 0, sizeof(*f));
    f->first_ts = UINT64_MAX; /* so that the first time is the least and the greatest so far */
}

const char *ga_resolve_how_name(unsigned how)
{
    switch (how) {
    case GT_RESOLVE_DLSYM:
        return "dlsym";
    case GT_RESOLVE_GETPROC:
        return "cuGetProcAddress";
    case GT_RESOLVE_GETPROC2:
        return "cuGetProcAddress_v2";
    default:
        return "other";
    }
}

const char *ga_cupti_status_name(unsigned status)
{
    switch (status) {
    case GT_CUPTI_ON:
        return "on";
    case GT_CUPTI_OFF_BY_USER:
        return "off_by_user";
    case GT_CUPTI_NOT_FOUND:
        return "not_found";
    case GT_CUPTI_OWNED:
        return "owned";
    case GT_CUPTI_FAILED:
        return "failed";
    case GT_CUPTI_TAKEN:
        return "taken";
    default:
        return "unknown";
    }
}

__attribute__((noinline)) static void on_cupti(struct ga_facts *f, const struct ga_event *ev)
{
    free(f->cupti_path);
    free(f->cupti_reason);
    f->have_cupti = 1;
    f->cupti = ev->r->cupti;
    f->cupti_path = ga_xstrndup(ev->str[0], ev->str_len[0]);
    f->cupti_reason = ga_xstrndup(ev->str[1], ev->str_len[1]);
}

static void free_process(struct ga_facts *f)
{
    for (size_t i = 0; i < f->argc; i++)
        free(f->argv[i]);
    free(f->argv);
    free(f->host);
    free(f->exe);
    f->argv = NULL;
    f->argc = 0;
}

/* argv arrives as NUL-terminated strings back to back; a missing last NUL is tolerated. */
static void split_argv(struct ga_facts *f, const char *s, size_t n)
{
    size_t cap = 0;
    for (size_t i = 0; i < n;) {
        const char *end = memchr(s + i, '\0', n - i);
        size_t len = end ? (size_t)(end - (s + i)) : n - i;
        f->argv = ga_xgrow(f->argv, &cap, f->argc, sizeof(*f->argv));
        f->argv[f->argc++] = ga_xstrndup(s + i, len);
        i += len + 1;
    }
}

__attribute__((noinline)) static void on_process(struct ga_facts *f, const struct ga_event *ev)
{
    free_process(f); /* a second process record (it should not happen) replaces the first */
    f->have_process = 1;
    f->pid = ev->r->process.pid;
    f->ppid = ev->r->process.ppid;
    split_argv(f, ev->str[0], ev->str_len[0]);
    f->host = ga_xstrndup(ev->str[1], ev->str_len[1]);
    f->exe = ga_xstrndup(ev->str[2], ev->str_len[2]);
}

__attribute__((noinline)) static void on_device(struct ga_facts *f, const struct ga_event *ev)
{
    const struct gt_rec_device *r = &ev->r->device;
    struct ga_device_info *d;
    int added = 0;
    uint64_t *idx = ga_map_upsert(&f->dev_idx, (uint32_t)r->ordinal, 0, f->n_devices, &added);
    if (added) {
        f->devices = ga_xgrow(f->devices, &f->dev_cap, f->n_devices, sizeof(*f->devices));
        d = &f->devices[f->n_devices++];
    } else {
        d = &f->devices[*idx];
        free(d->name);
    }
    *d = (struct ga_device_info){.ordinal = r->ordinal,
                                 .cc_major = r->cc_major,
                                 .cc_minor = r->cc_minor,
                                 .total_bytes = r->total_bytes,
                                 .name = ga_xstrndup(ev->str[0], ev->str_len[0])};
    memcpy(d->uuid, r->uuid, sizeof(d->uuid));
}

__attribute__((noinline)) static void on_thread(struct ga_facts *f, const struct ga_event *ev)
{
    f->threads = ga_xgrow(f->threads, &f->thread_cap, f->n_threads, sizeof(*f->threads));
    f->threads[f->n_threads++] =
        (struct ga_thread_info){ev->r->thread.tid, ga_xstrndup(ev->str[0], ev->str_len[0])};
}

__attribute__((noinline)) static void on_note(struct ga_facts *f, const struct ga_event *ev)
{
    if (f->n_notes >= GA_MAX_NOTES) {
        f->notes_dropped++;
        return;
    }
    f->notes = ga_xgrow(f->notes, &f->note_cap, f->n_notes, sizeof(*f->notes));
    f->notes[f->n_notes++] = (struct ga_note){ev->r->note.ts, ev->tid, ev->r->note.level,
                                              ga_xstrndup(ev->str[0], ev->str_len[0])};
}

static void count_resolve(struct ga_resolve_how *c, const struct gt_rec_resolve *r)
{
    c->lookups++;
    if (r->api != 0)
        c->wrapped++;
    else
        c->passed_through++;
    if (r->status != 0) c->not_found++;
}

__attribute__((noinline)) static void on_resolve(struct ga_facts *f, const struct ga_event *ev)
{
    unsigned how = ev->sub <= GT_RESOLVE_GETPROC2 ? ev->sub : 0;
    count_resolve(&f->resolve[how], &ev->r->resolve);
    count_resolve(&f->resolve_total, &ev->r->resolve);
}

/* The records facts keep are rare; their handlers stay out of line (noinline), so that the
 * others cost no stack frame here. */
void ga_facts_event(struct ga_facts *f, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_PROCESS:
        on_process(f, ev);
        break;
    case GT_REC_DRIVER:
        f->have_driver = 1;
        f->driver_version = ev->r->driver.driver_version;
        f->device_count = ev->r->driver.device_count;
        break;
    case GT_REC_DEVICE:
        on_device(f, ev);
        break;
    case GT_REC_THREAD:
        on_thread(f, ev);
        break;
    case GT_REC_NOTE:
        on_note(f, ev);
        break;
    case GT_REC_LOST:
        f->lost_records += ev->r->lost.count;
        break;
    case GT_REC_END:
        f->have_end = 1;
        f->end = ev->r->end;
        break;
    case GT_REC_RESOLVE:
        on_resolve(f, ev);
        break;
    case GT_REC_CUPTI:
        on_cupti(f, ev);
        break;
    case GT_REC_OBJECT:
        if (ev->sub < GT_API_MAX) f->objects[ev->sub][ev->r->object.result != 0]++;
        break;
    default:
        break;
    }
}

void ga_facts_free(struct ga_facts *f)
{
    free_process(f);
    for (size_t i = 0; i < f->n_devices; i++)
        free(f->devices[i].name);
    for (size_t i = 0; i < f->n_threads; i++)
        free(f->threads[i].name);
    for (size_t i = 0; i < f->n_notes; i++)
        free(f->notes[i].text);
    free(f->cupti_path);
    free(f->cupti_reason);
    free(f->devices);
    ga_map_free(&f->dev_idx);
    free(f->threads);
    free(f->notes);
    memset(f, 0, sizeof(*f));
}
