/* Tracer lifetime: configuration, the trace file, per-thread buffers, the flusher, exit and fork.
 *
 * Threading model
 *  - Each traced thread appends records to its own buffer without locks (gt_reserve/gt_commit).
 *  - A full buffer is handed to the flusher thread (the owner goes on in a spare buffer and wakes
 *    the flusher), and the flusher writes what the buffers hold every flush period; both take
 *    the buffer's mutex, which appending never does. The flusher compresses chunks
 *    (GPUTRACE_COMPRESS) and checksums them: no per-chunk work on the application's threads,
 *    unless the flusher falls behind (GT_HANDOFF_MAX buffers of the thread, or GT_EXTRA_BUFS
 *    buffers beyond one per thread in all) or is gone: the owner then writes its oldest buffer
 *    itself, so memory stays bounded and nothing is dropped: packed (GT_CODEC_PACK_DELTA, a few
 *    ns per record, cheaper than the CRC of the records as they are) at the default level 1,
 *    uncompressed (a CRC only) at the zstd levels above it.
 *  - Chunks are written under one file mutex, so each chunk lands whole and in one piece; on an
 *    I/O error the file is cut back to its last whole chunk and tracing switches off.
 *  - After each flush round the flusher writes a watermark W: every host record with ts < W is in
 *    the file before it. The reader buffers records between watermarks to restore time order.
 *  - Every module writes through this file, so it names none of them: what it asks of them (at
 *    start, per thread, per round, at exit and fork) comes as struct gt_runtime_calls, handed
 *    over by lifecycle.c's constructor. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "format.h"
#include "shim.h"

#define GT_BUF_SIZE       (256u << 10)

#define GT_HANDOFF_MAX  7  /* full buffers a thread may have waiting for the flusher */
#define GT_EXTRA_BUFS   16 /* buffers beyond the first of each thread, all threads together */
#define GT_HOST_PACKERS 4  /* packers for threads' chunks: the flusher and owners at once */

/* A thread's buffers: the public part (shim.h) and, private to this file, the full buffers
 * handed to the flusher (oldest first) and the free ones the owner swaps in, made as needed:
 * at most GT_HANDOFF_MAX + 1 buffers per thread. All under t.mu. */
struct rt_thread {
    struct gt_thread t;
    uint8_t *full[GT_HANDOFF_MAX];
    uint32_t full_from[GT_HANDOFF_MAX], full_to[GT_HANDOFF_MAX]; /* bytes not yet written */
    uint32_t n_full, n_spare, n_bufs; /* n_bufs: buffers made, the current one included */
    uint8_t *spare[GT_HANDOFF_MAX];
};
#define RT(tp) ((struct rt_thread *)(void *)(tp))

_Atomic int gt_state = GT_STATE_IDLE;
_Atomic int gt_inflight_fenced = 1;
_Atomic int gt_cupti_on; /* set by cupti.c; here because a forked child and a crash read it */
static const struct gt_runtime_calls *calls; /* lifecycle.c's; NULL: nothing starts tracing */

/* The hooks may publish `inflight` without a fence once the process is registered for private
 * expedited membarrier (Linux 4.14+): then every flush round makes each running thread of the
 * process execute a full barrier (see flush_round). Otherwise they keep their seq_cst store.
 * GPUTRACE_INFLIGHT_FENCE=1 forces the fenced stores (for tests and comparisons). */
/* linux/membarrier.h's commands (an enum there, so not testable with #if; values fixed by the
 * kernel's ABI). */
#define GT_MB_QUERY                      0
#define GT_MB_PRIVATE_EXPEDITED          (1 << 3)
#define GT_MB_REGISTER_PRIVATE_EXPEDITED (1 << 4)

