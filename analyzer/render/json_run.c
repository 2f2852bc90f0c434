/* The JSON report's facts of the run: the root's trace, process, devices and threads objects,
 * and its objects, resolver and notes. Reads the run's view alone (model/view_run.h). */
#include "render/run.h"
#include "render/json_put.h"

static jobj *cupti(const struct ga_vrun *v)
{
    if (!v->have_cupti) return NULL;
    jobj *o = json_object_new_object();
    put(o, "status", ga_json_str(v->cupti_status));
    put(o, "version", ji64(v->cupti_version));
    put(o, "result", ji64(v->cupti_result));
    put(o, "path", ga_json_str(v->cupti_path));
    put(o, "reason", ga_json_str(v->cupti_reason));
    put(o, "clock_offset_ns", ji64(v->cupti_clock_offset_ns));
    return o;
}

static jobj *trace(const struct ga_vrun *v)
{
    jobj *o = json_object_new_object();
    put(o, "path", ga_json_str(v->path));
    put(o, "format_version", ju64(v->format_version));
    put(o, "pid", ju64(v->header_pid));
    put(o, "start_realtime_ns", ju64(v->start_realtime_ns));
    put(o, "records", ju64(v->records));
    put(o, "records_written", v->clean_end ? ju64(v->records_written) : NULL);
    put(o, "lost_records", ju64(v->lost_records));
    put(o, "truncated", json_object_new_boolean(v->truncated));
    put(o, "truncation", v->truncated ? ga_json_str(v->stop_reason) : NULL);
    put(o, "clean_end", json_object_new_boolean(v->clean_end));
    put(o, "end_reason", ga_json_str(v->end_reason));
    put(o, "chunks", ju64(v->chunks));
    put(o, "gpu_chunks", ju64(v->gpu_chunks));
    put(o, "gpu_records", ju64(v->gpu_records));
    put(o, "unknown_records", ju64(v->unknown_records));
    put(o, "malformed_records", ju64(v->malformed_records));
    put(o, "late_records", ju64(v->late_records));
    put(o, "duplicate_chunks", ju64(v->duplicate_chunks));
    put(o, "concatenated", json_object_new_boolean(v->concatenated));
    put(o, "gpu_timeline", ga_json_str(v->gpu_timeline));
    put(o, "cupti", cupti(v));
    put(o, "cupti_dropped", ju64(v->cupti_dropped));
    return o;
}

static jobj *process(const struct ga_vrun *v)
{
    jobj *o = json_object_new_object(), *argv = json_object_new_array();
    for (size_t i = 0; i < v->argc; i++)
        json_object_array_add(argv, ga_json_str(v->argv[i]));
    put(o, "pid", ju64(v->pid));
    put(o, "ppid", ju64(v->ppid));
    put(o, "cmdline", argv);
    put(o, "host", ga_json_str(v->host));
    put(o, "exe", ga_json_str(v->exe));
    put(o, "duration_ns", ju64(v->duration_ns));
    put(o, "driver_version", v->have_driver ? ji64(v->driver_version) : NULL);
    return o;
}

static jobj *devices(const struct ga_vrun *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_devices; i++) {
        const struct ga_vrun_device *d = &v->devices[i];
        jobj *o = json_object_new_object();
        char cc[32];
        snprintf(cc, sizeof(cc), "%d.%d", d->cc_major, d->cc_minor);
        put(o, "ordinal", ji64(d->ordinal));
        put(o, "name", ga_json_str(d->name));
        put(o, "total_bytes", ju64(d->total_bytes));
        put(o, "cc",
            d->cc_major >= 0 ? ga_json_str(cc) : NULL); /* the shim writes -1 when unknown */
        put(o, "uuid", d->uuid[0] ? ga_json_str(d->uuid) : NULL);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *threads(const struct ga_vrun *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_threads; i++) {
        jobj *o = json_object_new_object();
        put(o, "tid", ju64(v->threads[i].tid));
        put(o, "name", ga_json_str(v->threads[i].name));
        json_object_array_add(a, o);
    }
    return a;
}

