/* Regression driver for the fuzz target without libFuzzer: runs every file named on the command
 * line, and every file in every directory named there, through LLVMFuzzerTestOneInput (built
 * with AddressSanitizer and UndefinedBehaviorSanitizer, so a crash, a leak or undefined behaviour
 * ends the run with the input's name printed), each input within 10 s (longer: a hang).
 * Usage: fuzz_regress CORPUS_DIR|FILE...   Prints "N inputs, all handled"; with
 * FUZZ_REGRESS_TIMES set in the environment, also each input's time. */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long inputs;
static const char *current;

#define INPUT_TIMEOUT_S 10 /* as make fuzz's -timeout: longer counts as a hang */

static void on_alarm(int sig)
{
    static const char msg[] = "fuzz_regress: an input ran past the time limit (a hang): ";
    (void)sig;
    if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, current, strlen(current)) < 0 ||
        write(2, "\n", 1) < 0)
        _exit(3);
    _exit(3);
}

/* A sanitizer report names the input that caused it. */
static void on_death(void)
{
    fprintf(stderr, "fuzz_regress: the input was %s\n", current ? current : "(none)");
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, k;
    if (!f) {
        perror(path);
        return 1;
    }
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap);
            if (!buf) abort();
        }
        k = fread(buf + len, 1, cap - len, f);
        len += k;
    } while (k > 0);
    fclose(f);
    current = path;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    alarm(INPUT_TIMEOUT_S);
    LLVMFuzzerTestOneInput(buf, len);
    alarm(0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (getenv("FUZZ_REGRESS_TIMES"))
        printf("%.3f ms %s\n",
               (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
               path);
    current = NULL;
    free(buf);
    inputs++;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of a directory, in name order (so runs are reproducible). */
static int run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int bad = 0;
    if (!d) {
        perror(dir);
        return 1;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof(*names));
            if (!names) abort();
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n]) abort();
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) bad |= run_file(names[i]);
        free(names[i]);
    }
    free(names);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0;
    __sanitizer_set_death_callback(on_death);
    signal(SIGALRM, on_alarm);
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            bad |= run_dir(argv[i]);
        } else {
            bad |= run_file(argv[i]);
        }
    }
    printf("%lu inputs, all handled\n", inputs);
    return bad;
}