static void setup_inflight_barrier(void)
{
#if defined(__linux__) && defined(SYS_membarrier)
    const char *why = "GPUTRACE_INFLIGHT_FENCE=1";
    if (!gt_env_flag("GPUTRACE_INFLIGHT_FENCE")) {
        long cmds = gt_syscall(SYS_membarrier, GT_MB_QUERY, 0, 0);
        why = "no private expedited membarrier";
        if (cmds >= 0 && (cmds & GT_MB_PRIVATE_EXPEDITED) &&
            gt_syscall(SYS_membarrier, GT_MB_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
            atomic_store(&gt_inflight_fenced, 0);
            gt_log("gputrace: in-flight marks: plain stores, a membarrier per flush round\n");
            return;
        }
    }
    gt_log("gputrace: in-flight marks: fenced stores (%s)\n", why);
#endif
}

/* Every thread of the process running now executes a full memory barrier before this returns;
 * the others pass one when they are next scheduled. 0 on success. */
static int process_barrier(void)
{
#if defined(__linux__) && defined(SYS_membarrier)
    return (int)gt_syscall(SYS_membarrier, GT_MB_PRIVATE_EXPEDITED, 0, 0);
#else
    return -1;
#endif
}
__thread int gt_tls_in_hook __attribute__((tls_model("initial-exec")));
__thread struct gt_thread *gt_tls_thread __attribute__((tls_model("initial-exec")));

static struct gt_config_env env;
static char env_cupti[PATH_MAX], env_cuda_home[PATH_MAX], env_conda[PATH_MAX];

const struct gt_config_env *gt_config_env(void) { return &env; }

static const char *keep_env(const char *name, char *buf, size_t n)
{
    const char *v = getenv(name);
    if (!v || !*v) return NULL;
    snprintf(buf, n, "%s", v);
    return buf;
}

static struct {
    /* configuration, read once in the constructor */
    char output[PATH_MAX];
    unsigned flush_ms;
    int disabled_by_env;
    int follow_fork; /* GPUTRACE_FOLLOW_FORK: a forked child traces into its own file */
    int test_flush_fault; /* GPUTRACE_TEST_CRASH_FLUSH_FAULT=1 (tests only): the crash flush faults */
    /* the file */
    int fd;
    uint64_t offset;     /* bytes of whole chunks written so far; under file_mu */
    uint64_t fsize_limit; /* RLIMIT_FSIZE at open, so we stop before SIGXFSZ */
    uint32_t seq;        /* sequence of the tracer's own chunks (tid 0); under file_mu */
    int compress;        /* GPUTRACE_COMPRESS: zstd level, 0 = chunks stored as they are */
    struct gt_packer pk; /* the tracer's own and GPU chunks; under pk_mu, taken before file_mu */
    pthread_mutex_t pk_mu;
    /* Threads' host chunks: GT_CODEC_PACK_DELTA at level 1 (a few ns per record, cheap enough
     * for an owner that writes its own buffer), zstd with the delta transform above it. Each
     * under its own mutex, taken before file_mu; an owner takes a free one. */
    struct {
        pthread_mutex_t mu;
        struct gt_packer pk;
    } hpk[GT_HOST_PACKERS];
    int host_cheap;      /* host chunks use GT_CODEC_PACK_DELTA: owners pack their own too */
    int torch_may;       /* the PyTorch bridge (torch.c) may write records: GPUTRACE_TORCH is not
                            off (an unknown value is its default level) */
    uint32_t gpu_seq;    /* sequence of GPU chunks; under file_mu */
    pthread_mutex_t file_mu;
    int ended;           /* the end record is written: no chunk goes after it; under file_mu */
    /* threads */
    pthread_mutex_t list_mu;
    struct gt_thread *threads;
    _Atomic uint64_t next_index;
    pthread_key_t key;
    /* flusher */
    pthread_t flusher;
    int flusher_started;
    pthread_mutex_t flush_mu;
    pthread_cond_t flush_cv;
    pthread_mutex_t round_mu; /* held through each of the flusher's rounds and the final one */
    _Atomic int stopping;
    int handoff;         /* a buffer waits for the flusher; under flush_mu */
    _Atomic uint32_t extra_bufs; /* buffers made beyond one per thread (<= GT_EXTRA_BUFS) */
    _Atomic int crash_gpu; /* a crash handler waits for the flusher's forced CUPTI flush */
    /* totals */
    _Atomic uint64_t records;
    _Atomic uint64_t lost;
    uint32_t pid;
} G = {
    .fd = -1,
    .flush_ms = 100,
    .compress = 1,
    .pk_mu = PTHREAD_MUTEX_INITIALIZER,
    .file_mu = PTHREAD_MUTEX_INITIALIZER,
    .list_mu = PTHREAD_MUTEX_INITIALIZER,
    .flush_mu = PTHREAD_MUTEX_INITIALIZER,
    .round_mu = PTHREAD_MUTEX_INITIALIZER,
    .flush_cv = PTHREAD_COND_INITIALIZER,
};

static pthread_once_t start_once = PTHREAD_ONCE_INIT;

/* ---- configuration ---------------------------------------------------------------------------- */

/* From lifecycle.c's constructor, while the process is still single-threaded: read the
 * environment once, touch nothing else. */
int gt_runtime_configure(const struct gt_runtime_calls *c)
{
    const char *v;
    if (getauxval(AT_SECURE)) { /* set-uid/set-gid: never write files on a user's say-so */
        G.disabled_by_env = 1;
        return -1;
    }
    calls = c;
    gt_debug = gt_env_flag("GPUTRACE_DEBUG");
    v = getenv("GPUTRACE_OUTPUT");
    snprintf(G.output, sizeof(G.output), "%s", v && *v ? v : "gputrace.%p.trace");
    G.flush_ms = (unsigned)gt_env_num("GPUTRACE_FLUSH_MS", 1, 3600u * 1000, 100);
    G.disabled_by_env = gt_env_flag("GPUTRACE_DISABLE");
    G.follow_fork = gt_env_flag("GPUTRACE_FOLLOW_FORK");
    G.test_flush_fault = gt_env_flag("GPUTRACE_TEST_CRASH_FLUSH_FAULT");
    G.compress = (int)gt_env_num("GPUTRACE_COMPRESS", 0, 19, 1); /* 0 off, 2..19 zstd levels */
    gt_packer_init(&G.pk, G.compress);
    G.host_cheap = G.compress == 1;
    v = getenv("GPUTRACE_TORCH");
    G.torch_may = !v || strcmp(v, "off") != 0;
    for (int i = 0; i < GT_HOST_PACKERS; i++) {
        pthread_mutex_init(&G.hpk[i].mu, NULL);
        gt_packer_init(&G.hpk[i].pk, G.compress);
        if (G.host_cheap) G.hpk[i].pk.codec = GT_CODEC_PACK_DELTA;
    }
    env.cupti = keep_env("GPUTRACE_CUPTI", env_cupti, sizeof(env_cupti));
    env.cuda_home = keep_env("CUDA_HOME", env_cuda_home, sizeof(env_cuda_home));
    env.conda_prefix = keep_env("CONDA_PREFIX", env_conda, sizeof(env_conda));
    return 0;
}

/* Expand %p (pid), %h (host name) and %% in the output pattern. */
static void expand_output(char *out, size_t n, const char *pat)
{
    size_t o = 0;
    char host[256];
    if (gethostname(host, sizeof(host)) != 0) strcpy(host, "unknown");
    host[sizeof(host) - 1] = 0;
    for (const char *p = pat; *p && o + 1 < n; p++) {
        char tmp[32];
        const char *ins = NULL;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof(tmp), "%u", (unsigned)getpid());
            ins = tmp;
        } else if (p[0] == '%' && p[1] == 'h') {
            ins = host;
        } else if (p[0] == '%' && p[1] == '%') {
            ins = "%";
        }
        if (ins) {
            p++;
            while (*ins && o + 1 < n) out[o++] = *ins++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

/* ---- the file --------------------------------------------------------------------------------- */

/* Never follow a symlink, never clobber: the trace can hold command lines and paths. */
static int open_output(char *path, size_t n)
{
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = open(path, flags, 0600);
    if (fd < 0 && errno == EEXIST) {
        size_t len = strlen(path);
        snprintf(path + len, n - len, ".%u", (unsigned)getpid());
        gt_warn("gputrace: output exists; writing %s instead\n", path);
        fd = open(path, flags, 0600);
    }
    return fd;
}

/* Switch tracing off for good after an I/O problem; the file keeps its whole chunks. */
static void stop_on_io_error(const char *what, int err)
{
    if (atomic_exchange(&gt_state, GT_STATE_OFF) != GT_STATE_OFF)
        gt_warn("gputrace: %s (%s); tracing stopped, the trace written so far stays readable\n",
                what, strerror(err));
}

/* Write one chunk whose header is made (checksummed). Caller holds file_mu. Returns 0 or -1
 * (tracing is then off). */
static int write_made_locked(const struct gt_chunk_header *hdr, const void *payload)
{
    struct gt_chunk_header ch = *hdr;
    uint32_t size = ch.payload_size;
    if (G.fd < 0) return -1;
    uint64_t total = sizeof(ch) + (uint64_t)size;
    if (G.offset + total > G.fsize_limit) {
        stop_on_io_error("the trace reached the file size limit", EFBIG);
        return -1;
    }
    struct iovec iov[2] = {{&ch, sizeof(ch)}, {(void *)payload, size}};
    uint64_t done = 0;
    while (done < total) {
        ssize_t w;
        if (done < sizeof(ch)) {
            struct iovec v[2] = {{(char *)&ch + done, sizeof(ch) - done}, iov[1]};
            w = writev(G.fd, v, 2);
        } else {
            w = write(G.fd, (const char *)payload + (done - sizeof(ch)), total - done);
        }
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int err = w < 0 ? errno : ENOSPC;
            if (ftruncate(G.fd, (off_t)G.offset) == 0) lseek(G.fd, (off_t)G.offset, SEEK_SET);
            stop_on_io_error("cannot write the trace", err);
            return -1;
        }
        done += (uint64_t)w;
    }
    G.offset += total;
    return 0;
}

/* Takes m. In a crash handler (gt_tls_crash) the holder may be this very thread, interrupted:
 * wait for it a bounded time (try-lock and nanosleep, both safe in a signal handler: glibc's
 * try-lock of a normal mutex is one compare-and-swap) and give up with -1. */
#define GT_CRASH_LOCK_WAIT_MS 200
__thread int gt_tls_crash __attribute__((tls_model("initial-exec")));

static int lock_mu(pthread_mutex_t *m)
{
    if (GT_LIKELY(!gt_tls_crash)) return pthread_mutex_lock(m);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < GT_CRASH_LOCK_WAIT_MS; i++) {
        if (pthread_mutex_trylock(m) == 0) return 0;
        gt_syscall(SYS_nanosleep, &ms, NULL); /* (the C library's: waits.c wraps syscall) */
    }
    return -1;
}

