/* The PyTorch allocator bridge, C side. PyTorch's caching allocator carves tensors out of the
 * driver segments the hooks see; only Python can read its blocks (memory_stats, _snapshot, the
 * OOM observer: reference/pytorch_allocator.md). This file installs python/gputrace_torch.py into
 * a traced interpreter at a safe point and appends what that module hands back as records.
 *
 *   - When: the first successful driver allocation (gt_torch_poke, from gt_rec_alloc) of a
 *     process with a Python interpreter asks the main thread for a pending call
 *     (Py_AddPendingCall: between two bytecodes, holding the GIL, where running Python is safe,
 *     as python.c does for its atexit guard). The call installs the module only when `torch` is
 *     in sys.modules and the module says CUDA is initialized; otherwise a later allocation asks
 *     again (at most once per RETRY_NS). A process without Python never gets here; one without
 *     torch gets the pending call and nothing else (no import, no callback, no thread).
 *   - The module is found next to the shim: <dir of libgputrace.so>/../python/ (the build tree)
 *     or <dir>/../share/gputrace/python/ (make install).
 *   - Records: the module calls a builtin function object made here (`emit`, METH_O) with a
 *     bytes object of whole records (types GT_REC_TORCH_* and GT_REC_NOTE only, each checked),
 *     appended on the calling thread's buffer with the shim's clock written into each record's
 *     ts. An empty bytes object means "the bridge is closing" (its atexit ran): no more pending
 *     calls are queued after it.
 *   - Samples: every GPUTRACE_SAMPLE_MS the flusher thread (gt_torch_tick) marks a sample due;
 *     the main thread's next hooked call (a launch, an allocation, a synchronization) queues a
 *     pending call to the module's `tick`, which it runs at its next bytecode. A main thread
 *     that makes no CUDA call, or stays in native code, gets no samples meanwhile (the exit
 *     and OOM samples are taken anyway). Pending calls are queued from the main thread because
 *     CPython 3.9-3.11 only signal the main thread's eval loop when it adds them itself.
 *   - _exit (os._exit: exit.c): the module's atexit work (the exit sample and snapshot, with the
 *     block events since the last one) would be lost with the process, so gt_torch_exit calls
 *     its exit_flush() first, only where running Python is safe as at a pending call: the caller
 *     is the interpreter itself (os._exit, not a C signal handler of an extension interrupting a
 *     thread that holds the GIL), the calling thread holds the GIL of the initialized, not
 *     finalizing, main interpreter, and it is not inside the tracer (a handler interrupting a
 *     hook). Anything it raises is cleared; the exit status is the caller's.
 *   - Failure: an exception inside the module is caught by the module and written as a
 *     GT_REC_NOTE; one that escapes to here is cleared, the bridge is turned off and a note is
 *     written. The program's own pending exception and errno are kept.
 * GPUTRACE_TORCH=off|stats|snapshots|history (default snapshots) selects; read once. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "python.h"
#include "shim.h"

typedef void PyObj;

#define RETRY_NS 1000000000ull /* a process with Python but no torch (yet): ask again after 1 s */

enum { T_IDLE, T_QUEUED, T_ON, T_CLOSED, T_OFF };

_Atomic int gt_torch_state = T_OFF; /* T_OFF until configured: the poke costs one load */
_Atomic uint32_t gt_torch_due;      /* see shim.h */

static struct {
    char level[16];
    unsigned sample_ms;
    _Atomic uint64_t next_try; /* T_IDLE: no pending call before this time */
    _Atomic int tick_queued;
    uint64_t next_tick; /* the flusher's; next sample time */
    uint32_t main_tid; /* the thread that installed the bridge: the interpreter's main one */
    PyObj *mod;         /* the module once loaded; owned, like tick (never released:
                         * the bridge lives as long as the interpreter) */
    PyObj *tick;        /* the module's tick() */
    PyObj *exit_flush;  /* the module's exit_flush(): its atexit work, asked for at _exit */
    char module_path[PATH_MAX];
} T;

struct pyapi {
    PyObj *(*ImportModule)(const char *);
    PyObj *(*GetAttrString)(PyObj *, const char *);
    PyObj *(*CallFunctionObjArgs)(PyObj *, ...);
    PyObj *(*Unicode_FromString)(const char *);
    PyObj *(*Long_FromLong)(long);
    PyObj *(*GetModuleDict)(void);
    PyObj *(*Dict_GetItemString)(PyObj *, const char *);
    PyObj *(*CFunction_NewEx)(void *, PyObj *, PyObj *);
    int (*Bytes_AsStringAndSize)(PyObj *, char **, ssize_t *);
    int (*IsTrue)(PyObj *);
    void (*DecRef)(PyObj *);
    void (*IncRef)(PyObj *);
    PyObj *(*Err_Occurred)(void);
    void (*Err_SetString)(PyObj *, const char *);
    PyObj **ValueError;
    PyObj *none;
};
static struct pyapi A;

