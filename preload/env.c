/* The tracer's environment variables, read once each in the constructors while the process is
 * single-threaded. A value that does not parse (or lies outside its range) is never half-used:
 * it gets one warning line on stderr naming the variable, the value and what is accepted, and the
 * default applies. An empty value is the same as an unset one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shim.h"

unsigned long gt_env_num(const char *name, unsigned long lo, unsigned long hi, unsigned long def)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (v[0] >= '0' && v[0] <= '9' && *end == 0 && errno == 0 && n >= lo && n <= hi) return n;
    gt_warn("gputrace: %s=%s is not a whole number from %lu to %lu; using %lu\n", name, v, lo, hi,
            def);
    return def;
}

int gt_env_flag(const char *name)
{
    static const char *const yes[] = {"1", "true", "yes"}, *const no[] = {"0", "false", "no"};
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    for (int i = 0; i < 3; i++) {
        if (strcasecmp(v, yes[i]) == 0) return 1;
        if (strcasecmp(v, no[i]) == 0) return 0;
    }
    gt_warn("gputrace: %s=%s is not 1/true/yes or 0/false/no; using 0\n", name, v);
    return 0;
}

int gt_env_word(const char *name, const char *const *words, int n, int def)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    for (int i = 0; i < n; i++)
        if (strcmp(v, words[i]) == 0) return i;
    char list[256];
    size_t o = 0;
    for (int i = 0; i < n && o < sizeof(list); i++)
        o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", words[i]);
    gt_warn("gputrace: %s=%s is not one of %s; using %s\n", name, v, list, words[def]);
    return def;
}
