/* cli.h - the subcommands; each returns the process exit code
 * (check, events, summary: 0 everything intact, 1 some input damaged or
 * unreadable; verdict: 0 clean, 1 any red flag). */
#ifndef DIAL9_DECODER_CLI_H
#define DIAL9_DECODER_CLI_H

#include "verdict.h"

int d9_cmd_check(char *const *paths, int npaths, int verbose);
int d9_cmd_events(char *const *paths, int npaths, int json);
int d9_cmd_summary(char *const *paths, int npaths, int json);
int d9_cmd_verdict(char *const *paths, int npaths, int json, const struct d9_limits *lim);
/* export: argv = the options and paths after "export" (exit 2 usage error). */
int d9_cmd_export(int argc, char **argv);
/* report: argv = the options and paths after "report" (exit 2 usage error). */
int d9_cmd_report(int argc, char **argv);
/* argv[*i] as a verdict threshold option ("--name X" or "--name=X") into
 * *lim (verdict_opts.c; shared by verdict and report): 1 consumed (*i moved past
 * its value), 0 not one, 2 usage error (reported on stderr). */
int d9_limit_option(int argc, char **argv, int *i, struct d9_limits *lim);

#endif
