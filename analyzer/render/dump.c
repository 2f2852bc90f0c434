/* --dump: every record in time order, host and GPU merged, one line each:
 *   <ns from trace start> tid=<tid> <TYPE> <api or -> key=value ...
 * A GPU record's time is its start time as the record holds it (before the CUPTI record's clock
 * offset); GPU_EXTCORR and GPU_NAME have none ("-") and appear where they are in the file.
 * Strings are quoted with \" \\ and \xNN escapes. Meant for tests and debugging. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/dump.h"
#include "base/util.h"

static void api_col(FILE *o, const struct ga_vrecord *ev)
{
    char buf[16];
    fprintf(o, " %s", ga_vrec_api_name(ev->sub, buf));
}

static void str_kv(FILE *o, const char *key, const char *s, uint32_t n)
{
    fprintf(o, " %s=\"", key);
    ga_put_escaped(o, s, n);
    fputc('"', o);
}

/* " stack=<node id>" for events that carry one (nothing for 0: traces without stacks dump as
 * they did). */
static void stack_kv(FILE *o, uint32_t stack)
{
    if (stack) fprintf(o, " stack=%u", stack);
}

static void dump_process(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_process *r = &ev->r->process;
    fprintf(o, " - pid=%u ppid=%u argc=%u", r->pid, r->ppid, r->argc);
    str_kv(o, "argv", ev->str[0], ev->str_len[0]);
    str_kv(o, "host", ev->str[1], ev->str_len[1]);
    str_kv(o, "exe", ev->str[2], ev->str_len[2]);
}

static void dump_device(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_device *r = &ev->r->device;
    fprintf(o, " - ordinal=%d cc=%d.%d total=%" PRIu64, r->ordinal, r->cc_major, r->cc_minor,
            r->total_bytes);
    str_kv(o, "name", ev->str[0], ev->str_len[0]);
}

static void dump_alloc(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_alloc *r = &ev->r->alloc;
    api_col(o, ev);
    fprintf(o,
            " addr=0x%" PRIx64 " size=%" PRIu64 " device=%d ctx=0x%" PRIx64 " stream=0x%" PRIx64
            " aux=0x%" PRIx64 " flags=0x%x dur_ns=%u",
            r->addr, r->size, r->device, r->ctx, r->stream, r->aux, r->flags, r->dur_ns);
    stack_kv(o, r->stack);
}

static void dump_free(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_free *r = &ev->r->free;
    api_col(o, ev);
    fprintf(o, " addr=0x%" PRIx64 " stream=0x%" PRIx64 " size=%" PRIu64 " result=%d dur_ns=%u",
            r->addr, r->stream, r->size, r->result, r->dur_ns);
    stack_kv(o, r->stack);
}

static void dump_fail(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_alloc_fail *r = &ev->r->alloc_fail;
    api_col(o, ev);
    fprintf(o,
            " size=%" PRIu64 " device=%d free=%" PRIu64 " total=%" PRIu64
            " result=%d ctx=0x%" PRIx64 " stream=0x%" PRIx64 " dur_ns=%u",
            r->size, r->device, r->free_bytes, r->total_bytes, r->result, r->ctx, r->stream,
            r->dur_ns);
    stack_kv(o, r->stack);
}

static void dump_map(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_vmm_map *r = &ev->r->vmm_map;
    api_col(o, ev);
    fprintf(
        o, " addr=0x%" PRIx64 " size=%" PRIu64 " offset=%" PRIu64 " handle=0x%" PRIx64 " result=%d",
        r->addr, r->size, r->offset, r->handle, r->result);
}

