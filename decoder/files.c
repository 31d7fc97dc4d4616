/* files.c - path walking and file reading (see files.h). */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dial9_format.h"

struct list {
    char **v;
    size_t n, cap;
};

static int list_add(struct list *l, const char *s)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(s)))
        return -1;
    l->n++;
    return 0;
}

static void list_free(struct list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int by_version(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* Appends the segments under dir (recursively, sorted per directory). */
static int walk_dir(const char *dir, struct list *out, int *errors)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "dial9-decode: %s: %s\n", dir, strerror(errno));
        (*errors)++;
        return 0;
    }
    struct list names = {0};
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = list_add(&names, e->d_name);
    closedir(d);
    if (names.n)
        qsort(names.v, names.n, sizeof(*names.v), by_version);
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        char *path;
        if (asprintf(&path, "%s/%s", dir, names.v[i]) < 0) {
            rc = -1;
            break;
        }
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) /* lstat: no symlink loops */
            rc = walk_dir(path, out, errors);
        else if (ends_with(path, D9_SEG_SUFFIX) || ends_with(path, D9_SEG_OPEN_SUFFIX))
            rc = list_add(out, path);
        free(path);
    }
    list_free(&names);
    return rc;
}

/* Reads a whole file; reads to EOF rather than trusting st_size, since an
 * open segment may still be growing. */
static int read_file(const char *path, uint8_t **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (!b)
            break;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                errno = ENOMEM;
                break;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b);
            b = NULL;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    if (!b)
        return -1;
    *buf = b;
    *len = n;
    return 0;
}

int d9_for_each_file(char *const *paths, int npaths, d9_file_fn fn, void *ctx, int *errors)
{
    struct list files = {0};
    int rc = 0;
    for (int i = 0; rc == 0 && i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) < 0) {
            fprintf(stderr, "dial9-decode: %s: %s\n", paths[i], strerror(errno));
            (*errors)++;
        } else if (S_ISDIR(st.st_mode)) {
            size_t before = files.n;
            rc = walk_dir(paths[i], &files, errors);
            if (rc == 0 && files.n == before) {
                fprintf(stderr, "dial9-decode: %s: no dial9 segments (*%s, *%s) found\n", paths[i],
                        D9_SEG_SUFFIX, D9_SEG_OPEN_SUFFIX);
                (*errors)++;
            }
        } else if (!S_ISREG(st.st_mode)) {
            fprintf(stderr, "dial9-decode: %s: not a regular file\n", paths[i]);
            (*errors)++;
        } else {
            rc = list_add(&files, paths[i]); /* named explicitly: read whatever it is */
        }
    }
    for (size_t i = 0; rc == 0 && i < files.n; i++) {
        uint8_t *buf;
        size_t len;
        if (read_file(files.v[i], &buf, &len) < 0) {
            if (errno == ENOMEM)
                rc = -1;
            fprintf(stderr, "dial9-decode: %s: %s\n", files.v[i], strerror(errno));
            (*errors)++;
            continue;
        }
        rc = fn(ctx, files.v[i], buf, len);
        free(buf);
    }
    list_free(&files);
    return rc;
}
