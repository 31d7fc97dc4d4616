/* files.c - path walking and file reading (see files.h). */
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

int d9_list_files(char *const *paths, int npaths, char ***out, size_t *nout, int *errors)
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
            fprintf(stderr, "dial9-decode: %s: %s\n", files[i], strerror(errno));
            (*errors)++;
            continue;
        }
        rc = fn(ctx, files[i], buf, len);
        d9_unmap_file(buf, len);
    }
    d9_free_files(files, n);
    return rc;
}
