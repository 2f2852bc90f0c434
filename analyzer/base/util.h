/* Small helpers every analyzer file uses: allocation that dies cleanly, size/time formatting. */
#ifndef GA_UTIL_H
#define GA_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "version.h"

#define GA_PROG "gputrace-report"
#define GA_GENERATOR GA_PROG " " GT_VERSION /* JSON "generator": one version for the project */

/* Allocation that never returns NULL: out of memory prints one line and exits 2. */
void *ga_xmalloc(size_t n);
void *ga_xcalloc(size_t count, size_t size);
void *ga_xrealloc(void *p, size_t n);
/* n bytes at a multiple of align (a power of two, at least sizeof(void *)); free() frees it. */
void *ga_xaligned(size_t align, size_t n);
/* Grows an array of `elem`-byte items so that index `need` fits; doubles the capacity. The new
 * items are not zeroed. */
void *ga_xgrow(void *p, size_t *cap, size_t need, size_t elem);
char *ga_xstrdup(const char *s);
char *ga_xstrndup(const char *s, size_t n);

/* "1.50 GiB", "512 B": exact below 1 KiB, three significant figures above. */
const char *ga_fmt_bytes(char buf[32], uint64_t bytes);
/* "12.345 ms" from nanoseconds (signed: times before the trace start stay readable). */
const char *ga_fmt_ms(char buf[32], int64_t ns);

/* Writes `s` (n bytes) with quotes, backslashes and control characters escaped as \xNN. */
void ga_put_escaped(FILE *f, const char *s, size_t n);

/* s[0..n) as a JSON string (quotes included): made valid UTF-8, control characters and '<' as
 * \u00XX (so it may sit inside an HTML <script> element). */
void ga_put_json_str(FILE *f, const char *s, size_t n);

/* ga_put_escaped of s, cut to `max` bytes with "..." when longer. */
void ga_put_trimmed(FILE *f, const char *s, size_t max);

/* A NUL-terminated copy of s[0..n) in valid UTF-8: invalid sequences become U+FFFD and NULs
 * become spaces. Trace strings come from the traced program and may be anything. */
char *ga_utf8_clean(const char *s, size_t n);

#endif