/* A host packer for a thread's chunk: a free one, else the one its tid maps to. */
static int host_packer_lock(uint32_t tid)
{
    for (int i = 0; i < GT_HOST_PACKERS; i++)
        if (pthread_mutex_trylock(&G.hpk[i].mu) == 0) return i;
    int i = (int)(tid % GT_HOST_PACKERS);
    pthread_mutex_lock(&G.hpk[i].mu);
    return i;
}

/* Write one chunk of `size` bytes of records. pack: compress it (GPUTRACE_COMPRESS), waiting for
 * a packer if all are busy; else store the records as they are (only a CRC).
 * `seqp` NULL: a thread's chunk, `seq` its number, packed by a host packer before file_mu is
 * taken; else *seqp is taken under file_mu (the tracer's own and GPU chunks, packed by G.pk). */
#define WC_PACK 1 /* compress it (GPUTRACE_COMPRESS) */
#define WC_LAST 2 /* the chunk with the end record: nothing is written after it */
static int write_chunk(uint16_t kind, uint32_t tid, uint32_t seq, uint32_t *seqp, const void *p,
                       uint32_t size, int flags)
{
    int pack = flags & WC_PACK;
    struct gt_chunk_header ch;
    const void *out = p;
    int r, hp = -1;
    pack = pack && G.compress > 0 && size > 0;
    if (!seqp) {
        if (pack) {
            hp = host_packer_lock(tid);
            out = gt_chunk_pack(&G.hpk[hp].pk, &ch, kind, tid, seq, p, size);
        } else {
            gt_chunk_header_init(&ch, kind, tid, seq, p, size);
        }
        if (lock_mu(&G.file_mu) != 0) return -1; /* a crash handler's only: hp is -1 */
    } else {
        if (pack && lock_mu(&G.pk_mu) != 0) return -1;
        if (lock_mu(&G.file_mu) != 0) {
            if (pack) pthread_mutex_unlock(&G.pk_mu);
            return -1;
        }
        seq = (*seqp)++;
        if (pack) {
            /* GPU records at the default level: the cheap codec, ~1,750 fewer instructions per
             * launch on the flusher than zstd (kernel, correlation and API record) for ~4 more
             * bytes per record (bench/README.md); the tracer's own chunks (text) stay zstd */
            G.pk.codec = kind == GT_CHUNK_GPU && G.host_cheap ? GT_CODEC_PACK_DELTA
                                                              : GT_CODEC_ZSTD_DELTA;
            out = gt_chunk_pack(&G.pk, &ch, kind, tid, seq, p, size);
        }
        else
            gt_chunk_header_init(&ch, kind, tid, seq, p, size);
    }
    /* A thread still running after the end record (exit with threads running): its chunk is not
     * written, and counted as lost by the caller. */
    r = G.ended ? -1 : write_made_locked(&ch, out);
    if (r == 0 && (flags & WC_LAST)) G.ended = 1;
    pthread_mutex_unlock(&G.file_mu);
    if (hp >= 0) pthread_mutex_unlock(&G.hpk[hp].mu);
    if (seqp && pack) pthread_mutex_unlock(&G.pk_mu);
    return r;
}

