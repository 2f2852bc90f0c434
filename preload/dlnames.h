/* Names of many native addresses at once, as dladdr1 gives them one by one (stacks.c, at exit). */
#ifndef GT_DLNAMES_H
#define GT_DLNAMES_H

#include <stddef.h>
#include <stdint.h>

struct gt_dlname {
    uint64_t addr;    /* dli_saddr: the symbol's address */
    uint64_t size;    /* its st_size (0: not said) */
    const char *name; /* dli_sname; NULL: no symbol (addr and size 0) */
};

/* For ips[0..n) (sorted ascending, distinct), out[i] is what dladdr1(ips[i], &info, &sym,
 * RTLD_DL_SYMENT) says: dli_saddr, sym->st_size and dli_sname, or name NULL where it names no
 * symbol. dladdr1 searches an object's whole dynamic symbol table for each address (a third of a
 * millisecond in libtorch_cpu.so); here each object with addresses in it is searched once, in the
 * order and with the rules of glibc's dladdr (elf/dl-addr.c: the symbols its GNU hash table lists,
 * the nearest one below that covers the address, the first of equals). Objects without a GNU hash
 * table, and addresses in no object, are left to dladdr1 itself (*looked_up: how many). Returns
 * how many addresses were named. Allocates; takes the loader's lock (dl_iterate_phdr): not for a
 * signal handler, nor under a lock a dlopen may need. */
size_t gt_dlnames(const uint64_t *ips, size_t n, struct gt_dlname *out, size_t *looked_up);

#endif
