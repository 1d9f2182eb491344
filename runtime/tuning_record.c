/* Tuning records on disk (tuning_record.h). */
#include "tuning_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/common/kernel_cache.h"

static mlff_cache_entry_id entry_of(const mlff_device_info *info)
{
    const mlff_cache_entry_id id = {"tuning", info->name, info->identity, info->api, ""};
    return id;
}

/* A cache in dir for the record alone: a record is a measurement, kept
 * even where MLFF_CACHE=off leaves the kernels uncached. */
static int open_dir(const char *dir, mlff_kernel_cache *cache)
{
    mlff_kernel_cache_init(cache, dir && *dir ? dir : NULL, 0);
    return cache->enabled;
}

void mlff_tuning_record_path(const char *dir, const mlff_device_info *info, char *path, size_t size)
{
    mlff_kernel_cache cache;
    memset(&cache, 0, sizeof cache);
    snprintf(cache.dir, sizeof cache.dir, "%s", dir ? dir : "");
    const mlff_cache_entry_id id = entry_of(info);
    mlff_kernel_cache_path(&cache, &id, path, size);
}

int mlff_tuning_record_read(const char *dir, const mlff_device_info *info, mlff_tuning *t, unsigned char *changed,
                            char *note, size_t note_size)
{
    snprintf(note, note_size, "none");
    if (!dir || !*dir)
        return 0;
    char path[1200];
    mlff_tuning_record_path(dir, info, path, sizeof path);
    FILE *f = fopen(path, "rb"); /* most devices have none: not even the directory is made */
    if (!f)
        return 0;
    fclose(f);
    mlff_kernel_cache cache;
    size_t size = 0;
    const char *why = "the cache directory cannot be used";
    const mlff_cache_entry_id id = entry_of(info);
    char *text = open_dir(dir, &cache) ? mlff_kernel_cache_read(&cache, &id, &size, &why) : NULL;
    mlff_error err;
    mlff_error_clear(&err);
    if (text) {
        char *copy = realloc(text, size + 1);
        if (copy)
            copy[size] = 0;
        text = copy;
        mlff_tuning record = *t;
        unsigned char keys[MLFF_TUNING_MAX_KEYS] = {0};
        if (text && mlff_tuning_set(&record, text, path, keys, &err) == MLFF_OK) {
            *t = record;
            for (int k = 0; changed && k < mlff_n_tuning_keys; k++)
                changed[k] |= keys[k];
            snprintf(note, note_size, "%s", path);
            free(text);
            return 1;
        }
        why = text ? err.message : "out of memory";
    }
    if (why && !strncmp(why, "other key", 9))
        why = "it was measured for another device, driver or library version";
    snprintf(note, note_size, "%s ignored: %s", path, why ? why : "unreadable");
    fprintf(stderr, "mlff: the tuning record %s is ignored: %s (`mlff tune` measures a new one)\n", path,
            why ? why : "unreadable");
    free(text);
    return 0;
}

mlff_status mlff_tuning_record_write(const char *dir, const mlff_device_info *info, const char *text,
                                     mlff_error *err)
{
    mlff_kernel_cache cache;
    if (!open_dir(dir, &cache))
        return mlff_fail(err, MLFF_ERROR_IO, "cannot use the cache directory '%s' for the tuning record (set "
                         "MLFF_CACHE_DIR)", dir ? dir : "");
    const mlff_cache_entry_id id = entry_of(info);
    mlff_kernel_cache_store(&cache, &id, text, strlen(text));
    if (!cache.stores) {
        char path[1200];
        mlff_kernel_cache_path(&cache, &id, path, sizeof path);
        return mlff_fail(err, MLFF_ERROR_IO, "cannot write the tuning record %s", path);
    }
    return MLFF_OK;
}
