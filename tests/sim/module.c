/* Modules and libraries in a small text format (README.md), kernels, launches and graphs. */
#include "sim.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_func;
struct sim_kernel;

struct decl { /* one parsed line */
    int is_global;
    char *name;
    uint64_t value; /* kernel duration (0 = default) or global size */
};

struct sim_module {
    struct sim_ctx *ctx;
    size_t nfuncs;
    struct sim_func **funcs;
    size_t nglobals;
    struct {
        const char *name;
        void *alloc;
        CUdeviceptr ptr;
        size_t size;
    } *globals;
};

struct sim_func {
    struct sim_module *mod; /* NULL for functions made from a library kernel */
    struct sim_kernel *kern;
    struct sim_ctx *ctx;
    const char *name;
    uint64_t duration; /* 0: module's value, then GTSIM_KERNEL_NS */
};

struct sim_library {
    size_t nkernels;
    struct sim_kernel **kernels;
};

struct sim_kernel {
    struct sim_library *lib;
    const char *name;
    uint64_t duration;
    struct kfunc {
        struct sim_ctx *ctx;
        struct sim_func *f;
        struct kfunc *next;
    } *funcs;
};

/* ---- parsing ------------------------------------------------------------------------------------ */
static void decls_free(struct decl *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(d[i].name);
    free(d);
}

/* Returns CUDA_SUCCESS and the declarations, or CUDA_ERROR_INVALID_IMAGE. */
static CUresult parse_image(const char *text, struct decl **out, size_t *nout)
{
    size_t n = 0, cap = 8;
    struct decl *d = malloc(cap * sizeof *d);
    if (!d)
        abort();
    const char *p = text;
    char *line = NULL;
    int saw_decl = 0;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        free(line);
        line = malloc(len + 1); /* mangled names can be long */
        if (!line)
            abort();
        memcpy(line, p, len);
        line[len] = 0;
        p += len + (eol ? 1 : 0);
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)line[i] < 0x20 && line[i] != '\t' && line[i] != '\r')
                goto bad; /* binary data: not our format */
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *tok[4], *save = NULL;
        int k = 0;
        for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save))
            if (k < 4)
                tok[k++] = t;
            else
                goto bad;
        if (k == 0)
            continue; /* blank or comment */
        int is_global = !strcmp(tok[0], "global");
        if (!is_global && strcmp(tok[0], "kernel"))
            goto bad;
        if (k < 2 || k > 3 || (is_global && k != 3))
            goto bad;
        unsigned long long v = 0;
        if (k == 3) {
            char *end;
            if (!isdigit((unsigned char)tok[2][0]))
                goto bad;
            errno = 0;
            v = strtoull(tok[2], &end, 10);
            if (*end || errno)
                goto bad;
        }
        const char *name = tok[1];
        if (n == cap) {
            cap *= 2;
            d = realloc(d, cap * sizeof *d);
            if (!d)
                abort();
        }
        d[n].is_global = is_global;
        d[n].name = strdup(name);
        d[n].value = k == 3 ? v : 0;
        n++;
        saw_decl = 1;
    }
    if (!saw_decl)
        goto bad;
    free(line);
    *out = d;
    *nout = n;
    return CUDA_SUCCESS;
bad:
    free(line);
    decls_free(d, n);
    return CUDA_ERROR_INVALID_IMAGE;
}

static char *read_file(const char *path, CUresult *rc)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *rc = errno == ENOENT ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_INVALID_VALUE;
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        abort();
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > (16u << 20)) {
                free(buf);
                fclose(f);
                *rc = CUDA_ERROR_INVALID_IMAGE;
                return NULL;
            }
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        if (!r)
            break;
        n += r;
    }
    fclose(f);
    buf[n] = 0;
    if (memchr(buf, 0, n)) { /* embedded NUL: binary */
        free(buf);
        *rc = CUDA_ERROR_INVALID_IMAGE;
        return NULL;
    }
    *rc = CUDA_SUCCESS;
    return buf;
}

