/* Call-chain steps for unit_unwind, compiled once per variant (Makefile: -O0, -O1, -O2 with and
 * without frame pointers), each variant's functions suffixed with its name. A step calls the step
 * the script names next and uses the result afterwards, so no call is a tail call; the last step
 * calls unw_leaf(), which compares the unwinders. */
#include <alloca.h>
#include <stdint.h>

#include "chain.h"

#define CAT2(a, b) a##_##b
#define CAT(a, b)  CAT2(a, b)
#define F(name)    CAT(name, VARIANT)

static int next(const uint8_t *s, int i, int n)
{
    return i == n ? unw_leaf() : unw_steps[s[i] % UNW_NSTEPS](s, i + 1, n);
}

__attribute__((noinline)) int F(plain)(const uint8_t *s, int i, int n)
{
    volatile int local = s[i - 1];
    return next(s, i, n) + local;
}

/* alloca: a frame whose size is known only at run time (rbp-based CFA). */
__attribute__((noinline)) int F(dyn)(const uint8_t *s, int i, int n)
{
    volatile char *p = alloca(16 + 8 * (size_t)(s[i - 1] & 31));
    p[0] = (char)i;
    return next(s, i, n) + p[0];
}

/* A variable-length array and a large frame. */
__attribute__((noinline)) int F(vla)(const uint8_t *s, int i, int n)
{
    volatile char a[24 + (s[i - 1] & 63)];
    volatile char big[6000];
    a[0] = (char)i;
    big[s[i - 1]] = 1;
    return next(s, i, n) + a[0] + big[s[i - 1]];
}

/* Many live values across the call: callee-saved registers pushed, rbp among them. */
__attribute__((noinline)) int F(regs)(const uint8_t *s, int i, int n)
{
    int a = s[i - 1] * 3, b = a ^ 7, c = b + i, d = c * 5, e = d - a, f = e ^ b, g = f + 11;
    int r = next(s, i, n);
    return r + a + b + c + d + e + f + g;
}
