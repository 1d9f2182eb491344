/* Device choice and the context's bookkeeping. */
#include "context.h"

#include "backends/registry.h"

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

/* MLFF_ELEMENT_NETWORKS=stacked|merged|separate forces how element networks run. */
static mlff_status read_element_networks(mlff_tuning *t, mlff_error *err)
{
    static const char *const names[] = {"auto", "stacked", "merged", "separate"}; /* mlff_element_networks */
    const char *env = getenv("MLFF_ELEMENT_NETWORKS");
    if (!env || !*env)
        return MLFF_OK;
    for (int k = 0; k < (int)(sizeof names / sizeof *names); k++)
        if (!strcmp(env, names[k])) {
            t->element_networks = (mlff_element_networks)k;
            return MLFF_OK;
        }
    return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT,
                     "MLFF_ELEMENT_NETWORKS=%s: use stacked, merged, separate or auto", env);
}

mlff_status mlff_context_open(mlff_context *ctx, const mlff_settings *settings)
{
    ctx->settings = *settings;
    ctx->real = settings->precision == MLFF_PRECISION_FLOAT64 ? MLFF_DTYPE_F64 : MLFF_DTYPE_F32;
    mlff_tuning_defaults(&ctx->tuning);
    if (read_element_networks(&ctx->tuning, &ctx->error) != MLFF_OK)
        return ctx->error.status;
    const int n_threads = settings->n_threads > 0 ? settings->n_threads : mlff_available_threads();
    if (!(ctx->pool = mlff_thread_pool_create(n_threads)))
        return mlff_fail(&ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "cannot start %d threads", n_threads);
    mlff_backend_options opts = {
        .device_index = settings->device_index,
        .n_threads = n_threads,
        .pool = ctx->pool,
        .allow_cpu_devices = settings->device != MLFF_DEVICE_AUTO,
    };
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
    if (s == MLFF_OK && !ctx->iface->supports_dtype(ctx->backend, ctx->real))
        s = mlff_fail(&ctx->error, MLFF_ERROR_UNSUPPORTED, "%s: %s is not supported%s",
                      ctx->iface->describe(ctx->backend),
                      ctx->real == MLFF_DTYPE_F64 ? "float64" : "float32",
                      ctx->real == MLFF_DTYPE_F64 ? " (the device has no fp64, or MLFF_DEVICE_FP64=off); use float32" : "");
    return s;
}

void mlff_context_close(mlff_context *ctx)
{
    while (ctx->n_models > 0)
        mlff_model_close(ctx->models[ctx->n_models - 1]);
    free(ctx->models);
    if (ctx->iface)
        ctx->iface->close(ctx->backend);
    mlff_thread_pool_destroy(ctx->pool);
}

mlff_status mlff_context_add_model(mlff_context *ctx, mlff_model *model)
{
    if (ctx->n_models == ctx->cap_models) {
        int cap = ctx->cap_models ? 2 * ctx->cap_models : 4;
        mlff_model **m = realloc(ctx->models, (size_t)cap * sizeof *m);
        if (!m)
            return mlff_fail(&ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
        ctx->models = m;
        ctx->cap_models = cap;
    }
    ctx->models[ctx->n_models++] = model;
    return MLFF_OK;
}

void mlff_context_remove_model(mlff_context *ctx, mlff_model *model)
{
    for (int k = 0; k < ctx->n_models; k++)
        if (ctx->models[k] == model) {
            ctx->models[k] = ctx->models[--ctx->n_models];
            return;
        }
}
