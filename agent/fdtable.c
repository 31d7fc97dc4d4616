/* fdtable.c - the eventfd bitmap (see fdtable.h). */
#include "fdtable.h"

_Atomic uint64_t d9_fd_bits[D9_FD_MAX / 64];

void d9_fd_set(int fd, int is_eventfd)
{
    if ((unsigned)fd >= D9_FD_MAX)
        return;
    uint64_t bit = (uint64_t)1 << ((unsigned)fd % 64);
    _Atomic uint64_t *w = &d9_fd_bits[(unsigned)fd / 64];
    /* Skip the locked RMW when the bit already has the wanted value: close()
     * of an ordinary fd stays a plain load. */
    int cur = (atomic_load_explicit(w, memory_order_relaxed) & bit) != 0;
    if (cur == !!is_eventfd)
        return;
    if (is_eventfd)
        atomic_fetch_or_explicit(w, bit, memory_order_relaxed);
    else
        atomic_fetch_and_explicit(w, ~bit, memory_order_relaxed);
}

void d9_fd_clear_range(unsigned first, unsigned last)
{
    if (last >= D9_FD_MAX)
        last = D9_FD_MAX - 1;
    /* Word at a time: close_range(3, ~0U) must not walk a million bits. */
    for (unsigned fd = first; fd <= last;) {
        unsigned w = fd / 64, lo = fd % 64;
        unsigned hi = last / 64 == w ? last % 64 : 63;
        uint64_t mask = (~(uint64_t)0 >> (63 - hi)) & (~(uint64_t)0 << lo);
        if (atomic_load_explicit(&d9_fd_bits[w], memory_order_relaxed) & mask)
            atomic_fetch_and_explicit(&d9_fd_bits[w], ~mask, memory_order_relaxed);
        fd = (w + 1) * 64;
    }
}
