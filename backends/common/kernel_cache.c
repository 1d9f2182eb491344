#include "kernel_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "mlff.h"

static const char cache_magic[8] = {'M', 'L', 'F', 'F', 'K', 'C', 'A', 'C'};

/* XXH3's 128 bits: a key, a name, a checksum. */
#define DIGEST_SIZE 16
typedef struct digest {
    uint8_t bytes[DIGEST_SIZE];
} digest;

static digest digest_of(XXH128_hash_t h)
{
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    digest d;
    memcpy(d.bytes, c.digest, DIGEST_SIZE);
    return d;
}

/* magic, format, reserved, key, payload size, payload checksum */
typedef struct file_header {
    char magic[8];
    uint32_t format;
    uint32_t reserved;
    uint8_t key[DIGEST_SIZE];
    uint64_t payload_size;
    uint8_t payload_digest[DIGEST_SIZE];
} file_header;

static void hash_field(XXH3_state_t *h, const char *s)
{
    /* Length-prefixed, so that fields cannot run into each other. */
    uint64_t n = s ? strlen(s) : 0;
    XXH3_128bits_update(h, &n, sizeof n);
    if (n)
        XXH3_128bits_update(h, s, n);
}

/* The fields of an entry, length-prefixed; `all`: the key's (everything
 * that decides the binary), else the name's (not the driver or library
 * version: see the header). An all-zero digest when out of memory, which
 * no file matches. */
static digest entry_digest(const mlff_cache_entry_id *id, int all)
{
    digest d;
    memset(&d, 0, sizeof d);
    XXH3_state_t *h = XXH3_createState(); /* its size is not part of libxxhash's ABI */
    if (!h || XXH3_128bits_reset(h) != XXH_OK) {
        XXH3_freeState(h);
        return d;
    }
    if (all) {
        const uint32_t format = MLFF_KERNEL_CACHE_FORMAT;
        XXH3_128bits_update(h, &format, sizeof format);
        hash_field(h, MLFF_VERSION_STRING);
    }
    hash_field(h, id->kind);
    hash_field(h, id->device);
    if (all)
        hash_field(h, id->identity);
    hash_field(h, id->options);
    hash_field(h, id->source);
    d = digest_of(XXH3_128bits_digest(h));
    XXH3_freeState(h);
    return d;
}

static digest entry_key(const mlff_cache_entry_id *id)
{
    return entry_digest(id, 1);
}

static digest entry_name_digest(const mlff_cache_entry_id *id)
{
    return entry_digest(id, 0);
}

static digest payload_digest(const void *data, size_t n)
{
    return digest_of(XXH3_128bits(data, n));
}

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(const char *path)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

int mlff_cache_make_dirs(const char *path)
{
    return make_dirs(path);
}

void mlff_kernel_cache_init(mlff_kernel_cache *cache, const char *dir, int log)
{
    memset(cache, 0, sizeof *cache);
    cache->log = log;
    if (!dir) {
        if (cache->log)
            fprintf(stderr, "mlff cache: off (MLFF_CACHE=off, or no directory: MLFF_CACHE_DIR, XDG_CACHE_HOME and "
                            "HOME unset)\n");
        return;
    }
    const int n = snprintf(cache->dir, sizeof cache->dir, "%s", dir);
    if (n < 0 || n >= (int)sizeof cache->dir - 100 || make_dirs(cache->dir) != 0) {
        if (cache->log)
            fprintf(stderr, "mlff cache: off (no usable directory: %s)\n", dir);
        return;
    }
    cache->enabled = 1;
}

void mlff_kernel_cache_path(const mlff_kernel_cache *cache, const mlff_cache_entry_id *id,
                            char *path, size_t size)
{
    const digest d = entry_name_digest(id);
    char hex[2 * DIGEST_SIZE + 1];
    for (int k = 0; k < DIGEST_SIZE; k++)
        snprintf(hex + 2 * k, 3, "%02x", d.bytes[k]);
    snprintf(path, size, "%s/%s-%s.bin", cache->dir, id->kind, hex);
}

