/* lifecycle.h - vfork and exec (lifecycle.c). */
#ifndef DIAL9_LIFECYCLE_H
#define DIAL9_LIFECYCLE_H

#include "agent.h"

/* Non-zero in a vfork child (it shares the parent thread's TLS, and that
 * thread is suspended until the child execs or exits). The child also runs
 * with d9_busy raised, so it records nothing; the fd hooks check this flag
 * so it does not change the parent's fd table or segment fds either. */
extern D9_TLS int d9_in_vfork;

#endif
