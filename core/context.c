/* Device choice and the context's bookkeeping. */
#include "context.h"

#include <stdlib.h>
#include <string.h>

/* The backends compiled in, in the order `auto` tries them for a GPU. */
static const mlff_backend_iface *const gpu_backends[] = {
#ifdef MLFF_HAVE_OPENCL
    &mlff_backend_opencl,
#endif
#ifdef MLFF_HAVE_VULKAN
    &mlff_backend_vulkan,
#endif
    NULL};

static mlff_status open_backend(mlff_context *ctx, const mlff_backend_iface *iface,
                                const mlff_backend_options *opts)
{
    mlff_status s = iface->open(opts, &ctx->backend, &ctx->error);
    if (s == MLFF_OK)
        ctx->iface = iface;
    return s;
}

mlff_status mlff_context_open(mlff_context *ctx, const mlff_settings *settings)
{
    ctx->settings = *settings;
    ctx->real = settings->precision == MLFF_PRECISION_FLOAT64 ? MLFF_DTYPE_F64 : MLFF_DTYPE_F32;
    const int n_threads = settings->n_threads > 0 ? settings->n_threads : mlff_available_threads();
    if (!(ctx->pool = mlff_thread_pool_create(n_threads)))
        return mlff_fail(&ctx->error, MLFF_ERROR_OUT_OF_MEMORY, "cannot start %d threads", n_threads);
    mlff_backend_options opts = {
        .device_index = settings->device_index,
        .n_threads = n_threads,
        .pool = ctx->pool,
        .allow_cpu_devices = settings->device != MLFF_DEVICE_AUTO,
    };
    mlff_status s;
    switch (settings->device) {
    case MLFF_DEVICE_AUTO:
        /* A real GPU when one answers, else the CPU; never PoCL or lavapipe. */
        for (size_t k = 0; gpu_backends[k]; k++) {
            mlff_backend_options gpu = opts;
            gpu.device_index = -1;
            if (open_backend(ctx, gpu_backends[k], &gpu) == MLFF_OK)
                break;
        }
        mlff_error_clear(&ctx->error);
        s = ctx->iface ? MLFF_OK : open_backend(ctx, &mlff_backend_cpu, &opts);
        break;
    case MLFF_DEVICE_CPU:
        s = open_backend(ctx, &mlff_backend_cpu, &opts);
        break;
    case MLFF_DEVICE_OPENCL:
#ifdef MLFF_HAVE_OPENCL
        s = open_backend(ctx, &mlff_backend_opencl, &opts);
#else
        s = mlff_fail(&ctx->error, MLFF_ERROR_DEVICE,
                      "device opencl: this build of mlff has no OpenCL backend (built without OpenCL)");
#endif
        break;
    case MLFF_DEVICE_VULKAN:
#ifdef MLFF_HAVE_VULKAN
        s = open_backend(ctx, &mlff_backend_vulkan, &opts);
#else
        s = mlff_fail(&ctx->error, MLFF_ERROR_DEVICE,
                      "device vulkan: this build of mlff has no Vulkan backend (built without Vulkan)");
#endif
        break;
    default:
        s = mlff_fail(&ctx->error, MLFF_ERROR_INVALID_ARGUMENT, "unknown device kind %d",
                      (int)settings->device);
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
