/* The PyTorch allocator's part of the text and JSON reports (docs/REPORT_JSON.md:
 * memory.allocators[]; the allocator fields of memory.ooms[] are json_mem.c's). Reads the
 * allocator view alone (model/view_torch.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/json_put.h"
#include "render/torch_render.h"
#include "base/util.h"

/* ---- JSON ------------------------------------------------------------------------------------ */

static jobj *jstr(const char *s)
{
    return json_object_new_string(s);
}

jobj *ga_json_torch_sites(const struct ga_vtorch_sites *s)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < s->n; i++) {
        jobj *o = json_object_new_object();
        const char *l = s->v[i].label;
        put(o, "site", jstr(l ? l : "(no Python frames: history off)"));
        put(o, "site_source", jstr(s->v[i].source));
        put(o, "bytes", ju64(s->v[i].bytes));
        put(o, "count", ju64(s->v[i].count));
        json_object_array_add(a, o);
    }
    if (s->other_count) {
        jobj *o = json_object_new_object();
        put(o, "site", jstr("(other sites)"));
        put(o, "bytes", ju64(s->other_bytes));
        put(o, "count", ju64(s->other_count));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *jmaybe(uint64_t v)
{
    return v == GA_VTORCH_UNKNOWN ? NULL : ju64(v);
}

static jobj *frag_obj(const struct ga_vtorch_frag *f)
{
    jobj *o = json_object_new_object();
    put(o, "time_ns", ji64(f->ns));
    put(o, "reserved_bytes", ju64(f->reserved));
    put(o, "allocated_bytes", ju64(f->allocated));
    put(o, "free_in_segments_bytes", ju64(f->free_in_segments));
    put(o, "largest_free_block_bytes", jmaybe(f->largest_free));
    put(o, "partly_used_segments", jmaybe(f->partly_used));
    put(o, "inactive_split_bytes", jmaybe(f->inactive_split));
    return o;
}

/* ---- memory by category ---------------------------------------------------------------------- */

static jobj *by_category(const struct ga_vtorch_tiers *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_cats; i++) {
        const struct ga_vtorch_cat *c = &v->cats[i];
        jobj *o = json_object_new_object(), *top = json_object_new_array();
        put(o, "category", jstr(c->name));
        put(o, "bytes", ju64(c->bytes));
        put(o, "requested_bytes", ju64(c->requested));
        put(o, "count", ju64(c->count));
        put(o, "basis", jstr(c->basis));
        for (size_t k = 0; k < c->n_top; k++) {
            jobj *t = json_object_new_object();
            put(t, "site", c->top[k] ? jstr(c->top[k]) : NULL);
            put(t, "bytes", ju64(c->top_bytes[k]));
            json_object_array_add(top, t);
        }
        put(o, "top_sites", top);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *category_series(const struct ga_vtorch_tiers *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_points; i++) {
        const struct ga_vtorch_point *p = &v->points[i];
        jobj *o = json_object_new_object();
        put(o, "time_ns", ji64(p->ns));
        put(o, "step", ju64(p->step));
        put(o, "weights", ju64(p->weights));
        put(o, "gradients", ju64(p->gradients));
        put(o, "optimizer_state", ju64(p->optimizer_state));
        put(o, "other_allocated", p->have_other ? ju64(p->other_allocated) : NULL);
        put(o, "cache", ju64(p->cache));
        put(o, "allocated", ju64(p->allocated));
        put(o, "reserved", ju64(p->reserved));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *category_snapshots(const struct ga_vtorch *t, const struct ga_vtorch_tiers *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_snaps; i++) {
        const struct ga_vtorch_snap *p = &v->snaps[i];
        jobj *o = json_object_new_object();
        put(o, "time_ns", ji64(p->ns));
        put(o, "why", jstr(p->why));
        put(o, "roles_known", json_object_new_boolean(p->roles_known));
        for (size_t c = 0; c < t->n_cat_names; c++)
            put(o, t->cat_names[c], ju64(p->bytes[c]));
        put(o, "allocated", ju64(p->allocated));
        put(o, "reserved", ju64(p->reserved));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *optimizers(const struct ga_vtorch_tiers *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_opts; i++) {
        const struct ga_vtorch_opt *x = &v->opts[i];
        jobj *o = json_object_new_object();
        put(o, "optimizer", ju64(x->num));
        put(o, "class", jstr(x->name));
        put(o, "steps", ju64(x->steps));
        put(o, "weights_bytes", ju64(x->weights));
        put(o, "gradients_bytes", ju64(x->gradients));
        put(o, "optimizer_state_bytes", ju64(x->optimizer_state));
        put(o, "weight_tensors", ju64(x->weight_tensors));
        put(o, "gradient_tensors", ju64(x->gradient_tensors));
        put(o, "state_tensors", ju64(x->state_tensors));
        put(o, "weight_dtype", x->weight_dtype[0] ? jstr(x->weight_dtype) : NULL);
        put(o, "state_dtype", x->state_dtype[0] ? jstr(x->state_dtype) : NULL);
        put(o, "state_to_weights", x->have_ratio ? json_object_new_double(x->state_ratio) : NULL);
        put(o, "meaning", jstr(x->meaning));
        json_object_array_add(a, o);
    }
    return a;
}

static void tiers_obj(const struct ga_vtorch *t, const struct ga_vtorch_dev *d, jobj *dev, jobj *pb)
{
    const struct ga_vtorch_tiers *v = &d->tiers;
    if (!d->have_tiers) {
        put(pb, "by_category", NULL);
        put(dev, "category_series", NULL);
        put(dev, "category_snapshots", NULL);
        put(dev, "optimizers", NULL);
        return;
    }
    put(pb, "by_category", v->have_peak ? by_category(v) : NULL);
    if (v->have_peak) {
        put(pb, "categories_time_ns", ji64(v->peak_ns));
        put(pb, "roles_unmatched_bytes", ju64(v->roles_unmatched_bytes));
        put(pb, "roles_known", json_object_new_boolean(v->roles_known));
        put(pb, "categories_source", jstr(v->replayed ? "replay" : "snapshot"));
        put(pb, "categories_allocated_bytes", ju64(v->allocated));
        put(pb, "categories_reserved_bytes", ju64(v->reserved));
    }
    if (v->have_replay) {
        jobj *rp = json_object_new_object();
        put(rp, "batches", ju64(v->batches));
        put(rp, "replayed", ju64(v->batches_replayed));
        put(rp, "inconsistent", ju64(v->batches_inconsistent));
        put(pb, "replay", rp);
    } else {
        put(pb, "replay", NULL);
    }
    jobj *adv = json_object_new_array();
    for (size_t i = 0; i < v->n_advice; i++)
        json_object_array_add(adv, jstr(v->advice[i]));
    put(pb, "advice", adv);
    put(dev, "category_series", category_series(v));
    put(dev, "category_snapshots", category_snapshots(t, v));
    put(dev, "optimizers", optimizers(v));
}

static jobj *dev_obj(const struct ga_vtorch *t, const struct ga_vtorch_dev *d)
{
    jobj *o = json_object_new_object();
    put(o, "allocator", jstr("pytorch"));
    put(o, "device", ji64(d->device));
    put(o, "peak_allocated_bytes", ju64(d->peak_allocated));
    put(o, "peak_reserved_bytes", ju64(d->peak_reserved));
    put(o, "expandable_segments", json_object_new_boolean(t->expandable_segments));
    jobj *pb = json_object_new_object();
    put(pb, "by_site", ga_json_torch_sites(&d->peak_sites));
    put(pb, "snapshot_allocated_bytes", d->have_at_peak ? ju64(d->at_peak.allocated) : NULL);
    put(pb, "exact",
        json_object_new_boolean(d->have_at_peak && d->at_peak.allocated == d->peak_allocated));
    tiers_obj(t, d, o, pb);
    put(o, "peak_breakdown", pb);
    jobj *fr = json_object_new_object(), *series = json_object_new_array();
    for (size_t i = 0; i < d->n_series; i++)
        json_object_array_add(series, frag_obj(&d->series[i]));
    put(fr, "series", series);
    put(fr, "at_peak", d->have_at_peak ? frag_obj(&d->at_peak) : NULL);
    jobj *at = json_object_new_array();
    for (size_t i = 0; i < d->n_at_ooms; i++)
        json_object_array_add(at, frag_obj(&d->at_ooms[i]));
    put(fr, "at_ooms", at);
    put(o, "fragmentation", fr);
    put(o, "cached_at_exit_bytes", d->have_exit ? ju64(d->cached_at_exit) : NULL);
    put(o, "allocated_at_exit_bytes", d->have_exit ? ju64(d->allocated_at_exit) : NULL);
    return o;
}

void ga_json_torch(const struct ga_vtorch *v, jobj *memory)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_devs; i++)
        json_object_array_add(a, dev_obj(v, &v->devs[i]));
    put(memory, "allocators", a);
}

/* ---- text ------------------------------------------------------------------------------------ */

void ga_text_torch_sites(const struct ga_vtorch_sites *s, FILE *o, const char *lead)
{
    char b[32];
    if (!s->n) return;
    fprintf(o, "%s", lead);
    for (size_t i = 0; i < s->n && i < GA_VTORCH_BRIEF; i++) {
        fprintf(o, "%s%s ", i ? "; " : "", ga_fmt_bytes(b, s->v[i].bytes));
        if (s->v[i].in_segments) fputs("in segments allocated at ", o); /* not the blocks' own */
        ga_put_trimmed(o, s->v[i].label ? s->v[i].label : "(no Python frames)", 64);
    }
    fputc('\n', o);
}

#define TEXT_WIDTH 100 /* the category lines wrap here */

/* Prints `piece` at column *col, on a new line indented by `indent` when it would pass the
 * width; a piece is never split. */
static void put_piece(FILE *o, int *col, const char *piece, int indent)
{
    int n = (int)strlen(piece);
    if (*col > indent && *col + n > TEXT_WIDTH) {
        fprintf(o, "\n%*s", indent, "");
        *col = indent;
        while (*piece == ' ')
            piece++, n--;
    }
    fputs(piece, o);
    *col += n;
}

/* Words of `text` after `lead`, wrapped with continuation lines indented by `indent`. */
static void put_wrapped(FILE *o, const char *lead, const char *text, int indent)
{
    char word[256];
    int col = (int)strlen(lead);
    fputs(lead, o);
    for (const char *p = text; *p;) {
        size_t n = strcspn(p + 1, " ") + 1;
        snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), p);
        put_piece(o, &col, word, indent);
        p += n;
    }
    fputc('\n', o);
}

