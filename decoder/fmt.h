/* fmt.h - human-readable durations and timestamps for the text outputs. */
#ifndef DIAL9_DECODER_FMT_H
#define DIAL9_DECODER_FMT_H

#include <stddef.h>
#include <stdint.h>

/* 950ns, 12.3us, 4.56ms, 1.23s. Returns buf. */
const char *d9_fmt_dur(char *buf, size_t n, uint64_t ns);
/* "12.5% of 50.2ms": part as a share of whole (ns), "-" when whole is 0.
 * Returns buf. */
const char *d9_fmt_share(char *buf, size_t n, uint64_t part, uint64_t whole);
/* SECONDS.NANOSECONDS. Returns buf. */
const char *d9_fmt_ts(char *buf, size_t n, uint64_t ns);
/* Thread name as one printable token ("-" when empty). Returns buf. */
const char *d9_fmt_name(char *buf, size_t n, const char *name);

#endif