/* ---- functions and modules ------------------------------------------------------------------------ */
static struct sim_func *func_new(struct sim_module *m, struct sim_kernel *k, struct sim_ctx *c, const char *name,
                                 uint64_t dur)
{
    struct sim_func *f = calloc(1, sizeof *f);
    if (!f)
        abort();
    f->mod = m;
    f->kern = k;
    f->ctx = c;
    f->name = sim_intern(name);
    f->duration = dur;
    handle_add(f, OBJ_FUNC, f);
    return f;
}

static void func_free(struct sim_func *f)
{
    handle_del(f);
    free(f);
}

static void module_free(struct sim_module *m) /* under g_lock */
{
    for (size_t i = 0; i < m->nfuncs; i++)
        func_free(m->funcs[i]);
    free(m->funcs);
    for (size_t i = 0; i < m->nglobals; i++)
        mem_free_alloc(m->globals[i].alloc);
    free(m->globals);
    handle_del(m);
    free(m);
}

static CUresult module_load_text(CUmodule *out, const char *text)
{
    if (!out || !text)
        return CUDA_ERROR_INVALID_VALUE;
    struct decl *d;
    size_t n;
    CUresult rc = parse_image(text, &d, &n);
    if (rc)
        return rc;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    rc = ctx_current(&c);
    if (rc)
        goto out;
    struct sim_module *m = calloc(1, sizeof *m);
    if (!m)
        abort();
    m->ctx = c;
    m->funcs = calloc(n, sizeof *m->funcs);
    m->globals = calloc(n, sizeof *m->globals);
    if (!m->funcs || !m->globals)
        abort();
    handle_add(m, OBJ_MODULE, m);
    for (size_t i = 0; i < n; i++) {
        if (!d[i].is_global) {
            m->funcs[m->nfuncs++] = func_new(m, NULL, c, d[i].name, d[i].value);
            continue;
        }
        size_t g = m->nglobals;
        rc = mem_global_alloc(c, (size_t)d[i].value, &m->globals[g].alloc, &m->globals[g].ptr);
        if (rc) {
            module_free(m);
            goto out;
        }
        m->globals[g].name = sim_intern(d[i].name);
        m->globals[g].size = (size_t)d[i].value;
        m->nglobals++;
    }
    *out = (CUmodule)m;
out:
    pthread_mutex_unlock(&g_lock);
    decls_free(d, n);
    return rc;
}

static CUresult module_load_file(CUmodule *out, const char *path)
{
    if (!out || !path)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc;
    char *text = read_file(path, &rc);
    if (!text)
        return rc;
    rc = module_load_text(out, text);
    free(text);
    return rc;
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname) { SIM_API(cuModuleLoad, module_load_file(module, fname)); }
SIM_EXPORT(cuModuleLoad)
CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    SIM_API(cuModuleLoadData, module_load_text(module, image));
}
SIM_EXPORT(cuModuleLoadData)
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options,
                                    void **optionValues)
{
    SIM_API(cuModuleLoadDataEx, (numOptions && (!options || !optionValues)) ? CUDA_ERROR_INVALID_VALUE
                                                                            : module_load_text(module, image));
}
SIM_EXPORT(cuModuleLoadDataEx)

static CUresult module_unload(CUmodule h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_module *m = handle_get(h, OBJ_MODULE);
    if (m)
        module_free(m);
    pthread_mutex_unlock(&g_lock);
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; /* as documented (not INVALID_HANDLE) */
}
CUresult CUDAAPI cuModuleUnload(CUmodule hmod) { SIM_API(cuModuleUnload, module_unload(hmod)); }
SIM_EXPORT(cuModuleUnload)

