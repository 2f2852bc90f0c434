/* Shared by the text renderer's files. */
#ifndef GA_REPORT_TEXT_H
#define GA_REPORT_TEXT_H

#include <stdio.h>

#include "model/report.h"




/* text_mem.c: what filled memory at the peak, temporaries; failed allocations explained. */
void ga_text_peak(const struct ga_report *r, FILE *o);
void ga_text_oom_details(const struct ga_report *r, FILE *o);


#endif
