/* Device choice and the context's bookkeeping. */
#include "context.h"

#include "backends/registry.h"
#include "core/ds.h"
#include "environment.h"
#include "tuning_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mlff_status open_backend(mlff_context *ctx, const mlff_backend_iface *iface,
                                const mlff_backend_options *opts)
{
    mlff_status s = iface->open(opts, &ctx->backend, &ctx->error);
    if (s == MLFF_OK)
        ctx->iface = iface;
    return s;
}

const mlff_backend_entry *mlff_first_gpu_api(int *gpus)
{
    int n;
    const mlff_backend_entry *list = mlff_backend_list(&n);
    for (int k = 0; k < n; k++) {
        int found = 0;
        if (list[k].tried_for_gpu && list[k].iface && (list[k].iface->count_devices(&found), found > 0)) {
            if (gpus)
                *gpus = found;
            return &list[k];
        }
    }
    if (gpus)
        *gpus = 0;
    return NULL;
}

mlff_status mlff_tuning_fill(const mlff_device_info *info, const mlff_environment *env, const char *tuning,
                             int flags, mlff_tuning_fill_result *out, mlff_error *err)
{
    mlff_tuning_for_device(&out->tuning, info->api, info->vendor, info->is_gpu, &out->row);
    memset(out->origin, MLFF_TUNING_FROM_TABLE, sizeof out->origin);
    out->measured = 0;
    unsigned char changed[3][MLFF_TUNING_MAX_KEYS];
    memset(changed, 0, sizeof changed);
    mlff_status s = MLFF_OK;
    if (flags & MLFF_OPEN_TABLE_ONLY)
        snprintf(out->record, sizeof out->record, "not read (mlff tune measures from the table)");
    else
        out->measured = mlff_tuning_record_read(env->cache_dir, info, &out->tuning, changed[0], out->record,
                                                sizeof out->record);
    if (!(flags & MLFF_OPEN_TABLE_ONLY))
        s = mlff_environment_tuning(&out->tuning, changed[1], err);
    if (s == MLFF_OK && tuning)
        s = mlff_tuning_set(&out->tuning, tuning, "settings.tuning", changed[2], err);
    for (int layer = 0; layer < 3; layer++)
        for (int k = 0; k < mlff_n_tuning_keys; k++)
            if (changed[layer][k])
                out->origin[k] = (unsigned char)(MLFF_TUNING_FROM_RECORD + layer);
    return s;
}

/* The device's tuning record (mlff_tuning_fill), which the backend then takes. */
static mlff_status tune_device(mlff_context *ctx, const mlff_settings *settings, const mlff_environment *env,
                               int flags)
{
    mlff_device_info info;
    ctx->iface->opened_device(ctx->backend, &info);
    snprintf(ctx->cache_dir, sizeof ctx->cache_dir, "%s", env->cache_dir);
    mlff_tuning_fill_result *r = malloc(sizeof *r);
    if (!r)
        return mlff_fail(&ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
    mlff_status s = mlff_tuning_fill(&info, env, settings->tuning, flags, r, &ctx->error);
    ctx->tuning_row = r->row;
    memcpy(ctx->tuning_origin, r->origin, sizeof ctx->tuning_origin);
    snprintf(ctx->tuning_record, sizeof ctx->tuning_record, "%s", r->record);
    ctx->stats.tuning_record = (uint64_t)r->measured;
    if (s == MLFF_OK && ctx->iface->set_tuning)
        s = ctx->iface->set_tuning(ctx->backend, &r->tuning, &ctx->error);
    if (s == MLFF_OK)
        ctx->tuning = r->tuning;
    free(r);
    return s;
}

mlff_status mlff_context_set_tuning(mlff_context *ctx, const mlff_tuning *t)
{
    mlff_status s = ctx->iface->set_tuning ? ctx->iface->set_tuning(ctx->backend, t, &ctx->error) : MLFF_OK;
    if (s == MLFF_OK)
        ctx->tuning = *t;
    return s;
}

int mlff_context_format_tuning(const mlff_context *ctx, char *buf, size_t size)
{
    static const char *const origins[] = {"table", "record", "environment", "settings.tuning"};
    size_t len = 0;
#define PUT(...)                                                                                                       \
    do {                                                                                                               \
        const int n_ = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, __VA_ARGS__);              \
        len += n_ > 0 ? (size_t)n_ : 0;                                                                                \
    } while (0)
    PUT("# device: %s\n", ctx->iface ? ctx->iface->describe(ctx->backend) : "none");
    PUT("# table: %s\n", ctx->tuning_row ? ctx->tuning_row : "none");
    PUT("# measured record: %s\n", ctx->tuning_record);
    for (int k = 0; k < mlff_n_tuning_keys; k++) {
        const mlff_tuning_key *key = &mlff_tuning_keys[k];
        char value[64];
        mlff_tuning_format_value(&ctx->tuning, key, value, sizeof value);
        const int pad = 40 - (int)(strlen(key->key) + strlen(value));
        PUT("%s=%s%*s # %s%s%s\n", key->key, value, pad > 0 ? pad : 0, "", origins[ctx->tuning_origin[k]],
            key->env ? ", " : "", key->env ? key->env : "");
    }
#undef PUT
    if (size > 0 && len == 0)
        buf[0] = 0;
    return (int)len;
}