static CUresult module_get_function(CUfunction *out, CUmodule h, const char *name)
{
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_module *m = handle_get(h, OBJ_MODULE);
    CUresult rc = m ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_VALUE; /* documented codes */
    for (size_t i = 0; m && i < m->nfuncs; i++)
        if (!strcmp(m->funcs[i]->name, name)) {
            *out = (CUfunction)m->funcs[i];
            rc = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    SIM_API(cuModuleGetFunction, module_get_function(hfunc, hmod, name));
}
SIM_EXPORT(cuModuleGetFunction)

static CUresult module_get_global(CUdeviceptr *dptr, size_t *bytes, CUmodule h, const char *name)
{
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_module *m = handle_get(h, OBJ_MODULE);
    CUresult rc = m ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; m && i < m->nglobals; i++)
        if (!strcmp(m->globals[i].name, name)) {
            if (dptr)
                *dptr = m->globals[i].ptr;
            if (bytes)
                *bytes = m->globals[i].size;
            rc = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    SIM_API(cuModuleGetGlobal_v2, module_get_global(dptr, bytes, hmod, name));
}
SIM_EXPORT(cuModuleGetGlobal_v2)

static CUresult module_count(unsigned *count, CUmodule h)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_module *m = handle_get(h, OBJ_MODULE);
    if (m)
        *count = (unsigned)m->nfuncs;
    pthread_mutex_unlock(&g_lock);
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    SIM_API(cuModuleGetFunctionCount, module_count(count, mod));
}
SIM_EXPORT(cuModuleGetFunctionCount)

static CUresult module_enum(CUfunction *fns, unsigned num, CUmodule h)
{
    if (!fns)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_module *m = handle_get(h, OBJ_MODULE);
    CUresult rc = !m ? CUDA_ERROR_INVALID_HANDLE : num != m->nfuncs ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    for (size_t i = 0; !rc && i < m->nfuncs; i++)
        fns[i] = (CUfunction)m->funcs[i];
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod)
{
    SIM_API(cuModuleEnumerateFunctions, module_enum(functions, numFunctions, mod));
}
SIM_EXPORT(cuModuleEnumerateFunctions)

void modules_ctx_destroyed(struct sim_ctx *c)
{
    void **v;
    size_t n = handle_list(OBJ_MODULE, &v);
    for (size_t i = 0; i < n; i++)
        if (((struct sim_module *)v[i])->ctx == c)
            module_free(v[i]);
    free(v);
    n = handle_list(OBJ_KERNEL, &v);
    for (size_t i = 0; i < n; i++) {
        struct sim_kernel *k = v[i];
        for (struct kfunc **pp = &k->funcs; *pp;) {
            struct kfunc *kf = *pp;
            if (kf->ctx == c) {
                *pp = kf->next;
                func_free(kf->f);
                free(kf);
            } else
                pp = &kf->next;
        }
    }
    free(v);
}

/* ---- libraries (context-independent loading) ------------------------------------------------------ */
static CUresult library_load_text(CUlibrary *out, const char *text, unsigned nj, void *jo, void *jv, unsigned nl,
                                  void *lo, void *lv)
{
    if (!out || !text || (nj && (!jo || !jv)) || (nl && (!lo || !lv)))
        return CUDA_ERROR_INVALID_VALUE;
    struct decl *d;
    size_t n;
    CUresult rc = parse_image(text, &d, &n);
    if (rc)
        return rc;
    struct sim_library *l = calloc(1, sizeof *l);
    if (!l)
        abort();
    l->kernels = calloc(n, sizeof *l->kernels);
    if (!l->kernels)
        abort();
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < n; i++) {
        if (d[i].is_global)
            continue; /* globals in libraries are not modelled */
        struct sim_kernel *k = calloc(1, sizeof *k);
        if (!k)
            abort();
        k->lib = l;
        k->name = sim_intern(d[i].name);
        k->duration = d[i].value;
        handle_add(k, OBJ_KERNEL, k);
        l->kernels[l->nkernels++] = k;
    }
    handle_add(l, OBJ_LIBRARY, l);
    pthread_mutex_unlock(&g_lock);
    decls_free(d, n);
    *out = (CUlibrary)l;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                   void **libraryOptionValues, unsigned int numLibraryOptions)
{
    SIM_API(cuLibraryLoadData, library_load_text(library, code, numJitOptions, jitOptions, jitOptionsValues,
                                                 numLibraryOptions, libraryOptions, libraryOptionValues));
}
SIM_EXPORT(cuLibraryLoadData)

