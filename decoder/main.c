/* main.c - dial9-decode command line: subcommand dispatch and options. */
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>

#include "cli.h"
#include "trc_read.h"

static const char usage[] =
    "usage: dial9-decode SUBCOMMAND [options] PATH...\n"
    "       dial9-decode verdict [--json] [THRESHOLD OPTIONS] PATH...\n"
    "       dial9-decode export [--format chrome|perfetto|dial9] [-o FILE]\n"
    "                           [--from T] [--to T] [--tid N]... PATH...\n"
    "       dial9-decode trc-dump FILE    (a TRC v1 file as JSON Lines)\n"
    "       dial9-decode report -o FILE [THRESHOLD OPTIONS] PATH...\n"
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
    "                    timestamps are CLOCK_MONOTONIC of the recording host;\n"
    "                    inputs of several boots are put on the earliest boot's\n"
    "                    clock by their realtime anchors (one stderr line a boot\n"
    "                    moved, with the seconds added).\n"
    "  summary PATH...   per process and thread: role guess (worker, blocking_pool,\n"
    "                    other), parks by call, busy % between the thread's first and\n"
    "                    last event, park and busy-period durations (p50/p99/max),\n"
    "                    wakes sent and received, zero-timeout polls, dropped events;\n"
    "                    then why it was slow: wake-to-run latency per woken thread\n"
    "                    (p50/p99/max) and the 10 worst wakes (waker, wakee, time);\n"
    "                    kernel scheduling delay and preemption per thread; slow\n"
    "                    syscalls by call (count, total, max) and the 10 worst;\n"
    "                    contended locks by address (waits, total, max); the 10\n"
    "                    longest busy periods (unpark -> next park) with the slow\n"
    "                    syscalls and preemption inside them; application events\n"
    "                    (dial9_event) per process and name: count, min, mean, max\n"
    "                    and sum of their values.\n"
    "  verdict PATH...   red flags, one line each (flag, worst figure > threshold,\n"
    "                    how many over, pid, tid, thread name), or \"clean\".\n"
    "                    Exit 0 clean, 1 any flag: usable as a CI gate. Flags:\n"
    "                      wake_latency   a wake-to-run latency (wake call -> the\n"
    "                                     wakee's return from its park) above\n"
    "                                     --wake-latency-ms, per woken thread\n"
    "                      sched_delay    a kernel run-queue wait reading above\n"
    "                                     --sched-delay-ms and above\n"
    "                                     --sched-delay-pct of the time the\n"
    "                                     reading covers, per thread (the\n"
    "                                     worst: furthest above its threshold;\n"
    "                                     window= the time it covers)\n"
    "                      slow_syscall   a recorded syscall above --slow-syscall-ms\n"
    "                      busy_period    running from an unpark (or thread start)\n"
    "                                     to the next park longer than --busy-ms\n"
    "                      lock_wait      a contended lock wait above --lock-wait-ms\n"
    "                      drops          events dropped in total above --max-drops\n"
    "                      damaged_input  an input damaged, truncated or unreadable\n"
    "  export PATH...    a timeline for trace viewers: a track per thread (named),\n"
    "                    grouped by process; slices for parks (named by the call;\n"
    "                    args timeout_ns, result) and busy periods (\"busy\");\n"
    "                    instants for slow syscalls, lock waits, drops, preemption,\n"
    "                    scheduling delay and application events (named by the\n"
    "                    program; arg value); a flow from each matched wake to\n"
    "                    the wakee's unpark; per process, counters of the busy\n"
    "                    (not parked) threads and of the dropped events so far.\n"
    "                    Times are ns since the trace start.\n"
    "                      --format perfetto  Perfetto protobuf (the default; for\n"
    "                                         ui.perfetto.dev, trace_processor);\n"
    "                                         needs -o FILE when stdout is a tty\n"
    "                      --format chrome    Chrome Trace Event JSON (ts, dur in\n"
    "                                         us; chrome://tracing, speedscope);\n"
    "                                         warns past 200 MB\n"
    "                      --format dial9     the Rust dial9 crate's TRC v1, for its viewer\n"
    "                                         (docs/EXPORT-DIAL9.md); check: trc-dump FILE\n"
    "                      -o FILE            write to FILE (default stdout)\n"
    "                      --from T, --to T   only this window, inclusive; slices\n"
    "                                         are cut to it. T is ns since the\n"
    "                                         trace start (digits only), or a UTC\n"
    "                                         time converted with the segments'\n"
    "                                         realtime anchor:\n"
    "                                           YYYY-MM-DDTHH:MM:SS[.F][ZONE]\n"
    "                                           HH:MM:SS[.F][ZONE] (the time of\n"
    "                                           day nearest the trace start)\n"
    "                                         F: 1-9 digits; ZONE: Z, +HH:MM,\n"
    "                                         -HH:MM (none: UTC), e.g.\n"
    "                                         2026-11-24T06:10:03.25Z, 06:10:03.25\n"
    "                      --tid N            only thread N (repeatable)\n"
    "  report PATH...    one self-contained HTML page (inline CSS and SVG, no\n"
    "                    script, nothing fetched; see docs/REPORT.md): verdict's\n"
    "                    red flags (at the verdict thresholds below), the summary\n"
    "                    tables, each thread's busy fraction per time bin, histograms\n"
    "                    (power-of-two bins) of park durations, busy periods and\n"
    "                    wake-to-run latency for all threads and per role, and the\n"
    "                    worst stalls (wakes, busy periods, slow syscalls) with\n"
    "                    their range in ns since the trace start and the export\n"
    "                    command for a window around each.\n"
    "                      -o FILE            write to FILE (\"-\": stdout); needed\n"
    "                                         when stdout is a tty\n"
    "                    Exit 0 written and inputs intact, 1 some input damaged\n"
    "                    (the page is still written) or a write error; red flags\n"
    "                    do not change it (use verdict as the gate).\n"
    "\n"
    "Options:\n"
    "  --json            events: JSON Lines, one object per event with ts (ns), pid,\n"
    "                    tid, thread, type and the type's fields (durations in ns,\n"
    "                    call as a name). A wake also has wakee (the tid it\n"
    "                    released, or null) and latency_ns (the wakee's unpark ts -\n"
    "                    the wake ts, at least 0; null when unmatched); so does a\n"
    "                    thread_exit (the join parked on that tid it released).\n"
    "                    Types of the slow-path records: slow_syscall (call, fd,\n"
    "                    fd_kind, duration_ns; ts = call start), lock_wait (call,\n"
    "                    target = lock address, wait_ns; ts = wait start),\n"
    "                    sched_delay (delay_ns = run-queue wait since the thread's\n"
    "                    previous reading, source, window_ns = time since just\n"
    "                    before that reading; ts = just after this one), preempt\n"
    "                    (duration_ns off CPU; ts = involuntary switch-out), app\n"
    "                    (name, value: dial9_event).\n"
    "                    summary: one JSON object (events, dropped, damaged_inputs,\n"
    "                    processes, threads, wake_latency_worst, slow_syscalls,\n"
    "                    slow_syscalls_worst, locks, long_busy_periods,\n"
    "                    app_events; durations in ns). See README.md for every\n"
    "                    field.\n"
    "                    verdict: {\"clean\":bool,\"flags\":[{flag, value, threshold,\n"
    "                    unit (\"ns\", \"events\" or \"inputs\"), pid, tid, name, count,\n"
    "                    call (slow_syscall, lock_wait), window_ns (sched_delay;\n"
    "                    null in traces without it)}]}; pid, tid, name are null\n"
    "                    for flags not about a thread\n"
    "                    Everywhere a pid is: when one pid names several processes\n"
    "                    (containers, pid reuse, a reboot; each header says which\n"
    "                    process), the n-th (n >= 2, inputs in path order) is\n"
    "                    \"PID#n\" in text and has \"pid_instance\": n in JSON.\n"
    "  -v, --verbose     check: list every problem of a segment, one per line\n"
    "  -h, --help        this text\n"
    "\n"
    "Verdict thresholds (X: decimal milliseconds, e.g. 0.5; N: a count):\n"
    "  --wake-latency-ms X  wake-to-run latency (default 5)\n"
    "  --sched-delay-ms X   scheduling delay reading (default 1)\n"
    "  --sched-delay-pct P  and that share of the time the reading covers, a\n"
    "                       whole percentage 0-100 (default 10; 0: any share)\n"
    "  --slow-syscall-ms X  slow syscall duration (default 10)\n"
    "  --busy-ms X          busy period without a park (default 50)\n"
    "  --lock-wait-ms X     lock wait (default 10)\n"
    "  --max-drops N        dropped events allowed (default 0)\n"
    "  A value may also be given as --option=VALUE.\n"
    "\n"
    "Damaged inputs never stop decoding: every block that verifies is used, and\n"
    "each damaged, truncated or unreadable input gets a one-line message on stderr\n"
    "(events, summary) or a report line (check).\n"
    "\n"
    "Exit status: 0 all inputs intact; 1 some input damaged, truncated, not a\n"
    "segment, unreadable, or a directory without segments (what could be decoded\n"
    "is still printed); 2 usage error. verdict: 0 clean, 1 any flag (damaged\n"
    "input is a flag), 2 usage error (unknown option, bad number).\n";

