/* The public API: argument checks and error bookkeeping in front of core/. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/registry.h"
#include "runtime/context.h"
#include "runtime/devices.h"
#include "runtime/tune.h"
#include "mlff.h"

MLFF_API unsigned mlff_version(void)
{
    return MLFF_VERSION;
}

MLFF_API const char *mlff_version_string(void)
{
    return MLFF_VERSION_STRING;
}

MLFF_API const char *mlff_strerror(mlff_status status)
{
    switch (status) {
    case MLFF_OK: return "success";
    case MLFF_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case MLFF_ERROR_OUT_OF_MEMORY: return "out of memory";
    case MLFF_ERROR_IO: return "input/output error";
    case MLFF_ERROR_MODEL_FORMAT: return "bad model file";
    case MLFF_ERROR_BAD_INPUT: return "bad input";
    case MLFF_ERROR_UNSUPPORTED: return "not supported";
    case MLFF_ERROR_DEVICE: return "device error";
    case MLFF_ERROR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

MLFF_API void mlff_default_settings(mlff_settings *settings)
{
    if (!settings)
        return;
    memset(settings, 0, sizeof *settings);
    settings->device = MLFF_DEVICE_AUTO;
    settings->device_index = -1;
    settings->precision = MLFF_PRECISION_FLOAT32;
    settings->n_threads = 0;
    settings->neighbors = MLFF_NEIGHBORS_AUTO;
}

static mlff_status check_settings(const mlff_settings *s, mlff_error *err)
{
    if (s->precision != MLFF_PRECISION_FLOAT32 && s->precision != MLFF_PRECISION_FLOAT64)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "unknown precision %d", (int)s->precision);
    if (s->n_threads < 0)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "n_threads is negative");
    if (s->max_chunk_atoms < 0)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "max_chunk_atoms %lld is negative",
                         (long long)s->max_chunk_atoms);
    if (!(s->skin >= 0.0 && s->skin < 1e3))
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "skin %g is not a distance", s->skin);
    switch (s->neighbors) {
    case MLFF_NEIGHBORS_AUTO:
    case MLFF_NEIGHBORS_DENSE:
    case MLFF_NEIGHBORS_SPARSE:
        return MLFF_OK;
    }
    return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "unknown neighbors mode %d", (int)s->neighbors);
}

MLFF_API mlff_status mlff_context_create(const mlff_settings *settings, mlff_context **out)
{
    if (!out)
        return MLFF_ERROR_INVALID_ARGUMENT;
    mlff_context *ctx = calloc(1, sizeof *ctx);
    *out = ctx;
    if (!ctx)
        return MLFF_ERROR_OUT_OF_MEMORY;
    mlff_error_clear(&ctx->error);
    mlff_settings defaults;
    mlff_default_settings(&defaults);
    const mlff_settings *s = settings ? settings : &defaults;
    mlff_status status = check_settings(s, &ctx->error);
    if (status == MLFF_OK)
        status = mlff_context_open(ctx, s);
    return status;
}

MLFF_API void mlff_context_destroy(mlff_context *ctx)
{
    if (!ctx)
        return;
    mlff_context_close(ctx);
    free(ctx);
}

MLFF_API const char *mlff_last_error(const mlff_context *ctx)
{
    return ctx ? ctx->error.message : "no context";
}

MLFF_API mlff_status mlff_last_error_location(const mlff_context *ctx, int64_t *system, int64_t *atom)
{
    if (!ctx)
        return MLFF_ERROR_INVALID_ARGUMENT;
    if (system)
        *system = ctx->error.system;
    if (atom)
        *atom = ctx->error.atom;
    return MLFF_OK;
}

MLFF_API const char *mlff_device_description(const mlff_context *ctx)
{
    if (!ctx || !ctx->iface)
        return "no device";
    return ctx->iface->describe(ctx->backend);
}

/* A context whose device did not open only reports that. */
static mlff_status check_usable(mlff_context *ctx)
{
    if (ctx->iface)
        return MLFF_OK;
    return mlff_fail(&ctx->error, MLFF_ERROR_DEVICE, "the context has no device (creating it failed)");
}

MLFF_API mlff_status mlff_model_load(mlff_context *ctx, const char *path, mlff_model **model)
{
    if (!ctx)
        return MLFF_ERROR_INVALID_ARGUMENT;
    mlff_error_clear(&ctx->error);
    if (!model)
        return mlff_fail(&ctx->error, MLFF_ERROR_INVALID_ARGUMENT, "model pointer is NULL");
    *model = NULL;
    mlff_status s = check_usable(ctx);
    return s != MLFF_OK ? s : mlff_model_open(ctx, path, model);
}

/* mlff_open's second thread: the model file and graph. */
typedef struct model_reader {
    const char *path;
    mlff_model *model;
    mlff_error error;
    mlff_status status;
} model_reader;

