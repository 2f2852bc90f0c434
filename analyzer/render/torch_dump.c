/* --dump lines of the PyTorch allocator bridge's records (trace_format.h, "framework
 * allocators"). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/dump.h"
#include "base/util.h"

static void dump_stats(FILE *o, const struct gt_rec_torch_stats *r, unsigned why)
{
    fprintf(o,
            " %s device=%d allocated=%" PRIu64 " allocated_peak=%" PRIu64 " reserved=%" PRIu64
            " reserved_peak=%" PRIu64 " active=%" PRIu64 " inactive_split=%" PRIu64
            " requested=%" PRIu64 " retries=%u ooms=%u segments=%u",
            ga_vrec_torch_why_name(why), r->device, r->allocated, r->allocated_peak, r->reserved,
            r->reserved_peak, r->active, r->inactive_split, r->requested, r->alloc_retries, r->ooms,
            r->segments);
}

static void dump_frame_ids(FILE *o, const struct ga_vrecord *ev)
{
    uint32_t n = ev->str_len[0] / 4;
    fprintf(o, " - id=%u frames=", ev->r->torch_stack.id);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id;
        memcpy(&id, ev->str[0] + 4 * i, 4);
        fprintf(o, "%s%u", i ? "," : "", id);
    }
}

void ga_dump_torch(FILE *o, const struct ga_vrecord *ev)
{
    const union ga_rec *r = ev->r;
    switch (ev->type) {
    case GT_REC_TORCH_STATS:
        dump_stats(o, &r->torch_stats, ev->sub);
        break;
    case GT_REC_TORCH_SNAP:
        fprintf(o, " %s id=%u why=%s segments=%u blocks=%" PRIu64 " flags=0x%x",
                ev->sub == GT_SNAP_END ? "end" : "begin", r->torch_snap.id,
                ga_vrec_torch_why_name(r->torch_snap.why), r->torch_snap.segments,
                r->torch_snap.blocks, r->torch_snap.flags);
        break;
    case GT_REC_TORCH_SEGMENT: {
        const struct gt_rec_torch_segment *g = &r->torch_segment;
        fprintf(o,
                " %s snap=%u device=%d addr=0x%" PRIx64 " size=%" PRIu64 " allocated=%" PRIu64
                " active=%" PRIu64 " requested=%" PRIu64 " stream=0x%" PRIx64 " pool_id=0x%" PRIx64
                " blocks=%u expandable=%u",
                ev->sub == GT_TORCH_POOL_SMALL ? "small" : "large", g->snap, g->device, g->addr,
                g->size, g->allocated, g->active, g->requested, g->stream, g->pool_id, g->blocks,
                g->expandable);
        break;
    }
    case GT_REC_TORCH_BLOCK:
        fprintf(o, " %s snap=%u addr=0x%" PRIx64 " size=%" PRIu64 " requested=%" PRIu64,
                ga_vrec_torch_state_name(ev->sub), r->torch_block.snap, r->torch_block.addr,
                r->torch_block.size, r->torch_block.requested);
        if (r->torch_block.stack) fprintf(o, " stack=%u", r->torch_block.stack);
        break;
    case GT_REC_TORCH_FRAME:
        fprintf(o, " - id=%u line=%u file=\"", r->torch_frame.id, r->torch_frame.line);
        ga_put_escaped(o, ev->str[0], ev->str_len[0]);
        fprintf(o, "\" name=\"");
        ga_put_escaped(o, ev->str[1], ev->str_len[1]);
        fputc('"', o);
        break;
    case GT_REC_TORCH_STACK:
        dump_frame_ids(o, ev);
        break;
    case GT_REC_TORCH_OOM: {
        const struct gt_rec_torch_oom *x = &r->torch_oom;
        fprintf(o,
                " - device=%d requested=%" PRIu64 " limit=%" PRIu64 " device_free=%" PRIu64
                " device_total=%" PRIu64 " allocated=%" PRIu64 " reserved=%" PRIu64
                " snap=%u fraction=%u",
                x->device, x->requested, x->limit, x->device_free, x->device_total, x->allocated,
                x->reserved, x->snap, x->fraction_set);
        if (x->stack) fprintf(o, " stack=%u", x->stack);
        break;
    }
    case GT_REC_TORCH_ROLES: {
        const struct gt_rec_torch_roles *x = &r->torch_roles;
        uint32_t n = ev->str_len[0] / (uint32_t)sizeof(struct gt_torch_role_entry);
        fprintf(o, " %s optimizer=%u step=%" PRIu64 " set_entries=%u entries=%u",
                ev->sub == GT_ROLES_FIRST ? "first" : "more", x->optimizer, x->step, x->set_entries,
                n);
        for (uint32_t i = 0; i < n; i++) {
            struct gt_torch_role_entry e;
            memcpy(&e, ev->str[0] + i * sizeof(e), sizeof(e));
            fprintf(o, " %s@%d:0x%" PRIx64 "+%" PRIu64, ga_vrec_tiers_role_name(e.role), e.device,
                    e.addr, e.bytes);
        }
        break;
    }
    case GT_REC_TORCH_TRACE: {
        static const char *const act[] = {"alloc",         "free_requested", "free_completed",
                                          "segment_alloc", "segment_free",   "segment_map",
                                          "segment_unmap", "other"};
        const struct gt_rec_torch_trace *x = &r->torch_trace;
        uint32_t n = ev->str_len[0] / (uint32_t)sizeof(struct gt_torch_trace_entry);
        fprintf(o, " - device=%d snap=%u flags=%u entries=%u", x->device, x->snap, x->flags, n);
        for (uint32_t i = 0; i < n; i++) {
            struct gt_torch_trace_entry e;
            memcpy(&e, ev->str[0] + i * sizeof(e), sizeof(e));
            fprintf(o, " %s:0x%" PRIx64 "+%" PRIu64 "@%" PRIu64 "us",
                    e.action < 8 ? act[e.action] : "?", e.addr, e.size, e.time_us);
            if (e.stack) fprintf(o, "/s%u", e.stack);
        }
        break;
    }
    case GT_REC_TORCH_STEP: {
        const struct gt_rec_torch_step *x = &r->torch_step;
        fprintf(o,
                " - optimizer=%u step=%" PRIu64 " device=%d weights=%" PRIu64
                "/%u gradients=%" PRIu64 "/%u optimizer_state=%" PRIu64 "/%u",
                x->optimizer, x->step, x->device, x->weights, x->weight_tensors, x->gradients,
                x->gradient_tensors, x->optimizer_state, x->state_tensors);
        if (x->allocated == GT_TORCH_STEP_UNREAD) fputs(" allocated=unread", o);
        else fprintf(o, " allocated=%" PRIu64, x->allocated);
        if (x->reserved == GT_TORCH_STEP_UNREAD) fputs(" reserved=unread", o);
        else fprintf(o, " reserved=%" PRIu64, x->reserved);
        fprintf(o, " hash=0x%" PRIx64 " name=\"", x->roles_hash);
        ga_put_escaped(o, ev->str[0], ev->str_len[0]);
        fputc('"', o);
        break;
    }
    default:
        fprintf(o, " -");
        break;
    }
}