static CUresult library_load_file(CUlibrary *out, const char *path, unsigned nj, void *jo, void *jv, unsigned nl,
                                  void *lo, void *lv)
{
    if (!out || !path)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc;
    char *text = read_file(path, &rc);
    if (!text)
        return rc;
    rc = library_load_text(out, text, nj, jo, jv, nl, lo, lv);
    free(text);
    return rc;
}
CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                                       void **jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                       unsigned int numLibraryOptions)
{
    SIM_API(cuLibraryLoadFromFile, library_load_file(library, fileName, numJitOptions, jitOptions, jitOptionsValues,
                                                     numLibraryOptions, libraryOptions, libraryOptionValues));
}
SIM_EXPORT(cuLibraryLoadFromFile)

static CUresult library_unload(CUlibrary h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_library *l = handle_get(h, OBJ_LIBRARY);
    if (l) {
        for (size_t i = 0; i < l->nkernels; i++) {
            struct sim_kernel *k = l->kernels[i];
            while (k->funcs) {
                struct kfunc *kf = k->funcs;
                k->funcs = kf->next;
                func_free(kf->f);
                free(kf);
            }
            handle_del(k);
            free(k);
        }
        free(l->kernels);
        handle_del(l);
        free(l);
    }
    pthread_mutex_unlock(&g_lock);
    return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; /* as documented */
}
CUresult CUDAAPI cuLibraryUnload(CUlibrary library) { SIM_API(cuLibraryUnload, library_unload(library)); }
SIM_EXPORT(cuLibraryUnload)

static CUresult library_get_kernel(CUkernel *out, CUlibrary h, const char *name)
{
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_library *l = handle_get(h, OBJ_LIBRARY);
    CUresult rc = l ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; l && i < l->nkernels; i++)
        if (!strcmp(l->kernels[i]->name, name)) {
            *out = (CUkernel)l->kernels[i];
            rc = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    SIM_API(cuLibraryGetKernel, library_get_kernel(pKernel, library, name));
}
SIM_EXPORT(cuLibraryGetKernel)

static CUresult library_count(unsigned *count, CUlibrary h)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_library *l = handle_get(h, OBJ_LIBRARY);
    if (l)
        *count = (unsigned)l->nkernels;
    pthread_mutex_unlock(&g_lock);
    return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    SIM_API(cuLibraryGetKernelCount, library_count(count, lib));
}
SIM_EXPORT(cuLibraryGetKernelCount)

static CUresult library_enum(CUkernel *ks, unsigned num, CUlibrary h)
{
    if (!ks)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_library *l = handle_get(h, OBJ_LIBRARY);
    CUresult rc = !l ? CUDA_ERROR_INVALID_HANDLE : num != l->nkernels ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    for (size_t i = 0; !rc && i < l->nkernels; i++)
        ks[i] = (CUkernel)l->kernels[i];
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib)
{
    SIM_API(cuLibraryEnumerateKernels, library_enum(kernels, numKernels, lib));
}
SIM_EXPORT(cuLibraryEnumerateKernels)

static CUresult kernel_get_library(CUlibrary *out, CUkernel h)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_kernel *k = handle_get(h, OBJ_KERNEL);
    if (k)
        *out = (CUlibrary)k->lib;
    pthread_mutex_unlock(&g_lock);
    return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel) { SIM_API(cuKernelGetLibrary, kernel_get_library(pLib, kernel)); }
SIM_EXPORT(cuKernelGetLibrary)

/* the CUfunction of a kernel in context c, created on first use (under g_lock) */
static struct sim_func *kernel_func(struct sim_kernel *k, struct sim_ctx *c)
{
    for (struct kfunc *kf = k->funcs; kf; kf = kf->next)
        if (kf->ctx == c)
            return kf->f;
    struct kfunc *kf = calloc(1, sizeof *kf);
    if (!kf)
        abort();
    kf->ctx = c;
    kf->f = func_new(NULL, k, c, k->name, 0);
    kf->next = k->funcs;
    k->funcs = kf;
    return kf->f;
}

