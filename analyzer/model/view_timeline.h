/* The page's timeline (a report-model view for --html): GPU activities and host blocking and
 * allocation calls within a budget. The first GA_TLV_ACTS activities to leave the GPU analysis
 * (time order per device) are kept; once the budget is spent, the view covers the time from the
 * first activity to the start of the first one left out (`window_end`) and counts the rest, so
 * the page can say what it shows. Host calls inside that window are kept likewise (at most
 * GA_TLV_HOST). Memory: the budget. */
#ifndef GA_VIEW_TIMELINE_H
#define GA_VIEW_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/gpu.h"
#include "base/hashmap.h"
#include "input/records.h"
#include "analyses/timeline.h"

#define GA_TLV_ACTS 20000
#define GA_TLV_HOST 5000

struct ga_tlv_act {
    uint64_t start, end;
    uint32_t device, stream, name; /* name: index into names */
    uint8_t kind;                  /* enum ga_gpu_kind */
};

struct ga_tlv_host {
    uint64_t start, end;
    uint32_t tid;
    uint16_t api;
};

struct ga_tlv {
    struct ga_tlv_act *acts;
    size_t n_acts;
    uint64_t acts_total; /* activities seen, kept or not */
    struct ga_tlv_host *host;
    size_t n_host;
    uint64_t host_total; /* host calls of the kinds kept, seen */
    int full;            /* the activity budget was spent */
    uint64_t window_end; /* when full: start of the first activity left out */
    char **names;        /* after ga_tlv_finish: demangled kernel names ("memcpy HtoD"...) */
    struct ga_gpu_act *name_act; /* while reading: one activity per name key */
    size_t n_names, names_cap;
    struct ga_map name_idx; /* (name_id, function) -> index */
};

void ga_tlv_init(struct ga_tlv *v);
/* The GPU analysis' act_sink (ctx: the view). */
void ga_tlv_act(void *ctx, const struct ga_gpu_act *a, const struct ga_gpu_launch *la);
/* Every host record (in time order): keeps blocking, allocation and free calls. */
void ga_tlv_host_event(struct ga_tlv *v, const struct ga_event *ev);
/* After ga_gpu_finish: names the kernels, drops the host calls past the window. */
void ga_tlv_finish(struct ga_tlv *v, const struct ga_gpu *g, const struct ga_timeline *tl);
void ga_tlv_free(struct ga_tlv *v);

#endif
