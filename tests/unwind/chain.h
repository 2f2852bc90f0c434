/* unit_unwind's call-chain steps (chain.c, one set per compiler variant; cxx.cc; the table). */
#ifndef UNW_CHAIN_H
#define UNW_CHAIN_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UNW_NSTEPS 17 /* 4 variants x 4 kinds + the C++ one */
typedef int unw_step_fn(const uint8_t *s, int i, int n);
extern unw_step_fn *unw_steps[UNW_NSTEPS];
int unw_leaf(void);

#define UNW_DECLARE(v)                                                                             \
    int plain_##v(const uint8_t *, int, int);                                                      \
    int dyn_##v(const uint8_t *, int, int);                                                        \
    int vla_##v(const uint8_t *, int, int);                                                        \
    int regs_##v(const uint8_t *, int, int);
UNW_DECLARE(o0)
UNW_DECLARE(o1)
UNW_DECLARE(o2)
UNW_DECLARE(o2fp)

/* C++ (cxx.cc): throws through inlined frames and unwinds in a catch block and in a destructor
 * run by the exception's unwinding. */
int cxx_step(const uint8_t *s, int i, int n);

#ifdef __cplusplus
}
#endif
#endif