static const char *pool_op_name(unsigned op)
{
    static const char *const names[] = {"-", "create", "add_range", "remove_range", "destroy"};
    return op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

static const char *block_op_name(unsigned op)
{
    static const char *const names[] = {"-", "alloc", "free", "fail"};
    return op < sizeof(names) / sizeof(names[0]) ? names[op] : "?";
}

/* POOL <op> pool=... addr=... size=... device=... [name="..."] [stack=...] */
static void dump_pool(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_pool *r = &ev->r->pool;
    fprintf(o, " %s pool=0x%" PRIx64 " addr=0x%" PRIx64 " size=%" PRIu64 " device=%d",
            pool_op_name(ev->sub), r->pool, r->addr, r->size, r->device);
    if (ev->sub == GT_POOL_CREATE) str_kv(o, "name", ev->str[0], ev->str_len[0]);
    stack_kv(o, r->stack);
}

static void dump_block(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_block *r = &ev->r->block;
    fprintf(o, " %s pool=0x%" PRIx64 " addr=0x%" PRIx64 " size=%" PRIu64, block_op_name(ev->sub),
            r->pool, r->addr, r->size);
    stack_kv(o, r->stack);
}

static void dump_pool_usage(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_pool_usage *r = &ev->r->pool_usage;
    fprintf(o,
            " - pool=0x%" PRIx64 " device=%d reserved=%" PRIu64 " reserved_high=%" PRIu64
            " used=%" PRIu64 " used_high=%" PRIu64,
            r->pool, r->device, r->reserved_current, r->reserved_high, r->used_current,
            r->used_high);
}

static void dump_launch(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_launch *r = &ev->r->launch;
    api_col(o, ev);
    fprintf(o,
            " func=0x%" PRIx64 " stream=0x%" PRIx64 " corr=0x%" PRIx64
            " grid=%u,%u,%u block=%u,%u,%u shmem=%u result=%d dur_ns=%u",
            r->func, r->stream, r->corr, r->grid[0], r->grid[1], r->grid[2], r->block[0],
            r->block[1], r->block[2], r->shmem, r->result, r->dur_ns);
    stack_kv(o, r->stack);
}

static void dump_span(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_span *r = &ev->r->span;
    api_col(o, ev);
    fprintf(o, " dur_ns=%" PRId64 " object=0x%" PRIx64 " bytes=%" PRIu64 " result=%d",
            (int64_t)(r->ts_exit - r->ts_enter), r->object, r->bytes, r->result);
    stack_kv(o, r->stack);
}

static void dump_object(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_object *r = &ev->r->object;
    api_col(o, ev);
    fprintf(o, " handle=0x%" PRIx64 " aux=0x%" PRIx64 " device=%d result=%d", r->handle, r->aux,
            r->device, r->result);
}

static void dump_resolve(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_resolve *r = &ev->r->resolve;
    fprintf(o, " %s", ga_vrec_resolve_how_name(ev->sub));
    str_kv(o, "name", ev->str[0], ev->str_len[0]);
    char buf[16];
    fprintf(o, " version=%d flags=0x%x api=%s status=%u", r->version, r->flags,
            r->api ? ga_vrec_api_name(r->api, buf) : "0", r->status);
}

static void dump_gpu_act(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_gpu_kernel *k = &ev->r->gpu_kernel;
    const struct gt_rec_gpu_memcpy *c = &ev->r->gpu_memcpy;
    const struct gt_rec_gpu_memset *m = &ev->r->gpu_memset;
    switch (ev->type) {
    case GT_REC_GPU_KERNEL:
        fprintf(o,
                " - dur_ns=%" PRId64 " corr=%u device=%u context=%u stream=%u graph=%u"
                " node=%" PRIu64 " name_id=%u",
                (int64_t)(k->end - k->start), k->corr, k->device, k->context, k->stream,
                k->graph_id, k->graph_node_id, k->name_id);
        break;
    case GT_REC_GPU_MEMCPY:
        fprintf(o,
                " %s dur_ns=%" PRId64 " bytes=%" PRIu64 " corr=%u device=%u dst_device=%u"
                " stream=%u src_kind=%u dst_kind=%u flags=0x%x",
                ga_vrec_copy_kind_name(ev->sub), (int64_t)(c->end - c->start), c->bytes, c->corr,
                c->device, c->dst_device, c->stream, c->src_kind, c->dst_kind, c->flags);
        break;
    default:
        fprintf(o,
                " - dur_ns=%" PRId64 " bytes=%" PRIu64 " corr=%u device=%u stream=%u value=%u"
                " mem_kind=%u",
                (int64_t)(m->end - m->start), m->bytes, m->corr, m->device, m->stream, m->value,
                m->mem_kind);
        break;
    }
}

static void dump_gpu_other(FILE *o, const struct ga_vrecord *ev)
{
    switch (ev->type) {
    case GT_REC_GPU_EXTCORR:
        fprintf(o, " - ext=0x%" PRIx64 " corr=%u kind=%u", ev->r->gpu_extcorr.ext,
                ev->r->gpu_extcorr.corr, ev->r->gpu_extcorr.kind);
        break;
    case GT_REC_GPU_API:
        fprintf(o, " - dur_ns=%" PRId64 " corr=%u tid=%u cbid=%u result=%d",
                (int64_t)(ev->r->gpu_api.end - ev->r->gpu_api.start), ev->r->gpu_api.corr,
                ev->r->gpu_api.tid, ev->r->gpu_api.cbid, ev->r->gpu_api.result);
        break;
    case GT_REC_GPU_NAME:
        fprintf(o, " - id=%u", ev->r->gpu_name.id);
        str_kv(o, "name", ev->str[0], ev->str_len[0]);
        break;
    default: /* GT_REC_GPU_DROPPED */
        fprintf(o, " - count=%" PRIu64, ev->r->gpu_dropped.count);
        break;
    }
}

/* STACK: its nodes as id:ip<parent ...; MODULE: range, bias, build-id in hex, path; SYMBOL;
 * PYCODE: id, first line, file, name. */
static void dump_stacks(FILE *o, const struct ga_vrecord *ev)
{
    if (ev->type == GT_REC_STACK) {
        const struct gt_rec_stack *r = &ev->r->stack;
        uint32_t n = ev->str_len[0] / 8;
        fprintf(o, " - first=%u parent=%u count=%u ips=", r->first_id, r->parent, n);
        for (uint32_t i = 0; i < n; i++) {
            uint64_t ip;
            memcpy(&ip, ev->str[0] + 8 * i, 8);
            fprintf(o, "%s0x%" PRIx64, i ? "," : "", ip);
        }
    } else if (ev->type == GT_REC_MODULE) {
        const struct gt_rec_module *r = &ev->r->module;
        fprintf(o, " - start=0x%" PRIx64 " size=%" PRIu64 " base=0x%" PRIx64 " build_id=", r->start,
                r->size, r->base);
        for (uint32_t i = 0; i < ev->str_len[1]; i++)
            fprintf(o, "%02x", (unsigned char)ev->str[1][i]);
        str_kv(o, "path", ev->str[0], ev->str_len[0]);
    } else if (ev->type == GT_REC_PYCODE) {
        fprintf(o, " - id=%u first_line=%u", ev->r->pycode.id, ev->r->pycode.first_line);
        str_kv(o, "file", ev->str[0], ev->str_len[0]);
        str_kv(o, "name", ev->str[1], ev->str_len[1]);
    } else {
        fprintf(o, " - addr=0x%" PRIx64 " size=%" PRIu64, ev->r->symbol.addr, ev->r->symbol.size);
        str_kv(o, "name", ev->str[0], ev->str_len[0]);
    }
}

/* NVML: status and device mapping; a sample's answered fields (valid bits as hex); a process. */
static void dump_nvml(FILE *o, const struct ga_vrecord *ev)
{
    static const char *const status[] = {"device", "absent", "failed", "unmatched"};
    if (ev->type == GT_REC_NVML) {
        const struct gt_rec_nvml *r = &ev->r->nvml;
        fprintf(o, " %s device=%d nvml_index=%u max_sm_mhz=%u max_mem_mhz=%u",
                ev->sub < 4 ? status[ev->sub] : "?", r->device, r->nvml_index, r->max_sm_mhz,
                r->max_mem_mhz);
        str_kv(o, "text", ev->str[0], ev->str_len[0]);
        return;
    }
    if (ev->type == GT_REC_NVML_PROC) {
        const struct gt_rec_nvml_proc *r = &ev->r->nvml_proc;
        fprintf(o, " - device=%d pid=%u bytes=%" PRIu64, r->device, r->pid, r->bytes);
        str_kv(o, "name", ev->str[0], ev->str_len[0]);
        return;
    }
    const struct gt_rec_nvml_sample *r = &ev->r->nvml_sample;
    fprintf(o,
            " - device=%d valid=0x%x sm_mhz=%u mem_mhz=%u temp_c=%u power_mw=%u "
            "power_limit_mw=%u util_gpu=%u util_mem=%u reasons=0x%" PRIx64 " mem_used=%" PRIu64,
            r->device, r->valid, r->sm_mhz, r->mem_mhz, r->temp_c, r->power_mw, r->power_limit_mw,
            r->util_gpu, r->util_mem, r->reasons, r->mem_used);
}

static void dump_host_sample(FILE *o, const struct ga_vrecord *ev)
{
    const struct gt_rec_host_sample *r = &ev->r->host_sample;
    fprintf(o,
            " - tid=%u sample_ts=%" PRIu64 " interval_ns=%" PRIu64 " cpu_ns=%" PRIu64
            " stack=%u flags=%s%s%s",
            r->tid, r->sample_ts, r->interval_ns, r->cpu_ns, r->stack,
            (r->flags & GT_SAMPLE_ON_CPU) ? "on_cpu" : "off_cpu",
            (r->flags & GT_SAMPLE_IN_HOOK) ? ",in_hook" : "",
            (r->flags & GT_SAMPLE_PARTIAL) ? ",partial" : "");
}

static void dump_misc(FILE *o, const struct ga_vrecord *ev)
{
    switch (ev->type) {
    case GT_REC_DRIVER:
        fprintf(o, " - version=%d devices=%d", ev->r->driver.driver_version,
                ev->r->driver.device_count);
        break;
    case GT_REC_THREAD:
        fprintf(o, " - tid=%u", ev->r->thread.tid);
        str_kv(o, "name", ev->str[0], ev->str_len[0]);
        break;
    case GT_REC_FUNC:
        fprintf(o, " - handle=0x%" PRIx64 " kind=%u", ev->r->func.handle, ev->r->func.kind);
        str_kv(o, "name", ev->str[0], ev->str_len[0]);
        break;
    case GT_REC_MEMINFO:
        fprintf(o, " - device=%d free=%" PRIu64 " total=%" PRIu64, ev->r->meminfo.device,
                ev->r->meminfo.free_bytes, ev->r->meminfo.total_bytes);
        break;
    case GT_REC_LOST:
        fprintf(o, " - count=%" PRIu64, ev->r->lost.count);
        break;
    case GT_REC_END:
        fprintf(o, " - records=%" PRIu64 " lost=%" PRIu64 " reason=%u", ev->r->end.records,
                ev->r->end.lost, ev->r->end.reason);
        break;
    case GT_REC_NOTE:
        fprintf(o, " - level=%u", ev->r->note.level);
        str_kv(o, "text", ev->str[0], ev->str_len[0]);
        break;
    case GT_REC_CUPTI:
        fprintf(o, " %s version=%d result=%d clock_offset_ns=%" PRId64,
                ga_vrec_cupti_status_name(ev->sub), ev->r->cupti.version, ev->r->cupti.result,
                ev->r->cupti.clock_offset_ns);
        str_kv(o, "path", ev->str[0], ev->str_len[0]);
        str_kv(o, "reason", ev->str[1], ev->str_len[1]);
        break;
    default:
        fprintf(o, " -");
        break;
    }
}

void ga_dump_record(FILE *o, uint64_t t0, const struct ga_vrecord *ev)
{
    if (ev->ts == UINT64_MAX) /* the final watermark: "everything has been written" */
        fprintf(o, "inf tid=%u %s", ev->tid, ga_vrec_type_name(ev->type));
    else if (ev->type == GT_REC_GPU_EXTCORR || ev->type == GT_REC_GPU_NAME) /* no time */
        fprintf(o, "- tid=%u %s", ev->tid, ga_vrec_type_name(ev->type));
    else
        fprintf(o, "%" PRId64 " tid=%u %s", (int64_t)(ev->ts - t0), ev->tid,
                ga_vrec_type_name(ev->type));
    switch (ev->type) {
    case GT_REC_PROCESS:
        dump_process(o, ev);
        break;
    case GT_REC_DEVICE:
        dump_device(o, ev);
        break;
    case GT_REC_ALLOC:
        dump_alloc(o, ev);
        break;
    case GT_REC_FREE:
        dump_free(o, ev);
        break;
    case GT_REC_ALLOC_FAIL:
        dump_fail(o, ev);
        break;
    case GT_REC_VMM_MAP:
        dump_map(o, ev);
        break;
    case GT_REC_POOL:
        dump_pool(o, ev);
        break;
    case GT_REC_BLOCK:
        dump_block(o, ev);
        break;
    case GT_REC_POOL_USAGE:
        dump_pool_usage(o, ev);
        break;
    case GT_REC_LAUNCH:
        dump_launch(o, ev);
        break;
    case GT_REC_SPAN:
        dump_span(o, ev);
        break;
    case GT_REC_OBJECT:
        dump_object(o, ev);
        break;
    case GT_REC_RESOLVE:
        dump_resolve(o, ev);
        break;
    case GT_REC_GPU_KERNEL:
    case GT_REC_GPU_MEMCPY:
    case GT_REC_GPU_MEMSET:
        dump_gpu_act(o, ev);
        break;
    case GT_REC_GPU_EXTCORR:
    case GT_REC_GPU_API:
    case GT_REC_GPU_NAME:
    case GT_REC_GPU_DROPPED:
        dump_gpu_other(o, ev);
        break;
    case GT_REC_STACK:
    case GT_REC_MODULE:
    case GT_REC_SYMBOL:
    case GT_REC_PYCODE:
        dump_stacks(o, ev);
        break;
    case GT_REC_TORCH_STATS ... GT_REC_TORCH_OOM:
    case GT_REC_TORCH_ROLES:
    case GT_REC_TORCH_STEP:
    case GT_REC_TORCH_TRACE:
        ga_dump_torch(o, ev);
        break;
    case GT_REC_NVML:
    case GT_REC_NVML_SAMPLE:
    case GT_REC_NVML_PROC:
        dump_nvml(o, ev);
        break;
    case GT_REC_HOST_SAMPLE:
        dump_host_sample(o, ev);
        break;
    default:
        dump_misc(o, ev);
        break;
    }
    fputc('\n', o);
}

static void print(void *out, uint64_t t0, const struct ga_vrecord *rec)
{
    ga_dump_record(out, t0, rec);
}

int ga_dump_trace(const char *path, FILE *out, struct ga_read_notes *notes, uint64_t *late)
{
    return ga_vrecords_each(path, print, out, notes, late);
}