void mlff_kernel_cache_marker(const char *dir, const char *api, const char *device, const char *identity, char *path,
                              size_t size)
{
    mlff_kernel_cache c;
    memset(&c, 0, sizeof c);
    snprintf(c.dir, sizeof c.dir, "%s", dir);
    const mlff_cache_entry_id id = {"device", device, identity, api, ""};
    mlff_kernel_cache_path(&c, &id, path, size);
}

void mlff_kernel_cache_for_device(mlff_kernel_cache *cache, const char *api, const char *device, const char *identity)
{
    if (cache->enabled)
        mlff_kernel_cache_marker(cache->dir, api, device, identity, cache->marker, sizeof cache->marker);
}

/* The device's file, once a process (its contents name the device). */
static void mark_device(mlff_kernel_cache *cache)
{
    if (cache->marked || !cache->marker[0])
        return;
    cache->marked = 1;
    struct stat st;
    if (stat(cache->marker, &st) == 0)
        return;
    FILE *f = fopen(cache->marker, "w");
    if (f) {
        fprintf(f, "kernels of this device are in this directory\n");
        fclose(f);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* No program binary, SPIR-V module or pipeline cache comes near this: a
 * larger file at an entry's path is not one, and is not read. */
#define MOST_ENTRY_BYTES ((off_t)256 << 20)

/* Says once per cache, whether or not MLFF_LOG asks for it, that it cannot
 * be used: a user whose cache never works should know why every run
 * compiles again. */
static void cannot_use(mlff_kernel_cache *cache, const char *path, const char *why)
{
    if (cache->log || !cache->warned)
        fprintf(stderr, "mlff cache: cannot use %s (%s): kernels are compiled again\n", path, why);
    cache->warned = 1;
}

/*
 * The whole file, or NULL (*why says why when it is there but unusable).
 * Only a regular file, opened without waiting (a FIFO at the path would
 * block an open for reading until some writer came) and without following a
 * symbolic link, and only when its size is that of an entry at most.
 */
static void *read_file(const char *path, size_t *size, const char **why)
{
    *why = NULL;
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            *why = errno == ELOOP ? "a symbolic link" : strerror(errno);
        return NULL;
    }
    struct stat st;
    void *data = NULL;
    if (fstat(fd, &st) != 0)
        *why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        *why = S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : "not a regular file";
    else if (st.st_size > MOST_ENTRY_BYTES)
        *why = "larger than any cache entry";
    else if (!(data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1)))
        *why = "out of memory";
    size_t n = 0;
    while (data && n < (size_t)st.st_size) {
        const ssize_t got = read(fd, (char *)data + n, (size_t)st.st_size - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) { /* shrunk under us, or unreadable: a miss */
            free(data);
            data = NULL;
            break;
        }
        n += (size_t)got;
    }
    close(fd);
    if (data)
        *size = n;
    return data;
}

/* Why a file is not a valid entry for key, or NULL if it is. */
static const char *validate(const unsigned char *data, size_t size, const digest *key)
{
    file_header h;
    if (size < sizeof h)
        return "truncated header";
    memcpy(&h, data, sizeof h);
    if (memcmp(h.magic, cache_magic, sizeof cache_magic) != 0)
        return "not a cache file";
    if (h.format != MLFF_KERNEL_CACHE_FORMAT)
        return "other cache format";
    if (memcmp(h.key, key->bytes, DIGEST_SIZE) != 0)
        return "other key (driver, library or source changed)";
    if (h.payload_size != size - sizeof h)
        return "truncated or padded payload";
    const digest d = payload_digest(data + sizeof h, (size_t)h.payload_size);
    if (memcmp(d.bytes, h.payload_digest, DIGEST_SIZE) != 0)
        return "payload checksum mismatch";
    return NULL;
}

/* The entry's payload (malloc'ed), or NULL: *why then says why, NULL for
 * a file that is not there. A bad file is deleted where `delete_bad`. */
