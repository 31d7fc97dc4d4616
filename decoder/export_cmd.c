/* export_cmd.c - `dial9-decode export`: options, inputs, and the format
 * chosen; the walk itself is export.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
#include "export.h"
#include "model.h"
#include "timearg.h"
#include "verdict.h" /* d9_parse_count */

static int usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "dial9-decode export: %s%s\ntry 'dial9-decode --help'\n", what, arg);
    return 2;
}

/* "--name V", "--name=V" (or "-o V"): 1 and *v set, 0 not this option. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **v)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) || (a[n] && a[n] != '='))
        return 0;
    *v = a[n] ? a + n + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    return 1;
}

struct cmd {
    const char *format, *out;
    const char *from, *to; /* as given: resolved once the inputs are read (timearg.h) */
    struct d9_export_opts o;
    uint32_t *tids;
    char **paths;
    int npaths;
};

/* Options into c (argv is compacted: paths stay). 0 ok, 2 usage error. */
static int parse(int argc, char **argv, struct cmd *c)
{
    int done = 0;
    c->o.to = UINT64_MAX;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        uint64_t n;
        if (done || a[0] != '-' || a[1] == 0) {
            c->paths[c->npaths++] = argv[i];
        } else if (!strcmp(a, "--")) {
            done = 1;
        } else if (opt_value(argc, argv, &i, "--format", &v)) {
            if (!v || (strcmp(v, "chrome") && strcmp(v, "perfetto") && strcmp(v, "dial9")))
                return usage_error("--format: chrome, perfetto or dial9, not: ", v ? v : "(missing)");
            c->format = v;
        } else if (opt_value(argc, argv, &i, "-o", &v) || opt_value(argc, argv, &i, "--output", &v)) {
            if (!v || !*v)
                return usage_error("missing file for ", a);
            c->out = v;
        } else if (opt_value(argc, argv, &i, "--from", &v) || opt_value(argc, argv, &i, "--to", &v)) {
            struct d9_timearg t;
            if (!v || d9_timearg_parse(v, &t) < 0)
                return usage_error("not ns since the trace start nor a UTC time (YYYY-MM-DDTHH:MM:SS[.F][Z], "
                                   "HH:MM:SS[.F][Z]): ", v ? v : "(missing)");
            *(a[2] == 'f' ? &c->from : &c->to) = v;
        } else if (opt_value(argc, argv, &i, "--tid", &v)) {
            if (!v || d9_parse_count(v, &n) < 0 || n == 0 || n > UINT32_MAX)
                return usage_error("--tid: not a thread id: ", v ? v : "(missing)");
            c->tids[c->o.ntids++] = (uint32_t)n;
        } else {
            return usage_error("unknown option: ", a);
        }
    }
    if (c->npaths == 0)
        return usage_error("no PATH given", "");
    if (strcmp(c->format, "chrome") && !c->out && isatty(STDOUT_FILENO))
        return usage_error("this format is binary: give -o FILE (or redirect stdout): --format ", c->format);
    return 0;
}

/* --from/--to into c->o, against the inputs' trace start and anchor. 0, or
 * -1 (reported: a usage error). */
static int window(struct cmd *c, const struct d9_model *m, const struct d9_summary *s)
{
    char err[160];
    struct d9_anchor a = d9_model_anchor(m);
    if (d9_window_resolve(c->from, c->to, &a, d9_trace_start(s), &c->o.from, &c->o.to, err, sizeof(err)) < 0) {
        usage_error(err, "");
        return -1;
    }
    return 0;
}

int d9_cmd_export(int argc, char **argv)
{
    struct cmd c = {.format = "perfetto", .paths = argv};
    c.tids = malloc(((size_t)argc + 1) * sizeof(*c.tids));
    if (!c.tids)
        return usage_error("out of memory", "");
    c.o.tids = c.tids;
    int rc = parse(argc, argv, &c);
    if (rc) {
        free(c.tids);
        return rc;
    }
    struct d9_model m = {0};
    struct d9_summary s = {0};
    int bad = 0, chrome = !strcmp(c.format, "chrome"), dial9 = !strcmp(c.format, "dial9");
    FILE *out = c.out && strcmp(c.out, "-") ? fopen(c.out, "wb") : stdout;
    const struct d9_export_ops *ops = NULL;
    void *ctx = NULL;
    if (!out) {
        fprintf(stderr, "dial9-decode export: %s: %s\n", c.out, strerror(errno));
        rc = 1;
    } else if (d9_load(&m, c.paths, c.npaths, &bad) < 0 || d9_export_analyse(&m, &s) < 0) {
        fprintf(stderr, "dial9-decode export: out of memory\n");
        rc = 1;
    } else if (window(&c, &m, &s) < 0) {
        rc = 2;
    } else if (!(ctx = chrome  ? d9_chrome_new(out, &ops)
                       : dial9 ? d9_dial9_new(out, &ops)
                               : d9_perfetto_new(out, &ops)) ||
               d9_export_walk(&m, &s, &c.o, ops, ctx) < 0) {
        fprintf(stderr, "dial9-decode export: out of memory\n");
        rc = 1;
    }
    int werr = ctx && (chrome ? d9_chrome_free(ctx) : dial9 ? d9_dial9_free(ctx) : d9_perfetto_free(ctx)) < 0;
    if (out && out != stdout && fclose(out) != 0)
        werr = 1;
    if (werr) {
        fprintf(stderr, "dial9-decode export: %s: write error\n", c.out && out != stdout ? c.out : "stdout");
        rc = 1;
    }
    d9_summary_free(&s);
    d9_model_free(&m);
    free(c.tids);
    return rc ? rc : bad ? 1 : 0;
}
