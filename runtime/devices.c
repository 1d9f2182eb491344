/* `mlff devices` (devices.h): every device of every backend, as its
 * backend describes it without opening it, with what the cache directory
 * holds for it and the tuning record a context on it would start from. */
#include "devices.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/common/kernel_cache.h"
#include "backends/registry.h"
#include "context.h"
#include "environment.h"

typedef struct text {
    char *s;
    size_t len, cap;
} text;

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !t->s)
        return;
    if (t->len + (size_t)n + 1 > t->cap) {
        const size_t cap = 2 * t->cap + (size_t)n + 1;
        char *s = realloc(t->s, cap);
        if (!s) {
            free(t->s);
            t->s = NULL;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static void put_bytes(text *t, const char *label, uint64_t bytes, const char *unknown)
{
    if (!bytes)
        put(t, "%s %s", label, unknown);
    else if (bytes >= ((uint64_t)1 << 30))
        put(t, "%s %.1f GiB", label, (double)bytes / (1 << 30));
    else
        put(t, "%s %.0f MiB", label, (double)bytes / (1 << 20));
}

static const char *vendor_name(uint32_t vendor)
{
    return vendor == MLFF_VENDOR_NVIDIA ? "NVIDIA"
           : vendor == MLFF_VENDOR_AMD  ? "AMD"
           : vendor == MLFF_VENDOR_INTEL ? "Intel"
                                         : NULL;
}

static void describe(text *t, const mlff_device_info *info, const mlff_environment *env, int records)
{
    const char *vendor = vendor_name(info->vendor);
    put(t, "%s %d: %s (%s", info->api, info->index, info->name, info->is_gpu ? "GPU" : "CPU");
    if (vendor)
        put(t, ", %s", vendor);
    else if (info->vendor)
        put(t, ", vendor %#x", info->vendor);
    put(t, "; %s)\n", info->driver);
    put_bytes(t, "  memory:", info->memory, "not told");
    put_bytes(t, ", free:", info->memory_free, "not told");
    put(t, "%s%s%s\n", info->memory_note[0] ? " (" : "", info->memory_note, info->memory_note[0] ? ")" : "");
    put_bytes(t, "  largest buffer:", info->largest_buffer, "not told");
    put(t, ", fp64: %s", info->has_fp64 ? "yes" : "no");
    if (info->subgroup_min && info->subgroup_min != info->subgroup_max)
        put(t, ", subgroups: %u to %u", info->subgroup_min, info->subgroup_max);
    else if (info->subgroup_min)
        put(t, ", subgroups: %u", info->subgroup_min);
    else
        put(t, ", subgroups: not told");
    if (info->compute_units)
        put(t, ", compute units: %u", info->compute_units);
    put(t, "\n");
    if (strcmp(info->api, "cpu") != 0) {
        char marker[1200];
        mlff_kernel_cache_marker(env->cache_dir, info->api, info->name, info->identity, marker, sizeof marker);
        struct stat st;
        put(t, "  kernel cache: %s%s%s\n",
            env->cache_off || !env->cache_dir[0] ? "off" : stat(marker, &st) == 0 ? "yes, in " : "none yet, in ",
            env->cache_off ? "" : env->cache_dir, env->cache_off ? " (MLFF_CACHE=off)" : "");
    }
    mlff_tuning_fill_result *r = malloc(sizeof *r);
    mlff_error err;
    mlff_error_clear(&err);
    if (!r)
        return;
    const mlff_status s = mlff_tuning_fill(info, env, NULL, 0, r, &err);
    put(t, "  tuning: the table's row for %s; measured record: %s\n", r->row, r->record);
    if (!r->measured)
        put(t, "          (`mlff tune --device %s%s` measures one)\n", info->api,
            info->index ? " --device-index N" : "");
    if (s != MLFF_OK)
        put(t, "  tuning: %s\n", err.message);
    if (records) {
        static const char *const origins[] = {"table", "record", "environment", "settings.tuning"};
        for (int k = 0; k < mlff_n_tuning_keys; k++) {
            char value[64];
            mlff_tuning_format_value(&r->tuning, &mlff_tuning_keys[k], value, sizeof value);
            put(t, "    %s=%s  (%s)\n", mlff_tuning_keys[k].key, value, origins[r->origin[k]]);
        }
    }
    free(r);
}

char *mlff_runtime_describe_devices(int records)
{
    mlff_environment env;
    mlff_environment_read(&env);
    text t = {malloc(4096), 0, 4096};
    if (t.s)
        t.s[0] = 0;
    int n;
    const mlff_backend_entry *backends = mlff_backend_list(&n);
    for (int k = n - 1; k >= 0; k--) { /* the CPU first, then the GPU APIs */
        const mlff_backend_entry *e = &backends[k];
        if (!e->iface) {
            put(&t, "%s: not built (%s)\n\n", e->name, e->not_built);
            continue;
        }
        mlff_device_info info;
        int found = 0;
        for (int d = 0; e->iface->device_info(d, &info); d++, found++) {
            describe(&t, &info, &env, records);
            put(&t, "\n");
        }
        if (!found)
            put(&t, "%s: no device\n\n", e->name);
    }
    return t.s;
}
