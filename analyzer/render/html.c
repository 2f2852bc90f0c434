/* --html: the page. The renderer only serializes the model (the JSON report, the page's view:
 * model/view_page.h) and wraps it in the page; the drawing is the script's
 * (analyzer/render/html/report.js). JSON inside <script> must never contain "</": every '<' is
 * written as \u003c (it only occurs in strings). */
#include "render/html.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void ga_html_begin(struct ga_html *h)
{
    memset(h, 0, sizeof(*h));
    h->data_f = open_memstream(&h->data, &h->data_len);
    h->events_f = open_memstream(&h->events, &h->events_len);
    if (!h->data_f || !h->events_f) {
        fprintf(stderr, "%s: out of memory\n", GA_PROG);
        exit(2);
    }
}

/* The bytes live at the peak per stack, largest first (the model's order), frames outermost
 * first: [[bytes, [frame...]], ...]; past the view's cap one [bytes, ["[other stacks]"]], stacks
 * the trace does not define under "[unknown stack]", the bytes without a stack under
 * "[no stack]": they add up to the peak. */
static void put_peak_stacks(FILE *o, const struct ga_vpage *v)
{
    int first = 1;
    fputs(",\n\"peak_stacks\":[", o);
    for (size_t i = 0; i < v->n_peak; i++) {
        const struct ga_vpage_stack *x = &v->peak[i];
        fprintf(o, "%s[%" PRIu64 ",[", first ? "" : ",\n", x->bytes);
        first = 0;
        for (size_t k = x->stack->n; k-- > 0;) {
            ga_put_json_str(o, x->labels[k], strlen(x->labels[k]));
            if (k) fputc(',', o);
        }
        fputs("]]", o);
    }
    if (v->peak_other)
        fprintf(o, "%s[%" PRIu64 ",[\"[other stacks]\"]]", first ? "" : ",\n", v->peak_other),
            first = 0;
    if (v->peak_unknown)
        fprintf(o, "%s[%" PRIu64 ",[\"[unknown stack]\"]]", first ? "" : ",\n", v->peak_unknown),
            first = 0;
    if (v->peak_no_stack)
        fprintf(o, "%s[%" PRIu64 ",[\"[no stack]\"]]", first ? "" : ",\n", v->peak_no_stack);
    fputc(']', o);
}

/* PyTorch's address maps: [{device, time_ns, oom (index into the JSON report's memory.ooms,
 * null: the fullest snapshot), requested, allocated, largest_free, segments, bytes, other:
 * {segments, bytes, live_bytes, free_bytes, blocks}, segs: [[addr, size, small, expandable,
 * [[offset, size, requested, state, site], ...]], ...]}], and the sites named by the blocks:
 * torch_sites [[label, [frame, ... innermost first]], ...]; torch_ooms_not_drawn: allocator OOMs
 * past the view's cap, counted. */
static void put_torch_maps(FILE *o, const struct ga_vpage *v)
{
    fputs(",\n\"torch_maps\":[", o);
    for (size_t i = 0; i < v->n_maps; i++) {
        const struct ga_vpage_map *m = &v->maps[i];
        fprintf(o, "%s{\"device\":%d,\"time_ns\":%" PRId64 ",\"oom\":", i ? ",\n" : "", m->device,
                m->ns);
        if (m->oom >= 0)
            fprintf(o, "%" PRId64, m->oom);
        else
            fputs("null", o);
        fprintf(o,
                ",\"requested\":%" PRIu64 ",\"drawn_allocated\":%" PRIu64
                ",\"largest_free\":%" PRIu64 ",\"segments\":%" PRIu64 ",\"bytes\":%" PRIu64
                ",\"other\":{\"segments\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"live_bytes\":%" PRIu64
                ",\"free_bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 "},\n\"segs\":[",
                m->requested, m->drawn_allocated, m->largest_free, m->segments, m->bytes,
                m->other_segs, m->other_bytes, m->other_live_bytes, m->other_free_bytes,
                m->other_blocks);
        for (size_t k = 0; k < m->n_segs; k++) {
            const struct ga_vpage_seg *g = &m->segs[k];
            fprintf(o, "%s[%" PRIu64 ",%" PRIu64 ",%d,%d,[", k ? ",\n" : "", g->addr, g->size,
                    g->small, g->expandable);
            for (uint32_t j = 0; j < g->n; j++) {
                const struct ga_vpage_blk *b = &g->blks[j];
                fprintf(o, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u]", j ? "," : "", b->offset,
                        b->size, b->requested, b->state, b->site);
            }
            fputs("]]", o);
        }
        fputs("]}", o);
    }
    fputs("],\n\"torch_sites\":[", o);
    for (size_t i = 0; i < v->n_torch_sites; i++) {
        const struct ga_vpage_tsite *t = &v->torch_sites[i];
        fprintf(o, "%s[", i ? ",\n" : "");
        ga_put_json_str(o, t->label, strlen(t->label));
        fputs(",[", o);
        for (size_t k = 0; k < t->n_frames; k++) {
            if (k) fputc(',', o);
            ga_put_json_str(o, t->frames[k], strlen(t->frames[k]));
        }
        fputs("]]", o);
    }
    fprintf(o, "],\n\"torch_ooms_not_drawn\":%" PRIu64, v->torch_ooms_not_drawn);
}

