/* barrier.c - membarrier(2) for the agent's asymmetric barriers (barrier.h). */
#include "barrier.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>

#include "direct.h" /* d9_sys3 */

_Atomic int d9_barrier_ok;

void d9_barrier_init(void)
{
    if (d9_sys3(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
        atomic_store(&d9_barrier_ok, 1);
}

void d9_barrier_all(void)
{
    if (!atomic_load(&d9_barrier_ok) || d9_sys3(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        d9_sys3(SYS_nanosleep, (long)&(struct timespec){0, 1000000}, 0, 0);
}
