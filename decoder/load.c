/* load.c - opens a model's inputs (see d9_load in model.h). */
#include "model.h"
#include "stream.h"

int d9_load(struct d9_model *m, char *const *paths, int npaths, int *bad)
{
    return d9_stream_open(&m->src, m, paths, npaths, bad);
}
