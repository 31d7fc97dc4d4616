/* barrier.h - asymmetric memory barriers. A hook that runs on every call
 * orders a store before a load with a compiler barrier only; the rare side
 * (the writer opening one of its files, the first pthread_cancel) makes
 * every running thread of the process pass a full memory barrier with
 * membarrier(2) MEMBARRIER_CMD_PRIVATE_EXPEDITED (Linux 4.14) before it
 * loads what the hooks stored. Either the hook's load sees the rare side's
 * store, or the rare side's load sees the hook's. 0.5 us a barrier here
 * (an IPI to each CPU running a thread of the process). */
#ifndef DIAL9_BARRIER_H
#define DIAL9_BARRIER_H

#include <stdatomic.h>

#include "agent.h"

/* 1 once d9_barrier_init registered the process: the hooks may then rely
 * on d9_barrier_all. A fork child inherits the registration (the kernel
 * copies it with the mm); an exec drops it, and the new image's agent
 * registers again. */
extern _Atomic int d9_barrier_ok D9_HIDDEN;

/* Once, by the constructor, before the writer thread exists (with one
 * thread, registering costs the kernel no RCU grace period). Sets
 * d9_barrier_ok; a kernel without membarrier (ENOSYS) or a seccomp filter
 * that refuses it (EPERM) leaves it 0. */
void d9_barrier_init(void);

/* Every running thread of the process has passed a full memory barrier
 * when this returns. Without the registration (or should the call fail),
 * it sleeps 1 ms instead, long enough for any store to have landed.
 * Async-signal-safe; preserves errno. */
void d9_barrier_all(void);

#endif
