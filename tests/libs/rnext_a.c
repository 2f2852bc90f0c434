/* RTLD_NEXT from a library: glibc answers relative to the *calling* object. */
#include <dlfcn.h>
int gt_probe_sym(void);
int gt_probe_sym(void) { return 1; }
void *rnext_a_lookup(const char *name);
/* Not a tail call: glibc must see this library as the caller. */
void *rnext_a_lookup(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    __asm__ volatile("" ::: "memory");
    return p;
}
