/* --dump: one line per record, in time order (dump.c; torch_dump.c the PyTorch bridge's). Reads
 * the record stream of the model (model/view_records.h). */
#ifndef GA_DUMP_H
#define GA_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "model/view_records.h"

/* Prints the trace at path. 0, or -1 when it cannot be read as a trace (notes->error says
 * why); *late: records printed out of time order (GPU records delivered too late for their
 * place). */
int ga_dump_trace(const char *path, FILE *out, struct ga_read_notes *notes, uint64_t *late);
/* One record's line; t0: the trace start. */
void ga_dump_record(FILE *out, uint64_t t0, const struct ga_vrecord *rec);
/* The line's rest for the PyTorch bridge's records (torch_dump.c). */
void ga_dump_torch(FILE *out, const struct ga_vrecord *rec);

#endif