/* A chunk of the tracer's own (tid 0), e.g. the process record, a watermark, the end record. */
static uint64_t count_records(const uint8_t *p, uint32_t n);

static void write_own(const void *p, uint32_t size, int flags)
{
    if (write_chunk(GT_CHUNK_HOST, 0, 0, &G.seq, p, size, flags) == 0)
        atomic_fetch_add(&G.records, count_records(p, size));
}

static void write_own_records(const void *p, uint32_t size)
{
    write_own(p, size, WC_PACK);
}

/* GPU chunks come from CUPTI's buffer callbacks (its own thread, or the flusher's flush), never
 * from a launch: they are compressed. */
void gt_write_gpu_chunk(const void *payload, uint32_t size)
{
    if (atomic_load(&gt_state) != GT_STATE_RUNNING) { /* delivered after shutdown: counted */
        atomic_fetch_add(&G.lost, count_records(payload, size));
        return;
    }
    if (write_chunk(GT_CHUNK_GPU, 0, 0, &G.gpu_seq, payload, size, WC_PACK) == 0)
        atomic_fetch_add(&G.records, count_records(payload, size));
    else
        atomic_fetch_add(&G.lost, count_records(payload, size));
}

static uint32_t read_small_file(const char *path, char *buf, uint32_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint32_t got = 0;
    if (fd < 0) return 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (uint32_t)r;
    }
    close(fd);
    return got;
}

static void write_process_record(uint64_t rt, uint64_t mono)
{
    static char rec[sizeof(struct gt_rec_process) + 40960];
    struct gt_rec_process *p = (struct gt_rec_process *)rec;
    char *data = rec + sizeof(*p);
    uint32_t room = sizeof(rec) - sizeof(*p) - 8;
    uint32_t cmd = read_small_file("/proc/self/cmdline", data, room - 4352);
    if (cmd > 0 && data[cmd - 1] != 0) data[cmd++] = 0; /* cut: keep the last arg terminated */
    uint32_t argc = 0;
    for (uint32_t i = 0; i < cmd; i++) argc += data[i] == 0;
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    uint32_t hl = (uint32_t)strlen(host);
    memcpy(data + cmd, host, hl);
    ssize_t el = readlink("/proc/self/exe", data + cmd + hl, 4096);
    if (el < 0) el = 0;
    memset(p, 0, sizeof(*p));
    p->ts = mono;
    p->pid = (uint32_t)getpid();
    p->ppid = (uint32_t)getppid();
    p->start_realtime_ns = rt;
    p->argc = argc;
    p->cmdline_len = cmd;
    p->host_len = hl;
    p->exe_len = (uint32_t)el;
    uint32_t size = gt_rec_size(sizeof(*p), cmd + hl + (uint32_t)el);
    memset(rec + sizeof(*p) + cmd + hl + el, 0, size - (sizeof(*p) + cmd + hl + (uint32_t)el));
    p->h.type = GT_REC_PROCESS;
    p->h.size = size;
    write_own_records(rec, size);
}

static void *flusher_main(void *arg);
static void on_fork_child(void);
static void thread_exit(void *arg);

