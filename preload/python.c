/* Python frames for host call stacks. The CPython API is found at run time with dlsym (in the
 * python executable or a libpython it links, at load time; in a libpython loaded later, when the
 * stack code first sees that object); nothing here links against Python.
 *
 * Two walks:
 *   - With the GIL (the calling thread holds the GIL of the main interpreter), through the API
 *     (PyThreadState_GetFrame, PyFrame_GetBack, PyFrame_GetCode, PyFrame_GetLineNumber): the
 *     reference. The current thread state must be this thread's own
 *     (PyGILState_GetThisThreadState), PyGILState_Check must say 1, and Python must be
 *     initialized. PyGILState_Check alone answers 1 before initialization and when its check is
 *     disabled (subinterpreters), and the "current" thread state of 3.9-3.11 is a process-wide
 *     pointer that names whichever thread holds the GIL.
 *   - Without the GIL (PyTorch, CuPy and ctypes.CDLL release it around foreign calls), by struct
 *     offsets: this thread's thread state comes from PyGILState_GetThisThreadState (it reads a
 *     TSS slot, no lock), and its frame chain is read field by field with the layout of the
 *     running minor version (3.9-3.13, release builds, x86_64; see `layouts`). The frames of the
 *     calling thread cannot change while it is inside the shim, and the code objects and strings
 *     they name are immutable and kept alive by those frames, so reading them is safe; no API that
 *     needs the GIL is called and no Python object is made. Every pointer is checked (null,
 *     alignment, user-space range, the object's type where it has one) and the walk is bounded;
 *     a failed type check means the layout is wrong: the walk is turned off for the process.
 *     Lines are decoded here from the code object's line table (a pure function per version,
 *     the same arithmetic as PyCode_Addr2Line), names are read from compact str objects and
 *     encoded to UTF-8 here. Off (one log line) for: other versions, debug builds (Py_DEBUG),
 *     free-threaded builds (3.13t), while the interpreter finalizes, when subinterpreters exist,
 *     and GPUTRACE_PYTHON=gil.
 *   - Finalization guard: Py_FinalizeEx frees the states of threads still running (daemon
 *     threads inside a foreign call) and, from 3.11, their frames' data-stack chunks (munmapped:
 *     a read would crash the traced program). It does so only after it has run the atexit
 *     callbacks (3.9-3.13: wait_for_thread_shutdown, atexit callbacks, then the finalizing flag,
 *     then the thread states). So the offset walk is used only once a C function of ours is
 *     registered with atexit (exit_guard; atexit.register, made by a pending call,
 *     Py_AddPendingCall, that the main thread runs between two bytecodes with the GIL: cuInit
 *     asks for it (gt_py_early), so it runs before the program's first allocation, else the first
 *     capture with or without the GIL; "atexit guard registered" in the debug log).
 *     Each offset walk counts itself in `walkers` (seq_cst) and then reads `closing`; exit_guard
 *     sets `closing` (seq_cst) and waits (sched_yield) until `walkers` is 0: either the walk sees
 *     `closing` and gives up (native frames only), or exit_guard waits for it to end; walks are
 *     bounded and never block, so the wait ends. The thread running exit_guard (the finalizing
 *     one, whose own frames stay valid) keeps walking until the finalizing flag is set; walks
 *     through the API (GIL held) are not affected. Consequences: until the pending call has run,
 *     calls made without the GIL get native frames only (those made in the same native stretch of
 *     the main thread as cuInit, or before it from a Python thread other than main); a
 *     program whose main thread never runs Python again gets none; the program sees one more
 *     atexit callback (atexit._ncallbacks(), "_gputrace_python_exit"), none with
 *     GPUTRACE_PYTHON=gil or 0; a failed registration keeps the offset walk off. A fork child
 *     keeps the registration (Python copies atexit's list) and starts with no walk in progress.
 *     Left: Py_AddPendingCall from a thread without the GIL reads the interpreter's pending-call
 *     queue, so the first such request must not race the very end of finalization; it is made
 *     only while the interpreter is initialized and not finalizing, at most once per process.
 *   - Self-check: the first SELF_CHECKS captures made while the GIL is held walk both ways and
 *     compare code objects, lines, file and function names; on any difference the offset walk is
 *     turned off for the process (one log line and a warning note in the trace).
 *     GPUTRACE_TEST_PY_MISMATCH=1 (for tests only) makes the offset walk report a wrong line
 *     during the self-check, to prove that path.
 *
 * Safety rules of the API walk, each for a reason:
 *   - The GIL is never taken: a CUDA call can come from code holding an allocator's mutex that
 *     a thread waiting for the GIL also wants (deadlock).
 *   - 3.11+ creates frame objects on demand (PyThreadState_GetFrame, PyFrame_GetBack). In 3.11
 *     such an allocation can start a garbage collection, which runs finalizers: arbitrary Python
 *     code inside a CUDA call (a tensor freed into an allocator whose lock this thread holds).
 *     The collector is switched off around the walk (PyGC_Disable/PyGC_Enable: a flag).
 *   - A pending exception is set aside and put back, any exception raised here is cleared, and
 *     errno is kept.
 *
 * Interning: a hash table code object address -> (id, fingerprint) and (code id, instruction
 * offset) -> pseudo-ip (GT_PYFRAME_IP): known frames cost two lookups, no string work. The line is
 * computed when a pair is new (the API walk of 3.9/3.10 has no PyFrame_GetLasti: its key is the
 * line, computed per frame). Each new code object gets an id and one GT_REC_PYCODE record. The
 * API walk also keeps a reference to each code object it names; the offset walk cannot (no GIL),
 * so a code object's entry also holds a fingerprint (the addresses of its file name, name and line
 * table and its first line): a code object freed and another made at the same address gets a new
 * id. The table is guarded by a private mutex, held only for lookups and record writes (never
 * while waiting for anything else); a re-entrant call on the same thread gets native frames only.
 */
#include "python.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"
#include "unwind.h"

typedef void PyObj;

#define SLOTS0      4096u
#define SLOTS_MAX   (1u << 20)  /* 32 MiB of table at most; then new frames end the Python part */
#define KEY_CODE    INT64_MIN   /* key of a code object's own entry (value: its id) */
#define KEY_LINE    (1ll << 40) /* key flag: the key is a line, not an instruction offset */
#define WALK_MAX    4096u       /* frames visited (incomplete ones included) per offset walk */
#define SELF_CHECKS 3           /* captures with the GIL that also check the offset walk */

struct ent {
    uint64_t a;   /* code object address (KEY_CODE) or code id; 0 = empty slot */
    int64_t key;  /* instruction offset in bytes (or KEY_LINE | line), KEY_CODE */
    uint64_t val; /* pseudo-ip, or code id */
    uint64_t fp;  /* KEY_CODE: the code object's fingerprint (0: no layout) */
};

/* Field offsets of one CPython minor version (x86_64, release build, GIL build), from its headers
 * (offsetof with Py_BUILD_CORE: tests/cases/py_offsets.sh recomputes them for every installed
 * interpreter). 3.9/3.10: fr_* are PyFrameObject fields; 3.11+: _PyInterpreterFrame fields. */
struct layout {
    uint16_t ts_interp;  /* PyThreadState.interp */
    uint16_t ts_frame;   /* .frame (3.9/3.10), .cframe (3.11/3.12), .current_frame (3.13) */
    uint16_t cf_current; /* _PyCFrame.current_frame (3.11/3.12) */
    uint16_t fr_back;    /* f_back (3.9/3.10), previous */
    uint16_t fr_code;    /* f_code, f_executable (3.13) */
    uint16_t fr_lasti;  /* int f_lasti (3.9 bytes, 3.10 code units), prev_instr, instr_ptr (3.13) */
    uint16_t fr_trace;  /* PyFrameObject.f_trace (3.9/3.10) */
    uint16_t fr_lineno; /* PyFrameObject.f_lineno (3.9/3.10) */
    uint16_t fr_owner;  /* char owner (3.11+) */
    uint16_t fr_obj;    /* frame_obj (3.11+) */
    uint16_t fo_lineno; /* PyFrameObject.f_lineno (3.11+) */
    uint16_t co_first;  /* int co_firstlineno */
    uint16_t co_file;   /* co_filename */
    uint16_t co_name;   /* co_name (3.9/3.10), co_qualname */
    uint16_t co_lines;  /* co_lnotab (3.9), co_linetable */
    uint16_t co_traceable; /* int _co_firsttraceable (3.11+) */
    uint16_t co_code;      /* co_code_adaptive (3.11+) */
    uint16_t u_ascii;      /* sizeof(PyASCIIObject): compact ASCII data follows */
    uint16_t u_compact;    /* sizeof(PyCompactUnicodeObject): compact UCS1/2/4 data follows */
};

static const struct layout layouts[5] = {
    /* 3.9 */ {16, 24, 0, 24, 32, 104, 80, 108, 0, 0, 0, 40, 104, 112, 120, 0, 0, 48, 72},
    /* 3.10 */ {16, 24, 0, 24, 32, 96, 72, 100, 0, 0, 0, 40, 104, 112, 120, 0, 0, 48, 72},
    /* 3.11 */ {16, 56, 8, 48, 32, 56, 0, 0, 69, 40, 40, 72, 112, 128, 136, 168, 184, 48, 72},
    /* 3.12 */ {16, 56, 0, 8, 0, 56, 0, 0, 70, 48, 40, 68, 112, 128, 136, 176, 192, 40, 56},
    /* 3.13 */ {16, 72, 0, 8, 0, 56, 0, 0, 70, 48, 40, 68, 112, 128, 136, 184, 200, 40, 56},
};

/* PyThreadState.id (a number never given to another thread state) of 3.9-3.13, checked like the
 * layouts (tests/cases/py_offsets.sh; 0 would mean not known: other threads' frames are then not
 * read while they sleep), and at run time against PyThreadState_GetID. PyThreadState.next. */
static const uint16_t ts_ids[5] = {256, 256, 240, 224, 224};
#define TS_NEXT 8

#define OWNED_BY_GENERATOR 1
#define OWNED_BY_CSTACK    3 /* 3.12+ */