static int api_ready(void)
{
#define GET(f, n) (*(void **)&A.f = gt_py_sym(n))
    if (A.ImportModule) return 1;
    int ok =
        GET(GetAttrString, "PyObject_GetAttrString") &&
        GET(CallFunctionObjArgs, "PyObject_CallFunctionObjArgs") &&
        GET(Unicode_FromString, "PyUnicode_FromString") && GET(Long_FromLong, "PyLong_FromLong") &&
        GET(GetModuleDict, "PyImport_GetModuleDict") &&
        GET(Dict_GetItemString, "PyDict_GetItemString") &&
        GET(CFunction_NewEx, "PyCFunction_NewEx") &&
        GET(Bytes_AsStringAndSize, "PyBytes_AsStringAndSize") && GET(IsTrue, "PyObject_IsTrue") &&
        GET(DecRef, "Py_DecRef") && GET(IncRef, "Py_IncRef") &&
        GET(Err_Occurred, "PyErr_Occurred") && GET(Err_SetString, "PyErr_SetString") &&
        GET(ValueError, "PyExc_ValueError") && GET(none, "_Py_NoneStruct");
    if (ok) ok = GET(ImportModule, "PyImport_ImportModule") != NULL;
    return ok;
#undef GET
}

/* ---- configuration ----------------------------------------------------------------------------
 */

/* The module next to the shim; 0 when neither place has it. */
static int find_module(void)
{
    Dl_info di;
    if (!dladdr((void *)&find_module, &di) || !di.dli_fname) return 0;
    char dir[PATH_MAX - 64]; /* room for the relative part */
    if (strlen(di.dli_fname) >= sizeof(dir)) return 0;
    snprintf(dir, sizeof(dir), "%s", di.dli_fname);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else
        *slash = 0;
    static const char *const rel[] = {"/../python/gputrace_torch.py",
                                      "/../share/gputrace/python/gputrace_torch.py"};
    struct stat st;
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        snprintf(T.module_path, sizeof(T.module_path), "%s%s", dir, rel[i]);
        if (stat(T.module_path, &st) == 0 && S_ISREG(st.st_mode)) return 1;
    }
    T.module_path[0] = 0;
    return 0;
}

__attribute__((constructor)) static void torch_configure(void)
{
    const char *v = getenv("GPUTRACE_TORCH");
    snprintf(T.level, sizeof(T.level), "%s", v && *v ? v : "snapshots");
    if (strcmp(T.level, "off") && strcmp(T.level, "stats") && strcmp(T.level, "snapshots") &&
        strcmp(T.level, "history")) {
        gt_warn("gputrace: GPUTRACE_TORCH: unknown '%s' (off, stats, snapshots, history): "
                "snapshots\n",
                T.level);
        snprintf(T.level, sizeof(T.level), "snapshots");
    }
    T.sample_ms = 100;
    if ((v = getenv("GPUTRACE_SAMPLE_MS")) && *v) {
        char *end;
        unsigned long ms = strtoul(v, &end, 10);
        if (*end == 0 && ms <= 24ul * 3600 * 1000) T.sample_ms = (unsigned)ms;
    }
    if (strcmp(T.level, "off") == 0) return;
    if (!find_module()) {
        gt_log("gputrace: PyTorch bridge off: gputrace_torch.py not found next to the shim\n");
        return;
    }
    atomic_store(&gt_torch_state, T_IDLE);
}

/* ---- records from the module ------------------------------------------------------------------
 */

static int allowed_type(unsigned type)
{
    return (type >= GT_REC_TORCH_STATS && type <= GT_REC_TORCH_OOM) ||
           type == GT_REC_TORCH_ROLES || type == GT_REC_TORCH_STEP ||
           type == GT_REC_TORCH_TRACE || type == GT_REC_NOTE;
}

/* Appends the whole records in [p, p + n) with ts = now; -1 (nothing written) when one is not a
 * record the bridge may write. */