static void *read_model(void *arg)
{
    model_reader *r = arg;
    mlff_error_clear(&r->error);
    r->status = mlff_model_read(r->path, &r->model, &r->error);
    return NULL;
}

MLFF_API mlff_status mlff_open(const mlff_settings *settings, const char *path, mlff_context **ctx,
                               mlff_model **model)
{
    if (!ctx || !model)
        return MLFF_ERROR_INVALID_ARGUMENT;
    *model = NULL;
    model_reader reader = {.path = path};
    pthread_t thread;
    const int threaded = pthread_create(&thread, NULL, read_model, &reader) == 0;
    mlff_status s = mlff_context_create(settings, ctx);
    if (threaded)
        pthread_join(thread, NULL);
    else
        read_model(&reader);
    if (s != MLFF_OK) {
        mlff_model_discard(reader.model);
        return s;
    }
    if (reader.status != MLFF_OK) {
        (*ctx)->error = reader.error;
        return reader.status;
    }
    if ((s = mlff_model_attach(*ctx, reader.model)) == MLFF_OK)
        *model = reader.model;
    return s;
}

MLFF_API void mlff_model_free(mlff_model *model)
{
    mlff_model_close(model);
}

MLFF_API mlff_status mlff_model_get_info(const mlff_model *model, mlff_model_info *info)
{
    if (!model || !info)
        return MLFF_ERROR_INVALID_ARGUMENT;
    info->name = model->name;
    info->n_elements = model->n_elements;
    info->atomic_numbers = model->atomic_numbers;
    info->cutoff = model->cutoff;
    info->path = model->path;
    return MLFF_OK;
}

MLFF_API mlff_status mlff_model_get_interaction_layers(const mlff_model *model, int *layers)
{
    if (!model || !layers)
        return MLFF_ERROR_INVALID_ARGUMENT;
    *layers = model->interaction_layers;
    return MLFF_OK;
}

/* The head of every evaluation: a model, its last error cleared, and the
 * arguments the call cannot do without (missing names them). */
static mlff_status begin_evaluation(mlff_model *model, int have_arguments, const char *missing)
{
    if (!model)
        return MLFF_ERROR_INVALID_ARGUMENT;
    mlff_error_clear(&model->ctx->error);
    if (!have_arguments)
        return mlff_fail(&model->ctx->error, MLFF_ERROR_INVALID_ARGUMENT, "%s is NULL", missing);
    return MLFF_OK;
}

/* An evaluation that succeeded counts in the context's statistics. */
static mlff_status counted(mlff_model *model, mlff_status s)
{
    if (s == MLFF_OK)
        model->ctx->stats.evaluations++;
    return s;
}

MLFF_API mlff_status mlff_compute(mlff_model *model, const mlff_batch *batch,
                                  const mlff_results *results)
{
    const mlff_status s = begin_evaluation(model, batch && results, "batch or results");
    return s != MLFF_OK ? s : counted(model, mlff_model_run(model, batch, results));
}

MLFF_API mlff_status mlff_evaluate(mlff_model *model, const mlff_batch *batch, double *energies,
                                   double *forces)
{
    mlff_results results = {.energies = energies, .forces = forces};
    return mlff_compute(model, batch, &results);
}

MLFF_API mlff_status mlff_compute_hessians(mlff_model *model, const mlff_batch *batch,
                                           const mlff_hessian_results *results)
{
    const mlff_status s = begin_evaluation(model, batch && results, "batch or results");
    return s != MLFF_OK ? s : counted(model, mlff_model_hessians(model, batch, results));
}

MLFF_API mlff_status mlff_compute_hessian_products(mlff_model *model, const mlff_batch *batch, int64_t n_vectors,
                                                   const double *vectors, double *products)
{
    const mlff_status s = begin_evaluation(model, batch != NULL, "batch");
    return s != MLFF_OK ? s
                        : counted(model, mlff_model_hessian_products(model, batch, n_vectors, vectors, products));
}

MLFF_API mlff_status mlff_get_stats(const mlff_context *ctx, mlff_stats *stats)
{
    if (!ctx || !stats)
        return MLFF_ERROR_INVALID_ARGUMENT;
    *stats = ctx->stats;
    if (ctx->iface && ctx->iface->get_stats) {
        mlff_backend_stats b = {0};
        ctx->iface->get_stats(ctx->backend, &b);
        stats->kernel_builds = b.kernel_builds;
        stats->kernel_cache_hits = b.cache_hits;
        stats->kernel_cache_rejects = b.cache_rejects;
    }
    return MLFF_OK;
}

MLFF_API const char *mlff_element_symbol(int z)
{
    return mlff_element_symbol_internal(z);
}

