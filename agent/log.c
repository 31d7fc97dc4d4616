/* log.c - one "dial9: ..." line on fd 2 per call (see log.h). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nocancel.h"

#define D9_LOG_PREFIX "dial9: "
#define D9_LOG_LINE_MAX 512 /* bytes, including prefix and newline */

static atomic_int quiet, stderr_gone;

void d9_log_set_quiet(int q) { atomic_store_explicit(&quiet, q != 0, memory_order_relaxed); }
void d9_log_stderr(int usable) { atomic_store_explicit(&stderr_gone, !usable, memory_order_relaxed); }

static void vlog(const char *fmt, va_list ap)
{
    if (atomic_load_explicit(&stderr_gone, memory_order_relaxed))
        return;
    int saved = errno;
    char line[D9_LOG_LINE_MAX];
    size_t pre = sizeof(D9_LOG_PREFIX) - 1;
    memcpy(line, D9_LOG_PREFIX, pre);
    int n = vsnprintf(line + pre, sizeof(line) - pre - 1, fmt, ap);
    size_t len = pre + (n < 0 ? 0 : (size_t)n);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2; /* truncated: keep room for the newline */
    line[len++] = '\n';
    int cancel = d9_cancel_off();
    ssize_t w = write(2, line, len);
    d9_cancel_restore(cancel);
    (void)w; /* nowhere left to report a failing stderr */
    errno = saved;
}

void d9_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void d9_log_info(const char *fmt, ...)
{
    if (atomic_load_explicit(&quiet, memory_order_relaxed))
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}
