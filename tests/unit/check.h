/* Minimal check harness for the unit tests: one line per check, a summary, exit status. */
#ifndef GT_TEST_CHECK_H
#define GT_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_pass, check_fail;

static inline int check_report(int ok, const char *what, const char *file, int line)
{
    if (ok)
        check_pass++;
    else
        check_fail++;
    printf("%s %s", ok ? "ok  " : "FAIL", what);
    if (!ok) printf("  (%s:%d)", file, line);
    printf("\n");
    return ok;
}

#define CHECK(what, cond) check_report(!!(cond), what, __FILE__, __LINE__)

static inline int check_u64(const char *what, uint64_t got, uint64_t want, const char *file,
                            int line)
{
    int ok = got == want;
    if (!ok) printf("     %s: got %" PRIu64 ", want %" PRIu64 "\n", what, got, want);
    return check_report(ok, what, file, line);
}
#define CHECK_U64(what, got, want)                                                                 \
    check_u64(what, (uint64_t)(got), (uint64_t)(want), __FILE__, __LINE__)

static inline int check_str(const char *what, const char *got, const char *want, const char *file,
                            int line)
{
    int ok = got && want && strcmp(got, want) == 0;
    if (!ok)
        printf("     %s: got '%s', want '%s'\n", what, got ? got : "(null)",
               want ? want : "(null)");
    return check_report(ok, what, file, line);
}
#define CHECK_STR(what, got, want) check_str(what, got, want, __FILE__, __LINE__)

static inline int check_done(void)
{
    printf("%d passed, %d failed\n", check_pass, check_fail);
    return check_fail ? 1 : 0;
}

#endif