static CUresult kernel_get_function(CUfunction *out, CUkernel h)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    struct sim_kernel *k = handle_get(h, OBJ_KERNEL);
    if (!rc && !k)
        rc = CUDA_ERROR_INVALID_HANDLE;
    if (!rc)
        *out = (CUfunction)kernel_func(k, c);
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    SIM_API(cuKernelGetFunction, kernel_get_function(pFunc, kernel));
}
SIM_EXPORT(cuKernelGetFunction)

/* ---- names, durations ---------------------------------------------------------------------------- */
static CUresult get_name(const char **name, const void *h, int want_kernel)
{
    if (!name || !h)
        return CUDA_ERROR_INVALID_VALUE; /* as documented; an unknown non-NULL handle: INVALID_HANDLE */
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_SUCCESS;
    struct sim_func *f = handle_get(h, OBJ_FUNC);
    struct sim_kernel *k = handle_get(h, OBJ_KERNEL);
    if (f && !want_kernel)
        *name = f->name;
    else if (k) /* a CUkernel may stand in for a CUfunction */
        *name = k->name;
    else
        rc = CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc) { SIM_API(cuFuncGetName, get_name(name, hfunc, 0)); }
SIM_EXPORT(cuFuncGetName)
CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc) { SIM_API(cuKernelGetName, get_name(name, hfunc, 1)); }
SIM_EXPORT(cuKernelGetName)

static CUresult func_get_module(CUmodule *out, CUfunction h)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_func *f = handle_get(h, OBJ_FUNC);
    CUresult rc = !f ? CUDA_ERROR_INVALID_VALUE : !f->mod ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
    if (!rc)
        *out = (CUmodule)f->mod;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc) { SIM_API(cuFuncGetModule, func_get_module(hmod, hfunc)); }
SIM_EXPORT(cuFuncGetModule)

void gtsim_func_set_duration(struct CUfunc_st *h, unsigned long long ns)
{
    sim_init_once();
    pthread_mutex_lock(&g_lock);
    struct sim_func *f = handle_get(h, OBJ_FUNC);
    struct sim_kernel *k = handle_get(h, OBJ_KERNEL);
    if (f)
        f->duration = ns;
    else if (k)
        k->duration = ns;
    pthread_mutex_unlock(&g_lock);
}

static uint64_t func_duration(const struct sim_func *f)
{
    if (f->duration)
        return f->duration;
    if (f->kern && f->kern->duration)
        return f->kern->duration;
    return g_cfg.kernel_ns;
}

/* CUfunction or CUkernel (cast) -> function in context c; NULL if not a live handle */
static struct sim_func *resolve_func(const void *h, struct sim_ctx *c)
{
    struct sim_func *f = handle_get(h, OBJ_FUNC);
    if (f)
        return f;
    struct sim_kernel *k = handle_get(h, OBJ_KERNEL);
    return k ? kernel_func(k, c) : NULL;
}

/* ---- launches ----------------------------------------------------------------------------------- */
struct launch {
    const void *f;
    unsigned grid[3], block[3], smem;
    CUstream hs;
    int ptsz;
    int launch_type;
    void **params, **extra;
};

