/* log.h - the agent's only output to the host's stderr: one line per call,
 * prefixed "dial9: ", written with a single write(2) so lines from
 * different threads never interleave. Preserves errno. Pure: no agent
 * globals, so unit tests link it. Callers inside the agent hold d9_busy, so
 * the write passes straight through the interposers. */
#ifndef DIAL9_LOG_H
#define DIAL9_LOG_H

/* Silences d9_log_info (DIAL9_QUIET=1). Errors are always printed. */
void d9_log_set_quiet(int quiet);

/* Whether fd 2 is still the host's stderr: 0 once the host closed it (the
 * close hooks: its number may come back as a data file or a socket, which
 * a line would corrupt), 1 again when the host puts a file there with
 * dup, dup2 or dup3. While 0 nothing is written. */
void d9_log_stderr(int usable);

/* An error or warning: always printed. Lines longer than 512 bytes are cut. */
void d9_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Informational ("recording to ..."): silent when quiet. */
void d9_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