/* "dial9-decode: WHAT ARG" plus a pointer to --help; returns exit code 2. */
static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "dial9-decode: %s%s\ntry 'dial9-decode --help'\n", what, arg);
    return 2;
}

int main(int argc, char **argv)
{
    /* Only this thread writes stdout; the decoder thread (stream.c) would
     * otherwise make glibc lock it on every character. */
    __fsetlocking(stdout, FSETLOCKING_BYCALLER);
    if (argc < 2)
        return usage_error("missing subcommand", "");
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "trc-dump")) /* a TRC file (export --format dial9) as JSON Lines */
        return d9_cmd_trc_dump(argc - 2, argv + 2);
    if (!strcmp(cmd, "export") || !strcmp(cmd, "report")) { /* these parse their own options */
        for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
            if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
                fputs(usage, stdout);
                return 0;
            }
        return cmd[0] == 'e' ? d9_cmd_export(argc - 2, argv + 2) : d9_cmd_report(argc - 2, argv + 2);
    }
    int verdict = !strcmp(cmd, "verdict");
    if (strcmp(cmd, "check") && strcmp(cmd, "events") && strcmp(cmd, "summary") && !verdict)
        return usage_error("unknown subcommand: ", cmd);
    struct d9_limits lim = D9_LIMITS_DEFAULT;
    int json = 0, verbose = 0, npaths = 0, opts_done = 0;
    char **paths = argv + 2; /* compacted in place: options removed */
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int r;
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
        } else if (verdict && (r = d9_limit_option(argc, argv, &i, &lim)) != 0) {
            if (r == 2)
                return 2;
        } else
            return usage_error("unknown option for this subcommand: ", a);
    }
    if (npaths == 0)
        return usage_error("no PATH given to ", cmd);
    int rc = !strcmp(cmd, "check")    ? d9_cmd_check(paths, npaths, verbose)
           : !strcmp(cmd, "events")   ? d9_cmd_events(paths, npaths, json)
           : verdict                  ? d9_cmd_verdict(paths, npaths, json, &lim)
                                      : d9_cmd_summary(paths, npaths, json);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("dial9-decode: stdout");
        return 1;
    }
    return rc;
}
