/* The page's timeline as it is kept (model/view_timeline.h builds it; the page renders it): the
 * bounds and the plain records of the busy columns, detail windows, longest activities, idle
 * gaps and host calls. Includes no analysis header. */
#ifndef GA_VIEW_TLV_H
#define GA_VIEW_TLV_H

#include <stdint.h>

#define GA_TLV_COLS      16384u /* busy columns per lane: the chart's 1,100 pixels times ~16 */
#define GA_TLV_SLOT_COLS 8u     /* columns per exact-detail window */
#define GA_TLV_SLOTS     (GA_TLV_COLS / GA_TLV_SLOT_COLS)
#define GA_TLV_SLOT_ACTS 64u /* activities a window may always keep */
#define GA_TLV_DETAIL    (GA_TLV_SLOTS * GA_TLV_SLOT_ACTS) /* activities kept in all windows */
#define GA_TLV_BASE_NS   64u /* the first column width */
#define GA_TLV_MAX_SHIFT 40u /* columns of at most 64 ns << 40 (19.5 hours; the grid: 36 years) */
#define GA_TLV_LANES     64u
#define GA_TLV_LONGEST   1000u
#define GA_TLV_GAPS      5000u
#define GA_TLV_HOST      2000u

struct ga_tlv_act {
    uint64_t start, end; /* ns from the trace start */
    uint32_t name;       /* index into names */
    uint16_t lane;       /* index into lanes */
    uint8_t kind;        /* enum ga_gpu_kind */
};

struct ga_tlv_lane {
    uint32_t device, stream;
    uint64_t *busy; /* [GA_TLV_COLS] ns busy, partial columns (and whole ones once folded) */
    int64_t *whole; /* [GA_TLV_COLS + 1] difference array of whole columns covered */
};

struct ga_tlv_slot {
    struct ga_tlv_act *a; /* kept, a[0..n) */
    uint32_t n, cap_a;
    uint64_t cut; /* UINT64_MAX: none lost; else every activity lost starts at or after it */
};

struct ga_tlv_host {
    uint64_t start, end; /* ns from the trace start */
    uint32_t tid;
    uint16_t api;
};

struct ga_tlv_gap {
    uint64_t start, dur; /* ns from the trace start */
    uint32_t device;
    uint8_t cause;
};

#endif
