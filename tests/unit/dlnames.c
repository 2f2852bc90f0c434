/* preload/dlnames.c against dladdr1 itself: for addresses spread over every object loaded here
 * (the test program, the C library, the loader, the vDSO, the analyzer's libraries, libstdc++:
 * their code every 61 bytes and every segment every 4093, each exported symbol's first byte, last
 * byte and the byte past it) and addresses in no object, gt_dlnames gives what dladdr1 gives,
 * address by address: the same name (the very string), symbol address and size, or no name where
 * it has none; and the objects' GNU hash tables answered almost all of them (dladdr1 only for the
 * rest). */
#include "../../preload/dlnames.c"

#include <stdio.h>
#include <string.h>

#include "check.h"

struct addrs {
    uint64_t *v;
    size_t n, cap;
};

static void add(struct addrs *a, uint64_t x)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 4096;
        a->v = realloc(a->v, a->cap * sizeof(*a->v));
        if (!a->v) abort();
    }
    a->v[a->n++] = x;
}

static int cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Every loaded object's segments, and its exported symbols' edges (read from its dynamic symbol
 * table the plain way: DT_SYMTAB up to DT_STRTAB, which follows it in every object here). */
static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct addrs *a = arg;
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
        if (ph->p_type != PT_LOAD) continue;
        uint64_t lo = base + ph->p_vaddr, hi = lo + ph->p_memsz;
        uint64_t step = (ph->p_flags & PF_X) ? 61 : 4093;
        for (uint64_t x = lo; x < hi; x += step)
            add(a, x);
        add(a, hi - 1);
    }
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_SYMTAB) sym = (const ElfW(Sym) *)dyn_ptr(base, d->d_un.d_ptr);
        if (d->d_tag == DT_STRTAB) str = (const char *)dyn_ptr(base, d->d_un.d_ptr);
    }
    if (sym && str && (const char *)sym < str)
        for (const ElfW(Sym) *s = sym; (const char *)(s + 1) <= str; s++) {
            if (s->st_shndx == SHN_UNDEF || !s->st_value) continue;
            uint64_t v = base + s->st_value;
            add(a, v);
            if (s->st_size) add(a, v + s->st_size - 1);
            add(a, v + s->st_size);
        }
    return 0;
}

int main(void)
{
    struct addrs a = {0};
    /* a C++ library too: weak and versioned symbols, aliases at one address (the first of equals) */
    void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    CHECK("libstdc++.so.6 loaded", cxx != NULL);
    dl_iterate_phdr(collect, &a);
    int local = 0;
    add(&a, (uint64_t)(uintptr_t)&local); /* the stack: no object */
    void *heap = malloc(64);
    add(&a, (uint64_t)(uintptr_t)heap);
    add(&a, 1);
    add(&a, 4096);
    qsort(a.v, a.n, sizeof(*a.v), cmp);
    size_t u = 0;
    for (size_t i = 0; i < a.n; i++)
        if (!u || a.v[u - 1] != a.v[i]) a.v[u++] = a.v[i];
    a.n = u;
    printf("     %zu addresses\n", a.n);

    struct gt_dlname *out = calloc(a.n, sizeof(*out));
    if (!out) abort();
    size_t looked = 0, named = gt_dlnames(a.v, a.n, out, &looked);
    size_t same = 0, want_named = 0, shown = 0;
    for (size_t i = 0; i < a.n; i++) {
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        struct gt_dlname want = {0, 0, NULL};
        if (dladdr1((void *)(uintptr_t)a.v[i], &info, (void **)&sym, RTLD_DL_SYMENT) &&
            info.dli_sname && info.dli_saddr)
            want = (struct gt_dlname){(uint64_t)(uintptr_t)info.dli_saddr, sym ? sym->st_size : 0,
                                      info.dli_sname};
        /* dli_saddr 0 (a symbol of value 0 in a fixed-address program) is no name to stacks.c */
        struct gt_dlname got = out[i];
        if (got.name && !got.addr) got = (struct gt_dlname){0, 0, NULL};
        want_named += want.name != NULL;
        if (got.name == want.name && got.addr == want.addr && got.size == want.size) {
            same++;
            continue;
        }
        if (shown++ < 5)
            printf("     %#" PRIx64 ": got %s at %#" PRIx64 " (%" PRIu64 "), dladdr1 %s at %#" PRIx64
                   " (%" PRIu64 ")\n",
                   a.v[i], got.name ? got.name : "-", got.addr, got.size,
                   want.name ? want.name : "-", want.addr, want.size);
    }
    printf("     %zu named by dladdr1, %zu by gt_dlnames, %zu of them by dladdr1 there\n",
           want_named, named, looked);
    CHECK("enough addresses (> 20,000) and names (> 2,000) to compare", a.n > 20000 &&
          want_named > 2000);
    CHECK_U64("addresses answered as dladdr1 answers them", same, a.n);
    CHECK("the hash tables answered all but a few (dladdr1 for < 1%)", looked * 100 < a.n);
    CHECK("no addresses: nothing named", gt_dlnames(a.v, 0, out, &looked) == 0 && looked == 0);
    free(out);
    free(a.v);
    free(heap);
    if (cxx) dlclose(cxx);
    return check_done();
}
