/* --json: the report model as ONE JSON object, schema in docs/REPORT_JSON.md (keep in step). */
#include <stdlib.h>
#include <string.h>

#include "render/json.h"
#include "render/nvml.h"
#include "render/sites.h"
#include "base/util.h"

static jobj *json_cupti(const struct ga_report *r)
{
    const struct ga_facts *f = &r->facts;
    if (!f->have_cupti) return NULL;
    jobj *o = json_object_new_object();
    put(o, "status", ga_json_str(ga_cupti_status_name(f->cupti.h.sub)));
    put(o, "version", ji64(f->cupti.version));
    put(o, "result", ji64(f->cupti.result));
    put(o, "path", ga_json_str(f->cupti_path));
    put(o, "reason", ga_json_str(f->cupti_reason));
    put(o, "clock_offset_ns", ji64(f->cupti.clock_offset_ns));
    return o;
}

static jobj *json_trace(const struct ga_report *r)
{
    const struct ga_read_stats *s = &r->read;
    const struct ga_facts *f = &r->facts;
    jobj *o = json_object_new_object();
    put(o, "path", ga_json_str(r->path));
    put(o, "format_version", ju64(s->header.version));
    put(o, "pid", ju64(s->header.pid));
    put(o, "start_realtime_ns", ju64(s->header.start_realtime_ns));
    put(o, "records", ju64(s->records));
    put(o, "records_written", f->have_end ? ju64(f->end.records) : NULL);
    put(o, "lost_records", ju64(f->lost_records));
    put(o, "truncated", json_object_new_boolean(s->truncated));
    put(o, "truncation", s->truncated ? ga_json_str(s->stop_reason) : NULL);
    put(o, "clean_end", json_object_new_boolean(f->have_end));
    put(o, "end_reason",
        !f->have_end ? NULL
                     : ga_json_str(f->end.reason == GT_END_EXIT       ? "exit"
                             : f->end.reason == GT_END_DISABLED ? "disabled"
                                                                : "unknown"));
    put(o, "chunks", ju64(s->chunks));
    put(o, "gpu_chunks", ju64(s->gpu_chunks));
    put(o, "gpu_records", ju64(s->gpu_records));
    put(o, "unknown_records", ju64(s->unknown_records));
    put(o, "malformed_records", ju64(s->malformed_records));
    put(o, "late_records", ju64(s->late_records));
    put(o, "duplicate_chunks", ju64(s->duplicate_chunks));
    put(o, "concatenated", json_object_new_boolean(s->concatenated));
    char gpu[300];
    put(o, "gpu_timeline", ga_json_str(ga_report_gpu_timeline(r, gpu, sizeof(gpu))));
    put(o, "cupti", json_cupti(r));
    put(o, "cupti_dropped", ju64(r->gpu.dropped));
    return o;
}

static jobj *json_process(const struct ga_report *r)
{
    const struct ga_facts *f = &r->facts;
    jobj *o = json_object_new_object(), *argv = json_object_new_array();
    for (size_t i = 0; i < f->argc; i++)
        json_object_array_add(argv, ga_json_str(f->argv[i]));
    put(o, "pid", ju64(f->have_process ? f->pid : r->read.header.pid));
    put(o, "ppid", ju64(f->have_process ? f->ppid : r->read.header.ppid));
    put(o, "cmdline", argv);
    put(o, "host", ga_json_str(f->host));
    put(o, "exe", ga_json_str(f->exe));
    put(o, "duration_ns", ju64(ga_report_duration(r)));
    put(o, "driver_version", f->have_driver ? ji64(f->driver_version) : NULL);
    return o;
}