/* "weights 4.00 MiB" and, for optimizer state, what it is against the weights. */
static void text_cat(char *buf, size_t n, const struct ga_vtorch_tiers *v,
                     const struct ga_vtorch_cat *c)
{
    char b[32];
    int k = snprintf(buf, n, "%s %s", c->label, ga_fmt_bytes(b, c->bytes));
    if (k < 0 || (size_t)k >= n) return;
    if (c->optimizer_state && v->n_opts == 1 && v->opts[0].weights)
        snprintf(buf + k, n - (size_t)k, " (%.1fx weights: %s)", v->opts[0].state_ratio,
                 v->opts[0].meaning);
    else if (c->remainder)
        snprintf(buf + k, n - (size_t)k,
                 " (what no optimizer holds: activations, temporaries, inputs)");
}

static void text_tiers(const struct ga_vtorch_dev *d, FILE *o)
{
    const struct ga_vtorch_tiers *v = &d->tiers;
    char b[3][32], piece[400];
    if (!d->have_tiers || !v->have_peak) return;
    fprintf(o, "    by category at %s (%s allocated of %s reserved):\n      ",
            v->replayed ? "the peak (block events replayed)" : "the fullest snapshot",
            ga_fmt_bytes(b[0], v->allocated), ga_fmt_bytes(b[1], v->reserved));
    int col = 6;
    for (size_t i = 0, n = 0; i < v->n_cats; i++) {
        if (!v->cats[i].bytes) continue;
        text_cat(piece + 1, sizeof(piece) - 3, v, &v->cats[i]);
        piece[0] = n++ ? ' ' : 0;
        put_piece(o, &col, piece[0] ? piece : piece + 1, 8);
        if (i + 1 < v->n_cats && v->cats[i + 1].bytes) fputc(';', o), col++;
    }
    fputc('\n', o);
    if (!v->roles_known)
        fputs("      (no optimizer had stepped yet: weights, gradients and optimizer state are in "
              "the remainder)\n",
              o);
    for (size_t i = 0; i < v->n_opts; i++)
        if (v->n_opts > 1 || !v->optimizer_state_bytes)
            fprintf(o, "      optimizer %u (%s): state %s = %.1fx weights: %s\n", v->opts[i].num,
                    v->opts[i].name, ga_fmt_bytes(b[2], v->opts[i].optimizer_state),
                    v->opts[i].state_ratio, v->opts[i].meaning);
    for (size_t i = 0; i < v->n_advice; i++)
        put_wrapped(o, "      advice: ", v->advice[i], 14);
}

