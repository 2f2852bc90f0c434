/* The generated stubs' one definition (see gen_stubs.py). */
#ifndef SRT_STUBS_H
#define SRT_STUBS_H

void srt_log_stub(const char *name);

#define SRT_NOT_SUPPORTED 801 /* cudaErrorNotSupported */
#define SRT_STUB(n)                                                                                \
    int n(void) __attribute__((weak));                                                             \
    int n(void)                                                                                    \
    {                                                                                              \
        static int logged;                                                                         \
        if (!__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED)) srt_log_stub(#n);                  \
        return SRT_NOT_SUPPORTED;                                                                  \
    }

#endif
