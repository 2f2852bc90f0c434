/* C++ demangling of kernel and function names from the trace (demangle.c says how it is bounded). */
#ifndef GA_DEMANGLE_H
#define GA_DEMANGLE_H

/* A malloc'd demangled C++ name, or NULL when `name` is not a mangled one (or one whose
 * demangling would be too big or slow: those stay mangled). */
char *ga_demangle(const char *name);
/* Starts a new report's time budget for the names demangled in a child process. */
void ga_demangle_reset(void);

#endif