static struct {
    _Atomic int ready;  /* 1: every function below is set and the interpreter is supported */
    _Atomic int on;     /* 1: the offset walk may be used (layout known, self-check not failed) */
    pthread_mutex_t mu; /* resolution */
    int minor;          /* 3.minor */
    int gc_guard;       /* 3.11: frame materialization may collect */
    int off;            /* GPUTRACE_PYTHON=0 */
    int gil_only;       /* GPUTRACE_PYTHON=gil */
    int test_mismatch;  /* GPUTRACE_TEST_PY_MISMATCH=1 (tests only) */
    uintptr_t lo, hi;   /* the interpreter object's mapping */
    void *handle;       /* where the API was found (RTLD_DEFAULT or libpython's handle) */
    struct layout L;
    uintptr_t t_code, t_frame, t_bytes, t_str; /* PyCode_Type, PyFrame_Type, PyBytes_Type, ... */
    int (*IsInitialized)(void);
    int (*IsFinalizing)(void);
    int (*GILState_Check)(void);
    PyObj *(*GILState_GetThisThreadState)(void);
    PyObj *(*ThreadState_Unchecked)(void);
    PyObj *(*ThreadState_GetInterpreter)(PyObj *);
    PyObj *(*InterpreterState_Main)(void);
    PyObj *(*InterpreterState_Head)(void);
    PyObj *(*InterpreterState_Next)(PyObj *);
    PyObj *(*InterpreterState_ThreadHead)(PyObj *);
    uint64_t (*ThreadState_GetID)(PyObj *);
    _Atomic unsigned ts_id; /* PyThreadState.id's offset; 0: unknown, or found wrong */
    PyObj *(*ThreadState_GetFrame)(PyObj *);
    PyObj *(*Frame_GetBack)(PyObj *);
    PyObj *(*Frame_GetCode)(PyObj *);
    int (*Frame_GetLineNumber)(PyObj *);
    int (*Frame_GetLasti)(PyObj *); /* 3.11+, else NULL */
    void (*IncRef)(PyObj *);
    void (*DecRef)(PyObj *);
    PyObj *(*Err_Occurred)(void);
    void (*Err_Clear)(void);
    PyObj *(*Err_GetRaised)(void);  /* 3.12+ */
    void (*Err_SetRaised)(PyObj *); /* 3.12+ */
    void (*Err_Fetch)(PyObj **, PyObj **, PyObj **);
    void (*Err_Restore)(PyObj *, PyObj *, PyObj *);
    PyObj *(*GetAttrString)(PyObj *, const char *);
    const char *(*AsUTF8AndSize)(PyObj *, ssize_t *);
    long (*Long_AsLong)(PyObj *);
    int (*GC_Disable)(void); /* 3.10+ */
    int (*GC_Enable)(void);
    int (*AddPendingCall)(int (*)(void *), void *);
    PyObj *(*CFunction_NewEx)(void *, PyObj *, PyObj *);
    PyObj *(*Import_ImportModule)(const char *);
    PyObj *(*CallFunctionObjArgs)(PyObj *, ...);
    PyObj *none; /* &_Py_NoneStruct */
    /* The finalization guard (see the top comment): */
    _Atomic int guard;   /* GUARD_* */
    _Atomic int walkers; /* offset walks in progress */
    _Atomic int closing; /* set by the atexit callback: no new offset walks */
    /* the table and everything below; under tab_mu */
    pthread_mutex_t tab_mu;
    struct ent *e;
    uint64_t mask, used;
    uint32_t next_code;
    int full;
    int checks;   /* self-checks done */
    uint32_t gen; /* gt_py_forget's count: code ids and pseudo-ips of an earlier one mean nothing */
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .tab_mu = PTHREAD_MUTEX_INITIALIZER};

static __thread int in_walk __attribute__((tls_model("initial-exec")));
/* 1 on the thread that ran the atexit callback (the one finalizing: its own frames stay valid) */
static __thread int closer __attribute__((tls_model("initial-exec")));

enum { GUARD_NONE, GUARD_QUEUED, GUARD_ON, GUARD_FAILED };
static void forked_child(void);

/* ---- finding the interpreter -------------------------------------------------------------------
 */

/* "3.11.7 (main, ...)" -> 11; -1 unless 3.x */
static int version_minor(const char *v)
{
    if (!v || v[0] != '3' || v[1] != '.') return -1;
    return atoi(v + 2);
}

#define LOOK(field, name) (*(void **)&P.field = gt_real_dlsym(h, name))

/* Whether the offset walk can serve this interpreter; logs why not. Caller holds mu. */
static int layout_usable(void *h, const char *version)
{
    const char *why = NULL;
    if (P.gil_only)
        why = "GPUTRACE_PYTHON=gil";
    else if (P.minor < 9 || P.minor > 13)
        why = "no struct layout for this version";
    else if (gt_real_dlsym(h, "_Py_NegativeRefcount") || gt_real_dlsym(h, "_Py_RefTotal") ||
             gt_real_dlsym(h, "_Py_GetRefTotal"))
        why = "a debug build";
    else if (strstr(version, "free-threading") || gt_real_dlsym(h, "_Py_MergeZeroLocalRefcount"))
        why = "a free-threaded build";
    else if (!P.IsFinalizing || !P.InterpreterState_Head || !P.InterpreterState_Next || !P.t_code ||
             !P.t_frame || !P.t_bytes || !P.t_str || !P.AddPendingCall || !P.CFunction_NewEx ||
             !P.Import_ImportModule || !P.CallFunctionObjArgs || !P.none)
        why = "symbols missing";
    if (why) {
        gt_log("gputrace: Python 3.%d: frames only while the GIL is held (%s)\n", P.minor, why);
        return 0;
    }
    P.L = layouts[P.minor - 9];
    if (P.InterpreterState_ThreadHead && P.ThreadState_GetID) P.ts_id = ts_ids[P.minor - 9];
    return 1;
}

/* Looks the API up in handle h; returns 1 when everything needed is there. Caller holds mu. */
static int resolve(void *h)
{
    const char *(*get_version)(void) = (const char *(*)(void))gt_real_dlsym(h, "Py_GetVersion");
    if (!get_version) return 0;
    LOOK(IsInitialized, "Py_IsInitialized");
    if (!LOOK(IsFinalizing, "Py_IsFinalizing")) LOOK(IsFinalizing, "_Py_IsFinalizing");
    LOOK(GILState_Check, "PyGILState_Check");
    LOOK(GILState_GetThisThreadState, "PyGILState_GetThisThreadState");
    if (!LOOK(ThreadState_Unchecked, "PyThreadState_GetUnchecked"))
        LOOK(ThreadState_Unchecked, "_PyThreadState_UncheckedGet");
    LOOK(ThreadState_GetInterpreter, "PyThreadState_GetInterpreter");
    LOOK(InterpreterState_Main, "PyInterpreterState_Main");
    LOOK(InterpreterState_Head, "PyInterpreterState_Head");
    LOOK(InterpreterState_Next, "PyInterpreterState_Next");
    LOOK(InterpreterState_ThreadHead, "PyInterpreterState_ThreadHead");
    LOOK(ThreadState_GetID, "PyThreadState_GetID");
    LOOK(ThreadState_GetFrame, "PyThreadState_GetFrame");
    LOOK(Frame_GetBack, "PyFrame_GetBack");
    LOOK(Frame_GetCode, "PyFrame_GetCode");
    LOOK(Frame_GetLineNumber, "PyFrame_GetLineNumber");
    LOOK(Frame_GetLasti, "PyFrame_GetLasti");
    LOOK(IncRef, "Py_IncRef");
    LOOK(DecRef, "Py_DecRef");
    LOOK(Err_Occurred, "PyErr_Occurred");
    LOOK(Err_Clear, "PyErr_Clear");
    LOOK(Err_GetRaised, "PyErr_GetRaisedException");
    LOOK(Err_SetRaised, "PyErr_SetRaisedException");
    LOOK(Err_Fetch, "PyErr_Fetch");
    LOOK(Err_Restore, "PyErr_Restore");
    LOOK(GetAttrString, "PyObject_GetAttrString");
    LOOK(AsUTF8AndSize, "PyUnicode_AsUTF8AndSize");
    LOOK(Long_AsLong, "PyLong_AsLong");
    LOOK(GC_Disable, "PyGC_Disable");
    LOOK(GC_Enable, "PyGC_Enable");
    LOOK(AddPendingCall, "Py_AddPendingCall");
    LOOK(CFunction_NewEx, "PyCFunction_NewEx");
    LOOK(Import_ImportModule, "PyImport_ImportModule");
    LOOK(CallFunctionObjArgs, "PyObject_CallFunctionObjArgs");
    LOOK(none, "_Py_NoneStruct");
    P.handle = h;
    P.t_code = (uintptr_t)gt_real_dlsym(h, "PyCode_Type");
    P.t_frame = (uintptr_t)gt_real_dlsym(h, "PyFrame_Type");
    P.t_bytes = (uintptr_t)gt_real_dlsym(h, "PyBytes_Type");
    P.t_str = (uintptr_t)gt_real_dlsym(h, "PyUnicode_Type");
    const char *version = get_version();
    P.minor = version_minor(version);
    int errs = (P.Err_GetRaised && P.Err_SetRaised) || (P.Err_Fetch && P.Err_Restore);
    if (P.minor < 9 || !P.IsInitialized || !P.GILState_Check || !P.GILState_GetThisThreadState ||
        !P.ThreadState_Unchecked || !P.ThreadState_GetInterpreter || !P.InterpreterState_Main ||
        !P.ThreadState_GetFrame || !P.Frame_GetBack || !P.Frame_GetCode || !P.Frame_GetLineNumber ||
        !P.IncRef || !P.DecRef || !P.Err_Occurred || !P.Err_Clear || !errs || !P.GetAttrString ||
        !P.AsUTF8AndSize || !P.Long_AsLong) {
        gt_log("gputrace: Python %d.%d found without the API for frames: native stacks only\n", 3,
               P.minor);
        return 0;
    }
    if (!P.GC_Disable || !P.GC_Enable) P.GC_Disable = NULL, P.GC_Enable = NULL;
    if (!P.Err_GetRaised || !P.Err_SetRaised) P.Err_GetRaised = NULL, P.Err_SetRaised = NULL;
    P.gc_guard = P.minor >= 11 && P.GC_Disable;
    if (!gt_object_range((uintptr_t)P.IsInitialized, &P.lo, &P.hi)) return 0;
    if (P.off) { /* found for the framework bridge (torch.c) only: no frames are read */
        gt_log("gputrace: Python 3.%d: native stacks only (GPUTRACE_PYTHON=0)\n", P.minor);
        return 1;
    }
    int on = layout_usable(h, version);
    atomic_store(&P.on, on);
    gt_log("gputrace: Python 3.%d: stacks carry Python frames%s\n", P.minor,
           on ? ", with or without the GIL" : "");
    return 1;
}

void gt_py_configure(void)
{
    static const char *const modes[] = {"1", "0", "gil"};
    const char *v;
    int mode = gt_env_word("GPUTRACE_PYTHON", modes, 3, 0);
    /* GPUTRACE_PYTHON=0: native stacks only, as without an interpreter; the interpreter is
     * still looked for, by the framework bridge (torch.c), which calls through its API */
    P.off = mode == 1;
    P.gil_only = mode == 2;
    if (!P.off) pthread_atfork(NULL, NULL, forked_child);
    P.test_mismatch = (v = getenv("GPUTRACE_TEST_PY_MISMATCH")) && strcmp(v, "1") == 0;
    pthread_mutex_lock(&P.mu);
    if (!atomic_load(&P.ready) && resolve(RTLD_DEFAULT)) atomic_store(&P.ready, 1);
    pthread_mutex_unlock(&P.mu);
}