int mlff_context_format_keys(const mlff_context *ctx, char *buf, size_t size)
{
    static const char *const origins[] = {"table", "record", "environment", "settings"};
    size_t len = 0;
#define PUT(...)                                                                                                       \
    do {                                                                                                               \
        const int n_ = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, __VA_ARGS__);              \
        len += n_ > 0 ? (size_t)n_ : 0;                                                                                \
    } while (0)
    PUT("# the tuning record's keys: settings.tuning \"key=value ...\", or the variable; in use on %s\n",
        ctx->iface ? ctx->iface->describe(ctx->backend) : "no device");
    PUT("%-32s %-22s %-14s %-12s %s\n", "# key", "variable", "in use", "from", "values");
    for (int k = 0; k < mlff_n_tuning_keys; k++) {
        const mlff_tuning_key *key = &mlff_tuning_keys[k];
        char value[64], values[512];
        mlff_tuning_format_value(&ctx->tuning, key, value, sizeof value);
        mlff_tuning_format_values(key, values, sizeof values);
        PUT("%-32s %-22s %-14s %-12s %s\n", key->key, key->env ? key->env : "-", value,
            origins[ctx->tuning_origin[k]], values);
        PUT("%-32s %s\n", "", key->help);
    }
#undef PUT
    if (size > 0 && len == 0)
        buf[0] = 0;
    return (int)len;
}

mlff_status mlff_context_open(mlff_context *ctx, const mlff_settings *settings)
{
    return mlff_context_open_as(ctx, settings, 0);
}

mlff_status mlff_context_open_as(mlff_context *ctx, const mlff_settings *settings, int flags)
{
    ctx->settings = *settings;
    ctx->settings.tuning = NULL; /* read here, not kept */
    ctx->real = settings->precision == MLFF_PRECISION_FLOAT64 ? MLFF_DTYPE_F64 : MLFF_DTYPE_F32;
    mlff_tuning_defaults(&ctx->tuning);
    snprintf(ctx->tuning_record, sizeof ctx->tuning_record, "none");
    mlff_environment env;
    mlff_environment_read(&env);
    const int n_threads = settings->n_threads > 0 ? settings->n_threads : mlff_available_threads();
    if (!(ctx->pool = mlff_thread_pool_create(n_threads)))
        return mlff_fail(&ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "cannot start %d threads", n_threads);
    mlff_backend_options opts = {
        .device_index = settings->device_index,
        .n_threads = n_threads,
        .pool = ctx->pool,
        .allow_cpu_devices = settings->device != MLFF_DEVICE_AUTO,
    };
    mlff_environment_backend_options(&env, &opts);
    mlff_status s = MLFF_OK;
    if (settings->device == MLFF_DEVICE_AUTO && settings->device_index >= 0) {
        /* GPU k of the first API that has GPUs (mlff_count_devices), else the CPU. */
        const mlff_backend_entry *e = mlff_first_gpu_api(NULL);
        mlff_backend_options cpu = opts;
        cpu.device_index = -1;
        s = e ? open_backend(ctx, e->iface, &opts) : open_backend(ctx, &mlff_backend_cpu, &cpu);
    } else if (settings->device == MLFF_DEVICE_AUTO) {
        /* A real GPU when one answers, else the CPU; never PoCL or lavapipe. */
        int n;
        const mlff_backend_entry *list = mlff_backend_list(&n);
        for (int k = 0; k < n && !ctx->iface; k++) {
            mlff_backend_options gpu = opts;
            gpu.device_index = -1;
            if (list[k].tried_for_gpu && list[k].iface)
                open_backend(ctx, list[k].iface, &gpu);
        }
        mlff_error_clear(&ctx->error);
        if (!ctx->iface)
            s = open_backend(ctx, &mlff_backend_cpu, &opts);
    } else {
        const mlff_backend_entry *e = mlff_backend_of_kind(settings->device);
        if (!e)
            s = mlff_fail(&ctx->error, MLFF_ERROR_INVALID_ARGUMENT, "unknown device kind %d", (int)settings->device);
        else if (!e->iface)
            s = mlff_fail(&ctx->error, MLFF_ERROR_DEVICE, "device %s: this build of mlff has no %s backend (%s)",
                          e->name, e->name, e->not_built);
        else
            s = open_backend(ctx, e->iface, &opts);
    }
    if (s == MLFF_OK)
        s = tune_device(ctx, settings, &env, flags);
    if (s == MLFF_OK && !ctx->iface->supports_dtype(ctx->backend, ctx->real))
        s = mlff_fail(&ctx->error, MLFF_ERROR_UNSUPPORTED, "%s: %s is not supported%s",
                      ctx->iface->describe(ctx->backend),
                      ctx->real == MLFF_DTYPE_F64 ? "float64" : "float32",
                      ctx->real == MLFF_DTYPE_F64 ? " (the device has no fp64, or device_fp64=off)" : "");
    return s;
}

void mlff_context_close(mlff_context *ctx)
{
    while (arrlen(ctx->models) > 0)
        mlff_model_close(arrlast(ctx->models));
    arrfree(ctx->models);
    if (ctx->iface)
        ctx->iface->close(ctx->backend);
    mlff_thread_pool_destroy(ctx->pool);
}

mlff_status mlff_context_add_model(mlff_context *ctx, mlff_model *model)
{
    arrput(ctx->models, model);
    return MLFF_OK;
}

void mlff_context_remove_model(mlff_context *ctx, mlff_model *model)
{
    for (int k = 0; k < (int)arrlen(ctx->models); k++)
        if (ctx->models[k] == model) {
            arrdelswap(ctx->models, k);
            return;
        }
}