static void start_tracing(void)
{
    struct timespec rt, mono;
    char path[PATH_MAX];
    if (G.disabled_by_env || !calls) goto off;
    expand_output(path, sizeof(path), G.output);
    G.fd = open_output(path, sizeof(path));
    if (G.fd < 0) {
        gt_warn("gputrace: cannot create %s (%s); tracing is off\n", path, strerror(errno));
        goto off;
    }
    struct rlimit rl;
    G.fsize_limit = getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                        ? (uint64_t)rl.rlim_cur
                        : UINT64_MAX;
    G.pid = (uint32_t)getpid();
    setup_inflight_barrier(); /* before any hook records: they are waiting for this once */
    gt_clock_start();
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    uint64_t rt_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
    uint64_t mono_ns = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
    struct gt_file_header h;
    gt_header_init(&h, G.pid, (uint32_t)getppid(), rt_ns, mono_ns);
    if (G.compress > 0) /* readers that do not know the codecs must refuse the file */
        h.min_version = G.host_cheap ? GT_FORMAT_MIN_READER_PACK : GT_FORMAT_MIN_READER_CODEC;
    if (G.torch_may) /* ... and those that would take GT_TORCH_STEP_UNREAD for bytes */
        h.min_version = GT_FORMAT_MIN_READER_TORCH;
    gt_header_seal(&h);
    if (write(G.fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
        gt_warn("gputrace: cannot write %s (%s); tracing is off\n", path, strerror(errno));
        close(G.fd);
        unlink(path);
        G.fd = -1;
        goto off;
    }
    G.offset = sizeof(h);
    static int once; /* a forked child that follows starts again here: register nothing twice */
    if (!once) {
        once = 1;
        pthread_key_create(&G.key, thread_exit);
        pthread_atfork(NULL, NULL, on_fork_child);
        calls->started();
    }
    atomic_store(&gt_state, GT_STATE_RUNNING);
    write_process_record(rt_ns, mono_ns);
    /* The flusher must not inherit the program's signal handlers' duties. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int started = pthread_create(&G.flusher, NULL, flusher_main, NULL) == 0;
    if (started) pthread_detach(G.flusher); /* it ends with the process */
    pthread_mutex_lock(&G.flush_mu); /* owners read it when they hand a buffer over */
    G.flusher_started = started;
    pthread_mutex_unlock(&G.flush_mu);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    gt_log("gputrace: tracing into %s\n", path);
    return;
off:
    atomic_store(&gt_state, GT_STATE_OFF);
}

/* ---- threads ---------------------------------------------------------------------------------- */

static void emit_thread_record(struct gt_thread *t)
{
    char name[17] = "";
    prctl(PR_GET_NAME, name, 0, 0, 0);
    struct gt_rec_thread r = {.ts = gt_now(), .tid = t->tid, .name_len = (uint32_t)strlen(name)};
    gt_emit_named(t, GT_REC_THREAD, 0, &r, sizeof(r), name, r.name_len);
}

static struct gt_thread *thread_slow(void);

/* The slow path of gt_enter: first event of the process or of a thread. The program's errno is
 * preserved: start-up opens files and allocates before the real call has even run. */
struct gt_thread *gt_thread_slow(void)
{
    int saved = errno;
    struct gt_thread *t = thread_slow();
    errno = saved;
    return t;
}

/* A thread's state on cache lines of its own: its owner writes `committed` and `inflight` on
 * every record, so two threads' states sharing a line would bounce it between their cores. */
static struct gt_thread *new_thread_state(void)
{
    enum { LINE = 128 }; /* adjacent-line prefetch pairs 64-byte lines */
    size_t size = (sizeof(struct rt_thread) + LINE - 1) / LINE * LINE;
    void *p = NULL;
    if (posix_memalign(&p, LINE, size) != 0) return NULL;
    memset(p, 0, size);
    return p;
}

static struct gt_thread *thread_slow(void)
{
    int st = atomic_load(&gt_state);
    if (st == GT_STATE_IDLE) {
        __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED); /* start-up may call dlsym, malloc, ... */
        pthread_once(&start_once, start_tracing);
        __atomic_store_n(&gt_tls_in_hook, 0, __ATOMIC_RELAXED);
        st = atomic_load(&gt_state);
    }
    if (st != GT_STATE_RUNNING) return NULL;
    struct gt_thread *t = gt_tls_thread;
    if (!t) {
        __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
        t = new_thread_state();
        uint8_t *buf = t ? malloc(GT_BUF_SIZE) : NULL;
        if (!buf) {
            free(t);
            atomic_fetch_add(&G.lost, 1);
            __atomic_store_n(&gt_tls_in_hook, 0, __ATOMIC_RELAXED);
            return NULL;
        }
        t->buf = buf;
        t->cap = GT_BUF_SIZE;
        RT(t)->n_bufs = 1;
        t->tid = (uint32_t)gt_syscall(SYS_gettid);
        t->index = atomic_fetch_add(&G.next_index, 1) + 1;
        pthread_mutex_init(&t->mu, NULL);
        pthread_mutex_lock(&G.list_mu);
        t->next = G.threads;
        if (G.threads) G.threads->prev = t;
        G.threads = t;
        pthread_mutex_unlock(&G.list_mu);
        pthread_setspecific(G.key, t);
        gt_tls_thread = t;
        emit_thread_record(t);
        calls->thread_start(t);
    }
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
    atomic_store_explicit(&t->inflight, t->last_ts ? t->last_ts : 1, memory_order_seq_cst);
    return t;
}

/* Records in a run of whole records (counted at flush time, never per event). */
static uint64_t count_records(const uint8_t *p, uint32_t n)
{
    uint64_t k = 0;
    for (uint32_t off = 0; off + sizeof(struct gt_rec_header) <= n; k++) {
        uint32_t sz = ((const struct gt_rec_header *)(p + off))->size;
        if (sz < sizeof(struct gt_rec_header)) break;
        off += sz;
    }
    return k;
}

/* One host chunk of t's records; counts them as written or lost. Caller holds t->mu. */
static int write_host(struct gt_thread *t, const uint8_t *p, uint32_t n, int pack)
{
    int r = write_chunk(GT_CHUNK_HOST, t->tid, t->seq++, NULL, p, n, pack ? WC_PACK : 0);
    if (r == 0)
        atomic_fetch_add(&G.records, count_records(p, n));
    else
        atomic_fetch_add(&G.lost, count_records(p, n));
    return r;
}

/* Write out the oldest `max` buffers handed to the flusher; they become spares. Caller holds
 * t->mu. */
static int flush_full_locked(struct gt_thread *t, int pack, uint32_t max)
{
    struct rt_thread *x = RT(t);
    int r = 0;
    uint32_t k = 0;
    for (; k < x->n_full && k < max; k++) {
        if (x->full_to[k] > x->full_from[k] &&
            write_host(t, x->full[k] + x->full_from[k], x->full_to[k] - x->full_from[k], pack) != 0)
            r = -1;
        x->spare[x->n_spare++] = x->full[k];
    }
    x->n_full -= k;
    memmove(x->full, x->full + k, x->n_full * sizeof(x->full[0]));
    memmove(x->full_from, x->full_from + k, x->n_full * sizeof(x->full_from[0]));
    memmove(x->full_to, x->full_to + k, x->n_full * sizeof(x->full_to[0]));
    return r;
}

/* Write out what is committed in t's buffers, the handed-over one first. Caller holds t->mu.
 * pack: compress (the flusher and the exit flush; the owner, on its launch path, only with the
 * cheap host codec: G.host_cheap). */
static int flush_thread_locked(struct gt_thread *t, int reset, int pack)
{
    int r = flush_full_locked(t, pack, GT_HANDOFF_MAX);
    uint32_t c = atomic_load_explicit(&t->committed, memory_order_acquire);
    if (c > t->flushed) {
        if (write_host(t, t->buf + t->flushed, c - t->flushed, pack) != 0) r = -1;
        t->flushed = c;
    }
    if (reset) {
        atomic_store_explicit(&t->committed, 0, memory_order_relaxed);
        t->flushed = 0;
    }
    return r;
}

