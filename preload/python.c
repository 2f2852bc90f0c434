/* Python frames for host call stacks. The CPython API is found at run time with dlsym (in the
 * python executable or a libpython it links, at load time; in a libpython loaded later, when the
 * stack code first sees that object); nothing here links against Python.
 *
 * Safety rules, each for a reason:
 *   - Frames are read only by a thread that holds the GIL of the main interpreter: the current
 *     thread state must be this thread's own (PyGILState_GetThisThreadState), PyGILState_Check
 *     must say 1, and Python must be initialized. PyGILState_Check alone answers 1 before
 *     initialization and when its check is disabled (subinterpreters), and the "current" thread
 *     state of 3.9-3.11 is a process-wide pointer that names whichever thread holds the GIL.
 *   - The GIL is never taken: a CUDA call can come from code holding an allocator's mutex that
 *     a thread waiting for the GIL also wants (deadlock). Without the GIL: native frames only.
 *   - 3.11+ creates frame objects on demand (PyThreadState_GetFrame, PyFrame_GetBack). In 3.11
 *     such an allocation can start a garbage collection, which runs finalizers: arbitrary Python
 *     code inside a CUDA call (a tensor freed into an allocator whose lock this thread holds).
 *     The collector is switched off around the walk (PyGC_Disable/PyGC_Enable: a flag).
 *   - A pending exception is set aside and put back, any exception raised here is cleared, and
 *     errno is kept.
 *
 * Interning: a hash table (code object, instruction offset) -> pseudo-ip (GT_PYFRAME_IP): known
 * frames cost a lookup, no string work. The line is computed when a pair is new (3.9/3.10 have
 * no PyFrame_GetLasti: the key is the line, computed per frame). Each new code object gets an id
 * and one GT_REC_PYCODE record, and a reference that keeps it alive, so its address is never
 * reused by another code object. The table is guarded by a flag taken with test-and-set: the
 * GIL already serializes callers, and a thread that finds the flag taken (free-threaded builds)
 * records native frames only instead of waiting. */
#include "python.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "shim.h"

typedef void PyObj;

#define SLOTS0    4096u
#define SLOTS_MAX (1u << 20) /* 24 MiB of table at most; then new frames end the Python part */
#define KEY_CODE  INT64_MIN  /* key of a code object's own entry (value: its id) */

struct ent {
    uint64_t code; /* PyCodeObject address, 0 = empty slot */
    int64_t key;   /* instruction offset (or line), KEY_CODE */
    uint64_t val;  /* pseudo-ip, or code id */
};

static struct {
    _Atomic int ready;  /* 1: every function below is set and the interpreter is supported */
    pthread_mutex_t mu; /* resolution */
    int minor;          /* 3.minor */
    int gc_guard;       /* 3.11: frame materialization may collect */
    int off;            /* GPUTRACE_PYTHON=0 */
    uintptr_t lo, hi;   /* the interpreter object's mapping */
    int (*IsInitialized)(void);
    int (*GILState_Check)(void);
    PyObj *(*GILState_GetThisThreadState)(void);
    PyObj *(*ThreadState_Unchecked)(void);
    PyObj *(*ThreadState_GetInterpreter)(PyObj *);
    PyObj *(*InterpreterState_Main)(void);
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
    /* the table; under `busy` */
    atomic_flag busy;
    struct ent *e;
    uint64_t mask, used;
    uint32_t next_code;
    int full;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER, .busy = ATOMIC_FLAG_INIT};

/* ---- finding the interpreter -------------------------------------------------------------------
 */

struct range_query {
    uintptr_t addr, lo, hi;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct range_query *q = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo) lo = a;
        if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
    }
    if (q->addr < lo || q->addr >= hi) return 0;
    q->lo = lo;
    q->hi = hi;
    return 1;
}

/* "3.11.7 (main, ...)" -> 11; -1 unless 3.x */
static int version_minor(const char *v)
{
    if (!v || v[0] != '3' || v[1] != '.') return -1;
    return atoi(v + 2);
}

#define LOOK(field, name) (*(void **)&P.field = gt_real_dlsym(h, name))

