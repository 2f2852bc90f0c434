/* --folded WHAT: folded stacks (`frame;frame;frame weight`) of one report. */
#ifndef GA_FOLDED_H
#define GA_FOLDED_H

#include <stdio.h>

#include "model/report.h"

/* WHAT's index: peak 0 (bytes live at the peak), alloc 1 (bytes allocated), leak 2 (bytes live
 * at the end), launch 3 (launches), sync 4 (ns blocked), idle 5 (GPU idle ns by the host stack
 * it is attributed to); -1 for another word. */
int ga_folded_what(const char *what);
/* A frame's label in flame graphs: Python frames `file.py:line function`, native ones their
 * demangled name (with `lines`: and " (file:line)" where known; else module+offset), without
 * ';' or newlines (the folded format's separators). */
const char *ga_flame_label(const struct ga_stacks *st, const struct ga_frame *f, char *buf,
                           size_t n, int lines);
/* After ga_report_run. Symbolizes the stacks it prints (hence not const). -1 on a write error. */
int ga_render_folded(struct ga_report *r, int what, FILE *out);

#endif