/* Whether the flusher runs and will write a handed-over buffer soon; under flush_mu. */
static int flusher_takes_handoffs(void) { return G.flusher_started && !G.stopping; }

/* The owner's buffer is full: hand it to the flusher and go on in a spare one. If the flusher is
 * GT_HANDOFF_MAX buffers behind, the owner writes the oldest itself (packed with the cheap host
 * codec, else uncompressed: no zstd on the launch path); without a flusher it writes its buffer
 * itself. */
int gt_reserve_slow(struct gt_thread *t, uint32_t size)
{
    struct rt_thread *x = RT(t);
    int r = 0, wake = 0;
    if (size > t->cap) {
        atomic_fetch_add(&G.lost, 1);
        return -1;
    }
    pthread_mutex_lock(&t->mu);
    if (x->n_full == GT_HANDOFF_MAX) r = flush_full_locked(t, G.host_cheap, 1);
    if (x->n_spare == 0 && x->n_bufs < GT_HANDOFF_MAX + 1 &&
        atomic_fetch_add(&G.extra_bufs, 1) < GT_EXTRA_BUFS) {
        if ((x->spare[0] = malloc(GT_BUF_SIZE)) != NULL)
            x->n_spare = 1, x->n_bufs++;
        else
            atomic_fetch_sub(&G.extra_bufs, 1);
    } else if (x->n_spare == 0 && x->n_bufs < GT_HANDOFF_MAX + 1) {
        atomic_fetch_sub(&G.extra_bufs, 1); /* over the cap: not made */
    }
    pthread_mutex_lock(&G.flush_mu);
    wake = x->n_spare > 0 && r == 0 && flusher_takes_handoffs();
    if (wake) G.handoff = 1;
    pthread_mutex_unlock(&G.flush_mu);
    if (wake) {
        x->full[x->n_full] = t->buf;
        x->full_from[x->n_full] = t->flushed;
        x->full_to[x->n_full] = atomic_load_explicit(&t->committed, memory_order_relaxed);
        x->n_full++;
        t->buf = x->spare[--x->n_spare];
        atomic_store_explicit(&t->committed, 0, memory_order_relaxed);
        t->flushed = 0;
    } else if (r == 0) {
        r = flush_thread_locked(t, 1, G.host_cheap);
    }
    pthread_mutex_unlock(&t->mu);
    if (wake) pthread_cond_signal(&G.flush_cv);
    if (r < 0 || atomic_load(&gt_state) != GT_STATE_RUNNING) {
        atomic_fetch_add(&G.lost, 1);
        return -1;
    }
    return 0;
}

static void thread_exit(void *arg)
{
    struct gt_thread *t = arg;
    if (!t || atomic_load(&gt_state) != GT_STATE_RUNNING) return; /* after fork or shutdown */
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
    calls->thread_ending(t); /* its samples, before its last flush */
    pthread_mutex_lock(&G.list_mu);
    pthread_mutex_lock(&t->mu);
    flush_thread_locked(t, 1, 1); /* the thread's end, not its launch path: compressed */
    pthread_mutex_unlock(&t->mu);
    if (t->prev) t->prev->next = t->next;
    else G.threads = t->next;
    if (t->next) t->next->prev = t->prev;
    pthread_mutex_unlock(&G.list_mu);
    gt_tls_thread = NULL;
    pthread_mutex_destroy(&t->mu);
    calls->thread_ended(t);
    free(t->buf);
    for (uint32_t k = 0; k < RT(t)->n_spare; k++) /* n_full is 0: flushed above */
        free(RT(t)->spare[k]);
    atomic_fetch_sub(&G.extra_bufs, RT(t)->n_bufs - 1);
    free(t);
    __atomic_store_n(&gt_tls_in_hook, 0, __ATOMIC_RELAXED);
}

void gt_emit_named(struct gt_thread *t, uint16_t type, uint16_t sub, const void *fixed,
                   uint32_t fixed_size, const char *text, uint32_t text_len)
{
    uint32_t size = gt_rec_size(fixed_size, text_len);
    uint8_t *p = gt_reserve(t, size);
    if (!p) return;
    memcpy(p, fixed, fixed_size);
    memcpy(p + fixed_size, text, text_len);
    memset(p + fixed_size + text_len, 0, size - fixed_size - text_len);
    gt_commit(t, p, type, sub, size, *(const uint64_t *)((const uint8_t *)fixed + 8));
}

/* ---- the flusher ------------------------------------------------------------------------------ */

/* Why the watermark is safe: a hook stores inflight = L (a time <= the ts it will use) *before*
 * reading the clock (program order). We read W from the clock first (fenced, and
 * GT_CLOCK_WM_MARGIN_NS early, which covers the counters' skew between CPUs), then each thread's
 * inflight (seq_cst), then flush it. If we saw the store, W <= L <= ts. If the hook already
 * finished (inflight cleared, release), our acquire of `committed` under the mutex sees its
 * record and this round flushes it. If we saw neither, the store was not yet visible to us:
 *  - fenced hooks (seq_cst store: a full fence between the store and the clock read): the store
 *    comes after our load in the total order, so the hook read the clock after we read W;
 *  - unfenced hooks (plain store, gt_inflight_fenced 0): between reading W and loading inflight
 *    we run membarrier(PRIVATE_EXPEDITED), which returns only after every thread of the process
 *    executed a full barrier at some point P after the call began (an IPI to each CPU running
 *    one, the scheduler's barriers for the others). A store before P in the hook's program order
 *    is visible to us once membarrier returns, so not seeing it means the store, and so the
 *    clock read after it, come after P: interrupt delivery is serializing (x86) / context
 *    synchronizing (arm64), so no instruction after P, rdtsc or cntvct included, executed
 *    before P, which is after our read of W. So again ts >= W.
 * The unfenced store saves a locked instruction (xchg) per hooked call; the flusher pays one
 * system call (a few µs) per round. */
