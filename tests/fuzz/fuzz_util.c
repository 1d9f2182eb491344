#include "fuzz_util.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FUZZ FINDING: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

uint8_t fuzz_byte(fuzz_reader *r)
{
    return r->pos < r->size ? r->data[r->pos++] : 0;
}

uint32_t fuzz_u32(fuzz_reader *r)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++)
        v |= (uint32_t)fuzz_byte(r) << (8 * k);
    return v;
}

uint64_t fuzz_u64(fuzz_reader *r)
{
    return (uint64_t)fuzz_u32(r) | (uint64_t)fuzz_u32(r) << 32;
}

int fuzz_left(const fuzz_reader *r)
{
    return r->pos < r->size;
}

static char scratch[4096];
static int scratch_made;

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(path);
    return 0;
}

static int remove_below(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    return ftw->level == 0 ? 0 : remove_entry(path, st, type, ftw);
}

static void remove_scratch(void)
{
    if (scratch_made)
        nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_scratch_dir(void)
{
    if (scratch_made)
        return scratch;
    /* In memory where there is a tmpfs: the importer's target writes (and
     * the model writer syncs) a dozen files an input. */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(scratch, sizeof scratch, "%s/mlff-fuzz-XXXXXX", tmp);
    if (!mkdtemp(scratch))
        return NULL;
    scratch_made = 1;
    atexit(remove_scratch);
    return scratch;
}

void fuzz_scratch_clear(void)
{
    if (scratch_made)
        nftw(scratch, remove_below, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_path(const char *name)
{
    static char path[8192];
    snprintf(path, sizeof path, "%s/%s", fuzz_scratch_dir(), name);
    return path;
}

int fuzz_write_file(const char *name, const void *data, size_t size)
{
    if (!fuzz_scratch_dir())
        return -1;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    for (char *slash = strchr(path + strlen(scratch) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            *slash = '/';
            return -1;
        }
        *slash = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    const int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok ? 0 : -1;
}