static jobj *json_devices(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->facts.n_devices; i++) {
        const struct ga_device_info *d = &r->facts.devices[i];
        jobj *o = json_object_new_object();
        char cc[32], uuid[33];
        int any = 0;
        snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
        for (int k = 0; k < 16; k++) {
            snprintf(uuid + 2 * k, 3, "%02x", d->uuid[k]);
            any |= d->uuid[k];
        }
        put(o, "ordinal", ji64(d->ordinal));
        put(o, "name", ga_json_str(d->name));
        put(o, "total_bytes", ju64(d->total_bytes));
        put(o, "cc", d->cc_major >= 0 ? ga_json_str(cc) : NULL); /* the shim writes -1 when unknown */
        put(o, "uuid", any ? ga_json_str(uuid) : NULL);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *json_threads(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->facts.n_threads; i++) {
        jobj *o = json_object_new_object();
        put(o, "tid", ju64(r->facts.threads[i].tid));
        put(o, "name", ga_json_str(r->facts.threads[i].name));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *json_notes(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->facts.n_notes; i++) {
        const struct ga_note *n = &r->facts.notes[i];
        jobj *o = json_object_new_object();
        put(o, "time_ns", ji64(ga_report_rel(r, n->ts)));
        put(o, "tid", ju64(n->tid));
        put(o, "level", ga_json_str(n->level == GT_NOTE_WARNING ? "warning" : "info"));
        put(o, "text", ga_json_str(n->text));
        json_object_array_add(a, o);
    }
    char caveat[400];
    if (ga_report_gpu_caveat(r, caveat, sizeof(caveat))) { /* the report's own: no time, no tid */
        jobj *o = json_object_new_object();
        put(o, "time_ns", NULL);
        put(o, "tid", NULL);
        put(o, "level", ga_json_str("warning"));
        put(o, "text", ga_json_str(caveat));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *json_resolve_counts(const struct ga_resolve_how *c)
{
    jobj *o = json_object_new_object();
    put(o, "lookups", ju64(c->lookups));
    put(o, "wrapped", ju64(c->wrapped));
    put(o, "passed_through", ju64(c->passed_through));
    put(o, "not_found", ju64(c->not_found));
    return o;
}

static jobj *json_resolver(const struct ga_report *r)
{
    jobj *o = json_resolve_counts(&r->facts.resolve_total), *a = json_object_new_array();
    for (unsigned how = 0; how < 4; how++) {
        if (!r->facts.resolve[how].lookups) continue;
        jobj *h = json_resolve_counts(&r->facts.resolve[how]);
        put(h, "how", ga_json_str(ga_resolve_how_name(how)));
        json_object_array_add(a, h);
    }
    put(o, "by_how", a);
    return o;
}

static jobj *json_objects(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        const uint64_t *c = r->facts.objects[api];
        if (!c[0] && !c[1]) continue;
        jobj *o = json_object_new_object();
        put(o, "api", api_name(api));
        put(o, "count", ju64(c[0]));
        put(o, "failed", ju64(c[1]));
        json_object_array_add(a, o);
    }
    return a;
}

int ga_render_json(const struct ga_report *r, FILE *out)
{
    jobj *root = json_object_new_object();
    put(root, "schema_version", ji64(GA_SCHEMA_VERSION));
    put(root, "generator", ga_json_str(GA_GENERATOR));
    put(root, "trace", json_trace(r));
    put(root, "process", json_process(r));
    put(root, "devices", json_devices(r));
    put(root, "threads", json_threads(r));
    jobj *memory = ga_json_memory(r), *timeline = ga_json_timeline(r);
    ga_json_sites(&r->siteview, root, memory, timeline);
    put(root, "memory", memory);
    put(root, "timeline", timeline);
    put(root, "device_state", ga_json_device_state(&r->nvmlview));
    put(root, "objects", json_objects(r));
    put(root, "resolver", json_resolver(r));
    put(root, "notes", json_notes(r));
    put(root, "notes_omitted", ju64(r->facts.notes_dropped));
    int flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE;
    int rc = ga_json_write(&r->gpuview, root, flags, out);
    json_object_put(root);
    return rc;
}
