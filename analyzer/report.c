/* One pass: the reader feeds every host record, in time order, to each analysis. */
#include "report.h"

#include <stdio.h>
#include <string.h>

void ga_report_init(struct ga_report *r, const char *path)
{
    memset(r, 0, sizeof(*r));
    r->path = path;
    ga_facts_init(&r->facts);
    ga_memory_init(&r->mem);
    ga_timeline_init(&r->tl);
}

void ga_report_event(void *report, const struct ga_event *ev)
{
    struct ga_report *r = report;
    if (!r->started) {
        r->mem.t0 = r->read.header.start_monotonic_ns;
        r->started = 1;
    }
    ga_facts_event(&r->facts, ev);
    ga_memory_event(&r->mem, ev);
    ga_timeline_event(&r->tl, ev);
}

int64_t ga_report_rel(const struct ga_report *r, uint64_t ts)
{
    return (int64_t)(ts - r->read.header.start_monotonic_ns);
}

uint64_t ga_report_duration(const struct ga_report *r)
{
    if (!r->facts.have_ts) return 0;
    int64_t d = ga_report_rel(r, r->facts.last_ts);
    return d > 0 ? (uint64_t)d : 0;
}

void ga_report_finish(struct ga_report *r)
{
    r->mem.t0 = r->read.header.start_monotonic_ns;
    ga_memory_finish(&r->mem, r->facts.have_ts ? r->facts.last_ts : r->mem.t0);
    ga_timeline_finish(&r->tl);
}

int ga_report_run(struct ga_report *r)
{
    if (ga_read_trace(r->path, ga_report_event, r, &r->read) != 0) return -1;
    ga_report_finish(r);
    return 0;
}

const char *ga_report_gpu_timeline(const struct ga_report *r, char *buf, size_t n)
{
    const struct ga_facts *f = &r->facts;
    static const char *const why[] = {
        [GT_CUPTI_ON] = "this reader does not decode GPU activity records yet",
        [GT_CUPTI_OFF_BY_USER] = "turned off (GPUTRACE_CUPTI=off)",
        [GT_CUPTI_NOT_FOUND] = "no libcupti could be loaded",
        [GT_CUPTI_OWNED] = "another profiler holds CUPTI",
        [GT_CUPTI_FAILED] = "CUPTI failed",
    };
    unsigned st = f->cupti.h.sub;
    const char *reason = f->cupti_reason ? f->cupti_reason : "";
    if (strncmp(reason, ": ", 2) == 0) reason += 2;
    if (!f->have_cupti)
        snprintf(buf, n, "unavailable: the trace has no CUPTI status record");
    else if (st != GT_CUPTI_ON && *reason) /* the shim's own words say it best */
        snprintf(buf, n, "unavailable: %s%s", st == GT_CUPTI_FAILED ? "CUPTI: " : "", reason);
    else
        snprintf(buf, n, "unavailable: %s",
                 st <= GT_CUPTI_FAILED ? why[st] : "unknown CUPTI status");
    return buf;
}

void ga_report_free(struct ga_report *r)
{
    ga_facts_free(&r->facts);
    ga_memory_free(&r->mem);
    ga_timeline_free(&r->tl);
}
