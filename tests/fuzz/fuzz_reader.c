/* libFuzzer target: arbitrary bytes through the whole analyzer, in-process, the way
 * analyzer/main.c drives it: the reader with every analysis behind it (ga_report_event, then
 * ga_report_finish), the text (with --stacks) and JSON renderers, the --dump renderer on a second
 * read, and the two exports on reads of their own, as main.c makes them: --chrome-trace (its JSON
 * parsed back) and --html (the page's data and timeline).
 *
 * The reader takes a file descriptor, so each input goes into one memfd (rewound and rewritten
 * per input). Text and --dump output go to /dev/null (formatting still runs in full); the JSON
 * report is parsed back, and one that does not parse is a finding.
 *
 * Chunks are checksummed, so almost every mutation of a payload would stop at "checksum
 * mismatch" and never reach the record layer. Each input therefore runs twice: as given (the
 * framing and checksum paths) and, where it differs, with the CRC of every well-framed chunk
 * recomputed (the record layer, the analyses and the renderers). Both runs are deterministic
 * functions of the input, so a saved crash input reproduces with the regression driver
 * (regress_main.c), which calls LLVMFuzzerTestOneInput the same way. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "format.h"
#include "model/report.h"
#include "model/state.h"
#include "model/view_page.h"
#include "render/chrome_trace.h"
#include "render/dump.h"
#include "render/html.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int input_fd = -1;
static FILE *devnull;

static void setup(void)
{
    if (input_fd >= 0) return;
    input_fd = memfd_create("gputrace-fuzz", MFD_CLOEXEC);
    devnull = fopen("/dev/null", "w");
    if (input_fd < 0 || !devnull) {
        perror("fuzz_reader: setup");
        abort();
    }
}

/* Puts the input into the memfd and rewinds it. */
static void load(const uint8_t *data, size_t size)
{
    size_t done = 0;
    if (ftruncate(input_fd, 0) != 0 || lseek(input_fd, 0, SEEK_SET) != 0) abort();
    while (done < size) {
        ssize_t k = write(input_fd, data + done, size - done);
        if (k <= 0) abort();
        done += (size_t)k;
    }
    if (lseek(input_fd, 0, SEEK_SET) != 0) abort();
}

/* JSON we wrote must parse back: strings are cleaned to UTF-8, numbers finite. */
static void must_parse(const char *what, const char *text)
{
    json_object *o = json_tokener_parse(text);
    if (!o) {
        fprintf(stderr, "fuzz_reader: %s does not parse:\n%s\n", what, text);
        abort();
    }
    json_object_put(o);
}

static void render_json_checked(const struct ga_report *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) abort();
    ga_render_json(&r->m, m);
    fclose(m);
    must_parse("the JSON report", text);
    free(text);
}

/* What `gputrace-report` and `gputrace-report --json` do after opening the file. */
static void report_once(void)
{
    struct ga_report r;
    ga_report_init(&r, "fuzz.trace");
    r.m.show_stacks = 1; /* --stacks: the renderers print every listed site's whole stack */
    if (ga_read_fd(input_fd, ga_report_event, &r, &r.read) == 0) {
        ga_report_finish(&r);
        ga_render_text(&r.m, devnull);
        render_json_checked(&r);
    } else if (!r.read.error[0]) {
        abort(); /* a refused file must say why */
    }
    ga_report_free(&r);
}

struct dump_ctx {
    const struct ga_read_stats *st;
};

static void dump_sink(void *p, const struct ga_event *ev)
{
    const struct dump_ctx *d = p;
    struct ga_vrecord rec;
    ga_vrecord_of(&rec, ev);
    ga_dump_record(devnull, d->st->header.start_monotonic_ns, &rec);
}

/* What `gputrace-report --dump` does. */
static void dump_once(void)
{
    struct ga_read_stats st;
    struct dump_ctx d = {&st};
    if (lseek(input_fd, 0, SEEK_SET) != 0) abort();
    ga_read_fd(input_fd, dump_sink, &d, &st);
}

/* The input by a path, as main.c opens a trace for the exports. */
static const char *input_path(void)
{
    static char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", input_fd);
    return path;
}

/* What `gputrace-report --chrome-trace FILE` does: where it succeeds, the file must parse. */
static void chrome_once(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) abort();
    struct ga_report *r = ga_report_new(input_path());
    int rc = ga_chrome_trace(r, 0, 0, m);
    fclose(m);
    struct ga_read_notes notes;
    ga_report_read_notes(r, &notes);
    if (rc != 0 && !notes.error[0]) abort(); /* a refused file must say why */
    if (rc == 0) must_parse("the Chrome trace", text);
    free(text);
    ga_report_delete(r);
}

/* What `gputrace-report --html FILE` does with one trace. */
static void html_once(void)
{
    struct ga_html h;
    struct ga_vpage v;
    ga_html_begin(&h);
    struct ga_report *r = ga_report_new(input_path());
    ga_vpage_attach(&v, r);
    if (ga_report_run(r) == 0) {
        ga_render_json(ga_report_model(r), h.data_f);
        ga_vpage_build(&v, r);
        ga_html_rank(&h, &v);
        fflush(h.events_f); /* the page's timeline must parse too (the data is the JSON report) */
        char *ev = malloc(h.events_len + 3);
        if (!ev) abort();
        ev[0] = '[';
        memcpy(ev + 1, h.events, h.events_len);
        memcpy(ev + 1 + h.events_len, "]", 2);
        must_parse("the page's timeline", ev);
        free(ev);
        ga_vpage_free(&v);
        ga_report_delete(r);
        if (ga_html_end(&h, "fuzz.trace", devnull) != 0) abort();
        return;
    }
    ga_vpage_free(&v);
    ga_report_delete(r);
    ga_html_discard(&h);
}

static void run(const uint8_t *data, size_t size)
{
    load(data, size);
    report_once();
    dump_once();
    chrome_once();
    html_once();
    fflush(devnull);
}

/* Recomputes the file header's checksum (format 4 and later) and the CRC of every chunk whose
 * header and payload fit the input; stops at the first that does not. Returns 1 if anything
 * changed. */
static int fix_crcs(uint8_t *buf, size_t size)
{
    struct gt_file_header h;
    struct gt_chunk_header ch;
    size_t pos;
    int changed = 0;
    if (size < sizeof(h) || memcmp(buf, GT_MAGIC, 8) != 0) return 0;
    memcpy(&h, buf, sizeof(h));
    pos = h.header_size;
    if (h.version >= GT_FORMAT_HEADER_CRC && h.header_size >= sizeof(h) && h.header_size <= size &&
        gt_header_crc(buf, h.header_size) != h.header_crc32) {
        h.header_crc32 = gt_header_crc(buf, h.header_size);
        memcpy(buf, &h, sizeof(h));
        changed = 1;
    }
    while (pos <= size && size - pos >= sizeof(ch)) {
        memcpy(&ch, buf + pos, sizeof(ch));
        if (ch.magic != GT_CHUNK_MAGIC || ch.payload_size > size - pos - sizeof(ch)) break;
        uint32_t crc = gt_chunk_crc(&ch, buf + pos + sizeof(ch));
        if (crc != ch.crc32) {
            ch.crc32 = crc;
            memcpy(buf + pos, &ch, sizeof(ch));
            changed = 1;
        }
        pos += sizeof(ch) + ch.payload_size;
    }
    return changed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    run(data, size);
    uint8_t *fixed = malloc(size ? size : 1);
    if (!fixed) abort();
    memcpy(fixed, data, size);
    if (fix_crcs(fixed, size)) run(fixed, size);
    free(fixed);
    return 0;
}