static int append(const uint8_t *p, size_t n)
{
    for (size_t off = 0; off < n;) { /* check everything before writing anything */
        struct gt_rec_header h;
        if (n - off < 16) return -1;
        memcpy(&h, p + off, sizeof(h));
        if (!allowed_type(h.type) || h.size < 16 || h.size % 8 || h.size > n - off ||
            h.size > (1u << 20))
            return -1;
        off += h.size;
    }
    struct gt_thread *t = gt_enter();
    if (!t) return 0;
    uint64_t now = gt_now();
    for (size_t off = 0; off < n;) {
        struct gt_rec_header h;
        memcpy(&h, p + off, sizeof(h));
        uint8_t *r = gt_reserve(t, h.size);
        if (!r) break;
        memcpy(r, p + off, h.size);
        memcpy(r + 8, &now, 8);
        gt_commit(t, r, h.type, h.sub, h.size, now);
        off += h.size;
    }
    gt_leave(t);
    return 0;
}

/* emit(bytes) -> None (METH_O): the module's only way into the trace. */
static PyObj *emit(PyObj *self, PyObj *arg)
{
    (void)self;
    int saved = errno;
    char *p;
    ssize_t n;
    if (A.Bytes_AsStringAndSize(arg, &p, &n) < 0) return NULL; /* TypeError set */
    if (n == 0) {
        atomic_store(&gt_torch_state, T_CLOSED);
    } else if (append((const uint8_t *)p, (size_t)n) < 0) {
        A.Err_SetString(*A.ValueError, "gputrace: not whole bridge records");
        errno = saved;
        return NULL;
    }
    errno = saved;
    A.IncRef(A.none);
    return A.none;
}

static struct { /* a PyMethodDef */
    const char *name;
    PyObj *(*meth)(PyObj *, PyObj *);
    int flags;
    const char *doc;
} emit_def = {"_gputrace_emit", emit, 0x0008 /* METH_O */,
              "gputrace: appends PyTorch allocator records to the trace"};

static void note_off(const char *why)
{
    struct gt_thread *t = gt_enter();
    if (!t) return;
    char text[256];
    snprintf(text, sizeof(text), "PyTorch allocator bridge off: %s", why);
    struct gt_rec_note r = {
        .ts = gt_now(), .level = GT_NOTE_WARNING, .text_len = (uint32_t)strlen(text)};
    gt_emit_named(t, GT_REC_NOTE, 0, &r, sizeof(r), text, r.text_len);
    gt_leave(t);
}

/* ---- installing the module (a pending call: main thread, GIL held) ----------------------------
 */

/* Loads the module from its file and calls install(emit, level, sample_ms). 1: installed, 0:
 * not yet (no torch, or CUDA not initialized), -1: failed. */
static PyObj *load_module(void)
{
    PyObj *objs[8] = {0};
    PyObj *util = objs[0] = A.ImportModule("importlib.util");
    PyObj *from = util ? (objs[1] = A.GetAttrString(util, "spec_from_file_location")) : NULL;
    PyObj *name = from ? (objs[2] = A.Unicode_FromString("gputrace_torch")) : NULL;
    PyObj *path = name ? (objs[3] = A.Unicode_FromString(T.module_path)) : NULL;
    PyObj *spec = path ? (objs[4] = A.CallFunctionObjArgs(from, name, path, NULL)) : NULL;
    PyObj *mk = spec ? (objs[5] = A.GetAttrString(util, "module_from_spec")) : NULL;
    PyObj *mod = mk ? A.CallFunctionObjArgs(mk, spec, NULL) : NULL;
    PyObj *loader = mod ? (objs[6] = A.GetAttrString(spec, "loader")) : NULL;
    PyObj *exec = loader ? (objs[7] = A.GetAttrString(loader, "exec_module")) : NULL;
    PyObj *done = exec ? A.CallFunctionObjArgs(exec, mod, NULL) : NULL;
    if (done) A.DecRef(done);
    if (!done && mod) A.DecRef(mod), mod = NULL;
    for (int i = 7; i >= 0; i--)
        if (objs[i]) A.DecRef(objs[i]);
    return mod;
}

/* Loads the module from its file (once) and calls install(emit, level, sample_ms). 1:
 * installed, 0: not yet (no torch, or CUDA not initialized), -1: failed. The module is not put
 * in sys.modules: the program never sees it. */
static int load_and_install(void)
{
    PyObj *mods = A.GetModuleDict();
    if (!mods || !A.Dict_GetItemString(mods, "torch")) return 0; /* borrowed; no torch yet */
    if (!T.mod && !(T.mod = load_module())) return -1;
    int rc = -1;
    PyObj *fn = A.CFunction_NewEx(&emit_def, NULL, NULL);
    PyObj *lv = A.Unicode_FromString(T.level);
    PyObj *ms = A.Long_FromLong((long)T.sample_ms);
    PyObj *inst = A.GetAttrString(T.mod, "install");
    PyObj *r = fn && lv && ms && inst ? A.CallFunctionObjArgs(inst, fn, lv, ms, NULL) : NULL;
    if (r) {
        rc = A.IsTrue(r) == 1;
        if (rc == 1 && !(T.tick = A.GetAttrString(T.mod, "tick"))) rc = -1;
        if (rc == 1 && !(T.exit_flush = A.GetAttrString(T.mod, "exit_flush"))) rc = -1;
        A.DecRef(r);
    }
    PyObj *refs[] = {inst, ms, lv, fn};
    for (int i = 0; i < 4; i++)
        if (refs[i]) A.DecRef(refs[i]);
    return rc;
}