int gt_py_is_libpython(const char *name, size_t len)
{
    const char *base = memrchr(name, '/', len);
    base = base ? base + 1 : name;
    return len - (size_t)(base - name) >= 10 && memcmp(base, "libpython3", 10) == 0;
}

void gt_py_module_loaded(const char *path)
{
    if (atomic_load(&P.ready) || !gt_py_is_libpython(path, strlen(path))) return;
    int saved = errno;
    pthread_mutex_lock(&P.mu);
    if (!atomic_load(&P.ready)) {
        /* Kept open: the functions stay valid. RTLD_NOLOAD never loads anything. */
        void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
        if (h && resolve(h)) atomic_store_explicit(&P.ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&P.mu);
    errno = saved;
}

/* gt_loader_iterate callback: the first libpython3 among the loaded objects into arg (PATH_MAX). */
static int find_libpython(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    char *out = arg;
    size_t l = gt_dl_name_len(info->dlpi_name, PATH_MAX - 1);
    if (!gt_py_is_libpython(info->dlpi_name, l)) return 0;
    memcpy(out, info->dlpi_name, l);
    out[l] = 0;
    return 1;
}

void gt_py_rescan(void)
{
    if (atomic_load(&P.ready)) return;
    char path[PATH_MAX] = "";
    int saved = errno;
    gt_loader_iterate(find_libpython, path);
    errno = saved;
    if (path[0]) gt_py_module_loaded(path); /* (dlopen: outside the loader's lock) */
}

int gt_py_available(void)
{
    return atomic_load_explicit(&P.ready, memory_order_acquire) && !P.off;
}

int gt_py_loaded(void)
{
    return atomic_load_explicit(&P.ready, memory_order_acquire);
}

int gt_py_interp_ip(uint64_t ip)
{
    return ip >= P.lo && ip < P.hi;
}

void gt_py_interp_range(uintptr_t *lo, uintptr_t *hi)
{
    *lo = P.lo, *hi = P.hi;
}

uint32_t gt_py_interp_first(const uint64_t *ip, uint32_t n)
{
    uintptr_t lo = P.lo, hi = P.hi;
    uint32_t i = 0;
    while (i < n && !(ip[i] >= lo && ip[i] < hi))
        i++;
    return i;
}

/* ---- reading objects by offset ----------------------------------------------------------------
 */

/* A plausible object or frame address: not null, 8-aligned, user space. */
static int ok_ptr(uintptr_t p)
{
    return p >= 4096 && p < (1ull << 47) && (p & 7) == 0;
}

/* A host sample's reads (gt_py_sample_read) copy memory with process_vm_readv instead of loading
 * it: the interrupted thread may be anywhere, e.g. back from the munmap that freed the data-stack
 * chunk of the frame it is popping, before it stores its new current frame (3.11's RETURN_VALUE
 * and exception unwinding, `frame = cframe.current_frame = pop_frame(...)`: a signal queued
 * meanwhile is delivered right at munmap's return). A load there killed the program (SIGSEGV,
 * blocked in our handler); a copy fails with EFAULT instead, and the sample has no Python frames.
 * Each object is copied once per sample, in a window of SR_WIN bytes that holds SR_AHEAD bytes
 * from its address (every offset read lies within), into one of SR_WAYS entries. The copier is
 * passed down the walk (the _r functions below, inlined): with a constant NULL, the walks of the
 * capture path compile to plain loads, without a per-read check of a thread-local pointer; a
 * handler that interrupts a walk of its own thread passes its own copier and changes nothing the
 * interrupted walk reads. */
#define SR_WIN   1024 /* frames are contiguous in their chunk: one copy holds several */
#define SR_WAYS  4
#define SR_AHEAD 256 /* every offset read from an object's address lies below */
struct safe_rd {
    pid_t pid;
    int fault;       /* a read failed: the walk is abandoned */
    unsigned clock;  /* use stamps: the least recently used entry is replaced */
    unsigned copies; /* process_vm_readv calls so far */
    unsigned limit;  /* a line table's reads stop at this many (see GT_PY_SAMPLE_COPIES) */
    struct {
        uintptr_t base;
        size_t n; /* bytes copied (less at the end of a mapping) */
        unsigned used;
        unsigned char b[SR_WIN];
    } e[SR_WAYS];
};

static void safe_copy(struct safe_rd *r, void *dst, uintptr_t src, size_t len)
{
    unsigned i = 0;
    for (unsigned j = 0; j < SR_WAYS; j++) {
        if (r->e[j].n && src >= r->e[j].base && src - r->e[j].base + len <= r->e[j].n) {
            r->e[j].used = ++r->clock;
            memcpy(dst, r->e[j].b + (src - r->e[j].base), len);
            return;
        }
        if (r->e[j].used < r->e[i].used) i = j;
    }
    r->e[i].used = ++r->clock;
    /* the window reaches back (an older frame lies below in its chunk), within src's page (the
     * one before may be unmapped) */
    uintptr_t base = src - (SR_WIN - SR_AHEAD), page = src & ~(uintptr_t)4095;
    if (base > src || base < page) base = page;
    struct iovec l = {r->e[i].b, SR_WIN}, rm = {(void *)base, SR_WIN};
    r->copies++;
    ssize_t k = gt_syscall(SYS_process_vm_readv, r->pid, &l, 1, &rm, 1, 0);
    r->e[i].base = base;
    r->e[i].n = k > 0 ? (size_t)k : 0;
    if (r->e[i].n < src - base + len) {
        r->e[i].n = 0;
        r->fault = 1;
        memset(dst, 0, len);
        return;
    }
    memcpy(dst, r->e[i].b + (src - base), len);
}

#define INLINE static inline __attribute__((always_inline))

/* A read at base + off: a copy through r (a host sample's walk), else a plain load. */
INLINE uintptr_t rd_ptr_r(struct safe_rd *r, uintptr_t base, unsigned off)
{
    uintptr_t v;
    if (r)
        safe_copy(r, &v, base + off, sizeof(v));
    else
        memcpy(&v, (const void *)(base + off), sizeof(v));
    return v;
}

INLINE int32_t rd_i32_r(struct safe_rd *r, uintptr_t base, unsigned off)
{
    int32_t v;
    if (r)
        safe_copy(r, &v, base + off, sizeof(v));
    else
        memcpy(&v, (const void *)(base + off), sizeof(v));
    return v;
}

INLINE uint8_t rd_u8_r(struct safe_rd *r, uintptr_t base, unsigned off)
{
    uint8_t v;
    if (r)
        safe_copy(r, &v, base + off, sizeof(v));
    else
        v = *(const uint8_t *)(base + off);
    return v;
}

/* len bytes at src into dst; through r (a sample's read), a copy (one process_vm_readv where it is
 * longer than a window holds), which fails cleanly (r->fault) where src is not mapped. */
static void rd_span_r(struct safe_rd *r, void *dst, uintptr_t src, size_t len)
{
    if (!r) {
        memcpy(dst, (const void *)src, len);
    } else if (len <= SR_AHEAD) {
        safe_copy(r, dst, src, len);
    } else {
        struct iovec l = {dst, len}, rm = {(void *)src, len};
        if (gt_syscall(SYS_process_vm_readv, r->pid, &l, 1, &rm, 1, 0) != (ssize_t)len) {
            r->fault = 1;
            memset(dst, 0, len);
        }
    }
}

/* Whether p is an object whose type is exactly t (ob_type follows ob_refcnt). */
INLINE int is_a_r(struct safe_rd *r, uintptr_t p, uintptr_t t)
{
    return ok_ptr(p) && rd_ptr_r(r, p, 8) == t;
}

static uintptr_t rd_ptr(uintptr_t base, unsigned off)
{
    return rd_ptr_r(NULL, base, off);
}

static int32_t rd_i32(uintptr_t base, unsigned off)
{
    return rd_i32_r(NULL, base, off);
}

/* The bytes of a bytes object: the data's address in *d, length returned; -1 if it is not one. */
static int64_t bytes_of_r(struct safe_rd *r, uintptr_t b, uintptr_t *d)
{
    if (!is_a_r(r, b, P.t_bytes)) return -1;
    int64_t n = (int64_t)rd_ptr_r(r, b, 16); /* ob_size */
    if (n < 0 || n > (1 << 28)) return -1;
    *d = b + 32; /* ob_sval */
    return n;
}

/* The UTF-8 text of str object s into buf (at most cap bytes, cut as the API path cuts; *cut set
 * when it was); its length, or -1 when s is not a compact str, or 0 when it holds a lone surrogate
 * (not UTF-8: the API path gets an empty text then too). */
static int64_t str_utf8_r(struct safe_rd *r, uintptr_t s, char *buf, uint32_t cap, int *cut)
{
    if (!is_a_r(r, s, P.t_str)) return -1;
    uint32_t state = (uint32_t)rd_i32_r(r, s, 32);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    int64_t len = (int64_t)rd_ptr_r(r, s, 16);
    if (!compact || (P.minor <= 11 && !((state >> 7) & 1)) || len < 0 || len > (1 << 28) ||
        (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
        return -1;
    uintptr_t data = s + (ascii ? P.L.u_ascii : P.L.u_compact);
    *cut = 0;
    if (ascii) {
        uint32_t n = len > cap ? cap : (uint32_t)len;
        *cut = len > cap;
        rd_span_r(r, buf, data, n);
        return n;
    }
    uint64_t out = 0;
    for (int64_t i = 0; i < len; i++) {
        uint32_t c = 0; /* (little-endian: the low bytes first) */
        rd_span_r(r, &c, data + (uintptr_t)i * kind, kind);
        uint8_t u[4];
        unsigned k;
        if (c >= 0xD800 && c <= 0xDFFF) return 0;
        if (c < 0x80) {
            u[0] = (uint8_t)c, k = 1;
        } else if (c < 0x800) {
            u[0] = (uint8_t)(0xC0 | c >> 6), u[1] = (uint8_t)(0x80 | (c & 0x3F)), k = 2;
        } else if (c < 0x10000) {
            u[0] = (uint8_t)(0xE0 | c >> 12), u[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            u[2] = (uint8_t)(0x80 | (c & 0x3F)), k = 3;
        } else if (c <= 0x10FFFF) {
            u[0] = (uint8_t)(0xF0 | c >> 18), u[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
            u[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F)), u[3] = (uint8_t)(0x80 | (c & 0x3F));
            k = 4;
        } else {
            return -1;
        }
        for (unsigned j = 0; j < k; j++, out++)
            if (out < cap) buf[out] = (char)u[j];
        /* a sample's read: a fault ends it, and a text cut is of no use (its caller's budget) */
        if (r && (r->fault || out > cap)) {
            *cut = 1;
            return r->fault ? -1 : (int64_t)cap;
        }
    }
    *cut = out > cap;
    return out > cap ? cap : (int64_t)out;
}

/* ---- line numbers from line tables (PyCode_Addr2Line of each version) --------------------------
 */

/* A line table's bytes, read in order: in place, or under a sample's read copied a window at a
 * time (fault set where a copy failed: the decoders then stop). */
struct lt {
    const uint8_t *p; /* in place; NULL: copied from src through r */
    struct safe_rd *r;
    uintptr_t src;
    int64_t n, base, len;
    int fault;
    uint8_t buf[256];
};

static uint8_t lt_at(struct lt *t, int64_t i)
{
    if (t->p) return t->p[i];
    if (i < t->base || i >= t->base + t->len) {
        int64_t k = t->n - i < (int64_t)sizeof(t->buf) ? t->n - i : (int64_t)sizeof(t->buf);
        struct iovec l = {t->buf, (size_t)k}, rm = {(void *)(t->src + (uintptr_t)i), (size_t)k};
        t->base = i;
        t->len = 0;
        /* (a long line table stops at the sample's bound: its line is then not read) */
        if (t->fault || k <= 0 || t->r->copies++ >= t->r->limit ||
            gt_syscall(SYS_process_vm_readv, t->r->pid, &l, 1, &rm, 1, 0) != (ssize_t)k) {
            t->fault = 1;
            return 0;
        }
        t->len = k;
    }
    return t->buf[i - t->base];
}

/* 3.9 co_lnotab: (address increment, signed line increment) byte pairs. */
static int line_lnotab(struct lt *t, int first, int addrq)
{
    int line = first, addr = 0;
    for (int64_t i = 0; i + 1 < t->n && !t->fault; i += 2) {
        addr += lt_at(t, i);
        if (addr > addrq) break;
        line += (int8_t)lt_at(t, i + 1);
    }
    return line;
}

/* 3.10 co_linetable: (address delta, signed line delta; -128: no line) pairs, ranges in order. */
static int line_310(struct lt *t, int first, int addrq)
{
    int line = first, end = 0;
    for (int64_t i = 0; i + 1 < t->n && !t->fault; i += 2) {
        end += lt_at(t, i);
        int8_t ld = (int8_t)lt_at(t, i + 1);
        int cur = ld == -128 ? -1 : (line += ld);
        if (addrq < end) return cur;
    }
    return -1;
}

static int varint(struct lt *t, int64_t *i)
{
    unsigned read = *i < t->n ? lt_at(t, (*i)++) : 0, val = read & 63, shift = 0;
    while ((read & 64) && *i < t->n && shift < 30) {
        read = lt_at(t, (*i)++);
        shift += 6;
        val |= (read & 63) << shift;
    }
    return (int)val;
}

/* 3.11+ co_linetable (the location table): entries of a first byte 1ccccnnn (c: kind, n + 1:
 * code units), then kind-dependent varints; only the line matters here. */
static int line_311(struct lt *t, int first, int addrq)
{
    int line = first, end = 0;
    int64_t i = 0, n = t->n;
    while (i < n && !t->fault) {
        uint8_t b = lt_at(t, i);
        unsigned kind = (b >> 3) & 15;
        int delta = 0;
        if (kind == 13 || kind == 14) { /* NO_COLUMNS, LONG: a signed varint line delta */
            int64_t j = i + 1;
            unsigned u = (unsigned)varint(t, &j);
            delta = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (kind == 11 || kind == 12) { /* ONE_LINE1, ONE_LINE2 */
            delta = (int)kind - 10;
        }
        line += delta;
        int cur = kind == 15 && (b & 128) ? -1 : line; /* NONE */
        end += ((b & 7) + 1) * 2;
        if (addrq < end) return cur;
        do
            i++;
        while (i < n && !t->fault && !(lt_at(t, i) & 128));
    }
    return -1;
}

#define LINE_UNREAD INT32_MIN /* code_line: a sample's copy failed */

/* The line of code object co at instruction byte offset addrq, as PyCode_Addr2Line says (reads
 * through r as rd_ptr_r; LINE_UNREAD where one failed). */
static int code_line_r(struct safe_rd *r, uintptr_t co, int addrq)
{
    int first = rd_i32_r(r, co, P.L.co_first);
    if (addrq < 0) return first;
    uintptr_t d;
    int64_t n = bytes_of_r(r, rd_ptr_r(r, co, P.L.co_lines), &d);
    if (n < 0) return r && r->fault ? LINE_UNREAD : -1;
    struct lt t = {.p = r ? NULL : (const uint8_t *)d, .r = r, .src = d, .n = n};
    int line = P.minor == 9    ? line_lnotab(&t, first, addrq)
               : P.minor == 10 ? line_310(&t, first, addrq)
                               : line_311(&t, first, addrq);
    return t.fault || (r && r->fault) ? LINE_UNREAD : line;
}

static int code_line(uintptr_t co, int addrq)
{
    return code_line_r(NULL, co, addrq);
}

/* ---- the table ---------------------------------------------------------------------------------
 */

static uint64_t hash2(uint64_t a, int64_t b)
{
    uint64_t x = a ^ ((uint64_t)b * 0x9E3779B97F4A7C15ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 29);
}

static struct ent *slot_of(struct ent *e, uint64_t mask, uint64_t a, int64_t key)
{
    uint64_t i = hash2(a, key) & mask;
    while (e[i].a && (e[i].a != a || e[i].key != key))
        i = (i + 1) & mask;
    return &e[i];
}

/* Room for k more entries (the table stays at most half full); 0 when it cannot grow. Entry
 * pointers taken before are stale after a call. */
static int reserve(uint64_t k)
{
    uint64_t slots = P.e ? P.mask + 1 : 0;
    if (P.e && P.used + k <= slots / 2) return 1;
    uint64_t n = slots ? slots * 2 : SLOTS0;
    if (n > SLOTS_MAX) return 0;
    struct ent *e =
        mmap(NULL, n * sizeof(*e), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (e == MAP_FAILED) return 0;
    for (uint64_t i = 0; i < slots; i++)
        if (P.e[i].a) *slot_of(e, n - 1, P.e[i].a, P.e[i].key) = P.e[i];
    if (P.e) munmap(P.e, slots * sizeof(*P.e));
    P.e = e;
    P.mask = n - 1;
    return 1;
}

/* ---- code objects ------------------------------------------------------------------------------
 */

static char file_buf[GT_MAX_NAME_BYTES], name_buf[GT_MAX_NAME_BYTES]; /* under tab_mu */

static void write_code(struct gt_thread *t, uint32_t id, long first, const char *file, uint32_t fl,
                       const char *name, uint32_t nl)
{
    struct gt_rec_pycode r = {.ts = gt_now(),
                              .id = id,
                              .first_line = first > 0 && first < UINT32_MAX ? (uint32_t)first : 0,
                              .file_len = fl,
                              .name_len = nl};
    uint32_t size = gt_rec_size(sizeof(r), fl + nl);
    uint8_t *p = gt_reserve(t, size);
    if (!p) return;
    memcpy(p, &r, sizeof(r));
    memcpy(p + sizeof(r), file, fl);
    memcpy(p + sizeof(r) + fl, name, nl);
    memset(p + sizeof(r) + fl + nl, 0, size - sizeof(r) - fl - nl);
    gt_commit(t, p, GT_REC_PYCODE, 0, size, r.ts);
}

/* The UTF-8 text of attribute `name` of `obj` (a str) through the API, cut to the record's
 * limit; a new reference in *ref, or NULL. With the GIL. */
static const char *attr_text(PyObj *obj, const char *name, PyObj **ref, uint32_t *len)
{
    ssize_t n = 0;
    const char *s = NULL;
    *ref = P.GetAttrString(obj, name);
    if (*ref) s = P.AsUTF8AndSize(*ref, &n);
    if (!s) {
        P.Err_Clear();
        *len = 0;
        return "";
    }
    *len = n > (ssize_t)GT_MAX_NAME_BYTES ? GT_MAX_NAME_BYTES : (uint32_t)n;
    return s;
}

/* File, name and first line of a code object through the API (with the GIL); *refs to drop. */
static long api_code_facts(PyObj *code, const char **file, uint32_t *fl, const char **name,
                           uint32_t *nl, PyObj *refs[3])
{
    *file = attr_text(code, "co_filename", &refs[0], fl);
    *name = attr_text(code, P.minor >= 11 ? "co_qualname" : "co_name", &refs[1], nl);
    long first = (refs[2] = P.GetAttrString(code, "co_firstlineno")) ? P.Long_AsLong(refs[2]) : 0;
    if (P.Err_Occurred()) P.Err_Clear();
    return first;
}

static void drop_refs(PyObj *refs[3])
{
    for (int i = 0; i < 3; i++)
        if (refs[i]) P.DecRef(refs[i]);
    if (P.Err_Occurred()) P.Err_Clear();
}

/* The same facts by offset into file_buf and name_buf (no GIL needed). */
static long raw_code_facts(uintptr_t co, uint32_t *fl, uint32_t *nl)
{
    int cut;
    int64_t f = str_utf8_r(NULL, rd_ptr(co, P.L.co_file), file_buf, GT_MAX_NAME_BYTES, &cut);
    int64_t n = str_utf8_r(NULL, rd_ptr(co, P.L.co_name), name_buf, GT_MAX_NAME_BYTES, &cut);
    *fl = f > 0 ? (uint32_t)f : 0;
    *nl = n > 0 ? (uint32_t)n : 0;
    return rd_i32(co, P.L.co_first);
}

/* What tells a code object from another made later at the same address (reads through r as
 * rd_ptr_r; the layout is known). */
INLINE uint64_t fingerprint_r(struct safe_rd *r, uintptr_t co)
{
    uint64_t x = hash2(rd_ptr_r(r, co, P.L.co_file), (int64_t)rd_ptr_r(r, co, P.L.co_name));
    x = hash2(x ^ rd_ptr_r(r, co, P.L.co_lines), rd_i32_r(r, co, P.L.co_first));
    return x | 1;
}

/* The same, 0 without a layout. */
static uint64_t fingerprint(uintptr_t co)
{
    if (!atomic_load_explicit(&P.on, memory_order_relaxed)) return 0;
    return fingerprint_r(NULL, co);
}

/* What fingerprint_r hashes, kept as it is: comparing the four words is what comparing the
 * fingerprints would say (and more), without the two hashes per code object. */
INLINE void code_ident(uintptr_t co, uint64_t *id)
{
    id[0] = rd_ptr(co, P.L.co_file), id[1] = rd_ptr(co, P.L.co_name);
    id[2] = rd_ptr(co, P.L.co_lines), id[3] = (uint32_t)rd_i32(co, P.L.co_first);
}

INLINE int code_ident_same(uintptr_t co, const uint64_t *id)
{
    return rd_ptr(co, P.L.co_file) == id[0] && rd_ptr(co, P.L.co_name) == id[1] &&
           rd_ptr(co, P.L.co_lines) == id[2] && (uint32_t)rd_i32(co, P.L.co_first) == id[3];
}

/* The id of the code object at co, writing its record the first time (api: the object, when the
 * GIL is held; its record is then made through the API); 0 when ids ran out. The caller reserved
 * room for one entry. */
static uint32_t code_id(struct gt_thread *t, uintptr_t co, PyObj *api)
{
    uint64_t fp = fingerprint(co);
    struct ent *s = slot_of(P.e, P.mask, co, KEY_CODE);
    if (s->a && (s->fp == fp || !fp || !s->fp)) return (uint32_t)s->val;
    if (P.next_code == UINT32_MAX) return 0;
    uint32_t id = ++P.next_code;
    if (!s->a) P.used++;
    *s = (struct ent){co, KEY_CODE, id, fp};
    if (api) {
        P.IncRef(api); /* kept for good: the address then always means this code object */
        const char *file, *name;
        uint32_t fl, nl;
        PyObj *refs[3];
        long first = api_code_facts(api, &file, &fl, &name, &nl, refs);
        write_code(t, id, first, file, fl, name, nl);
        drop_refs(refs);
    } else {
        uint32_t fl, nl;
        long first = raw_code_facts(co, &fl, &nl);
        write_code(t, id, first, file_buf, fl, name_buf, nl);
    }
    return id;
}

static void note(struct gt_thread *t, const char *text)
{
    struct gt_rec_note r = {
        .ts = gt_now(), .level = GT_NOTE_WARNING, .text_len = (uint32_t)strlen(text)};
    gt_emit_named(t, GT_REC_NOTE, 0, &r, sizeof(r), text, r.text_len);
}

static void note_full(struct gt_thread *t)
{
    if (P.full) return;
    P.full = 1;
    note(t, "the Python frame table is full: later new Python frames are not recorded");
}

/* Turns the offset walk off for the process (under tab_mu). */
static void offsets_off(struct gt_thread *t, const char *why)
{
    if (!atomic_exchange(&P.on, 0)) return;
    char text[256];
    snprintf(text, sizeof(text),
             "Python frames without the GIL are off: %s; calls made without the GIL get native "
             "frames only",
             why);
    gt_log("gputrace: %s\n", text);
    note(t, text);
}

static int clamp_line(int line)
{
    return line <= 0 ? 0 : (uint32_t)line > GT_PY_LINE_MAX ? (int)GT_PY_LINE_MAX : line;
}

/* The pseudo-ip of a frame: code object co (api: the object with the GIL), line-cache key `key`;
 * line_of(arg) gives its line when the pair is new. 0 when the table is full. */
static uint64_t frame_ip(struct gt_thread *t, uintptr_t co, PyObj *api, int64_t key,
                         int (*line_of)(void *), void *arg)
{
    if (!reserve(2)) return 0; /* this pair's entry, and maybe the code's */
    uint32_t id = code_id(t, co, api);
    if (!id) return 0;
    struct ent *s = slot_of(P.e, P.mask, id, key);
    if (s->a) return s->val;
    uint64_t ip = GT_PYFRAME_IP(id, clamp_line(line_of(arg)));
    *s = (struct ent){id, key, ip, 0};
    P.used++;
    return ip;
}

/* ---- the walk by offsets -----------------------------------------------------------------------
 */

struct rawf {
    uintptr_t code;
    int64_t key; /* instruction byte offset (-1: not started), or KEY_LINE | line */
};

static int raw_line(void *arg)
{
    const struct rawf *f = arg;
    if (f->key & KEY_LINE) return (int)(f->key & 0xffffffff);
    return code_line(f->code, (int)f->key);
}

/* The frames of thread state ts, innermost first, into out (at most max); -1 when a check that
 * only a wrong layout fails did fail. Reads through r as rd_ptr_r. */
INLINE int walk_raw_r(struct safe_rd *r, uintptr_t ts, struct rawf *out, uint32_t max)
{
    const struct layout *L = &P.L;
    int minor = P.minor;
    uint32_t n = 0, steps = 0;
    if (minor <= 10) {
        for (uintptr_t f = rd_ptr_r(r, ts, L->ts_frame); f && n < max;
             f = rd_ptr_r(r, f, L->fr_back)) {
            if (!is_a_r(r, f, P.t_frame) || ++steps > WALK_MAX) return -1;
            uintptr_t co = rd_ptr_r(r, f, L->fr_code);
            if (!is_a_r(r, co, P.t_code)) return -1;
            int lasti = rd_i32_r(r, f, L->fr_lasti), lineno = rd_i32_r(r, f, L->fr_lineno);
            int traced = minor == 9 ? rd_ptr_r(r, f, L->fr_trace) != 0 : lineno != 0;
            if (minor == 10 && lasti >= 0) lasti *= 2; /* code units -> bytes */
            out[n].code = co;
            out[n++].key = traced ? KEY_LINE | (uint32_t)lineno : lasti < 0 ? -1 : lasti;
        }
        return (int)n;
    }
    uintptr_t f = rd_ptr_r(r, ts, L->ts_frame);
    if (minor <= 12) f = ok_ptr(f) ? rd_ptr_r(r, f, L->cf_current) : 1; /* tstate->cframe */
    for (; f && n < max; f = rd_ptr_r(r, f, L->fr_back)) {
        if (!ok_ptr(f) || ++steps > WALK_MAX) return -1;
        uint8_t owner = rd_u8_r(r, f, L->fr_owner);
        if (owner > OWNED_BY_CSTACK || (minor == 11 && owner == OWNED_BY_CSTACK)) return -1;
        if (minor >= 13 && owner == OWNED_BY_CSTACK) continue; /* f_executable: None */
        uintptr_t co = rd_ptr_r(r, f, L->fr_code);
        if (!is_a_r(r, co, P.t_code)) return -1;
        uintptr_t code0 = co + L->co_code, instr = rd_ptr_r(r, f, L->fr_lasti);
        int64_t units = (int64_t)rd_ptr_r(r, co, 16); /* ob_size: code units */
        if (instr < code0 - 2 || instr > code0 + 2 * (uint64_t)units || (instr & 1)) return -1;
        /* incomplete: not yet past the code object's RESUME (_PyFrame_IsIncomplete) */
        if (owner != OWNED_BY_GENERATOR &&
            instr < code0 + 2 * (uint64_t)(uint32_t)rd_i32_r(r, co, L->co_traceable))
            continue;
        if (owner == OWNED_BY_CSTACK) continue;
        int64_t lasti = ((int64_t)instr - (int64_t)code0) / 2;
        /* a frame object's f_lineno (set while tracing) wins, as in PyFrame_GetLineNumber */
        uintptr_t fo = rd_ptr_r(r, f, L->fr_obj);
        int lineno = is_a_r(r, fo, P.t_frame) ? rd_i32_r(r, fo, L->fo_lineno) : 0;
        out[n].code = co;
        out[n++].key = lineno > 0 ? KEY_LINE | (uint32_t)lineno : lasti < 0 ? -1 : lasti * 2;
    }
    return (int)n;
}

/* The walk of the capture path: plain loads. */
static int walk_raw(uintptr_t ts, struct rawf *out, uint32_t max)
{
    return walk_raw_r(NULL, ts, out, max);
}

static struct rawf raw[GT_STACK_DEPTH_MAX]; /* under tab_mu */

/* This thread's state when the main interpreter is initialized, not finalizing and alone, and
 * the thread has run Python in it; else 0. */
static uintptr_t own_state(void)
{
    if (P.IsInitialized() != 1 || P.IsFinalizing()) return 0;
    uintptr_t ts = (uintptr_t)P.GILState_GetThisThreadState();
    if (!ts) return 0; /* this thread never ran Python */
    PyObj *main = P.InterpreterState_Main();
    if (!ok_ptr(ts) || P.InterpreterState_Head() != main || P.InterpreterState_Next(main) ||
        rd_ptr(ts, P.L.ts_interp) != (uintptr_t)main)
        return 0; /* subinterpreters */
    return ts;
}

/* own_state's last answer on this thread, and the main interpreter it was checked against */
static __thread uintptr_t own_ts __attribute__((tls_model("initial-exec")));
static __thread uintptr_t own_main __attribute__((tls_model("initial-exec")));

/* own_state for a read without the GIL counted in P.walkers that saw `closing` clear (every
 * caller but the closer): finalization cannot start before the count drops (exit_guard waits for
 * it, and Py_FinalizeEx sets its flag after the atexit callbacks), and the guard was registered
 * by a running interpreter, so Py_IsInitialized and Py_IsFinalizing cannot have changed since
 * own_state last answered. What can change is this thread's state (PyGILState_Release frees a
 * state made by PyGILState_Ensure; a later Ensure makes another) and other interpreters coming
 * or going: the thread's state is read again (a TSS load) and compared, and the list's head is
 * compared with the main interpreter (new interpreters are put at the head, the main one is the
 * oldest, so the head is main exactly when main is alone). 2 CPython calls instead of 6. */
static uintptr_t walker_state(void)
{
    if (closer) return own_state(); /* its walks go on into finalization: ask each time */
    uintptr_t ts = (uintptr_t)P.GILState_GetThisThreadState();
    if (!ts) return 0;
    if (ts == own_ts && (uintptr_t)P.InterpreterState_Head() == own_main &&
        rd_ptr(ts, P.L.ts_interp) == own_main)
        return ts;
    ts = own_state();
    own_ts = ts, own_main = ts ? rd_ptr(ts, P.L.ts_interp) : 0;
    return ts;
}

/* Whether the interpreter finalizes, for a reader that may be past the guard: one holding the
 * GIL (the finalizing thread itself, tearing modules down) or the closer. Any other walker that
 * saw `closing` clear keeps finalization from starting (walker_state). */
static int finalizing_here(int gil)
{
    return (gil || closer) && P.IsFinalizing();
}

enum { CHAIN_NONE, CHAIN_READ, CHAIN_OK = GT_PY_CHAIN_OK };

/* A read of Python objects without the GIL (the thread's own state, its frames, the code objects
 * they hold) counts itself in P.walkers before it reads `closing`: exit_guard sets closing, then
 * waits for the count to drop before finalization may free them. walk_enter says whether the
 * read may go on (READ_OPEN: the guard is registered, not closing), must not (READ_CLOSING), or
 * has no guard yet (READ_UNGUARDED: nothing is read; guard_wanted asks for it); walk_leave ends
 * the read whatever walk_enter said. */
enum { READ_CLOSING, READ_UNGUARDED, READ_OPEN };

static int walk_enter(void)
{
    atomic_fetch_add(&P.walkers, 1); /* before reading closing: see exit_guard */
    if (atomic_load(&P.closing) && !closer) return READ_CLOSING;
    return atomic_load(&P.guard) == GUARD_ON ? READ_OPEN : READ_UNGUARDED;
}

static void walk_leave(void)
{
    atomic_fetch_sub(&P.walkers, 1);
}

static void want_guard(void);

/* READ_UNGUARDED: the guard is asked for once this thread runs Python in a live interpreter;
 * until it is registered, captures get native frames only. */
static void guard_wanted(void)
{
    if (P.IsInitialized() == 1 && !P.IsFinalizing() && P.GILState_GetThisThreadState())
        want_guard();
}

/* Without the GIL: this thread's frames by offset (the caller holds tab_mu and counts itself
 * in P.walkers, the atexit guard being registered and not closing). c (may be NULL): the chain
 * gt_py_chain_same read for this capture: where it read this thread's frames without the GIL,
 * at this max, since no gt_py_forget, they are these frames (the thread has run no Python code
 * since: it is in the hook; its frames hold their code objects) and are not read again. */
static uint32_t offset_frames(struct gt_thread *t, uint64_t *out, uint32_t max,
                              const struct gt_py_chain *c)
{
    uintptr_t ts = walker_state();
    if (!ts) return 0;
    if (max > GT_STACK_DEPTH_MAX) max = GT_STACK_DEPTH_MAX;
    int k;
    if (c && c->ok == CHAIN_READ && !c->gil && c->max == max && c->gen == P.gen && c->n <= max) {
        memcpy(raw, c->f, sizeof(raw[0]) * c->n);
        k = (int)c->n;
    } else
        k = walk_raw(ts, raw, max);
    if (k < 0) {
        offsets_off(t, "a frame failed a type or range check (unknown struct layout)");
        return 0;
    }
    uint32_t n = 0;
    for (; n < (uint32_t)k; n++)
        if (!(out[n] = frame_ip(t, raw[n].code, NULL, raw[n].key, raw_line, &raw[n]))) break;
    if (n < (uint32_t)k) note_full(t);
    return finalizing_here(0) ? 0 : n; /* its thread state may be gone: drop what was read */
}

/* ---- the previous capture's chain ------------------------------------------------------------
 */

_Static_assert(sizeof(struct rawf) == 16 && GT_PY_CHAIN_MAX == GT_STACK_DEPTH_MAX, "chain layout");
static uintptr_t own_state(void);
static PyObj *gil_holder(void);

/* The thread state whose frames the chain is read from: the calling thread's when it holds the
 * GIL (*gil 1; only once the self-checks showed the offsets give the API's frames), else its own
 * state read without the GIL under the same guard as offset_frames (counted in P.walkers, the
 * atexit guard registered and not closing), but without tab_mu: nothing shared is written. 0: not
 * readable this way. Without the GIL (*gil 0) the read is counted in P.walkers on return, whatever
 * it returns: the caller leaves it (atomic_fetch_sub) once it has read what it needs of the code
 * objects. */
static uintptr_t chain_state(int *gil)
{
    PyObj *ts = gil_holder();
    if (ts) {
        *gil = 1;
        return P.checks < SELF_CHECKS ? 0 : (uintptr_t)ts;
    }
    *gil = 0;
    return walk_enter() == READ_OPEN ? walker_state() : 0;
}

/* Whether the frames of ts (3.11 on) are the n frames of c, compared while walking: a frame that
 * holds c's next code object at c's next instruction is that frame again (it was complete then,
 * so it is now; the code object is alive, its frame holds it), and only a frame that is not gets
 * the checks of walk_raw_r, to be skipped as that walk skips it (not yet past its RESUME, a C
 * stack entry) or to end the compare. Without the (code, offset) pairs written out first and
 * compared after, and without reading a code object whose address differs. The code objects'
 * identities follow (chain_match's reason). */
static int chain_cmp(const struct gt_py_chain *c, uintptr_t ts, uint32_t max)
{
    const struct layout *L = &P.L;
    int minor = P.minor;
    uint32_t i = 0, n = c->n, steps = 0;
    uintptr_t f = rd_ptr(ts, L->ts_frame);
    if (minor <= 12) f = ok_ptr(f) ? rd_ptr(f, L->cf_current) : 1; /* tstate->cframe */
    for (; f && i < max; f = rd_ptr(f, L->fr_back)) {
        if (!ok_ptr(f) || ++steps > WALK_MAX) return 0;
        uint8_t owner = rd_u8_r(NULL, f, L->fr_owner);
        if (owner > OWNED_BY_CSTACK || (minor == 11 && owner == OWNED_BY_CSTACK)) return 0;
        if (owner == OWNED_BY_CSTACK) continue; /* skipped by walk_raw_r, or its layout check */
        uintptr_t co = rd_ptr(f, L->fr_code), instr = rd_ptr(f, L->fr_lasti);
        if (i < n && co == c->f[2 * i]) {
            int64_t key = (int64_t)c->f[2 * i + 1];
            if (instr != co + L->co_code + (uintptr_t)(key < 0 ? -2 : key)) return 0;
            uintptr_t fo = rd_ptr(f, L->fr_obj); /* a traced line: c never holds one */
            if (fo && is_a_r(NULL, fo, P.t_frame) && rd_i32(fo, L->fo_lineno) > 0) return 0;
            i++;
            continue;
        }
        /* not c's next frame: equal only where walk_raw_r skips it as not yet started */
        if (!is_a_r(NULL, co, P.t_code) || owner == OWNED_BY_GENERATOR) return 0;
        uintptr_t code0 = co + L->co_code;
        int64_t units = (int64_t)rd_ptr(co, 16);
        if (instr < code0 - 2 || instr > code0 + 2 * (uint64_t)units || (instr & 1)) return 0;
        if (instr >= code0 + 2 * (uint64_t)(uint32_t)rd_i32(co, L->co_traceable)) return 0;
    }
    if (i != n) return 0;
    for (i = 0; i < n; i++)
        if (!code_ident_same((uintptr_t)c->f[2 * i], c->id + 4 * i)) return 0;
    return 1;
}

/* Whether the n pairs in w are the frames of c: the same code objects (address, and the
 * fields of the fingerprint that tells a code object from another made later at the same
 * address, which code_id checks) at the same instruction offsets. The fields (four reads of the
 * code object each) are read only once every pair matched. c's frames never hold a traced line
 * (chain_keep refuses them), so neither do matching pairs. */
static int chain_match(const struct gt_py_chain *c, const uint64_t *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (w[2 * i] != c->f[2 * i] || w[2 * i + 1] != c->f[2 * i + 1]) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (!code_ident_same((uintptr_t)w[2 * i], c->id + 4 * i)) return 0;
    return 1;
}

/* Keeps the n pairs in w as c's frames, with their code objects' identities; 0 (c not usable)
 * when a frame is keyed by a traced line (f_lineno set by a tracer), whose offset could differ
 * under the same line. */
static int chain_keep(struct gt_py_chain *c, const uint64_t *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t code = w[2 * i], key = w[2 * i + 1];
        if ((int64_t)key > 0 && (key & KEY_LINE)) return 0;
        c->f[2 * i] = code, c->f[2 * i + 1] = key;
        code_ident((uintptr_t)code, c->id + 4 * i);
    }
    return 1;
}

/* Same code objects (same address and fingerprint fields), same instruction offsets, same count,
 * read the same way (with or without the GIL): the full walk would look up the same (code,
 * offset) entries, whose pseudo-ips never change (until gt_py_forget, which P.gen tells). From
 * 3.11 on the frames are compared while walking them (chain_cmp), before any full walk. */
int gt_py_chain_same(struct gt_py_chain *c, uint32_t max)
{
    int was = c->ok == CHAIN_OK && c->gen == P.gen && c->max == max;
    c->ok = CHAIN_NONE;
    if (!gt_py_available() || in_walk || !atomic_load_explicit(&P.on, memory_order_relaxed) || !max)
        return 0;
    if (max > GT_PY_CHAIN_MAX) max = GT_PY_CHAIN_MAX;
    int gil = 0, same = 0;
    uintptr_t ts = chain_state(&gil);
    /* without the GIL, chain_state left this read counted in P.walkers: the compare reads the
     * code objects, which finalization must not free meanwhile (exit_guard) */
    if (ts && was && gil == c->gil && P.minor >= 11) {
        same = chain_cmp(c, ts, max) && !finalizing_here(gil);
        if (same) c->ok = CHAIN_OK;
    }
    int k = same || !ts ? -1 : walk_raw(ts, (struct rawf *)(void *)c->tmp, max);
    if (k >= 0 && finalizing_here(gil)) k = -1;
    if (k >= 0) {
        uint32_t n = (uint32_t)k;
        if (was && n == c->n && gil == c->gil && chain_match(c, c->tmp, n)) {
            c->ok = CHAIN_OK;
            same = 1;
        } else if (chain_keep(c, c->tmp, n)) {
            c->n = n, c->max = max, c->gen = P.gen, c->gil = gil;
            c->ok = CHAIN_READ;
        }
    }
    if (!gil) walk_leave();
    return same;
}

int gt_py_no_frames(void)
{
    if (!gt_py_available() || in_walk || !atomic_load_explicit(&P.on, memory_order_relaxed))
        return 1;
    if (gil_holder()) return 0; /* the API's frames */
    /* as gt_py_frames's read without the GIL decides, under the same guard (chain_state's): no
     * state, or a state without a frame (walk_raw skips the same frames at any max; -1, a layout
     * check failed: the full read says so) */
    int st = walk_enter(), none = st == READ_CLOSING;
    if (st == READ_OPEN) {
        uintptr_t ts = walker_state();
        struct rawf f[1];
        none = !ts || walk_raw(ts, f, 1) == 0;
    }
    walk_leave();
    return none;
}

int gt_py_chain_fresh(const struct gt_py_chain *c, uint32_t max)
{
    if (max > GT_PY_CHAIN_MAX) max = GT_PY_CHAIN_MAX;
    return c->ok == CHAIN_READ && !c->gil && c->max == max && c->gen == P.gen && c->n &&
           c->n <= max;
}

void gt_py_chain_done(struct gt_py_chain *c, uint32_t max, uint32_t frames)
{
    if (max > GT_PY_CHAIN_MAX) max = GT_PY_CHAIN_MAX;
    int ok = c->ok == CHAIN_READ && c->max == max && c->n == frames && c->gen == P.gen;
    c->ok = ok ? CHAIN_OK : CHAIN_NONE;
}

/* ---- the walk through the API ------------------------------------------------------------------
 */

/* The thread state of the calling thread when it holds the main interpreter's GIL, else NULL. */
static PyObj *gil_holder(void)
{
    PyObj *ts = P.ThreadState_Unchecked(); /* a static's or a TLS variable's load, even before
                                            * initialization: no state, no GIL, one call */
    if (!ts || P.IsInitialized() != 1) return NULL;
    if (ts != P.GILState_GetThisThreadState() || P.GILState_Check() != 1) return NULL;
    return P.ThreadState_GetInterpreter(ts) == P.InterpreterState_Main() ? ts : NULL;
}

static int api_line(void *f)
{
    return P.Frame_GetLineNumber(f);
}

struct chk { /* one frame as the API sees it, for the self-check */
    uintptr_t code;
    int line;
};
static struct chk chk[GT_STACK_DEPTH_MAX]; /* under tab_mu */

/* Compares the offset walk of ts with the API's frames chk[0..n); returns what differs, or NULL. */
static const char *self_check(uintptr_t ts, uint32_t n, uint32_t max, char *why, size_t wl)
{
    int k = walk_raw(ts, raw, max);
    if (k < 0) return "a frame failed a type or range check (unknown struct layout)";
    if ((uint32_t)k != n) {
        snprintf(why, wl, "self-check: %d frames by offset, %u through the API", k, n);
        return why;
    }
    for (uint32_t i = 0; i < n; i++) {
        int line = raw_line(&raw[i]) + (P.test_mismatch && i == 0);
        if (raw[i].code != chk[i].code || clamp_line(line) != clamp_line(chk[i].line)) {
            snprintf(why, wl,
                     "self-check: frame %u is code %#lx line %d by offset, %#lx line %d "
                     "through the API",
                     i, (unsigned long)raw[i].code, line, (unsigned long)chk[i].code, chk[i].line);
            return why;
        }
        const char *file, *name;
        uint32_t fl, nl, rfl, rnl;
        PyObj *refs[3];
        long first = api_code_facts((PyObj *)chk[i].code, &file, &fl, &name, &nl, refs);
        long rfirst = raw_code_facts(raw[i].code, &rfl, &rnl);
        int same = first == rfirst && fl == rfl && nl == rnl && memcmp(file, file_buf, fl) == 0 &&
                   memcmp(name, name_buf, nl) == 0;
        drop_refs(refs);
        if (!same) {
            snprintf(why, wl, "self-check: frame %u: file, name or first line differ", i);
            return why;
        }
    }
    return NULL;
}

/* The exception being raised, if any, set aside while the tracer calls the API and put back
 * after (any error those calls left is cleared first). */
struct py_err {
    int had;
    PyObj *exc, *et, *ev, *tb;
};

static void err_save(struct py_err *e)
{
    *e = (struct py_err){P.Err_Occurred() != NULL, NULL, NULL, NULL, NULL};
    if (e->had && P.Err_GetRaised)
        e->exc = P.Err_GetRaised();
    else if (e->had)
        P.Err_Fetch(&e->et, &e->ev, &e->tb);
}

static void err_restore(struct py_err *e)
{
    if (P.Err_Occurred()) P.Err_Clear();
    if (e->had && P.Err_SetRaised)
        P.Err_SetRaised(e->exc);
    else if (e->had)
        P.Err_Restore(e->et, e->ev, e->tb);
}

void gt_py_err_save(struct gt_py_err *e)
{
    struct py_err pe;
    err_save(&pe);
    *e = (struct gt_py_err){pe.had, pe.exc, pe.et, pe.ev, pe.tb};
}

void gt_py_err_restore(struct gt_py_err *e)
{
    struct py_err pe = {e->had, e->exc, e->et, e->ev, e->tb};
    err_restore(&pe);
}

/* With the GIL: the frames through the API (the caller holds tab_mu); the first SELF_CHECKS
 * times also by offset, compared. */
static uint32_t api_frames(struct gt_thread *t, PyObj *ts, uint64_t *out, uint32_t max)
{
    struct py_err err;
    err_save(&err);
    int gc_was_on = P.gc_guard ? P.GC_Disable() : 0;
    if (max > GT_STACK_DEPTH_MAX) max = GT_STACK_DEPTH_MAX;
    int check = atomic_load(&P.on) && P.checks < SELF_CHECKS;
    uint32_t n = 0, seen = 0;
    PyObj *f = P.ThreadState_GetFrame(ts);
    while (f && n < max) {
        PyObj *code = P.Frame_GetCode(f);
        if (!code) break;
        int line = -1;
        int64_t key = P.Frame_GetLasti ? P.Frame_GetLasti(f)
                                       : KEY_LINE | (uint32_t)clamp_line(line = api_line(f));
        if (check) chk[seen++] = (struct chk){(uintptr_t)code, line < 0 ? api_line(f) : line};
        out[n] = line < 0
                     ? frame_ip(t, (uintptr_t)code, code, key, api_line, f)
                     : frame_ip(t, (uintptr_t)code, code, key, raw_line, &(struct rawf){0, key});
        P.DecRef(code);
        if (!out[n]) {
            note_full(t);
            break;
        }
        n++;
        PyObj *back = P.Frame_GetBack(f);
        P.DecRef(f);
        f = back;
    }
    if (f) P.DecRef(f);
    if (check && seen == n) {
        char why[200];
        P.checks++;
        const char *bad = self_check((uintptr_t)ts, n, max, why, sizeof(why));
        if (bad)
            offsets_off(t, bad);
        else
            gt_log("gputrace: Python frames: self-check %d passed (%u frames)\n", P.checks, n);
    }
    if (gc_was_on) P.GC_Enable();
    err_restore(&err);
    return n;
}

/* ---- the finalization guard ------------------------------------------------------------------
 */

/* The atexit callback (METH_NOARGS). Py_FinalizeEx runs atexit callbacks before it marks the
 * interpreter as finalizing and before it frees any other thread's state: from here on no offset
 * walk starts on another thread, and those in progress are waited for (each is bounded and never
 * blocks, so the wait ends). The thread running this keeps its walks: its own frames stay valid
 * until it finalizes, and Py_IsFinalizing stops it then. */
static PyObj *exit_guard(PyObj *self, PyObj *unused)
{
    (void)self, (void)unused;
    int saved = errno;
    closer = 1;
    atomic_store(&P.closing, 1);
    while (atomic_load(&P.walkers))
        sched_yield();
    errno = saved;
    P.IncRef(P.none);
    return P.none;
}

static struct { /* a PyMethodDef */
    const char *name;
    PyObj *(*meth)(PyObj *, PyObj *);
    int flags;
    const char *doc;
} exit_def = {"_gputrace_python_exit", exit_guard, 0x0004 /* METH_NOARGS */,
              "gputrace: stops reading other threads' frames before they are freed"};

/* The pending call (Py_AddPendingCall): the main thread between two bytecodes, holding the GIL,
 * where running Python is safe. Registers exit_guard with atexit.register; on failure the offset
 * walk stays off for the process. Leaves errno and any exception as they were. */
static int register_exit(void *arg)
{
    (void)arg;
    int saved = errno;
    int ok = 0;
    struct py_err err;
    err_save(&err);
    if (!P.IsFinalizing() && gil_holder()) {
        PyObj *fn = P.CFunction_NewEx(&exit_def, NULL, NULL);
        PyObj *mod = fn ? P.Import_ImportModule("atexit") : NULL;
        PyObj *reg = mod ? P.GetAttrString(mod, "register") : NULL;
        PyObj *r = reg ? P.CallFunctionObjArgs(reg, fn, NULL) : NULL;
        ok = r != NULL;
        PyObj *refs[] = {r, reg, mod, fn};
        for (int i = 0; i < 4; i++)
            if (refs[i]) P.DecRef(refs[i]);
    }
    err_restore(&err);
    atomic_store(&P.guard, ok ? GUARD_ON : GUARD_FAILED);
    if (ok)
        gt_log("gputrace: Python frames without the GIL: atexit guard registered\n");
    else
        gt_log("gputrace: Python frames without the GIL are off: no atexit guard\n");
    errno = saved;
    return 0;
}

/* Asks once for register_exit (the caller is a thread with a state in the initialized main
 * interpreter, not finalizing: Py_AddPendingCall is safe then, with or without the GIL). */
static void want_guard(void)
{
    int none = GUARD_NONE;
    if (atomic_load_explicit(&P.guard, memory_order_relaxed) != GUARD_NONE ||
        !atomic_compare_exchange_strong(&P.guard, &none, GUARD_QUEUED))
        return;
    if (P.AddPendingCall(register_exit, NULL) != 0) /* the queue is full: ask again later */
        atomic_store(&P.guard, GUARD_NONE);
}

void gt_py_early(void)
{
    if (!gt_py_available() || !atomic_load_explicit(&P.on, memory_order_relaxed) ||
        atomic_load_explicit(&P.guard, memory_order_relaxed) != GUARD_NONE)
        return;
    int saved = errno;
    if (P.IsInitialized() == 1 && !P.IsFinalizing() && P.GILState_GetThisThreadState())
        want_guard();
    errno = saved;
}

void gt_py_forget(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    P.tab_mu = P.mu = fresh; /* another thread of the parent may have held them at the fork */
    if (P.e) memset(P.e, 0, (P.mask + 1) * sizeof(*P.e));
    P.used = 0, P.next_code = 0, P.full = 0;
    P.gen++;
}

/* A fork child has only the forking thread, which is not walking. */
static void forked_child(void)
{
    atomic_store(&P.walkers, 0);
}

uint32_t gt_py_frames(struct gt_thread *t, uint64_t *out, uint32_t max,
                      const struct gt_py_chain *c)
{
    if (!max || !gt_py_available() || in_walk) return 0;
    int saved = errno;
    uint32_t n = 0;
    PyObj *ts = gil_holder();
    if (ts) {
        in_walk = 1;
        pthread_mutex_lock(&P.tab_mu);
        n = api_frames(t, ts, out, max);
        pthread_mutex_unlock(&P.tab_mu);
        if (atomic_load_explicit(&P.on, memory_order_relaxed)) want_guard();
        in_walk = 0;
    } else if (atomic_load_explicit(&P.on, memory_order_relaxed)) {
        in_walk = 1;
        int st = walk_enter(); /* closing: the interpreter shuts down, native frames only */
        if (st == READ_OPEN) {
            pthread_mutex_lock(&P.tab_mu);
            n = offset_frames(t, out, max, c);
            pthread_mutex_unlock(&P.tab_mu);
        } else if (st == READ_UNGUARDED) {
            guard_wanted();
        }
        walk_leave();
        in_walk = 0;
    }
    errno = saved;
    return n;
}

/* ---- host samples (hostsample.c) ----------------------------------------------------------- */

/* The Python thread state of the calling thread (0: none, or no walk by offsets here). Read
 * under the walkers' guard, as offset_frames reads: own_state reads the state, which
 * finalization frees (_PyThreadState_DeleteExcept) while a daemon thread may still be in a hook
 * (TSan saw the read and the free race: stacks_nogil, Python 3.12). Until the guard is registered
 * there is none (asked for here, as gt_py_frames asks). */
uintptr_t gt_py_thread_state(void)
{
    if (!gt_py_available() || !atomic_load_explicit(&P.on, memory_order_relaxed)) return 0;
    uintptr_t ts = 0;
    int st = walk_enter(); /* closing: the interpreter shuts down */
    if (st == READ_OPEN)
        ts = own_state();
    else if (st == READ_UNGUARDED)
        guard_wanted();
    walk_leave();
    return ts;
}

/* The id of ts, the calling thread's own state (0: unknown): how the sampler thread tells that
 * state still alive later (ts_alive). The offset is checked against the API's answer each time: a
 * difference turns the reads of other sleeping threads off for the process (one log line). */
uint64_t gt_py_thread_state_id(uintptr_t ts)
{
    unsigned off = atomic_load_explicit(&P.ts_id, memory_order_relaxed);
    if (!ts || !off) return 0;
    uint64_t id = 0, got = 0;
    int open = walk_enter() != READ_CLOSING; /* ts is read: as gt_py_thread_state reads it */
    if (open) {
        id = P.ThreadState_GetID((PyObj *)ts);
        memcpy(&got, (const void *)(ts + off), sizeof(got));
    }
    walk_leave();
    if (!open) return 0; /* shutting down: unknown, and the offset not judged */
    if (id && got == id) return id;
    if (atomic_exchange(&P.ts_id, 0))
        gt_log("gputrace: Python 3.%d: PyThreadState.id is not at offset %u: the frames of "
               "other threads are not read while they sleep\n",
               P.minor, off);
    return 0;
}

/* Whether ts is still the thread state numbered id: found in the main interpreter's list of thread
 * states (its head through the API, a plain field read; the links by copies: another thread's
 * state may be freed under the walk), with that id. Ids are never reused, so a state freed and
 * another made at the same address fails. Reads through r (a sample's copier). */
static int ts_alive(struct safe_rd *r, uintptr_t ts, uint64_t id)
{
    unsigned off = atomic_load_explicit(&P.ts_id, memory_order_relaxed);
    if (!off || !P.InterpreterState_Main()) return 0;
    uintptr_t p = (uintptr_t)P.InterpreterState_ThreadHead(P.InterpreterState_Main());
    for (unsigned n = 0; ok_ptr(p) && n < 4096 && !r->fault; n++, p = rd_ptr_r(r, p, TS_NEXT))
        if (p == ts) return rd_ptr_r(r, ts, off) == id && !r->fault;
    return 0;
}

/* The thread's hints: a direct-mapped set of hashes of (code, fingerprint, key) the thread's
 * write-outs found in the table (key KEY_CODE: the code object itself). Written by the owner only
 * (a write-out), read by its handler and the sampler thread: relaxed atomics, a hint only. A hash
 * seen by mistake (a collision, or a table entry replaced since) costs frames, never a wrong one:
 * the write-out finds the frame not in the table, drops it and the hint. */
static uint64_t hint_of(uint64_t code, uint64_t fp, int64_t key)
{
    return hash2(code * 0x9E3779B97F4A7C15ull ^ fp, key) | 1;
}

static int hint_has(_Atomic uint64_t *hints, uint64_t h)
{
    return atomic_load_explicit(&hints[h & (GT_PY_HINTS - 1)], memory_order_relaxed) == h;
}

static void hint_set(_Atomic uint64_t *hints, uint64_t h, int on)
{
    _Atomic uint64_t *e = &hints[h & (GT_PY_HINTS - 1)];
    if (on)
        atomic_store_explicit(e, h, memory_order_relaxed);
    else if (atomic_load_explicit(e, memory_order_relaxed) == h)
        atomic_store_explicit(e, 0, memory_order_relaxed);
}

struct facts_hdr {
    int32_t first;
    uint16_t fl, nl;
};

/* Copies code object co's file, name and first line (as raw_code_facts reads them) into s's text;
 * 1 + their offset there, or 0 where they do not fit (a text cut would differ from the API's). */
static uint32_t copy_facts(struct safe_rd *r, struct gt_py_sample *s, uintptr_t co)
{
    uint32_t at = (s->used + 3) & ~3u, room;
    if (at + sizeof(struct facts_hdr) >= GT_PY_SAMPLE_TEXT) return 0;
    room = GT_PY_SAMPLE_TEXT - at - (uint32_t)sizeof(struct facts_hdr);
    char *text = s->text + at + sizeof(struct facts_hdr);
    int cut = 0;
    int64_t f = str_utf8_r(r, rd_ptr_r(r, co, P.L.co_file), text, room, &cut);
    if (cut) return 0;
    f = f > 0 ? f : 0;
    int64_t n = str_utf8_r(r, rd_ptr_r(r, co, P.L.co_name), text + f, room - (uint32_t)f, &cut);
    if (cut) return 0;
    n = n > 0 ? n : 0;
    struct facts_hdr h = {rd_i32_r(r, co, P.L.co_first), (uint16_t)f, (uint16_t)n};
    memcpy(s->text + at, &h, sizeof(h));
    s->used = at + (uint32_t)sizeof(h) + (uint32_t)(f + n);
    return at + 1;
}

/* A sample's Python frames into s (see python.h), read by offsets from thread state ts: by a
 * signal handler on its own thread, or by the sampler thread for a thread asleep in a system call
 * (whose frames hold still meanwhile). Only reads: no lock, no API call but the interpreter's state
 * getters, no allocation; the same finalization guard as the walk without the GIL (the atexit
 * guard registered, not closing), and only once the walk by offsets passed its self-checks or runs
 * without the GIL anyway. A frame chain caught in the middle of a push or pop fails its checks
 * (-1) or is one frame off, as in faulthandler's dump from a signal handler; one whose memory was
 * just unmapped fails a copy (-1, see safe_copy), never a load. The code objects are alive now
 * (the frames hold them): their lines and facts are copied here, where the hints do not say the
 * table has them already. id (not 0): ts is another thread's, read only if ts_alive says it is
 * still that thread's state (the caller checks that the thread slept through the read). */
struct read_scratch {
    struct safe_rd r;
    struct rawf fr[GT_PY_SAMPLE_FRAMES];
};
_Static_assert(sizeof(struct read_scratch) <= GT_PY_READ_SCRATCH, "GT_PY_READ_SCRATCH too small");

int gt_py_sample_read(uintptr_t ts, uint64_t id, struct gt_py_sample *s, _Atomic uint64_t *hints,
                      struct gt_py_read_scratch *scratch)
{
    s->n = -1;
    s->used = 0;
    if (!ts || !atomic_load_explicit(&P.on, memory_order_relaxed) ||
        atomic_load(&P.guard) != GUARD_ON)
        return -1;
    atomic_fetch_add(&P.walkers, 1); /* before reading closing: see exit_guard */
    int k = -1;
    struct read_scratch *sc = (struct read_scratch *)scratch->b;
    struct safe_rd *r = &sc->r;
    struct rawf *fr = sc->fr;
    r->pid = getpid();
    r->fault = 0;
    r->clock = 0;
    r->copies = 0;
    r->limit = UINT32_MAX;
    s->capped = 0;
    unsigned spent = 0; /* copies for lines and facts */
    for (unsigned i = 0; i < SR_WAYS; i++)
        r->e[i].n = 0, r->e[i].used = 0;
    if (!atomic_load(&P.closing) && P.IsInitialized() == 1 && !P.IsFinalizing() &&
        (!id || ts_alive(r, ts, id)))
        k = walk_raw_r(r, ts, fr, GT_PY_SAMPLE_FRAMES);
    for (int i = 0; i < k && !r->fault; i++) {
        struct gt_py_sframe *o = &s->f[i];
        o->code = fr[i].code;
        o->key = fr[i].key;
        o->fp = fingerprint_r(r, fr[i].code);
        o->line = GT_PY_NO_LINE;
        o->facts = 0;
        /* the copies past the bound are left to later samples: those after this thread's next
         * write-out find these frames in its hints and spend the bound further out */
        int need_line = !hint_has(hints, hint_of(o->code, o->fp, o->key));
        int need_facts = !hint_has(hints, hint_of(o->code, o->fp, KEY_CODE));
        if (spent >= GT_PY_SAMPLE_COPIES) {
            s->capped |= need_line || need_facts;
            continue;
        }
        unsigned before = r->copies;
        if (need_line) {
            /* (as raw_line, through the copier) */
            r->limit = r->copies + (GT_PY_SAMPLE_COPIES - spent);
            int line = (fr[i].key & KEY_LINE) ? (int)(fr[i].key & 0xffffffff)
                                              : code_line_r(r, fr[i].code, (int)fr[i].key);
            r->limit = UINT32_MAX;
            if (line != LINE_UNREAD) o->line = line;
            s->capped |= line == LINE_UNREAD && r->copies - before > GT_PY_SAMPLE_COPIES - spent;
        }
        if (need_facts) o->facts = copy_facts(r, s, o->code);
        spent += r->copies - before;
    }
    if (r->fault) k = -1;
    atomic_fetch_sub(&P.walkers, 1);
    return s->n = k;
}

/* One sampled frame's pseudo-ip from the table, or from what the sample carries (the caller holds
 * tab_mu); 0: neither knows it. */
static uint64_t sample_ip(struct gt_thread *t, const struct gt_py_sample *s,
                          const struct gt_py_sframe *f, _Atomic uint64_t *hints)
{
    uint64_t hc = hint_of(f->code, f->fp, KEY_CODE), hk = hint_of(f->code, f->fp, f->key);
    if (!reserve(2)) {
        note_full(t);
        return 0;
    }
    struct ent *c = slot_of(P.e, P.mask, f->code, KEY_CODE);
    uint32_t id;
    if (c->a && (c->fp == f->fp || !c->fp)) {
        id = (uint32_t)c->val;
    } else if (f->facts && P.next_code != UINT32_MAX) {
        struct facts_hdr h;
        const char *text = s->text + f->facts - 1;
        memcpy(&h, text, sizeof(h));
        id = ++P.next_code;
        if (!c->a) P.used++;
        *c = (struct ent){f->code, KEY_CODE, id, f->fp};
        text += sizeof(h);
        write_code(t, id, h.first, text, h.fl, text + h.fl, h.nl);
    } else {
        hint_set(hints, hc, 0);
        return 0;
    }
    hint_set(hints, hc, 1);
    struct ent *e = slot_of(P.e, P.mask, id, f->key);
    if (!e->a) {
        if (f->line == GT_PY_NO_LINE) {
            hint_set(hints, hk, 0);
            return 0;
        }
        *e = (struct ent){id, f->key, GT_PYFRAME_IP(id, clamp_line(f->line)), 0};
        P.used++;
    }
    hint_set(hints, hk, 1);
    return e->val;
}

uint32_t gt_py_sample_frames(struct gt_thread *t, const struct gt_py_sample *s,
                             _Atomic uint64_t *hints, uint64_t *out, uint32_t max)
{
    /* (read with a layout found wrong since: dropped) */
    if (!gt_py_available() || in_walk || s->n <= 0 ||
        !atomic_load_explicit(&P.on, memory_order_relaxed))
        return 0;
    uint32_t n = 0;
    in_walk = 1;
    pthread_mutex_lock(&P.tab_mu);
    for (; n < (uint32_t)s->n && n < max && n < GT_PY_SAMPLE_FRAMES; n++)
        if (!(out[n] = sample_ip(t, s, &s->f[n], hints))) break;
    pthread_mutex_unlock(&P.tab_mu);
    in_walk = 0;
    return n;
}

/* ---- for the framework bridge (torch.c) ------------------------------------------------------ */

void *gt_py_sym(const char *name)
{
    return gt_py_loaded() ? gt_real_dlsym(P.handle, name) : NULL;
}

int gt_py_pending(int (*fn)(void *), void *arg)
{
    if (!gt_py_loaded() || P.IsInitialized() != 1 || (P.IsFinalizing && P.IsFinalizing()))
        return -1;
    return P.AddPendingCall && P.AddPendingCall(fn, arg) == 0 ? 0 : -1;
}

int gt_py_safe_here(void)
{
    return gt_py_loaded() && !(P.IsFinalizing && P.IsFinalizing()) && gil_holder() != NULL;
}
