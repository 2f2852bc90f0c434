/* Progress of a long analysis on standard error: bytes read, records per second, time left.
 * On a terminal one line updated in place (every 100 ms, erased when the trace is read, before
 * the report is written); where stderr is not a terminal only when asked (--progress), as a
 * line every 2 s and a summary at the end, so logs stay readable. */
#ifndef GA_PROGRESS_H
#define GA_PROGRESS_H

#include <stdint.h>

enum ga_progress_mode { GA_PROGRESS_AUTO, GA_PROGRESS_OFF, GA_PROGRESS_ON };

/* Chooses the display for this run: AUTO shows it when stderr is a terminal. */
void ga_progress_setup(enum ga_progress_mode mode);
/* Starts a trace: `path` as the user named it, "-" for standard input (no total, no ETA). */
void ga_progress_begin(const char *path);
/* Bytes read and records delivered so far (cheap: it looks at the clock, prints rarely). */
void ga_progress_update(void *ctx, uint64_t bytes, uint64_t records);
/* The trace is read: erases the line (terminal) or prints the summary (--progress). */
void ga_progress_end(void);

#endif
