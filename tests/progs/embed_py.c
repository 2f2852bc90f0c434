/* Embeds Python the way an application with an optional Python plugin does: libpython is
 * dlopen'ed (RTLD_GLOBAL, for the extension modules) after start-up, so none is in the process
 * when the shim's constructor looks for one, and no stack capture needs to have seen it.
 * Usage: embed_py LIBPYTHON PYTHON SCRIPT [ARGS...]: runs SCRIPT as `PYTHON SCRIPT ARGS...` would
 * (Py_BytesMain with PYTHON as argv[0], from which the interpreter finds its prefix and a
 * virtualenv's pyvenv.cfg) and exits with its status. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: embed_py LIBPYTHON PYTHON SCRIPT [ARGS...]\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "embed_py: %s\n", dlerror());
        return 2;
    }
    int (*bytes_main)(int, char **) = (int (*)(int, char **))dlsym(h, "Py_BytesMain");
    if (!bytes_main) {
        fprintf(stderr, "embed_py: no Py_BytesMain in %s\n", argv[1]);
        return 2;
    }
    return bytes_main(argc - 2, argv + 2);
}
