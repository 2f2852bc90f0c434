/* unit_unwind's dlopen'ed library, built twice (libunwa.so, libunwb.so) with the same code but
 * frames of different sizes: loaded one after the other at the same address, a rule cached for
 * the first and not dropped at its dlclose would unwind the second wrongly. */
__attribute__((noinline)) int unwlib_call(int (*cb)(void), int x)
{
    volatile char pad[FRAME];
    pad[x & 7] = (char)x;
    int r = cb();
    return r + pad[x & 7];
}