static void *load(mlff_kernel_cache *cache, const mlff_cache_entry_id *id, size_t *size, const char **why,
                  int delete_bad)
{
    *why = NULL;
    if (!cache->enabled)
        return NULL;
    const double t0 = now_ms();
    char path[1200];
    mlff_kernel_cache_path(cache, id, path, sizeof path);
    size_t file_size = 0;
    const char *unusable;
    unsigned char *data = read_file(path, &file_size, &unusable);
    if (!data) {
        cache->misses++;
        if (unusable) {
            cache->rejects++;
            /* A file too large to be an entry is garbage; anything else there
             * (a directory, a FIFO, a device) is left to its owner. */
            if (!strcmp(unusable, "larger than any cache entry"))
                unlink(path);
            cannot_use(cache, path, unusable);
        } else if (cache->log) {
            fprintf(stderr, "mlff cache: miss %s\n", path);
        }
        return NULL;
    }
    const digest key = entry_key(id);
    if ((*why = validate(data, file_size, &key))) {
        free(data);
        cache->misses++;
        cache->rejects++;
        if (delete_bad)
            unlink(path);
        if (cache->log)
            fprintf(stderr, "mlff cache: rejected %s (%s)%s\n", path, *why, delete_bad ? ", deleted" : "");
        return NULL;
    }
    const size_t n = file_size - sizeof(file_header);
    memmove(data, data + sizeof(file_header), n);
    cache->hits++;
    if (cache->log)
        fprintf(stderr, "mlff cache: hit %s (%zu bytes, %.1f ms)\n", path, n, now_ms() - t0);
    *size = n;
    return data;
}

void *mlff_kernel_cache_load(mlff_kernel_cache *cache, const mlff_cache_entry_id *id, size_t *size)
{
    const char *why;
    return load(cache, id, size, &why, 1);
}

void *mlff_kernel_cache_read(mlff_kernel_cache *cache, const mlff_cache_entry_id *id, size_t *size, const char **why)
{
    return load(cache, id, size, why, 0);
}

void mlff_kernel_cache_store(mlff_kernel_cache *cache, const mlff_cache_entry_id *id,
                             const void *payload, size_t size)
{
    if (!cache->enabled)
        return;
    char path[1200], tmp[1300];
    mlff_kernel_cache_path(cache, id, path, sizeof path);
    /* Unique per process and call: concurrent writers each rename a whole file. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(tmp, sizeof tmp, "%s.%ld.%ld.tmp", path, (long)getpid(), (long)ts.tv_nsec);
    file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, cache_magic, sizeof cache_magic);
    h.format = MLFF_KERNEL_CACHE_FORMAT;
    const digest key = entry_key(id), check = payload_digest(payload, size);
    memcpy(h.key, key.bytes, DIGEST_SIZE);
    h.payload_size = size;
    memcpy(h.payload_digest, check.bytes, DIGEST_SIZE);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    int ok = fd >= 0;
    if (ok) {
        FILE *f = fdopen(fd, "wb");
        ok = f && fwrite(&h, sizeof h, 1, f) == 1 && fwrite(payload, 1, size, f) == size;
        ok = (f ? fclose(f) == 0 : (close(fd), 0)) && ok;
    }
    int error = ok ? 0 : errno;
    const int renamed = ok && rename(tmp, path) == 0;
    if (ok && !renamed)
        error = errno;
    if (!renamed) {
        unlink(tmp);
        cannot_use(cache, path, error == EISDIR ? "a directory" : strerror(error));
    } else {
        cache->stores++;
        mark_device(cache);
        if (cache->log)
            fprintf(stderr, "mlff cache: stored %s (%zu bytes)\n", path, size);
    }
}

void mlff_kernel_cache_reject(mlff_kernel_cache *cache, const mlff_cache_entry_id *id)
{
    if (!cache->enabled)
        return;
    char path[1200];
    mlff_kernel_cache_path(cache, id, path, sizeof path);
    unlink(path);
    cache->rejects++;
    if (cache->log)
        fprintf(stderr, "mlff cache: the driver refused %s, deleted\n", path);
}
