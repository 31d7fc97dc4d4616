/* files.c - path walking and file reading (see files.h). */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dial9_format.h"

/* A line about a path on stderr, counted in *errors when error is set;
 * nothing at all when errors is NULL (a second walk of the same paths). */
static void __attribute__((format(printf, 3, 4))) say(int *errors, int error, const char *fmt, ...)
{
    if (!errors)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("dial9-decode: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    *errors += error;
}

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
        say(errors, 1, "%s: %s", dir, strerror(errno));
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

int d9_map_file(const char *path, const uint8_t **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    void *p = NULL;
    int rc = fstat(fd, &st);
    if (rc == 0 && st.st_size > 0) {
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        rc = p == MAP_FAILED ? -1 : 0;
        if (rc == 0)
            madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
    }
    int saved = errno;
    close(fd);
    errno = saved;
    if (rc < 0)
        return -1;
    *buf = p ? p : (const uint8_t *)"";
    *len = p ? (size_t)st.st_size : 0;
    return 0;
}

void d9_unmap_file(const uint8_t *buf, size_t len)
{
    if (len)
        munmap((void *)buf, len);
}

void d9_drop_pages(const uint8_t *buf, size_t *done, size_t upto)
{
    size_t page = 4096, end = upto & ~(page - 1);
    if (end < *done + D9_DROP_STEP)
        return;
    madvise((void *)(buf + *done), end - *done, MADV_DONTNEED); /* file-backed: just leaves our RSS */
    *done = end;
}

struct file_id {
    dev_t dev;
    ino_t ino;
    size_t at; /* its place in the list */
};

static int by_file_id(const void *a, const void *b)
{
    const struct file_id *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* Keeps the first of the paths that name one file (a directory and a
 * segment in it, a path given twice, a link): read twice, its events would
 * count twice. Says which it left out. A path stat cannot look at stays
 * (its read reports it). 0, or -1 out of memory. */
static int drop_repeats(struct list *l, int *errors)
{
    if (l->n < 2)
        return 0;
    struct file_id *id = malloc(l->n * sizeof(*id));
    if (!id)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct stat st;
        if (stat(l->v[i], &st) == 0)
            id[n++] = (struct file_id){st.st_dev, st.st_ino, i};
    }
    qsort(id, n, sizeof(*id), by_file_id);
    for (size_t i = 1, first = 0; i < n; i++) { /* first: where the run of one file starts */
        if (id[i].dev != id[first].dev || id[i].ino != id[first].ino) {
            first = i;
            continue;
        }
        const char *again = l->v[id[i].at], *was = l->v[id[first].at];
        if (strcmp(again, was) == 0)
            say(errors, 0, "%s: named more than once; read once", again);
        else
            say(errors, 0, "%s: the same file as %s; read once", again, was);
        free(l->v[id[i].at]);
        l->v[id[i].at] = NULL;
    }
    free(id);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i])
            l->v[k++] = l->v[i];
    l->n = k;
    return 0;
}

int d9_list_files(char *const *paths, int npaths, char ***out, size_t *nout, int *errors)
{
    struct list files = {0};
    int rc = 0;
    for (int i = 0; rc == 0 && i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) < 0) {
            say(errors, 1, "%s: %s", paths[i], strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            size_t before = files.n;
            rc = walk_dir(paths[i], &files, errors);
            if (rc == 0 && files.n == before) {
                say(errors, 1, "%s: no dial9 segments (*%s, *%s) found", paths[i], D9_SEG_SUFFIX,
                    D9_SEG_OPEN_SUFFIX);
            }
        } else if (!S_ISREG(st.st_mode)) {
            say(errors, 1, "%s: not a regular file", paths[i]);
        } else {
            rc = list_add(&files, paths[i]); /* named explicitly: read whatever it is */
        }
    }
    if (rc == 0)
        rc = drop_repeats(&files, errors);
    if (rc < 0) {
        list_free(&files);
        return -1;
    }
    *out = files.v;
    *nout = files.n;
    return 0;
}

void d9_free_files(char **v, size_t n)
{
    struct list l = {v, n, n};
    list_free(&l);
}

int d9_for_each_file(char *const *paths, int npaths, d9_file_fn fn, void *ctx, int *errors)
{
    char **files;
    size_t n;
    if (d9_list_files(paths, npaths, &files, &n, errors) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const uint8_t *buf;
        size_t len;
        if (d9_map_file(files[i], &buf, &len) < 0) {
            if (errno == ENOMEM)
                rc = -1;
            say(errors, 1, "%s: %s", files[i], strerror(errno));
            continue;
        }
        rc = fn(ctx, files[i], buf, len);
        d9_unmap_file(buf, len);
    }
    d9_free_files(files, n);
    return rc;
}