MLFF_API int mlff_element_number(const char *symbol)
{
    return symbol ? mlff_element_number_internal(symbol) : 0;
}

MLFF_API mlff_status mlff_count_devices(mlff_device_kind kind, int *devices, int *gpus)
{
    int n_gpus = 0, n = 0;
    if (kind == MLFF_DEVICE_AUTO) {
        const mlff_backend_entry *e = mlff_first_gpu_api(&n_gpus);
        n = e ? e->iface->count_devices(&n_gpus) : 0;
    } else {
        const mlff_backend_entry *e = mlff_backend_of_kind(kind);
        if (!e)
            return MLFF_ERROR_INVALID_ARGUMENT;
        n = e->iface ? e->iface->count_devices(&n_gpus) : 0;
    }
    if (devices)
        *devices = n;
    if (gpus)
        *gpus = n_gpus;
    return MLFF_OK;
}

MLFF_API mlff_status mlff_compute_subdomain(mlff_model *model, const mlff_subdomain *subdomain,
                                            const mlff_subdomain_results *results)
{
    const mlff_status s = begin_evaluation(model, subdomain && results, "subdomain or results");
    return s != MLFF_OK ? s : counted(model, mlff_model_run_subdomain(model, subdomain, results));
}

MLFF_API mlff_status mlff_list_devices(char *buf, size_t size, size_t *needed)
{
    if (!buf && size > 0)
        return MLFF_ERROR_INVALID_ARGUMENT;
    /* Like snprintf: the whole list is measured, as much as fits is copied. */
    char list[4096] = "";
    int n;
    const mlff_backend_entry *backends = mlff_backend_list(&n);
    for (int k = n - 1; k >= 0; k--) { /* the CPU first, then the GPU APIs */
        if (backends[k].iface)
            backends[k].iface->list_devices(list, sizeof list);
        else {
            const size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s: not built (%s)\n", backends[k].name, backends[k].not_built);
        }
    }
    if (needed)
        *needed = strlen(list) + 1;
    if (size > 0)
        snprintf(buf, size, "%s", list);
    return MLFF_OK;
}

/* Like snprintf: text into buf as far as it fits, *needed its size. */
static void copy_out(const char *text, char *buf, size_t size, size_t *needed)
{
    if (needed)
        *needed = strlen(text) + 1;
    if (buf && size > 0)
        snprintf(buf, size, "%s", text);
}

MLFF_API mlff_status mlff_get_tuning(const mlff_context *ctx, char *buf, size_t size, size_t *needed)
{
    if (!ctx || (!buf && size > 0))
        return MLFF_ERROR_INVALID_ARGUMENT;
    const int n = mlff_context_format_tuning(ctx, NULL, 0);
    char *text = malloc((size_t)n + 1);
    if (!text)
        return MLFF_ERROR_OUT_OF_MEMORY;
    mlff_context_format_tuning(ctx, text, (size_t)n + 1);
    copy_out(text, buf, size, needed);
    free(text);
    return MLFF_OK;
}

MLFF_API mlff_status mlff_tune(const mlff_settings *settings, const mlff_tune_options *options, char *record,
                               size_t size, size_t *needed)
{
    if (!record && size > 0)
        return MLFF_ERROR_INVALID_ARGUMENT;
    mlff_settings defaults;
    mlff_default_settings(&defaults);
    const mlff_settings *s = settings ? settings : &defaults;
    mlff_error err;
    mlff_error_clear(&err);
    mlff_status status = check_settings(s, &err);
    char *text = NULL;
    if (status == MLFF_OK)
        status = mlff_runtime_tune(s, options, &text, &err);
    copy_out(status == MLFF_OK ? text : err.message, record, size, needed);
    free(text);
    return status;
}

MLFF_API mlff_status mlff_describe_tuning_keys(const mlff_context *ctx, char *buf, size_t size, size_t *needed)
{
    if (!ctx || (!buf && size > 0))
        return MLFF_ERROR_INVALID_ARGUMENT;
    const int n = mlff_context_format_keys(ctx, NULL, 0);
    char *text = malloc((size_t)n + 1);
    if (!text)
        return MLFF_ERROR_OUT_OF_MEMORY;
    mlff_context_format_keys(ctx, text, (size_t)n + 1);
    copy_out(text, buf, size, needed);
    free(text);
    return MLFF_OK;
}

MLFF_API mlff_status mlff_describe_devices(int records, char *buf, size_t size, size_t *needed)
{
    if (!buf && size > 0)
        return MLFF_ERROR_INVALID_ARGUMENT;
    char *text = mlff_runtime_describe_devices(records);
    if (!text)
        return MLFF_ERROR_OUT_OF_MEMORY;
    copy_out(text, buf, size, needed);
    free(text);
    return MLFF_OK;
}
