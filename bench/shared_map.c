/* What would buffers in a shared mapping of the trace file cost (issue 22: after SIGKILL nothing
 * would be lost, since the page cache holds every store)? Appends N 80-byte records (a
 * launch record's size) three ways, one thread, and prints ns per record (wall and CPU, kernel
 * time included, which is where page faults and writeback go):
 *   private   a 256 KiB malloc'd buffer reused after each "flush" (the shim today: the copy to
 *             the file is the flusher's write(2), measured apart as write)
 *   write     the same plus one write(2) of each full buffer to a file (what the flusher adds)
 *   shared    records stored straight into a MAP_SHARED mapping of the file, grown 256 KiB at a
 *             time (ftruncate + mmap of the next window, the old one unmapped): nothing lost at
 *             SIGKILL, since the page cache holds every store */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define REC 80
#define WIN (256u << 10)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static double cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e9 +
           (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e3;
}

static void fill(uint8_t *p, uint64_t i)
{
    uint64_t *q = (uint64_t *)p;
    for (int k = 0; k < REC / 8; k++)
        q[k] = i + k;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: shared_map private|write|shared [RECORDS]\n");
        return 2;
    }
    long n = argc > 2 ? atol(argv[2]) : 20000000;
    const char *mode = argv[1];
    char path[] = "shared_map.XXXXXX"; /* in the working directory: the disk the trace would use */
    int fd = mkstemp(path);
    unlink(path);
    double t0 = now(), c0 = cpu();
    if (!strcmp(mode, "private") || !strcmp(mode, "write")) {
        uint8_t *buf = malloc(WIN);
        uint32_t off = 0;
        for (long i = 0; i < n; i++) {
            if (off + REC > WIN) {
                if (mode[0] == 'w' && write(fd, buf, off) != off) return 1;
                off = 0;
            }
            fill(buf + off, i);
            off += REC;
        }
    } else {
        uint64_t base = 0;
        uint32_t off = 0;
        if (ftruncate(fd, WIN)) return 1;
        uint8_t *m = mmap(NULL, WIN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        for (long i = 0; i < n; i++) {
            if (off + REC > WIN) {
                munmap(m, WIN);
                base += WIN;
                if (ftruncate(fd, base + WIN)) return 1;
                m = mmap(NULL, WIN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
                off = 0;
            }
            fill(m + off, i);
            off += REC;
        }
    }
    double t1 = now(), c1 = cpu();
    printf("%-8s %ld records: %.1f ns wall, %.1f ns CPU per record\n", mode, n, (t1 - t0) / n,
           (c1 - c0) / n);
    return 0;
}
