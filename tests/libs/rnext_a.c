/* RTLD_NEXT from a library: glibc answers relative to the *calling* object. */
#include <dlfcn.h>
int gt_probe_sym(void);
int gt_probe_sym(void) { return 1; }
void *rnext_a_lookup(const char *name);
void *rnext_a_lookup(const char *name) { return dlsym(RTLD_NEXT, name); }
