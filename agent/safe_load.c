/* safe_load.c - the fixup table of safe_load.h, looked up from the agent's
 * SIGSEGV/SIGBUS handler. */
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "safe_load.h"

int d9_safe_load_armed;

#if defined(__x86_64__)
/* Each entry: the load, then its fixup, each as an offset from the field
 * itself (no relocation at load time). The linker defines the bounds. */
struct fixup {
    int32_t insn, fixup;
};
extern const struct fixup __start_d9_load_fixups[] __attribute__((visibility("hidden")));
extern const struct fixup __stop_d9_load_fixups[] __attribute__((visibility("hidden")));

int d9_safe_load_fixup(void *uc)
{
    greg_t *rip = &((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
    for (const struct fixup *f = __start_d9_load_fixups; f < __stop_d9_load_fixups; f++) {
        if ((uintptr_t)&f->insn + (intptr_t)f->insn == (uintptr_t)*rip) {
            *rip = (greg_t)((uintptr_t)&f->fixup + (intptr_t)f->fixup);
            return 1;
        }
    }
    return 0;
}
#else
int d9_safe_load_fixup(void *uc)
{
    (void)uc;
    return 0;
}
#endif
