/* segment.h - the files: DIAL9_DIR/<exe>.<pid>/NNNNNN.d9.open while being
 * written, renamed NNNNNN.d9 when sealed; retention by total size.
 * Used by the writer thread only (and by init/fork handlers before it runs),
 * except d9_seg_close_begin / d9_seg_close_end / d9_seg_exec_pending,
 * which the interposers call from any thread.
 *
 * Faults: an error creating or writing a segment (disk full, directory
 * removed, ...) is logged once per outage; the segment layer then reports
 * itself failed for D9_SEG_RETRY_MS (the writer keeps the blocks in memory,
 * writer.c), and then lets the writer try again. The outage lasts until the
 * writer has written what it kept (d9_seg_resume). Only an unsafe directory
 * or a replaced process directory stops recording for good. */
#ifndef DIAL9_SEGMENT_H
#define DIAL9_SEGMENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define D9_SEG_RETRY_MS 1000 /* between attempts to write again after a fault */
#define D9_CMDLINE_MAX 4096  /* bytes of /proc/self/cmdline kept in headers */

/* Maps the segment header scratch (c->max_threads entries) and makes
 * DIAL9_DIR absolute; the writer thread, started next, creates it (mkdir
 * -p, 0700) and checks it is ours first thing (d9_seg_open_dir), while the
 * rest of the start goes on: on an NFS directory whose server is gone
 * those calls block for minutes. 0, or -1 after logging one line. */
int d9_seg_begin(const struct d9_config *c);
void d9_seg_open_dir(void); /* the writer's, before its first cycle */
/* After d9_seg_begin: waits for the writer's d9_seg_open_dir at most 2 s
 * (D9_DIR_WAIT_MS; not done by then, one line, and the program starts,
 * recording into memory); caches exe/cmdline/hostname. This process's
 * directory (0700) is created with its first segment. 0, or -1 after
 * logging one line. */
int d9_seg_init(void);
/* A process directory is <exe>.<pid>, or <exe>.<pid>.N (N = 2 ..
 * D9_PROC_NAMES) when that exists (pid reuse, an image before exec); never
 * one the agent did not make. */
#define D9_PROC_NAMES 99
const char *d9_seg_dir_path(void); /* the process directory (maybe not yet created) */
int d9_seg_dir_claimed(void);      /* 1 once this process made its directory */
/* The crash handler made the process directory (path: d9_seg_dir_path(),
 * or that with .N) while the writer was quiesced: it becomes this
 * process's, where later segments go (async-signal-safe). */
void d9_seg_dir_adopt(const char *path);
/* The crash handler's way into the process directory when its path is
 * closed to it (a switch from root: DIAL9_DIR is root's 0700): the
 * directory's fd, when it is open, not lost to a host close and still that
 * directory (fstat), else -1. Async-signal-safe. */
int d9_seg_proc_fd(void);

/* The process facts every header carries, read once by d9_seg_init (crash.c
 * builds its header from them too: one place reads /proc). */
struct d9_proc_facts {
    const char *exe, *hostname, *cmdline; /* cmdline: NUL-separated, cmdline_len bytes */
    size_t cmdline_len;
};
void d9_seg_facts(struct d9_proc_facts *f);
/* This process's D9_TLV_PROCESS value, read with its pid (at start, in a
 * fork's child); NULL when /proc could not be read. Async-signal-safe. */
const struct d9_proc_identity *d9_seg_identity(void);

/* Segments opened from now on carry D9_TLV_DUMP_REASON = reason (copied,
 * truncated to D9_SEG_REASON_MAX - 1 bytes); NULL clears it. Writer only. */
#define D9_SEG_REASON_MAX 128
void d9_seg_set_reason(const char *reason);

/* Opens the next segment and writes its header (THREADS = live slots).
 * 0 (also while suspended after a fault: then no segment is open), or -1
 * when recording stopped for good. */
int d9_seg_open(void);
/* Writes a whole block: 0 (written, or not while suspended: d9_seg_failed
 * says which; a block cut by a fault is never left in the file), or -1
 * when recording stopped for good. */
int d9_seg_write(const void *buf, size_t len);
void d9_seg_seal(void);                        /* rename to .d9, apply retention */
/* Before the program's switch to another user (hooks_cred.c): makes the
 * process directory if it is not there yet, while the writer may still
 * create it, and gives it and the open segment to uid:gid (fchown), so that
 * the writer, whose credentials change with the program's, still creates,
 * seals and removes segments in it. One line on stderr when it cannot. */
void d9_seg_hand_to(uid_t uid, gid_t gid);
/* 1 when the process directory was given to uid and not made again since
 * (a program that switches back and forth between root and one user hands
 * it over once). Any thread. */
int d9_seg_handed_to(uid_t uid);
int d9_seg_failed(void);         /* stopped, or suspended after a fault */
int d9_seg_stopped(void);        /* stopped for good */
/* The writer has caught up after an outage: 1 if one was in progress (the
 * next fault is logged again). */
int d9_seg_resume(void);
void d9_seg_retry_now(void);     /* at exit: try again without waiting */
int d9_seg_is_open(void);
uint64_t d9_seg_size(void);      /* bytes in the open segment */
uint64_t d9_seg_opened_ns(void); /* CLOCK_MONOTONIC ns when it was opened */

/* In a forked child: forget the parent's open file and directory without
 * touching them; the child's directory is created by the next d9_seg_open. */
void d9_seg_after_fork_child(void);

/* The host is about to close every fd in [first, last] (close and dup2/dup3
 * onto an fd: first == last; close_range, closefrom). d9_seg_close_end,
 * given what begin returned (the count that ends this close: the calling
 * thread's slot's, or a global one), follows the real call, on every path.
 * A thread with a slot takes no locked instruction and writes no shared
 * line (segment.c). If one is the agent's, it is marked
 * lost and begin waits until the writer no longer uses it (the end of its
 * file system call); the writer then reopens by path (a new segment) and
 * never touches that number again. A close never waits for the writer's
 * open: a number the open got that a close may have taken before it was
 * recorded is checked by name, and left alone when it names another file
 * (segment.c, open_own). Not for agent code (d9_busy): the writer would
 * wait on itself. */
uint32_t *d9_seg_close_begin(unsigned first, unsigned last);
void d9_seg_close_end(uint32_t *ended);

/* Writer: around an fd of its own that lives only between on (1) and off
 * (0), such as a /proc read of a thread's name (never a file system that
 * can hang). Host closes wait meanwhile, so a close loop cannot close that
 * number and hand it to a file of the host's before the writer reads and
 * closes it. */
void d9_seg_gate(int on);

/* An exec is about to replace the image (on = 1) or failed (on = 0): while
 * on, the writer seals the segment at the end of every cycle (its opening
 * time reads as 0, so the rotation check fires). */
void d9_seg_exec_pending(int on);

#endif
