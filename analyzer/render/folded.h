/* --folded WHAT: folded stacks (`frame;frame;frame weight`) of one report. */
#ifndef GA_FOLDED_H
#define GA_FOLDED_H

#include <stdio.h>

#include "model/view_folded.h"

/* The view's lines (ga_report_folded). -1 on a write error. */
int ga_render_folded(const struct ga_vfolded *v, FILE *out);

#endif