void ga_json_run_head(const struct ga_vrun *v, jobj *root)
{
    put(root, "trace", trace(v));
    put(root, "process", process(v));
    put(root, "devices", devices(v));
    put(root, "threads", threads(v));
}

static jobj *notes(const struct ga_vrun *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_notes; i++) {
        const struct ga_vrun_note *n = &v->notes[i];
        jobj *o = json_object_new_object();
        put(o, "time_ns", ji64(n->ns));
        put(o, "tid", ju64(n->tid));
        put(o, "level", ga_json_str(n->warning ? "warning" : "info"));
        put(o, "text", ga_json_str(n->text));
        json_object_array_add(a, o);
    }
    if (v->caveat) { /* the report's own: no time, no tid */
        jobj *o = json_object_new_object();
        put(o, "time_ns", NULL);
        put(o, "tid", NULL);
        put(o, "level", ga_json_str("warning"));
        put(o, "text", ga_json_str(v->caveat));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *resolve_counts(const struct ga_vrun_resolve *c)
{
    jobj *o = json_object_new_object();
    put(o, "lookups", ju64(c->lookups));
    put(o, "wrapped", ju64(c->wrapped));
    put(o, "passed_through", ju64(c->passed_through));
    put(o, "not_found", ju64(c->not_found));
    return o;
}

static jobj *resolver(const struct ga_vrun *v)
{
    jobj *o = resolve_counts(&v->resolve_total), *a = json_object_new_array();
    for (size_t i = 0; i < v->n_resolve; i++) {
        jobj *h = resolve_counts(&v->resolve[i]);
        put(h, "how", ga_json_str(v->resolve[i].how));
        json_object_array_add(a, h);
    }
    put(o, "by_how", a);
    return o;
}

static jobj *objects(const struct ga_vrun *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_objects; i++) {
        jobj *o = json_object_new_object();
        put(o, "api", json_object_new_string(v->objects[i].name));
        put(o, "count", ju64(v->objects[i].count));
        put(o, "failed", ju64(v->objects[i].failed));
        json_object_array_add(a, o);
    }
    return a;
}

void ga_json_run_tail(const struct ga_vrun *v, jobj *root)
{
    put(root, "objects", objects(v));
    put(root, "resolver", resolver(v));
    put(root, "notes", notes(v));
    put(root, "notes_omitted", ju64(v->notes_dropped));
}

void ga_json_run_launches(const struct ga_vrun *v, jobj *timeline)
{
    jobj *a = json_object_new_array();
    put(timeline, "launch_count", ju64(v->launch_count));
    put(timeline, "launch_failed", ju64(v->launch_failed));
    put(timeline, "kernel_count", ju64(v->gpu_kernel_count));
    put(timeline, "kernel_names", ju64(v->n_kernel_names));
    for (size_t i = 0; i < v->n_launches; i++) {
        const struct ga_vrun_api *c = &v->launches[i];
        jobj *o = json_object_new_object();
        put(o, "api", json_object_new_string(c->name));
        put(o, "count", ju64(c->count));
        put(o, "failed", ju64(c->failed));
        put(o, "call_ns", ju64(c->total_ns));
        json_object_array_add(a, o);
    }
    put(timeline, "launches_by_api", a);
}

void ga_json_run_spans(const struct ga_vrun *v, jobj *timeline)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_spans; i++) {
        const struct ga_vrun_api *c = &v->spans[i];
        jobj *o = json_object_new_object();
        put(o, "api", json_object_new_string(c->name));
        put(o, "family", json_object_new_string(c->family));
        put(o, "count", ju64(c->count));
        put(o, "failed", ju64(c->failed));
        put(o, "total_ns", ju64(c->total_ns));
        put(o, "bytes", ju64(c->bytes));
        json_object_array_add(a, o);
    }
    put(timeline, "spans", a);
}