static void flush_round(int final)
{
    static _Atomic uint64_t last_w; /* the previous round's watermark */
    if (!final) calls->gpu_flush(0); /* GPU records first; takes none of our locks */
    uint64_t w = gt_clock_watermark(); /* also re-anchors the clock */
    if (!atomic_load_explicit(&gt_inflight_fenced, memory_order_relaxed) &&
        process_barrier() != 0) {
        /* Cannot happen once registered; if it does, fall back to fenced hooks and promise no
         * more than last round did (hooks that read the old flag may still be in flight). */
        atomic_store(&gt_inflight_fenced, 1);
        w = atomic_load_explicit(&last_w, memory_order_relaxed);
    }
    pthread_mutex_lock(&G.list_mu);
    for (struct gt_thread *t = G.threads; t; t = t->next) {
        uint64_t in = atomic_load_explicit(&t->inflight, memory_order_seq_cst);
        if (in && in < w) w = in;
        pthread_mutex_lock(&t->mu);
        flush_thread_locked(t, 0, 1);
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_unlock(&G.list_mu);
    atomic_store_explicit(&last_w, w, memory_order_relaxed);
    /* The end record goes before the final watermark, whose promise covers it. */
    struct {
        struct gt_rec_end end;
        struct gt_rec_watermark wm;
    } tail;
    memset(&tail, 0, sizeof(tail));
    tail.wm.h = (struct gt_rec_header){GT_REC_WATERMARK, 0, sizeof(tail.wm)};
    tail.wm.ts = final ? UINT64_MAX : w;
    const void *out = &tail.wm;
    uint32_t size = sizeof(tail.wm);
    if (final) {
        tail.end.h = (struct gt_rec_header){GT_REC_END, 0, sizeof(tail.end)};
        tail.end.ts = gt_now();
        tail.end.records = atomic_load(&G.records) + 1; /* + the watermark in this chunk */
        tail.end.lost = atomic_load(&G.lost);
        tail.end.reason = GT_END_EXIT;
        out = &tail;
        size = sizeof(tail);
    }
    if (atomic_load(&gt_state) == GT_STATE_RUNNING)
        write_own(out, size, WC_PACK | (final ? WC_LAST : 0));
}

/* Writes the buffers their owners handed over (full ones), compressed, one per hold of the
 * owner's mutex: an owner whose buffer fills meanwhile waits for one chunk at most. */
static void write_handoffs(void)
{
    pthread_mutex_lock(&G.list_mu);
    for (struct gt_thread *t = G.threads; t; t = t->next) {
        for (;;) {
            pthread_mutex_lock(&t->mu);
            int more = RT(t)->n_full > 0;
            if (more) flush_full_locked(t, 1, 1);
            pthread_mutex_unlock(&t->mu);
            if (!more || atomic_load(&gt_state) != GT_STATE_RUNNING) break;
        }
    }
    pthread_mutex_unlock(&G.list_mu);
}

void gt_flusher_wake(void)
{
    pthread_mutex_lock(&G.flush_mu);
    if (G.flusher_started) pthread_cond_signal(&G.flush_cv);
    pthread_mutex_unlock(&G.flush_mu);
}

static void *flusher_main(void *arg)
{
    (void)arg;
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED); /* nothing this thread does is traced */
    prctl(PR_SET_NAME, "gputrace-flush", 0, 0, 0);
    uint64_t period = (uint64_t)G.flush_ms * 1000000u, next = gt_now() + period;
    pthread_mutex_lock(&G.flush_mu);
    while (!G.stopping) {
        uint64_t now = gt_now();
        uint64_t sample = calls->next_sample();
        uint64_t wake = next < sample ? next : sample;
        if (!G.handoff && !atomic_load(&G.crash_gpu) && now < wake) { /* sleep until the next
                                                                         round, NVML sample or
                                                                         hand-off */
            struct timespec dl;
            uint64_t left = wake - now;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_nsec += (long)(left % 1000000000u);
            dl.tv_sec += (time_t)(left / 1000000000u) + dl.tv_nsec / 1000000000L;
            dl.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&G.flush_cv, &G.flush_mu, &dl);
        }
        if (G.stopping) break;
        int work = G.handoff;
        G.handoff = 0;
        pthread_mutex_unlock(&G.flush_mu);
        if (atomic_load(&gt_state) != GT_STATE_RUNNING) return NULL;
        if (atomic_load(&G.crash_gpu)) { /* a crash handler waits: CUPTI's records, forced */
            calls->gpu_flush(1);
            atomic_store(&G.crash_gpu, 0);
        }
        /* No round of ours runs alongside or after the final one (gt_shutdown holds round_mu
         * through it, having set stopping first): its chunks would land after the end record. */
        pthread_mutex_lock(&G.round_mu);
        if (!G.stopping) {
            /* NVML's records, before the watermark that covers their times */
            calls->before_round(write_own_records);
            if (work) write_handoffs();
            if (gt_now() >= next) {
                flush_round(0);
                next = gt_now() + period;
            }
            calls->after_round(gt_now());
        }
        pthread_mutex_unlock(&G.round_mu);
        pthread_mutex_lock(&G.flush_mu);
    }
    pthread_mutex_unlock(&G.flush_mu);
    return NULL;
}

/* ---- crashes (the signal handler is crash.c's) --------------------------------------------- */

/* The GPU records CUPTI holds, forced out by the flusher thread: CUPTI takes locks and may
 * allocate, which the crashed thread may be in the middle of; the flusher's hang only costs the
 * crashed thread GT_CRASH_GPU_WAIT_MS. pthread_cond_signal from a signal handler is safe here
 * because this thread was not inside the tracer (the only user of flush_cv on program threads);
 * a lost wake-up is covered by signalling again. */
