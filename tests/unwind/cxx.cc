// unit_unwind's C++ step: the chain goes on from a catch block (after a throw through inlined
// frames) and from a destructor run while an exception unwinds the stack.
#include <stdexcept>

#include "chain.h"

namespace
{

struct Guard {
    const uint8_t *s;
    int i, n, *out;
    ~Guard()
    {
        if (s[i - 1] & 1) *out = unw_steps[s[i] % UNW_NSTEPS](s, i + 1, n);
    }
};

template <typename T> inline T thrower(T v)
{
    if (v >= 0) throw std::runtime_error("unwind me");
    return v;
}

__attribute__((noinline)) int through_guard(const uint8_t *s, int i, int n, int *out)
{
    Guard g{s, i, n, out};
    return thrower(i) + 1;
}

} // namespace

extern "C" int cxx_step(const uint8_t *s, int i, int n)
{
    if (i == n) return unw_leaf();
    int from_dtor = -1;
    try {
        through_guard(s, i, n, &from_dtor);
    } catch (const std::exception &) {
        if (from_dtor >= 0) return from_dtor + 1;
        return unw_steps[s[i] % UNW_NSTEPS](s, i + 1, n) + 2;
    }
    return 0;
}