void ga_text_torch(const struct ga_vtorch *v, FILE *o)
{
    char b[4][32];
    for (size_t i = 0; i < v->n_devs; i++) {
        const struct ga_vtorch_dev *d = &v->devs[i];
        fprintf(o, "  PyTorch allocator dev %d: peak allocated %s, peak reserved %s", d->device,
                ga_fmt_bytes(b[0], d->peak_allocated), ga_fmt_bytes(b[1], d->peak_reserved));
        if (d->have_exit)
            fprintf(o, "; cached at exit %s (%s allocated)", ga_fmt_bytes(b[2], d->cached_at_exit),
                    ga_fmt_bytes(b[3], d->allocated_at_exit));
        fputc('\n', o);
        if (d->have_at_peak) {
            const struct ga_vtorch_frag *f = &d->at_peak;
            fprintf(o,
                    "    fullest snapshot: %s allocated of %s reserved, largest free block %s, "
                    "%" PRIu64 " partly used segment%s\n",
                    ga_fmt_bytes(b[0], f->allocated), ga_fmt_bytes(b[1], f->reserved),
                    ga_fmt_bytes(b[2], f->largest_free), f->partly_used,
                    f->partly_used == 1 ? "" : "s");
            ga_text_torch_sites(&d->peak_sites, o, "    held by: ");
        }
        text_tiers(d, o);
    }
}
