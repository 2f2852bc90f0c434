/* The PyTorch allocator's part of the text and JSON reports (docs/REPORT_JSON.md:
 * memory.ooms[] allocator fields, memory.allocators[]). Reads torch_alloc's results only. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "render/json.h"
#include "render/torch_render.h"
#include "base/util.h"

/* ---- JSON ------------------------------------------------------------------------------------ */

static jobj *sites_arr(const struct ga_report *r, const struct ga_torch_sites *s)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < s->n; i++) {
        jobj *o = json_object_new_object();
        char buf[1024];
        const char *l = ga_torch_entry_label(&r->torch, &r->stacks, &s->s[i], buf, sizeof(buf));
        put(o, "site", json_object_new_string(l ? l : "(no Python frames: history off)"));
        put(o, "site_source",
            json_object_new_string(
                ga_torch_site_source_name(l ? s->s[i].source : GA_TORCH_SITE_NONE)));
        put(o, "bytes", ju64(s->s[i].bytes));
        put(o, "count", ju64(s->s[i].count));
        json_object_array_add(a, o);
    }
    if (s->other_count) {
        jobj *o = json_object_new_object();
        put(o, "site", json_object_new_string("(other sites)"));
        put(o, "bytes", ju64(s->other_bytes));
        put(o, "count", ju64(s->other_count));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *jmaybe(uint64_t v)
{
    return v == UINT64_MAX ? NULL : ju64(v);
}

static jobj *frag_obj(const struct ga_report *r, const struct ga_torch_frag *f)
{
    jobj *o = json_object_new_object();
    put(o, "time_ns", jtime(r, f->ts, 1));
    put(o, "reserved_bytes", ju64(f->reserved));
    put(o, "allocated_bytes", ju64(f->allocated));
    put(o, "free_in_segments_bytes", ju64(f->free_in_segments));
    put(o, "largest_free_block_bytes", jmaybe(f->largest_free));
    put(o, "partly_used_segments", jmaybe(f->partly_used));
    put(o, "inactive_split_bytes", jmaybe(f->inactive_split));
    return o;
}

/* ---- memory by category (model/view_tiers.h) ------------------------------------------- */

static const struct ga_tv_dev *tv_dev(const struct ga_report *r, int32_t device)
{
    for (size_t i = 0; i < r->tierview.n_devs; i++)
        if (r->tierview.devs[i].device == device) return &r->tierview.devs[i];
    return NULL;
}

static jobj *by_category(const struct ga_tv_dev *v)
{
    jobj *a = json_object_new_array();
    for (int i = 0; i < GA_CATS; i++) {
        const struct ga_tv_cat *c = &v->cats[i];
        jobj *o = json_object_new_object(), *top = json_object_new_array();
        put(o, "category", json_object_new_string(ga_cat_name(c->cat)));
        put(o, "bytes", ju64(c->bytes));
        put(o, "requested_bytes", ju64(c->requested));
        put(o, "count", ju64(c->count));
        put(o, "basis", json_object_new_string(ga_cat_basis_name(c->basis)));
        for (size_t k = 0; k < c->n_top; k++) {
            jobj *t = json_object_new_object();
            put(t, "site", c->top[k][0] ? json_object_new_string(c->top[k]) : NULL);
            put(t, "bytes", ju64(c->top_bytes[k]));
            json_object_array_add(top, t);
        }
        put(o, "top_sites", top);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *category_series(const struct ga_report *r, const struct ga_tv_dev *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_series; i++) {
        const struct ga_tiers_point *p = &v->series[i];
        uint64_t roles = p->weights + p->gradients + p->optimizer_state;
        jobj *o = json_object_new_object();
        put(o, "time_ns", jtime(r, p->ts, 1));
        put(o, "step", ju64(p->step));
        put(o, "weights", ju64(p->weights));
        put(o, "gradients", ju64(p->gradients));
        put(o, "optimizer_state", ju64(p->optimizer_state));
        put(o, "other_allocated", p->allocated >= roles ? ju64(p->allocated - roles) : NULL);
        put(o, "cache", ju64(p->reserved > p->allocated ? p->reserved - p->allocated : 0));
        put(o, "allocated", ju64(p->allocated));
        put(o, "reserved", ju64(p->reserved));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *category_snapshots(const struct ga_report *r, const struct ga_tv_dev *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_snaps; i++) {
        const struct ga_tiers_snappoint *p = &v->snaps[i];
        jobj *o = json_object_new_object();
        put(o, "time_ns", jtime(r, p->ts, 1));
        put(o, "why", json_object_new_string(ga_torch_why_name(p->why)));
        put(o, "roles_known", json_object_new_boolean(p->roles_known));
        for (int c = 0; c < GA_CATS; c++)
            put(o, ga_cat_name((enum ga_cat)c), ju64(p->bytes[c]));
        put(o, "allocated", ju64(p->allocated));
        put(o, "reserved", ju64(p->reserved));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *optimizers(const struct ga_tv_dev *v)
{
    char eb[2][16];
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_opts; i++) {
        const struct ga_tv_opt *x = &v->opts[i];
        jobj *o = json_object_new_object();
        put(o, "optimizer", ju64(x->num));
        put(o, "class", json_object_new_string(x->name));
        put(o, "steps", ju64(x->steps));
        put(o, "weights_bytes", ju64(x->weights));
        put(o, "gradients_bytes", ju64(x->gradients));
        put(o, "optimizer_state_bytes", ju64(x->optimizer_state));
        put(o, "weight_tensors", ju64(x->weight_tensors));
        put(o, "gradient_tensors", ju64(x->gradient_tensors));
        put(o, "state_tensors", ju64(x->state_tensors));
        put(o, "weight_dtype",
            x->weight_elem
                ? json_object_new_string(ga_tv_elem_name(x->weight_elem, eb[0], sizeof(eb[0])))
                : NULL);
        put(o, "state_dtype",
            x->state_elem
                ? json_object_new_string(ga_tv_elem_name(x->state_elem, eb[1], sizeof(eb[1])))
                : NULL);
        put(o, "state_to_weights", x->weights ? json_object_new_double(x->state_ratio) : NULL);
        put(o, "meaning", json_object_new_string(x->meaning));
        json_object_array_add(a, o);
    }
    return a;
}

static void tiers_obj(const struct ga_report *r, int32_t device, jobj *dev, jobj *pb)
{
    const struct ga_tv_dev *v = tv_dev(r, device);
    if (!v) {
        put(pb, "by_category", NULL);
        put(dev, "category_series", NULL);
        put(dev, "category_snapshots", NULL);
        put(dev, "optimizers", NULL);
        return;
    }
    put(pb, "by_category", v->peak ? by_category(v) : NULL);
    if (v->peak) {
        put(pb, "categories_time_ns", jtime(r, v->peak->ts, 1));
        put(pb, "roles_unmatched_bytes", ju64(v->peak->roles_unmatched_bytes));
        put(pb, "roles_known", json_object_new_boolean(v->peak->roles_known));
        put(pb, "categories_source", json_object_new_string(v->replayed ? "replay" : "snapshot"));
        put(pb, "categories_allocated_bytes", ju64(v->peak->allocated));
        put(pb, "categories_reserved_bytes", ju64(v->peak->reserved));
    }
    if (v->replay) {
        jobj *rp = json_object_new_object();
        put(rp, "batches", ju64(v->replay->batches));
        put(rp, "replayed", ju64(v->replay->replayed));
        put(rp, "inconsistent", ju64(v->replay->inconsistent));
        put(pb, "replay", rp);
    } else {
        put(pb, "replay", NULL);
    }
    jobj *adv = json_object_new_array();
    for (size_t i = 0; i < v->n_advice; i++)
        json_object_array_add(adv, json_object_new_string(v->advice[i]));
    put(pb, "advice", adv);
    put(dev, "category_series", category_series(r, v));
    put(dev, "category_snapshots", category_snapshots(r, v));
    put(dev, "optimizers", optimizers(v));
}

static jobj *dev_obj(const struct ga_report *r, const struct ga_torch_dev *d)
{
    jobj *o = json_object_new_object();
    put(o, "allocator", json_object_new_string("pytorch"));
    put(o, "device", ji64(d->device));
    put(o, "peak_allocated_bytes", ju64(d->peak_allocated));
    put(o, "peak_reserved_bytes", ju64(d->peak_reserved));
    put(o, "expandable_segments",
        json_object_new_boolean((r->torch.snapshot_flags & GT_TORCH_EXPANDABLE) != 0));
    jobj *pb = json_object_new_object();
    put(pb, "by_site", sites_arr(r, &d->peak_sites));
    put(pb, "snapshot_allocated_bytes", d->have_at_peak ? ju64(d->at_peak.allocated) : NULL);
    put(pb, "exact",
        json_object_new_boolean(d->have_at_peak && d->at_peak.allocated == d->peak_allocated));
    tiers_obj(r, d->device, o, pb);
    put(o, "peak_breakdown", pb);
    jobj *fr = json_object_new_object(), *series = json_object_new_array();
    for (size_t i = 0; i < d->n_series; i++)
        json_object_array_add(series, frag_obj(r, &d->series[i]));
    put(fr, "series", series);
    put(fr, "at_peak", d->have_at_peak ? frag_obj(r, &d->at_peak) : NULL);
    jobj *at = json_object_new_array();
    for (size_t i = 0; i < r->torch.n_ooms; i++)
        if (r->torch.ooms[i].device == d->device && r->torch.ooms[i].have_snap)
            json_object_array_add(at, frag_obj(r, &r->torch.ooms[i].frag));
    put(fr, "at_ooms", at);
    put(o, "fragmentation", fr);
    put(o, "cached_at_exit_bytes", d->have_exit ? ju64(d->cached_at_exit) : NULL);
    put(o, "allocated_at_exit_bytes", d->have_exit ? ju64(d->allocated_at_exit) : NULL);
    return o;
}

void ga_json_torch(const struct ga_report *r, jobj *memory)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->torch.n_devs; i++)
        json_object_array_add(a, dev_obj(r, &r->torch.devs[i]));
    put(memory, "allocators", a);
}

/* ---- text ------------------------------------------------------------------------------------ */

static void text_sites(const struct ga_report *r, FILE *o, const struct ga_torch_sites *s,
                       const char *lead)
{
    char b[32], label[1024];
    if (!s->n) return;
    fprintf(o, "%s", lead);
    for (size_t i = 0; i < s->n && i < 3; i++) {
        const char *l = ga_torch_entry_label(&r->torch, &r->stacks, &s->s[i], label, sizeof(label));
        fprintf(o, "%s%s ", i ? "; " : "", ga_fmt_bytes(b, s->s[i].bytes));
        if (l && s->s[i].source == GA_TORCH_SITE_SEGMENT) /* not the blocks' own lines */
            fputs("in segments allocated at ", o);
        ga_put_trimmed(o, l ? l : "(no Python frames)", 64);
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
static void text_cat(char *buf, size_t n, const struct ga_tv_dev *v, const struct ga_tv_cat *c)
{
    char b[32];
    int k = snprintf(buf, n, "%s %s", ga_cat_label(c->cat), ga_fmt_bytes(b, c->bytes));
    if (k < 0 || (size_t)k >= n) return;
    if (c->cat == GA_CAT_OPTIMIZER_STATE && v->n_opts == 1 && v->opts[0].weights)
        snprintf(buf + k, n - (size_t)k, " (%.1fx weights: %s)", v->opts[0].state_ratio,
                 v->opts[0].meaning);
    else if (c->basis == GA_BASIS_REMAINDER)
        snprintf(buf + k, n - (size_t)k,
                 " (what no optimizer holds: activations, temporaries, inputs)");
}

static void text_tiers(const struct ga_report *r, FILE *o, int32_t device)
{
    const struct ga_tv_dev *v = tv_dev(r, device);
    char b[3][32], piece[400];
    if (!v || !v->peak) return;
    fprintf(o, "    by category at %s (%s allocated of %s reserved):\n      ",
            v->replayed ? "the peak (block events replayed)" : "the fullest snapshot",
            ga_fmt_bytes(b[0], v->peak->allocated), ga_fmt_bytes(b[1], v->peak->reserved));
    int col = 6;
    for (int i = 0, n = 0; i < GA_CATS; i++) {
        if (!v->cats[i].bytes) continue;
        text_cat(piece + 1, sizeof(piece) - 3, v, &v->cats[i]);
        piece[0] = n++ ? ' ' : 0;
        put_piece(o, &col, piece[0] ? piece : piece + 1, 8);
        if (i + 1 < GA_CATS && v->cats[i + 1].bytes) fputc(';', o), col++;
    }
    fputc('\n', o);
    if (!v->peak->roles_known)
        fputs("      (no optimizer had stepped yet: weights, gradients and optimizer state are in "
              "the remainder)\n",
              o);
    for (size_t i = 0; i < v->n_opts; i++)
        if (v->n_opts > 1 || !v->peak->cat[GA_CAT_OPTIMIZER_STATE].bytes)
            fprintf(o, "      optimizer %u (%s): state %s = %.1fx weights: %s\n", v->opts[i].num,
                    v->opts[i].name, ga_fmt_bytes(b[2], v->opts[i].optimizer_state),
                    v->opts[i].state_ratio, v->opts[i].meaning);
    for (size_t i = 0; i < v->n_advice; i++)
        put_wrapped(o, "      advice: ", v->advice[i], 14);
}

void ga_text_torch(const struct ga_report *r, FILE *o)
{
    char b[4][32];
    for (size_t i = 0; i < r->torch.n_devs; i++) {
        const struct ga_torch_dev *d = &r->torch.devs[i];
        fprintf(o, "  PyTorch allocator dev %d: peak allocated %s, peak reserved %s", d->device,
                ga_fmt_bytes(b[0], d->peak_allocated), ga_fmt_bytes(b[1], d->peak_reserved));
        if (d->have_exit)
            fprintf(o, "; cached at exit %s (%s allocated)", ga_fmt_bytes(b[2], d->cached_at_exit),
                    ga_fmt_bytes(b[3], d->allocated_at_exit));
        fputc('\n', o);
        if (d->have_at_peak) {
            const struct ga_torch_frag *f = &d->at_peak;
            fprintf(o,
                    "    fullest snapshot: %s allocated of %s reserved, largest free block %s, "
                    "%" PRIu64 " partly used segment%s\n",
                    ga_fmt_bytes(b[0], f->allocated), ga_fmt_bytes(b[1], f->reserved),
                    ga_fmt_bytes(b[2], f->largest_free), f->partly_used,
                    f->partly_used == 1 ? "" : "s");
            text_sites(r, o, &d->peak_sites, "    held by: ");
        }
        text_tiers(r, o, d->device);
    }
}
