/*
 * The fuzz targets without libFuzzer (any compiler): every file named on
 * the command line, or in a directory named there, goes once through
 * LLVMFuzzerTestOneInput. The normal test suite runs each target so over
 * its corpus and the inputs the fuzzers found (tests/fuzz/README.md): a
 * finding aborts, which fails the test. Arguments that start with "--" are
 * the target's own options (LLVMFuzzerInitialize reads them; libFuzzer
 * leaves them to the target too).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_util.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 0;
    }
    size_t size = 0, cap = 4096;
    uint8_t *data = malloc(cap);
    size_t n;
    while (data && (n = fread(data + size, 1, cap - size, f)) > 0) {
        size += n;
        if (size == cap) {
            uint8_t *more = realloc(data, cap *= 2);
            if (!more)
                free(data);
            data = more;
        }
    }
    fclose(f);
    if (!data) {
        fprintf(stderr, "out of memory reading %s\n", path);
        return 0;
    }
    /* A copy of exactly its size, as libFuzzer gives: ASan sees a read past it. */
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact) {
        free(data);
        return 0;
    }
    memcpy(exact, data, size);
    free(data);
    fprintf(stderr, "running %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    return 1;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of a directory in name order (the same order on every machine). */
static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open directory %s\n", dir);
        return 0;
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char **more = realloc(names, (n + 1) * sizeof *names);
        if (!more || !(more[n] = strdup(e->d_name))) {
            closedir(d);
            return 0;
        }
        names = more;
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, compare_names);
    int ok = 1;
    for (size_t k = 0; k < n; k++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            ok &= run_file(path);
            ++*count;
        }
        free(names[k]);
    }
    free(names);
    return ok;
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    int ok = 1, count = 0;
    for (int k = 1; k < argc; k++) {
        struct stat st;
        if (!strncmp(argv[k], "--", 2))
            continue;
        if (stat(argv[k], &st) != 0) {
            fprintf(stderr, "%s: not found\n", argv[k]);
            ok = 0;
        } else if (S_ISDIR(st.st_mode)) {
            ok &= run_dir(argv[k], &count);
        } else {
            ok &= run_file(argv[k]);
            count++;
        }
    }
    printf("%d inputs ran without a finding\n", count);
    return ok && count > 0 ? 0 : 1;
}