static int install_call(void *arg)
{
    (void)arg;
    int saved = errno;
    if (atomic_load(&gt_torch_state) != T_QUEUED || !gt_py_safe_here() || !api_ready()) {
        atomic_store(&gt_torch_state, T_IDLE);
        errno = saved;
        return 0;
    }
    struct gt_py_err err;
    gt_py_err_save(&err);
    int rc = load_and_install();
    gt_py_err_restore(&err); /* clears whatever the module left */
    if (rc == 1) {
        T.main_tid = (uint32_t)gt_syscall(SYS_gettid);
        atomic_store(&gt_torch_state, T_ON);
        gt_log("gputrace: PyTorch allocator bridge installed (%s)\n", T.level);
    } else if (rc == 0) {
        atomic_store(&T.next_try, gt_now() + RETRY_NS);
        atomic_store(&gt_torch_state, T_IDLE);
    } else {
        atomic_store(&gt_torch_state, T_OFF);
        note_off("its module failed to load or install (GPUTRACE_DEBUG=1 says more)");
        gt_log("gputrace: PyTorch allocator bridge failed to install from %s\n", T.module_path);
    }
    errno = saved;
    return 0;
}

void gt_torch_poke_slow(void)
{
    int idle = T_IDLE;
    /* a process without Python (most C programs) pays one load here, not a clock read */
    if (!gt_py_loaded() || gt_now() < atomic_load_explicit(&T.next_try, memory_order_relaxed))
        return;
    if (!atomic_compare_exchange_strong(&gt_torch_state, &idle, T_QUEUED))
        return;
    if (gt_py_pending(install_call, NULL) != 0) {
        atomic_store(&T.next_try, gt_now() + RETRY_NS);
        atomic_store(&gt_torch_state, T_IDLE);
    }
}

/* ---- samples (the flusher asks; the main thread runs them) ------------------------------------
 */

static int tick_call(void *arg)
{
    (void)arg;
    int saved = errno;
    atomic_store(&T.tick_queued, 0);
    if (atomic_load(&gt_torch_state) == T_ON && gt_py_safe_here()) {
        struct gt_py_err err;
        gt_py_err_save(&err);
        PyObj *r = A.CallFunctionObjArgs(T.tick, NULL);
        if (r)
            A.DecRef(r);
        else {
            atomic_store(&gt_torch_state, T_OFF);
            note_off("its sampler raised (GPUTRACE_DEBUG=1 says more)");
        }
        gt_py_err_restore(&err);
    }
    errno = saved;
    return 0;
}

void gt_torch_tick(uint64_t now)
{
    if (atomic_load_explicit(&gt_torch_state, memory_order_relaxed) != T_ON || !T.sample_ms ||
        now < T.next_tick || atomic_load(&T.tick_queued))
        return;
    T.next_tick = now + (uint64_t)T.sample_ms * 1000000u;
    atomic_store_explicit(&gt_torch_due, T.main_tid, memory_order_relaxed);
}

/* On the main thread, inside a hook: queue the due sample. */
void gt_torch_poll_slow(void)
{
    int saved = errno;
    uint32_t due = atomic_exchange(&gt_torch_due, 0);
    int zero = 0;
    if (due && atomic_compare_exchange_strong(&T.tick_queued, &zero, 1) &&
        gt_py_pending(tick_call, NULL) != 0)
        atomic_store(&T.tick_queued, 0);
    errno = saved;
}

/* ---- _exit (exit.c, before the records are written) ---------------------------------------- */

void gt_torch_exit(uintptr_t caller)
{
    if (atomic_load(&gt_torch_state) != T_ON || !T.exit_flush ||
        __atomic_load_n(&gt_tls_in_hook, __ATOMIC_RELAXED) ||
        !gt_py_interp_ip(caller) || !gt_py_safe_here())
        return;
    int saved = errno;
    struct gt_py_err err;
    gt_py_err_save(&err);
    PyObj *r = A.CallFunctionObjArgs(T.exit_flush, NULL);
    if (r) A.DecRef(r);
    gt_py_err_restore(&err); /* what exit_flush raised is dropped */
    errno = saved;
}