/* Looks the API up in handle h; returns 1 when everything needed is there. Caller holds mu. */
static int resolve(void *h)
{
    const char *(*get_version)(void) = (const char *(*)(void))gt_real_dlsym(h, "Py_GetVersion");
    if (!get_version) return 0;
    LOOK(IsInitialized, "Py_IsInitialized");
    LOOK(GILState_Check, "PyGILState_Check");
    LOOK(GILState_GetThisThreadState, "PyGILState_GetThisThreadState");
    if (!LOOK(ThreadState_Unchecked, "PyThreadState_GetUnchecked"))
        LOOK(ThreadState_Unchecked, "_PyThreadState_UncheckedGet");
    LOOK(ThreadState_GetInterpreter, "PyThreadState_GetInterpreter");
    LOOK(InterpreterState_Main, "PyInterpreterState_Main");
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
    P.minor = version_minor(get_version());
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
    struct range_query q = {.addr = (uintptr_t)P.IsInitialized};
    if (!dl_iterate_phdr(find_range, &q)) return 0;
    P.lo = q.lo;
    P.hi = q.hi;
    gt_log("gputrace: Python 3.%d: stacks carry Python frames\n", P.minor);
    return 1;
}

void gt_py_configure(void)
{
    const char *v = getenv("GPUTRACE_PYTHON");
    if (v && strcmp(v, "0") == 0) {
        P.off = 1; /* native stacks only, as without an interpreter */
        return;
    }
    pthread_mutex_lock(&P.mu);
    if (!atomic_load(&P.ready) && resolve(RTLD_DEFAULT)) atomic_store(&P.ready, 1);
    pthread_mutex_unlock(&P.mu);
}