static CUresult launch_check_dims(const unsigned grid[3], const unsigned block[3])
{
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
        return CUDA_ERROR_INVALID_VALUE;
    if (block[0] > 1024 || block[1] > 1024 || block[2] > 64 || (uint64_t)block[0] * block[1] * block[2] > 1024 ||
        grid[1] > 65535 || grid[2] > 65535 || grid[0] > 2147483647u)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

static CUresult launch_run(const struct launch *L)
{
    if (L->params && L->extra)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = launch_check_dims(L->grid, L->block);
    if (rc)
        return rc;
    if (L->smem > 232448)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s;
    rc = stream_resolve(L->hs, L->ptsz, &s);
    struct sim_func *f = NULL;
    if (!rc && !(f = resolve_func(L->f, s->ctx)))
        rc = CUDA_ERROR_INVALID_HANDLE;
    if (!rc && f->ctx != s->ctx)
        rc = CUDA_ERROR_INVALID_HANDLE; /* function of another context */
    if (!rc) {
        struct sim_work w = {.kind = GTSIM_ACT_KERNEL, .dur = func_duration(f), .name = f->name,
                             .smem = L->smem, .launch_type = L->launch_type};
        memcpy(w.grid, L->grid, sizeof w.grid);
        memcpy(w.block, L->block, sizeof w.block);
        work_enqueue(s, L->hs, &w);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

#define LAUNCH_ARGS                                                                                           \
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, \
        unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream
#define LAUNCH_INIT(PT, TYPE, EXTRA)                                                                 \
    {                                                                                                \
        .f = f, .grid = {gridDimX, gridDimY, gridDimZ}, .block = {blockDimX, blockDimY, blockDimZ}, \
        .smem = sharedMemBytes, .hs = hStream, .ptsz = PT, .launch_type = TYPE,                      \
        .params = kernelParams, .extra = EXTRA                                                       \
    }

CUresult CUDAAPI cuLaunchKernel(LAUNCH_ARGS, void **kernelParams, void **extra)
{
    struct launch L = LAUNCH_INIT(0, 0, extra);
    SIM_API(cuLaunchKernel, launch_run(&L));
}
SIM_EXPORT(cuLaunchKernel)
CUresult CUDAAPI cuLaunchKernel_ptsz(LAUNCH_ARGS, void **kernelParams, void **extra)
{
    struct launch L = LAUNCH_INIT(1, 0, extra);
    SIM_API(cuLaunchKernel_ptsz, launch_run(&L));
}
SIM_EXPORT(cuLaunchKernel_ptsz)
CUresult CUDAAPI cuLaunchCooperativeKernel(LAUNCH_ARGS, void **kernelParams)
{
    struct launch L = LAUNCH_INIT(0, 1, NULL);
    SIM_API(cuLaunchCooperativeKernel, launch_run(&L));
}
SIM_EXPORT(cuLaunchCooperativeKernel)
CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **kernelParams)
{
    struct launch L = LAUNCH_INIT(1, 1, NULL);
    SIM_API(cuLaunchCooperativeKernel_ptsz, launch_run(&L));
}
SIM_EXPORT(cuLaunchCooperativeKernel_ptsz)

static CUresult launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra, int ptsz)
{
    if (!cfg || (cfg->numAttrs && !cfg->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    struct launch L = {.f = f, .grid = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ},
                       .block = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ}, .smem = cfg->sharedMemBytes,
                       .hs = cfg->hStream, .ptsz = ptsz, .params = params, .extra = extra};
    for (unsigned i = 0; i < cfg->numAttrs; i++)
        if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && cfg->attrs[i].value.cooperative)
            L.launch_type = 1;
    return launch_run(&L);
}
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    SIM_API(cuLaunchKernelEx, launch_ex(config, f, kernelParams, extra, 0));
}
SIM_EXPORT(cuLaunchKernelEx)
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    SIM_API(cuLaunchKernelEx_ptsz, launch_ex(config, f, kernelParams, extra, 1));
}
SIM_EXPORT(cuLaunchKernelEx_ptsz)

/* ---- graphs: kernel and empty nodes, run in creation order on the launch stream ------------------ */
static uint32_t g_graph_next, g_exec_next;
static uint64_t g_node_next;

struct sim_gnode {
    uint64_t id;
    struct sim_graph *graph;
    int empty;
    const void *f; /* CUfunction or CUkernel */
    struct sim_ctx *ctx;
    unsigned grid[3], block[3], smem;
};

struct sim_graph {
    uint32_t id;
    size_t n, cap;
    struct sim_gnode **nodes;
};

struct sim_gexec {
    uint32_t id, graph_id;
    size_t n;
    struct sim_gnode *nodes; /* snapshot */
};

