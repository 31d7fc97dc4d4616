/* main.c - dial9-decode command line: subcommand dispatch and options. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: dial9-decode SUBCOMMAND [options] PATH...\n"
    "\n"
    "Reads dial9 segment files. A PATH is a segment file or a directory searched\n"
    "recursively for *.d9 (sealed) and *.d9.open (still being written, or left by a\n"
    "crashed process) segments. Events of all inputs are merged in time order.\n"
    "\n"
    "Subcommands:\n"
    "  check PATH...     verify every segment; one line each on stdout:\n"
    "                      OK path (N blocks, M events)\n"
    "                      DAMAGED path: block K at offset O: reason; recovered X blocks,\n"
    "                        Y events, skipped Z bytes\n"
    "                      TRUNCATED path: ... (the file ends inside a block)\n"
    "                    blocks are numbered from 0, offsets are bytes from the file start.\n"
    "  events PATH...    every event in time order, one per line:\n"
    "                      SECONDS.NANOSECONDS PID TID THREAD_NAME TYPE field=value...\n"
    "                    timestamps are CLOCK_MONOTONIC of the recording host.\n"
    "  summary PATH...   per process and thread: role guess (worker, blocking_pool,\n"
    "                    other), parks by call, busy %% between the thread's first and\n"
    "                    last event, park and busy-period durations (p50/p99/max),\n"
    "                    wakes sent and received, zero-timeout polls, dropped events.\n"
    "\n"
    "Options:\n"
    "  --json            events: JSON Lines, one object per event with ts (ns), pid,\n"
    "                    tid, thread, type and the type's fields (durations in ns,\n"
    "                    call as a name); summary: one JSON object (events, dropped,\n"
    "                    damaged_inputs, processes, threads; durations in ns)\n"
    "  -v, --verbose     check: list every problem of a segment, one per line\n"
    "  -h, --help        this text\n"
    "\n"
    "Damaged inputs never stop decoding: every block that verifies is used, and\n"
    "each damaged, truncated or unreadable input gets a one-line message on stderr\n"
    "(events, summary) or a report line (check).\n"
    "\n"
    "Exit status: 0 all inputs intact; 1 some input damaged, truncated, not a\n"
    "segment, unreadable, or a directory without segments (what could be decoded\n"
    "is still printed); 2 usage error.\n";

/* "dial9-decode: WHAT ARG" plus a pointer to --help; returns exit code 2. */
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "dial9-decode: %s%s\ntry 'dial9-decode --help'\n", what, arg);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("missing subcommand", "");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(cmd, "check") && strcmp(cmd, "events") && strcmp(cmd, "summary"))
        return usage_error("unknown subcommand: ", cmd);
    int json = 0, verbose = 0, npaths = 0, opts_done = 0;
    char **paths = argv + 2; /* compacted in place: options removed */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || a[1] == 0)
            paths[npaths++] = argv[i];
        else if (!strcmp(a, "--"))
            opts_done = 1;
        else if (!strcmp(a, "--json") && strcmp(cmd, "check"))
            json = 1;
        else if ((!strcmp(a, "-v") || !strcmp(a, "--verbose")) && !strcmp(cmd, "check"))
            verbose = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        } else
            return usage_error("unknown option for this subcommand: ", a);
    }
    if (npaths == 0)
        return usage_error("no PATH given to ", cmd);
    int rc = !strcmp(cmd, "check")    ? d9_cmd_check(paths, npaths, verbose)
           : !strcmp(cmd, "events")   ? d9_cmd_events(paths, npaths, json)
                                      : d9_cmd_summary(paths, npaths, json);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("dial9-decode: stdout");
        return 1;
    }
    return rc;
}