void gt_py_module_loaded(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (P.off || strncmp(base, "libpython3", 10) != 0 || atomic_load(&P.ready)) return;
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

int gt_py_available(void)
{
    return atomic_load_explicit(&P.ready, memory_order_acquire);
}

int gt_py_interp_ip(uint64_t ip)
{
    return ip >= P.lo && ip < P.hi;
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

static struct ent *slot_of(struct ent *e, uint64_t mask, uint64_t code, int64_t key)
{
    uint64_t i = hash2(code, key) & mask;
    while (e[i].code && (e[i].code != code || e[i].key != key))
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
        if (P.e[i].code) *slot_of(e, n - 1, P.e[i].code, P.e[i].key) = P.e[i];
    if (P.e) munmap(P.e, slots * sizeof(*P.e));
    P.e = e;
    P.mask = n - 1;
    return 1;
}

static void put(struct ent *s, uint64_t code, int64_t key, uint64_t val)
{
    *s = (struct ent){code, key, val};
    P.used++;
}

/* ---- code objects ------------------------------------------------------------------------------
 */

/* The UTF-8 text of attribute `name` of `obj` (a str): a new reference in *ref, or NULL. */
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

static void emit_code(struct gt_thread *t, PyObj *code, uint32_t id)
{
    PyObj *fref, *nref, *lref;
    uint32_t fl, nl;
    const char *file = attr_text(code, "co_filename", &fref, &fl);
    const char *name = attr_text(code, P.minor >= 11 ? "co_qualname" : "co_name", &nref, &nl);
    long first = (lref = P.GetAttrString(code, "co_firstlineno")) ? P.Long_AsLong(lref) : 0;
    struct gt_rec_pycode r = {.ts = gt_now(),
                              .id = id,
                              .first_line = first > 0 && first < UINT32_MAX ? (uint32_t)first : 0,
                              .file_len = fl,
                              .name_len = nl};
    uint32_t size = gt_rec_size(sizeof(r), fl + nl);
    uint8_t *p = gt_reserve(t, size);
    if (p) {
        memcpy(p, &r, sizeof(r));
        memcpy(p + sizeof(r), file, fl);
        memcpy(p + sizeof(r) + fl, name, nl);
        memset(p + sizeof(r) + fl + nl, 0, size - sizeof(r) - fl - nl);
        gt_commit(t, p, GT_REC_PYCODE, 0, size, r.ts);
    }
    if (fref) P.DecRef(fref);
    if (nref) P.DecRef(nref);
    if (lref) P.DecRef(lref);
    if (P.Err_Occurred()) P.Err_Clear();
}

/* The id of a code object, writing its record the first time; 0 when the table is full. */
static uint32_t code_id(struct gt_thread *t, PyObj *code)
{
    uint64_t c = (uint64_t)(uintptr_t)code;
    struct ent *s = slot_of(P.e, P.mask, c, KEY_CODE);
    if (s->code) return (uint32_t)s->val;
    if (P.next_code == UINT32_MAX) return 0;
    uint32_t id = ++P.next_code;
    P.IncRef(code); /* kept for good: the address then always means this code object */
    put(s, c, KEY_CODE, id);
    emit_code(t, code, id);
    return id;
}

static void note_full(struct gt_thread *t)
{
    static const char text[] = "the Python frame table is full: later new Python frames are not "
                               "recorded";
    struct gt_rec_note r = {.ts = gt_now(), .level = GT_NOTE_WARNING, .text_len = sizeof(text) - 1};
    gt_emit_named(t, GT_REC_NOTE, 0, &r, sizeof(r), text, r.text_len);
}

/* The pseudo-ip of frame f; 0 when the table is full. */
static uint64_t frame_ip(struct gt_thread *t, PyObj *f)
{
    PyObj *code = P.Frame_GetCode(f);
    if (!code) return 0;
    int line = -1;
    int64_t key = P.Frame_GetLasti ? P.Frame_GetLasti(f) : (line = P.Frame_GetLineNumber(f));
    uint64_t c = (uint64_t)(uintptr_t)code, ip = 0;
    struct ent *s = P.e ? slot_of(P.e, P.mask, c, key) : NULL;
    if (s && s->code) {
        ip = s->val;
    } else if (reserve(2)) { /* this pair's entry, and maybe the code's */
        if (line < 0) line = P.Frame_GetLineNumber(f);
        uint32_t id = code_id(t, code);
        uint32_t ln = line <= 0                         ? 0
                      : (uint32_t)line > GT_PY_LINE_MAX ? GT_PY_LINE_MAX
                                                        : (uint32_t)line;
        if (id) {
            ip = GT_PYFRAME_IP(id, ln);
            put(slot_of(P.e, P.mask, c, key), c, key, ip);
        }
    }
    if (!ip && !P.full) {
        P.full = 1;
        note_full(t);
    }
    P.DecRef(code);
    return ip;
}

/* ---- the walk ----------------------------------------------------------------------------------
 */

/* The thread state of the calling thread when it holds the main interpreter's GIL, else NULL. */
static PyObj *gil_holder(void)
{
    if (P.IsInitialized() != 1) return NULL;
    PyObj *ts = P.ThreadState_Unchecked();
    if (!ts || ts != P.GILState_GetThisThreadState() || P.GILState_Check() != 1) return NULL;
    return P.ThreadState_GetInterpreter(ts) == P.InterpreterState_Main() ? ts : NULL;
}

uint32_t gt_py_frames(struct gt_thread *t, uint64_t *out, uint32_t max)
{
    if (!max || !gt_py_available()) return 0;
    PyObj *ts = gil_holder();
    if (!ts || atomic_flag_test_and_set_explicit(&P.busy, memory_order_acquire)) return 0;
    int saved = errno;
    PyObj *exc = NULL, *et = NULL, *ev = NULL, *tb = NULL;
    int had = P.Err_Occurred() != NULL;
    if (had && P.Err_GetRaised)
        exc = P.Err_GetRaised();
    else if (had)
        P.Err_Fetch(&et, &ev, &tb);
    int gc_was_on = P.gc_guard ? P.GC_Disable() : 0;
    uint32_t n = 0;
    PyObj *f = P.ThreadState_GetFrame(ts);
    while (f && n < max) {
        uint64_t ip = frame_ip(t, f);
        if (!ip) break;
        out[n++] = ip;
        PyObj *back = P.Frame_GetBack(f);
        P.DecRef(f);
        f = back;
    }
    if (f) P.DecRef(f);
    if (gc_was_on) P.GC_Enable();
    if (P.Err_Occurred()) P.Err_Clear();
    if (had && P.Err_SetRaised)
        P.Err_SetRaised(exc);
    else if (had)
        P.Err_Restore(et, ev, tb);
    atomic_flag_clear_explicit(&P.busy, memory_order_release);
    errno = saved;
    return n;
}