static CUresult graph_create(CUgraph *out, unsigned flags)
{
    if (!out || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_graph *g = calloc(1, sizeof *g);
    if (!g)
        abort();
    pthread_mutex_lock(&g_lock);
    g->id = ++g_graph_next;
    handle_add(g, OBJ_GRAPH, g);
    pthread_mutex_unlock(&g_lock);
    *out = (CUgraph)g;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags) { SIM_API(cuGraphCreate, graph_create(phGraph, flags)); }
SIM_EXPORT(cuGraphCreate)

static CUresult graph_add(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps, const void *f,
                          CUcontext hctx, const unsigned grid[3], const unsigned block[3], unsigned smem, int empty)
{
    if (!out || (ndeps && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    if (!empty && launch_check_dims(grid, block))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_SUCCESS;
    struct sim_graph *g = handle_get(hg, OBJ_GRAPH);
    struct sim_ctx *c = NULL;
    if (!g) {
        rc = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    for (size_t i = 0; i < ndeps; i++) {
        struct sim_gnode *d = handle_get(deps[i], OBJ_GRAPHNODE);
        if (!d || d->graph != g) {
            rc = CUDA_ERROR_INVALID_VALUE;
            goto out;
        }
    }
    if (!empty) {
        if (!f || (!handle_get(f, OBJ_FUNC) && !handle_get(f, OBJ_KERNEL))) {
            rc = CUDA_ERROR_INVALID_VALUE;
            goto out;
        }
        struct sim_func *fn = handle_get(f, OBJ_FUNC);
        if (fn)
            c = fn->ctx;
        else if ((rc = ctx_check(hctx, &c)))
            goto out;
    }
    struct sim_gnode *nd = calloc(1, sizeof *nd);
    if (!nd)
        abort();
    nd->id = ++g_node_next;
    nd->graph = g;
    nd->empty = empty;
    nd->f = f;
    nd->ctx = c;
    if (!empty) {
        memcpy(nd->grid, grid, sizeof nd->grid);
        memcpy(nd->block, block, sizeof nd->block);
        nd->smem = smem;
    }
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 8;
        g->nodes = realloc(g->nodes, g->cap * sizeof *g->nodes);
        if (!g->nodes)
            abort();
    }
    g->nodes[g->n++] = nd;
    handle_add(nd, OBJ_GRAPHNODE, nd);
    *out = (CUgraphNode)nd;
out:
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static CUresult add_kernel_v2(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                              const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p || (p->kernelParams && p->extra))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ}, block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    const void *f = p->func ? (const void *)p->func : (const void *)p->kern;
    return graph_add(out, g, deps, n, f, p->func ? NULL : p->ctx, grid, block, p->sharedMemBytes, 0);
}
CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                         size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    SIM_API(cuGraphAddKernelNode_v2, add_kernel_v2(phGraphNode, hGraph, dependencies, numDependencies, nodeParams));
}
SIM_EXPORT(cuGraphAddKernelNode_v2)

static CUresult add_kernel_v1(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t n,
                              const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    if (!p || (p->kernelParams && p->extra))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ}, block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    return graph_add(out, g, deps, n, p->func, NULL, grid, block, p->sharedMemBytes, 0);
}
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                      size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    SIM_API(cuGraphAddKernelNode, add_kernel_v1(phGraphNode, hGraph, dependencies, numDependencies, nodeParams));
}
SIM_EXPORT(cuGraphAddKernelNode)

CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies)
{
    SIM_API(cuGraphAddEmptyNode, graph_add(phGraphNode, hGraph, dependencies, numDependencies, NULL, NULL, NULL, NULL, 0, 1));
}
SIM_EXPORT(cuGraphAddEmptyNode)

static CUresult graph_destroy(CUgraph h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_graph *g = handle_get(h, OBJ_GRAPH);
    if (g) {
        for (size_t i = 0; i < g->n; i++) {
            handle_del(g->nodes[i]);
            free(g->nodes[i]);
        }
        free(g->nodes);
        handle_del(g);
        free(g);
    }
    pthread_mutex_unlock(&g_lock);
    return g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) { SIM_API(cuGraphDestroy, graph_destroy(hGraph)); }
SIM_EXPORT(cuGraphDestroy)

