/* pidkey.h - process keys. One pid can name several processes in a trace:
 * a pid reused, the same service after a reboot, pid 1 of every container
 * writing to one DIAL9_DIR. Their segment headers differ in D9_TLV_PROCESS
 * (start time, pid namespace, boot id), and the decoder keeps them apart:
 * every pid field of the decoder (events, threads, processes) holds a key,
 * not a bare pid. The first process met with a pid has the pid as its key;
 * the n-th (n = 2 .. D9_PID_INSTANCES) has bit 31 set, n - 1 in bits 22-30
 * and the pid in bits 0-21 (Linux pids are below 2^22, PID_MAX_LIMIT).
 * Output shows the pid, and "#n" after it for the n-th process (text) or
 * "pid_instance": n (JSON). */
#ifndef DIAL9_DECODER_PIDKEY_H
#define DIAL9_DECODER_PIDKEY_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

#define D9_PID_BITS 22
#define D9_PID_INSTANCES 512 /* processes told apart per pid; later ones join the last */

/* The key of the n-th process (n >= 1) with this pid. Pids of 2^22 and up
 * (not Linux's) are their own key, n ignored. */
static inline uint32_t d9_pid_key(uint32_t pid, uint32_t n)
{
    if (n <= 1 || pid >> D9_PID_BITS)
        return pid;
    return 1u << 31 | (n - 1) << D9_PID_BITS | pid;
}

static inline uint32_t d9_pid_of(uint32_t key)
{
    return key >> 31 ? key & ((1u << D9_PID_BITS) - 1) : key;
}

/* n: 1 for the first process with its pid, 2 for the second, ... */
static inline uint32_t d9_pid_instance(uint32_t key)
{
    return key >> 31 ? ((key >> D9_PID_BITS) & (D9_PID_INSTANCES - 1)) + 1 : 1;
}

/* A positive 31-bit number, distinct per key: the pid of exports whose
 * viewers group by pid (Chrome JSON, Perfetto). The first process keeps its
 * pid. */
static inline uint32_t d9_pid_track(uint32_t key) { return key & 0x7fffffffu; }

/* "1234", or "1234#2" for the second process with pid 1234. */
static inline const char *d9_fmt_pid(char *buf, size_t n, uint32_t key)
{
    if (d9_pid_instance(key) > 1)
        snprintf(buf, n, "%" PRIu32 "#%" PRIu32, d9_pid_of(key), d9_pid_instance(key));
    else
        snprintf(buf, n, "%" PRIu32, key);
    return buf;
}
#define D9_PID_TEXT 24 /* bytes d9_fmt_pid needs */
/* d9_fmt_pid into a buffer that lives until the end of the enclosing block. */
#define D9_PID_STR(key) d9_fmt_pid((char[D9_PID_TEXT]){0}, D9_PID_TEXT, (key))

#endif
