/*
 * The on-disk cache of compiled kernels (OpenCL program binaries now, SPIR-V
 * and pipeline caches next), shared by the GPU backends. Like CLBlast's
 * binary cache, but never trusting what it reads:
 *
 * - The key is an XXH3 of 128 bits (Debian's libxxhash) over everything
 *   that decides the binary: the final source, the build options, the
 *   device identity (name, vendor, driver version, API version), the cache
 *   format and the library version.
 * - The file name comes from the stable part of that (kind, device name,
 *   source, options), so a driver or library update finds the old file, sees
 *   that its key differs, deletes it and rebuilds, instead of leaving garbage.
 * - A file holds magic, format version, key, payload size and the payload's
 *   XXH3 (a checksum against damage, not against an attacker, who could
 *   write the directory anyway). Anything that does not match (corrupt,
 *   truncated, foreign key, other version) makes it a miss, and the file is
 *   deleted.
 * - Files are written to a temporary name and renamed, so concurrent
 *   processes never see half a file; the directory is created 0700.
 * - Only regular files of an entry's size at most are read (never a FIFO,
 *   device, directory or symbolic link at an entry's path, which is left
 *   there); the first file that cannot be read or written is reported on
 *   stderr, once per cache, with or without MLFF_LOG.
 *
 * Directory: $MLFF_CACHE_DIR, else $XDG_CACHE_HOME/mlff, else ~/.cache/mlff
 * (runtime/environment.c reads them). MLFF_CACHE=off disables it;
 * MLFF_LOG=cache prints hits, misses and stores.
 */
#ifndef MLFF_BACKENDS_KERNEL_CACHE_H
#define MLFF_BACKENDS_KERNEL_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* 2: XXH3 keys and checksums (1: SHA-256), so files of format 1 are rebuilt. */
#define MLFF_KERNEL_CACHE_FORMAT 2

typedef struct mlff_kernel_cache {
    int enabled;
    int log;
    char dir[1024];
    char marker[1200]; /* a file that says the device has entries here (mlff_kernel_cache_for_device), or "" */
    int marked;
    /* Counters (the context's statistics show them). */
    uint64_t hits, misses, rejects, stores;
    int warned; /* said on stderr that a file of it cannot be used (once) */
} mlff_kernel_cache;

/* What a cache entry is for: compared in full through the key. */
typedef struct mlff_cache_entry_id {
    const char *kind;     /* "opencl", "spirv", "vkpipeline" */
    const char *device;   /* device name */
    const char *identity; /* everything else about the device and driver */
    const char *options;  /* build options */
    const char *source;   /* final source text */
} mlff_cache_entry_id;

/* A cache in dir (created 0700; NULL: none); one that cannot be used is
 * disabled, with a line on stderr where `log` (MLFF_LOG=cache) asks. */
void mlff_kernel_cache_init(mlff_kernel_cache *cache, const char *dir, int log);
/* mkdir -p, what it creates 0700; 0 on success. */
int mlff_cache_make_dirs(const char *path);

/* The payload for id, malloc'ed, or NULL (miss: absent, disabled, or a bad
 * file, which is then deleted). */
void *mlff_kernel_cache_load(mlff_kernel_cache *cache, const mlff_cache_entry_id *id, size_t *size);

/* The same, without deleting a bad file: NULL with *why saying what is
 * wrong with it, or NULL for a file that is not there. */
void *mlff_kernel_cache_read(mlff_kernel_cache *cache, const mlff_cache_entry_id *id, size_t *size, const char **why);

/* Stores a payload; failures only disable caching of this entry (logged). */
void mlff_kernel_cache_store(mlff_kernel_cache *cache, const mlff_cache_entry_id *id,
                             const void *payload, size_t size);

/* Entries are for this device: the first store also leaves a file that
 * says so (mlff_kernel_cache_marker), for `mlff devices`. */
void mlff_kernel_cache_for_device(mlff_kernel_cache *cache, const char *api, const char *device, const char *identity);
/* Where that file of a device is in dir. */
void mlff_kernel_cache_marker(const char *dir, const char *api, const char *device, const char *identity, char *path,
                              size_t size);

/* The file an entry lives in (for tests and logs). */
void mlff_kernel_cache_path(const mlff_kernel_cache *cache, const mlff_cache_entry_id *id,
                            char *path, size_t size);

/* Throws away the entry (a binary that the driver refused). */
void mlff_kernel_cache_reject(mlff_kernel_cache *cache, const mlff_cache_entry_id *id);

#endif
