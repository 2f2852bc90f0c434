/* What the reader says about a trace as read, for the warnings a front end prints (main.c):
 * copied out of the reader's statistics, so that callers above the model need no input header. */
#ifndef GA_READ_NOTES_H
#define GA_READ_NOTES_H

#include <stdint.h>

struct ga_read_notes {
    int truncated;           /* the file ends in or at a broken chunk */
    uint64_t malformed_records; /* skipped: bad size or string lengths */
    uint64_t duplicate_chunks;  /* chunks written twice, each counted once */
    uint64_t late_records;      /* host records older than a watermark already passed */
    char stop_reason[160];      /* when truncated, e.g. "truncated at byte 4096 in chunk 17" */
    char error[200];            /* when the file cannot be read as a trace */
};

#endif
