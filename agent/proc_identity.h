/* proc_identity.h - which process this is among all that had its pid
 * (D9_TLV_PROCESS): its start time, pid namespace and boot. A pid is
 * reused, restarts after a reboot, and is 1 in every container; these three
 * tell such processes apart, and an exec keeps them. */
#ifndef DIAL9_PROC_IDENTITY_H
#define DIAL9_PROC_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "dial9_format.h"

/* Reads this process's identity: the start time from /proc/self/stat, the
 * pid namespace's inode (stat of /proc/self/ns/pid; 0 when unreadable) and
 * the boot id (/proc/sys/kernel/random/boot_id; "" when unreadable).
 * Returns 0, or -1 (errno) when the start time could not be read: then the
 * process has no identity to write. Three system calls for the start time,
 * one for the namespace, three for the boot id; not for the hot path, and
 * not while another thread of the process may close fds (the constructor,
 * fork's child handler). Not async-signal-safe (stdio-free, but it opens
 * files). */
int d9_proc_identity_read(struct d9_proc_identity *id);

/* Field 22 (starttime, clock ticks since boot) of a /proc/PID/stat line of
 * n bytes (NUL not needed). The command name (field 2) may hold spaces and
 * parentheses: fields are counted from its last ')'. 0, or -1 when the line
 * has no such field. */
int d9_stat_start_ticks(const char *line, size_t n, uint64_t *out);

/* The name a process's trace directory starts with: the last part of the
 * path it was started as (execve's, which the kernel passes as AT_EXECFN),
 * so `redis-server`, a symlink to redis-check-rdb, and `./server.py`, a
 * script run by python3.11, are named as their user started them. `exe`'s
 * (the resolved /proc/self/exe) when execfn is NULL or names no file of its
 * own: under /proc/ or /dev/fd/ (a program that execs /proc/self/exe, an
 * fexecve), empty, ending in '/', "." or "..", or all digits. Returns a
 * pointer into execfn or exe (never NULL; "unknown" when both fail); the
 * caller copies it before the strings go away. */
const char *d9_exec_name(const char *execfn, const char *exe);

#endif
