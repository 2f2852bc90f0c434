/* Shared by the text renderer's files. */
#ifndef GA_REPORT_TEXT_H
#define GA_REPORT_TEXT_H

#include <stdio.h>

#include "model/state.h"

/* text_gpu.c: the GPU timeline section, or one line saying why there is none. */
void ga_text_gpu(const struct ga_report *r, FILE *o);





#endif
