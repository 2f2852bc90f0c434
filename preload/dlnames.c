/* Names of many native addresses at once (dlnames.h), with dladdr's answers.
 *
 * glibc's dladdr (elf/dl-addr.c, determine_info) finds the object holding the address, then walks
 * every symbol its GNU hash table lists, bucket after bucket and chain after chain, and keeps the
 * symbol that is defined (a section other than SHN_ABS, or a value), not thread-local, whose name
 * lies in the string table and that covers the address (value <= address < value + size, or
 * address == value for a symbol of size 0 or undefined), with the highest value (the first met
 * among equals). That walk is the same for every address of an object: here it is made once per
 * object, each symbol marking the addresses it covers (a binary search in the sorted addresses),
 * so n addresses in an object of S symbols cost S log n instead of n S. */
#include "dlnames.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

struct walk {
    const uint64_t *ips;
    size_t n;
    struct gt_dlname *out;
    const ElfW(Sym) **best; /* per address: the symbol kept so far */
    uint32_t *owner;        /* per address: 1 + the index of the object holding it, 0 none yet,
                               BY_DLADDR1 where that object has no GNU hash table */
    uint32_t obj;           /* objects seen */
};
#define BY_DLADDR1 UINT32_MAX

/* The first index in ips[0..n) whose address is >= a. */
static size_t lower(const uint64_t *ips, size_t n, uint64_t a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ips[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A dynamic entry's address: the loader relocates them in place (glibc, x86-64 and most
 * targets), but not the vDSO's or those of targets whose dynamic section is read-only. */
static uintptr_t dyn_ptr(uintptr_t base, ElfW(Addr) p)
{
    return p < base ? base + p : p;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct walk *w = arg;
    uint32_t me = ++w->obj;
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    size_t first = w->n, last = 0, mine = 0; /* the object's addresses: indices first..last */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
        if (ph->p_type != PT_LOAD || !ph->p_memsz) continue;
        uint64_t lo = base + ph->p_vaddr, hi = lo + ph->p_memsz;
        for (size_t k = lower(w->ips, w->n, lo); k < w->n && w->ips[k] < hi; k++) {
            if (w->owner[k]) continue; /* the first object that holds it, as dladdr's lookup */
            w->owner[k] = me;
            mine++;
            if (k < first) first = k;
            if (k > last) last = k;
        }
    }
    if (!mine) return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu = NULL;
    size_t strsz = 0;
    for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_SYMTAB) symtab = (const ElfW(Sym) *)dyn_ptr(base, d->d_un.d_ptr);
        else if (d->d_tag == DT_STRTAB) strtab = (const char *)dyn_ptr(base, d->d_un.d_ptr);
        else if (d->d_tag == DT_STRSZ) strsz = d->d_un.d_val;
        else if (d->d_tag == DT_GNU_HASH) gnu = (const uint32_t *)dyn_ptr(base, d->d_un.d_ptr);
    }
    if (!symtab || !strtab || !gnu) { /* dladdr1 answers for this object */
        for (size_t k = first; k <= last; k++)
            if (w->owner[k] == me) w->owner[k] = BY_DLADDR1;
        return 0;
    }
    /* .gnu.hash: nbuckets, symoffset, bloom words, bloom shift; the bloom filter (address-sized
     * words), the buckets, then the chains (one word per symbol from symoffset on, bit 0: last) */
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], nbloom = gnu[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnu + 4) + nbloom);
    const uint32_t *chain = buckets + nbuckets;
    uint64_t lo_ip = w->ips[first], hi_ip = w->ips[last];
    for (uint32_t b = 0; b < nbuckets; b++) {
        uint32_t i = buckets[b];
        if (i == 0 || i < symoffset) continue;
        for (;; i++) {
            const ElfW(Sym) *s = &symtab[i];
            uint64_t v = base + s->st_value;
            /* covered: [v, v + size), or v alone where the size is 0 (dladdr's match also
             * takes v alone for an undefined symbol: inside its range when it has a size) */
            uint64_t end = v + (s->st_size ? s->st_size : 1);
            if ((s->st_shndx != SHN_UNDEF || s->st_value != 0) && s->st_shndx != SHN_ABS &&
                (s->st_info & 0xf) != STT_TLS && s->st_name < strsz && end > lo_ip &&
                v <= hi_ip) {
                for (size_t k = lower(w->ips, w->n, v); k < w->n && w->ips[k] < end; k++)
                    if (w->owner[k] == me && (!w->best[k] || w->best[k]->st_value < s->st_value))
                        w->best[k] = s;
            }
            if (chain[i - symoffset] & 1u) break;
        }
    }
    for (size_t k = first; k <= last; k++) {
        const ElfW(Sym) *s = w->best[k];
        if (w->owner[k] != me || !s) continue;
        w->out[k].addr = base + s->st_value;
        w->out[k].size = s->st_size;
        w->out[k].name = strtab + s->st_name;
    }
    return 0;
}

size_t gt_dlnames(const uint64_t *ips, size_t n, struct gt_dlname *out, size_t *looked_up)
{
    size_t named = 0, looked = 0;
    struct walk w = {.ips = ips, .n = n, .out = out};
    for (size_t k = 0; k < n; k++)
        out[k] = (struct gt_dlname){0, 0, NULL};
    w.best = calloc(n ? n : 1, sizeof(*w.best));
    w.owner = calloc(n ? n : 1, sizeof(*w.owner));
    int batch = w.best && w.owner;
    if (batch) dl_iterate_phdr(on_object, &w);
    for (size_t k = 0; k < n; k++) {
        if (batch && w.owner[k] && w.owner[k] != BY_DLADDR1) {
            named += out[k].name != NULL;
            continue;
        }
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        looked++;
        if (!dladdr1((void *)(uintptr_t)ips[k], &info, (void **)&sym, RTLD_DL_SYMENT) ||
            !info.dli_sname || !info.dli_saddr)
            continue;
        out[k].addr = (uint64_t)(uintptr_t)info.dli_saddr;
        out[k].size = sym ? sym->st_size : 0;
        out[k].name = info.dli_sname;
        named++;
    }
    free(w.best);
    free(w.owner);
    if (looked_up) *looked_up = looked;
    return named;
}