/* Base64 of a byte stream, written as it comes (inside a JSON string: no escaping needed). */
struct b64 {
    FILE *o;
    unsigned char b[3];
    int n;
};

static void b64_flush(struct b64 *w)
{
    static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (!w->n) return;
    if (w->n < 3) memset(w->b + w->n, 0, (size_t)(3 - w->n));
    char q[4] = {d[w->b[0] >> 2], d[(w->b[0] & 3) << 4 | w->b[1] >> 4],
                 d[(w->b[1] & 15) << 2 | w->b[2] >> 6], d[w->b[2] & 63]};
    if (w->n < 3) q[3] = '=';
    if (w->n < 2) q[2] = '=';
    fwrite(q, 1, 4, w->o);
    w->n = 0;
}

/* An unsigned LEB128 varint. */
static void b64_varint(struct b64 *w, uint64_t x)
{
    do {
        w->b[w->n++] = (unsigned char)((x & 127) | (x > 127 ? 128 : 0));
        if (w->n == 3) b64_flush(w);
        x >>= 7;
    } while (x);
}

/* The timeline (the page view's; the format in docs/HTML.md): times in ns from the trace
 * start. */
static void put_timeline(FILE *o, const struct ga_vpage_timeline *v)
{
    size_t cols = v->cols;
    fprintf(o,
            "\"acts_total\":%" PRIu64 ",\"host_total\":%" PRIu64 ",\"gaps_total\":%" PRIu64
            ",\"acts_outside\":%" PRIu64 ",\"acts_no_lane\":%" PRIu64 ",\"col_ns\":%" PRIu64
            ",\"cols\":%zu,\"slot_cols\":%u,\"slot_acts\":%u",
            v->acts_total, v->host_total, v->gaps_total, v->outside, v->lanes_dropped, v->col_ns,
            cols, GA_TLV_SLOT_COLS, v->cap);
    fputs(",\n\"names\":[", o);
    for (size_t i = 0; i < v->n_names; i++) {
        if (i) fputc(',', o);
        ga_put_json_str(o, v->names[i], strlen(v->names[i]));
    }
    /* [device, stream, base64 of varints: busy ns per column] */
    fputs("],\n\"lanes\":[", o);
    for (size_t i = 0; i < v->n_lanes; i++) {
        const struct ga_tlv_lane *l = &v->lanes[i];
        struct b64 w = {o, {0}, 0};
        fprintf(o, "%s[%u,%u,\"", i ? ",\n" : "", l->device, l->stream);
        for (size_t c = 0; c < cols; c++)
            b64_varint(&w, l->busy[c]);
        b64_flush(&w);
        fputs("\"]", o);
    }
    /* per window [activities kept, cut (ns after the window's start) or -1: none lost]; then
     * the kept activities of all windows in order, base64 of varints: lane, name * 3 + kind,
     * start - the previous start (the first: the window's start), duration */
    uint64_t slot_ns = v->col_ns * GA_TLV_SLOT_COLS;
    size_t n_slots = v->n_slots;
    fputs("],\n\"slots\":[", o);
    for (size_t j = 0; j < n_slots; j++) {
        const struct ga_tlv_slot *s = &v->slots[j];
        if (s->cut == UINT64_MAX)
            fprintf(o, "%s%u,-1", j ? "," : "", s->n);
        else
            fprintf(o, "%s%u,%" PRIu64, j ? "," : "", s->n, s->cut - j * slot_ns);
    }
    fputs("],\n\"detail\":\"", o);
    struct b64 w = {o, {0}, 0};
    for (size_t j = 0; j < n_slots; j++) {
        uint64_t prev = j * slot_ns;
        for (uint32_t k = 0; k < v->slots[j].n; k++) {
            const struct ga_tlv_act *a = &v->slots[j].a[k];
            b64_varint(&w, a->lane);
            b64_varint(&w, (uint64_t)a->name * 3 + a->kind);
            b64_varint(&w, a->start - prev);
            b64_varint(&w, a->end - a->start);
            prev = a->start;
        }
    }
    b64_flush(&w);
    /* [lane, kind, start, duration, name] */
    fputs("\",\n\"longest\":[", o);
    for (size_t i = 0; i < v->n_longest; i++) {
        const struct ga_tlv_act *a = &v->longest[i];
        fprintf(o, "%s[%u,%u,%" PRIu64 ",%" PRIu64 ",%u]", i ? ",\n" : "", a->lane, a->kind,
                a->start, a->end - a->start, a->name);
    }
    /* [device, start, duration, cause] */
    fputs("],\n\"gaps\":[", o);
    for (size_t i = 0; i < v->n_gaps; i++) {
        const struct ga_tlv_gap *g = &v->gaps[i];
        fprintf(o, "%s[%u,%" PRIu64 ",%" PRIu64 ",\"%s\"]", i ? ",\n" : "", g->device, g->start,
                g->dur, v->gap_cause[i]);
    }
    /* [thread, start, duration, api] */
    fputs("],\n\"host\":[", o);
    for (size_t i = 0; i < v->n_host; i++) {
        const struct ga_tlv_host *c = &v->host[i];
        fprintf(o, "%s[%u,%" PRIu64 ",%" PRIu64 ",", i ? ",\n" : "", c->tid, c->start,
                c->end - c->start);
        ga_put_json_str(o, v->host_api[i], strlen(v->host_api[i]));
        fputc(']', o);
    }
    fputc(']', o);
}