static CUresult graph_instantiate(CUgraphExec *out, CUgraph h, unsigned long long flags)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned long long)(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
                                     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_graph *g = handle_get(h, OBJ_GRAPH);
    CUresult rc = g ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (g) {
        struct sim_gexec *x = calloc(1, sizeof *x);
        if (!x)
            abort();
        x->id = ++g_exec_next;
        x->graph_id = g->id;
        x->n = g->n;
        x->nodes = calloc(g->n ? g->n : 1, sizeof *x->nodes);
        if (!x->nodes)
            abort();
        for (size_t i = 0; i < g->n; i++)
            x->nodes[i] = *g->nodes[i];
        handle_add(x, OBJ_GRAPHEXEC, x);
        *out = (CUgraphExec)x;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    SIM_API(cuGraphInstantiateWithFlags, graph_instantiate(phGraphExec, hGraph, flags));
}
SIM_EXPORT(cuGraphInstantiateWithFlags)

static CUresult graph_instantiate_log(CUgraphExec *out, CUgraph h, CUgraphNode *err, char *log, size_t logsz)
{
    if (err)
        *err = NULL;
    if (log && logsz)
        log[0] = 0;
    return graph_instantiate(out, h, 0);
}
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer,
                                    size_t bufferSize)
{
    SIM_API(cuGraphInstantiate, graph_instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize));
}
SIM_EXPORT(cuGraphInstantiate)
CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                       char *logBuffer, size_t bufferSize)
{
    SIM_API(cuGraphInstantiate_v2, graph_instantiate_log(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize));
}
SIM_EXPORT(cuGraphInstantiate_v2)

static CUresult graph_instantiate_params(CUgraphExec *out, CUgraph h, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = graph_instantiate(out, h, p->flags);
    p->hErrNode_out = NULL;
    p->result_out = rc ? CUDA_GRAPH_INSTANTIATE_ERROR : CUDA_GRAPH_INSTANTIATE_SUCCESS;
    return rc;
}
CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    SIM_API(cuGraphInstantiateWithParams, graph_instantiate_params(phGraphExec, hGraph, instantiateParams));
}
SIM_EXPORT(cuGraphInstantiateWithParams)
CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    SIM_API(cuGraphInstantiateWithParams_ptsz, graph_instantiate_params(phGraphExec, hGraph, instantiateParams));
}
SIM_EXPORT(cuGraphInstantiateWithParams_ptsz)

static CUresult graph_exec_destroy(CUgraphExec h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_gexec *x = handle_get(h, OBJ_GRAPHEXEC);
    if (x) {
        handle_del(x);
        free(x->nodes);
        free(x);
    }
    pthread_mutex_unlock(&g_lock);
    return x ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) { SIM_API(cuGraphExecDestroy, graph_exec_destroy(hGraphExec)); }
SIM_EXPORT(cuGraphExecDestroy)

static CUresult graph_launch(CUgraphExec h, CUstream hs, int ptsz)
{
    pthread_mutex_lock(&g_lock);
    struct sim_gexec *x = handle_get(h, OBJ_GRAPHEXEC);
    struct sim_stream *s;
    CUresult rc = x ? stream_resolve(hs, ptsz, &s) : CUDA_ERROR_INVALID_VALUE; /* documented */
    /* validate every node first: a launch either enqueues all of its kernels or none */
    for (size_t i = 0; !rc && i < x->n; i++)
        if (!x->nodes[i].empty && (!x->nodes[i].ctx->alive || !resolve_func(x->nodes[i].f, x->nodes[i].ctx)))
            rc = CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; !rc && i < x->n; i++) {
        const struct sim_gnode *nd = &x->nodes[i];
        if (nd->empty)
            continue;
        struct sim_func *f = resolve_func(nd->f, nd->ctx);
        struct sim_work w = {.kind = GTSIM_ACT_KERNEL, .dur = func_duration(f), .name = f->name, .smem = nd->smem,
                             .graph_id = x->graph_id, .graph_exec_id = x->id, .node_id = nd->id};
        memcpy(w.grid, nd->grid, sizeof w.grid);
        memcpy(w.block, nd->block, sizeof w.block);
        work_enqueue(s, hs, &w);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) { SIM_API(cuGraphLaunch, graph_launch(hGraphExec, hStream, 0)); }
SIM_EXPORT(cuGraphLaunch)
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    SIM_API(cuGraphLaunch_ptsz, graph_launch(hGraphExec, hStream, 1));
}
SIM_EXPORT(cuGraphLaunch_ptsz)
