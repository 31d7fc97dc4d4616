/* events.c - `dial9-decode events`: every event in time order, as text or
 * JSON Lines. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "model.h"

static const char *op_name(uint64_t op)
{
    static const char *const ops[] = {"?", "add", "del", "mod"}; /* EPOLL_CTL_ADD.. */
    return op < 4 ? ops[op] : "?";
}

static void type_name(char *buf, size_t n, unsigned type)
{
    if (type > 0 && type < D9_EV_TYPE_MAX)
        snprintf(buf, n, "%s", d9_type_name(type));
    else
        snprintf(buf, n, "unknown_%u", type);
}

/* Thread names as a text column: one token, printable. */
static void text_name(FILE *out, const char *s)
{
    if (!*s)
        s = "-";
    for (; *s; s++)
        fputc(*s > ' ' && *s < 0x7f ? *s : '_', out);
}

/* Calls whose target is a memory address (shown in hex in text); other
 * targets are file descriptors. */
static int address_call(uint64_t call)
{
    return call == D9_CALL_FUTEX || call == D9_CALL_COND_WAIT || call == D9_CALL_SEM_WAIT ||
           call == D9_CALL_COND_SIGNAL || call == D9_CALL_COND_BROADCAST || call == D9_CALL_SEM_POST;
}

/* Prints the fields: text as " name=value", JSON as ",\"name\":value". */
static void print_fields(FILE *out, const struct d9_event *e, int json)
{
    int first_bytes = 1;
    for (unsigned i = 0; i < e->nfields; i++) {
        const char *f = d9_field_name(e->type, i);
        uint64_t v = e->f[i];
        fprintf(out, json ? ",\"%s\":" : " %s=", f);
        if (e->kinds[i] == 'b' && first_bytes) {
            d9_json_str(out, e->name, e->name_len);
            first_bytes = 0;
        } else if (e->kinds[i] == 'b') /* only the first bytes field is kept: say how long */
            fprintf(out, json ? "{\"bytes\":%" PRIu64 "}" : "<%" PRIu64 " bytes>", v);
        else if (strcmp(f, "call") == 0)
            fprintf(out, json ? "\"%s\"" : "%s", d9_call_name((unsigned)v));
        else if (!json && strcmp(f, "op") == 0)
            fputs(op_name(v), out);
        else if (!json && strcmp(f, "target") == 0 && e->nfields && address_call(e->f[0]))
            fprintf(out, "0x%" PRIx64, v);
        else if (e->kinds[i] == 's')
            fprintf(out, "%" PRId64, (int64_t)v);
        else
            fprintf(out, "%" PRIu64, v);
    }
}

static void print_event(FILE *out, const struct d9_model *m, const struct d9_event *e, int json)
{
    const struct d9_thread *t = d9_model_thread(m, e->pid, e->tid);
    const char *name = t ? t->name : "";
    char tn[24];
    type_name(tn, sizeof(tn), e->type);
    if (json) {
        fprintf(out, "{\"ts\":%" PRIu64 ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"thread\":", e->ts, e->pid,
                e->tid);
        d9_json_str(out, name, strlen(name));
        fprintf(out, ",\"type\":\"%s\"", tn);
    } else {
        fprintf(out, "%" PRIu64 ".%09" PRIu64 " %" PRIu32 " %" PRIu32 " ", e->ts / 1000000000u,
                e->ts % 1000000000u, e->pid, e->tid);
        text_name(out, name);
        fprintf(out, " %s", tn);
    }
    print_fields(out, e, json);
    fputs(json ? "}\n" : "\n", out);
}

int d9_cmd_events(char *const *paths, int npaths, int json)
{
    struct d9_model m = {0};
    int bad = 0;
    if (d9_load(&m, paths, npaths, &bad) < 0) {
        fprintf(stderr, "dial9-decode: out of memory\n");
        d9_model_free(&m);
        return 1;
    }
    for (size_t i = 0; i < m.nev; i++)
        print_event(stdout, &m, &m.ev[i], json);
    d9_model_free(&m);
    return bad ? 1 : 0;
}
