/* Python frames for host call stacks (python.c). The CPython API is looked up at run time (never
 * linked); stacks.c asks for the frames of the calling thread, which python.c walks through the
 * API when the thread holds the GIL and by struct offsets when it does not. */
#ifndef GT_PYTHON_H
#define GT_PYTHON_H

#include <stdint.h>

struct gt_thread;

/* Looks for an interpreter already in the process (the python executable or a libpython it
 * links); from gt_stacks_configure, single-threaded. */
void gt_py_configure(void);
/* A newly seen object at `path` may be a libpython loaded later: look there too. Called by
 * stacks.c outside the loader's locks. */
void gt_py_module_loaded(const char *path);
/* Whether Python frames can be taken at all (an interpreter of a supported version was found). */
int gt_py_available(void);
/* Whether a native ip lies inside the interpreter's object. */
int gt_py_interp_ip(uint64_t ip);
/* From the cuInit hook: when the calling thread runs the initialized interpreter, asks the main
 * thread now for the atexit guard the walk by offsets waits for, so that the program's first
 * call made without the GIL (often its largest allocation: the weights) has its Python frames. */
void gt_py_early(void);
/* A forked child that traces into its own file: forget the code objects written to the parent's
 * (their references stay taken: a leak of the child's, never a use after free). */
void gt_py_forget(void);
/* The calling thread's Python frames, innermost first, as GT_PYFRAME_IP pseudo-ips in out (at
 * most max); new code objects are written to t first. Returns 0 (nothing done) unless the thread
 * runs an initialized main interpreter (holding its GIL, or not when the walk by offsets is on
 * and its atexit guard registered and not yet run: see python.c). Never takes the GIL or waits
 * for anything but python.c's own short table lock, never leaves a Python exception set or errno
 * changed. The first call asks the main thread (Py_AddPendingCall) to register that guard: the
 * program sees one more atexit callback. */
uint32_t gt_py_frames(struct gt_thread *t, uint64_t *out, uint32_t max);

#endif