#define GT_CRASH_GPU_WAIT_MS 1000
static void crash_flush_gpu(void)
{
    if (!atomic_load(&gt_cupti_on) || !G.flusher_started) return;
    atomic_store(&G.crash_gpu, 1);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < GT_CRASH_GPU_WAIT_MS && atomic_load(&G.crash_gpu); i++) {
        if (i % 10 == 0) pthread_cond_signal(&G.flush_cv);
        gt_syscall(SYS_nanosleep, &ms, NULL);
    }
}

/* From a crash signal's handler: every thread's committed records, handed-over buffers first,
 * written as plain chunks (no packer: no allocation, no lock beyond the bounded ones), then the
 * GPU records if asked. The file stays consistent for a handler that lets the program go on. */
void gt_crash_flush(int gpu)
{
    if (atomic_load(&gt_state) != GT_STATE_RUNNING || G.pid != (uint32_t)getpid()) return;
    int saved = gt_tls_crash;
    gt_tls_crash = 1;
    if (G.test_flush_fault) *(volatile int *)(uintptr_t)G.test_flush_fault = 0; /* a bug of ours */
    if (lock_mu(&G.list_mu) == 0) {
        for (struct gt_thread *t = G.threads; t; t = t->next) {
            if (lock_mu(&t->mu) != 0) continue;
            flush_thread_locked(t, 0, 0);
            pthread_mutex_unlock(&t->mu);
        }
        pthread_mutex_unlock(&G.list_mu);
    }
    gt_tls_crash = saved;
    if (gpu) crash_flush_gpu();
}

/* Whether this process writes the trace: tracing runs and this is not a vfork child (which
 * shares our memory under another pid) nor a forked one that does not trace. */
int gt_tracing_here(void)
{
    return atomic_load(&gt_state) == GT_STATE_RUNNING && G.pid == (uint32_t)getpid();
}

/* exec.c: the exec family is about to replace the process image, which ends this process's
 * tracing without its exit path: what was recorded so far is written now, in a round like the
 * flusher's (no end record: a failed exec goes on tracing). The caller is inside the tracer
 * (gt_enter), its waiting host samples written. */
void gt_flush_before_exec(void)
{
    pthread_mutex_lock(&G.round_mu);
    if (!G.stopping) flush_round(0);
    pthread_mutex_unlock(&G.round_mu);
}

/* Runs after the program's and the CUDA libraries' exit handlers (we are loaded first, so our
 * destructor runs last). Threads may still be running: we flush under their locks and keep the
 * file open; whatever they append afterwards is not written. */
__attribute__((destructor)) static void gt_shutdown(void)
{
    if (atomic_load(&gt_state) != GT_STATE_RUNNING || G.pid != (uint32_t)getpid()) return;
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&G.flush_mu);
    G.stopping = 1;
    pthread_cond_broadcast(&G.flush_cv);
    pthread_mutex_unlock(&G.flush_mu);
    calls->stopping(); /* the samplers stop; this thread's samples are written */
    pthread_mutex_lock(&G.round_mu); /* the flusher's round in progress ends first */
    calls->final(write_own_records); /* before the final watermark, which covers them */
    flush_round(1);
    atomic_store(&gt_state, GT_STATE_OFF);
    pthread_mutex_unlock(&G.round_mu);
}

/* GPUTRACE_FOLLOW_FORK=1: the child starts tracing anew at its first hooked call, into its own
 * file (the output pattern expanded with its pid; without %p the parent's file exists, so the
 * child's name gets .PID). This thread is the child's only one: the parent's other threads, their
 * buffers and any lock they held at the fork are gone, so every lock is made anew and everything
 * written to the parent's file (stack nodes, modules, function names, Python code, driver facts)
 * is forgotten, to be written again. The parent's buffers are dropped, never written. The child
 * has no GPU timeline: CUPTI does not survive a fork. */
static void restart_in_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cv = PTHREAD_COND_INITIALIZER;
    pthread_once_t once = PTHREAD_ONCE_INIT;
    G.pk_mu = G.file_mu = G.list_mu = G.flush_mu = G.round_mu = fresh;
    G.flush_cv = fresh_cv;
    gt_packer_init(&G.pk, G.compress); /* the parent's may have been mid-use: dropped */
    for (int i = 0; i < GT_HOST_PACKERS; i++) {
        G.hpk[i].mu = fresh;
        gt_packer_init(&G.hpk[i].pk, G.compress);
        if (G.host_cheap) G.hpk[i].pk.codec = GT_CODEC_PACK_DELTA;
    }
    G.offset = 0, G.seq = 0, G.gpu_seq = 0, G.ended = 0, G.pid = 0;
    G.threads = NULL, G.flusher_started = 0, G.handoff = 0;
    atomic_store(&G.next_index, 0);
    atomic_store(&G.stopping, 0);
    atomic_store(&G.extra_bufs, 0);
    atomic_store(&G.crash_gpu, 0);
    atomic_store(&G.records, 0);
    atomic_store(&G.lost, 0);
    pthread_setspecific(G.key, NULL); /* the parent's state of this thread: not ours to free */
    start_once = once;
    calls->forget();
    atomic_store(&gt_cupti_on, 0);
    atomic_store(&gt_state, GT_STATE_IDLE);
}

/* Fork policy (default): the child does not trace (DataLoader-style workers fork after CUDA init
 * and rarely use CUDA). It must not touch the parent's file, buffers or locks, so it only
 * switches tracing off and closes our descriptor. An exec'd child traces again if LD_PRELOAD says
 * so. With GPUTRACE_FOLLOW_FORK=1 it traces into a file of its own (restart_in_child). */
static void on_fork_child(void)
{
    atomic_store(&gt_state, GT_STATE_OFF);
    if (G.fd >= 0) close(G.fd);
    G.fd = -1;
    gt_tls_thread = NULL;
    if (G.follow_fork) restart_in_child();
}
