/* cli.h - the subcommands; each returns the process exit code
 * (0 everything intact, 1 some input damaged or unreadable). */
#ifndef DIAL9_DECODER_CLI_H
#define DIAL9_DECODER_CLI_H

int d9_cmd_check(char *const *paths, int npaths, int verbose);
int d9_cmd_events(char *const *paths, int npaths, int json);
int d9_cmd_summary(char *const *paths, int npaths, int json);

#endif