void ga_html_rank(struct ga_html *h, const struct ga_vpage *v)
{
    FILE *o = h->events_f;
    fputs(h->n_ranks++ ? ",\n{" : "{", o);
    put_timeline(o, &v->tl);
    put_peak_stacks(o, v);
    put_torch_maps(o, v);
    fputc('}', o);
}

/* JSON text into the page: '<' only occurs inside its strings, where \u003c means the same. */
static void put_json(FILE *out, const char *s, size_t n)
{
    const char *p = s, *end = s + n, *lt;
    while ((lt = memchr(p, '<', (size_t)(end - p)))) {
        fwrite(p, 1, (size_t)(lt - p), out);
        fputs("\\u003c", out);
        p = lt + 1;
    }
    fwrite(p, 1, (size_t)(end - p), out);
}

static void put_html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else
            fputc(*s, out);
    }
}

void ga_html_discard(struct ga_html *h)
{
    fclose(h->data_f);
    fclose(h->events_f);
    free(h->data);
    free(h->events);
}

int ga_html_end(struct ga_html *h, const char *title, FILE *out)
{
    fclose(h->data_f);
    fclose(h->events_f);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          out);
    put_html_text(out, title);
    fputs(" - gputrace</title>\n<style>\n", out);
    fputs(ga_html_css, out);
    fputs("</style></head>\n<body>\n<div id=\"gt-errors\" hidden></div>\n"
          "<main id=\"gt-page\"><p class=\"loading\">Drawing the report...</p></main>\n"
          "<script type=\"application/json\" id=\"gt-data\">\n",
          out);
    put_json(out, h->data, h->data_len);
    fputs("</script>\n<script type=\"application/json\" id=\"gt-events\">[\n", out);
    put_json(out, h->events, h->events_len);
    fputs("]</script>\n<script>\n", out);
    fputs(ga_html_js, out);
    fputs("</script>\n</body></html>\n", out);
    free(h->data);
    free(h->events);
    return ferror(out) ? -1 : 0;
}
