/* C++ demangling through libstdc++'s __cxa_demangle (the analyzer links -lstdc++). Kernel names
 * from CUPTI and from cuModuleGetFunction are Itanium-mangled ("_Z..."); nvcc keeps extern "C"
 * kernels plain. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* extern "C" in libstdc++ (cxxabi.h), so callable from C. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *ga_demangle(const char *name)
{
    int status = -1;
    if (!name || strncmp(name, "_Z", 2) != 0) return NULL;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (status == 0 && d) return d;
    free(d);
    return NULL;
}
