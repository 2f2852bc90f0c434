/* Allocation helpers that die with one clear line, and human-readable formatting. */
#include "base/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void die_oom(size_t n)
{
    fprintf(stderr, "%s: out of memory (allocating %zu bytes)\n", GA_PROG, n);
    exit(2);
}

void *ga_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) die_oom(n);
    return p;
}

void *ga_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) die_oom(count * size);
    return p;
}

void *ga_xaligned(size_t align, size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, align, n ? n : 1) != 0) die_oom(n);
    return p;
}

void *ga_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) die_oom(n);
    return q;
}

void *ga_xgrow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need < *cap) return p;
    size_t n = *cap ? *cap : 16;
    while (n <= need) {
        if (n > SIZE_MAX / 2 / elem) die_oom(SIZE_MAX);
        n *= 2;
    }
    p = ga_xrealloc(p, n * elem); /* not zeroed: untouched capacity costs no memory */
    *cap = n;
    return p;
}

char *ga_xstrndup(const char *s, size_t n)
{
    char *d = ga_xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *ga_xstrdup(const char *s)
{
    return ga_xstrndup(s, strlen(s));
}

const char *ga_fmt_bytes(char buf[32], uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, 32, "%" PRIu64 " B", bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    unsigned u = 0;
    while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, 32, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

const char *ga_fmt_ms(char buf[32], int64_t ns)
{
    snprintf(buf, 32, "%.3f ms", (double)ns / 1e6);
    return buf;
}

void ga_put_escaped(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
}

void ga_put_json_str(FILE *f, const char *s, size_t n)
{
    char *c = ga_utf8_clean(s, n);
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)c; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == '<')
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
    free(c);
}

void ga_put_trimmed(FILE *f, const char *s, size_t max)
{
    size_t n = strlen(s);
    ga_put_escaped(f, s, n > max ? max - 3 : n);
    if (n > max) fputs("...", f);
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    size_t len;
    uint32_t cp;
    if (p[0] < 0x80) return 1;
    if ((p[0] & 0xe0) == 0xc0)
        len = 2, cp = p[0] & 0x1f;
    else if ((p[0] & 0xf0) == 0xe0)
        len = 3, cp = p[0] & 0x0f;
    else if ((p[0] & 0xf8) == 0xf0)
        len = 4, cp = p[0] & 0x07;
    else
        return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

char *ga_utf8_clean(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    char *out = ga_xmalloc(n * 3 + 1), *o = out;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(p + i, n - i);
        if (k == 0) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
            continue;
        }
        if (k == 1 && p[i] == 0)
            *o++ = ' ';
        else
            memcpy(o, p + i, k), o += k;
        i += k;
    }
    *o = '\0';
    return out;
}
