/*
 * Model files whose numbers make no sense (issue 57): NaN or negative
 * Gaussian widths once reached the CPU kernels' exponential (a NaN converted
 * to an int, negative values shifted) and a negative width gave an energy; a
 * cutoff of 896 A took 3.5 GB of pair lists before anything refused it.
 * Each is refused when the model loads, with a message naming the tensor
 * (and the entry); an unchanged model loads and evaluates.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlff.h"
#include "models/model_file.h"
#include "models/neurochem.h"
#include "neurochem_writer.h"
#include "tests/common/check.h"

static char *dir;
static ncw_model *source;

/* The small model, imported again, with one number changed (name NULL:
 * none), written and loaded: the load's status, its message in msg. */
static mlff_status load_with(mlff_context *ctx, const char *name, int64_t index, double value, char *msg,
                             size_t size)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = NULL;
    if (mlff_neurochem_import(source->info_path, "values", &mf, &err) != MLFF_OK) {
        snprintf(msg, size, "import: %s", err.message);
        return MLFF_ERROR_INTERNAL;
    }
    if (name) {
        mlff_model_tensor *t = (mlff_model_tensor *)mlff_model_file_tensor(mf, name);
        CHECK(t != NULL, "no tensor %s", name);
        if (t && t->dtype == MLFF_DTYPE_F32)
            ((float *)t->data)[index] = (float)value;
        else if (t && t->dtype == MLFF_DTYPE_F64)
            ((double *)t->data)[index] = value;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/values.mlff", dir);
    const mlff_status w = mlff_model_file_write(mf, path, &err);
    mlff_model_file_destroy(mf);
    if (w != MLFF_OK) {
        snprintf(msg, size, "write: %s", err.message);
        return MLFF_ERROR_INTERNAL;
    }
    mlff_model *model = NULL;
    const mlff_status s = mlff_model_load(ctx, path, &model);
    snprintf(msg, size, "%s", mlff_last_error(ctx));
    if (s == MLFF_OK) {
        /* Methane-like: a C and four H. */
        const int64_t offsets[2] = {0, 5};
        const int32_t z[5] = {6, 1, 1, 1, 1};
        const double pos[15] = {0, 0, 0, 0.63, 0.63, 0.63, -0.63, -0.63, 0.63, 0.63, -0.63, -0.63, -0.63, 0.63, -0.63};
        const mlff_batch b = {1, offsets, z, pos, NULL, NULL};
        double e = NAN, f[15];
        const mlff_status es = mlff_evaluate(model, &b, &e, f);
        CHECK(es == MLFF_OK && isfinite(e), "a model that loads does not evaluate: %s", mlff_last_error(ctx));
        mlff_model_free(model);
    }
    return s;
}

static void refused(mlff_context *ctx, const char *name, int64_t index, double value, const char *needle)
{
    char msg[600];
    const mlff_status s = load_with(ctx, name, index, value, msg, sizeof msg);
    const int ok = s == MLFF_ERROR_MODEL_FORMAT && strstr(msg, needle);
    printf("%-4s %s[%lld] = %g: status %d: %s\n", ok ? "ok" : "FAIL", name, (long long)index, value, (int)s, msg);
    failures += !ok;
}

int main(void)
{
    dir = ncw_make_temp_dir("model-values");
    if (!dir)
        return 1;
    ncw_spec spec;
    ncw_spec_ani1x_like(&spec);
    spec.n_elements = 2; /* H and C */
    spec.n_shfr = 4;
    spec.n_shfz = 2;
    spec.n_shfa = 2;
    spec.layer_sizes[0] = 4;
    spec.layer_sizes[1] = 3;
    source = ncw_write(&spec, dir);
    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.device = MLFF_DEVICE_CPU;
    settings.n_threads = 1;
    mlff_context *ctx = NULL;
    if (!source || mlff_context_create(&settings, &ctx) != MLFF_OK)
        return 1;

    char msg[600];
    const mlff_status good = load_with(ctx, NULL, 0, 0, msg, sizeof msg);
    CHECK(good == MLFF_OK, "the unchanged model: %s", msg);
    printf("%-4s the unchanged model loads and evaluates\n", good == MLFF_OK ? "ok" : "FAIL");

    refused(ctx, "aev.radial.eta", 0, NAN, "aev.radial.eta is nan");
    refused(ctx, "aev.radial.eta", 0, -16.0, "aev.radial.eta is -16: it must be a positive number");
    refused(ctx, "aev.angular.eta", 0, -8.0, "aev.angular.eta is -8");
    refused(ctx, "aev.angular.zeta", 0, 0.0, "aev.angular.zeta is 0");
    refused(ctx, "aev.radial.cutoff", 0, 896.0, "aev.radial.cutoff is 896: it must be positive and at most 20");
    refused(ctx, "aev.angular.cutoff", 0, INFINITY, "aev.angular.cutoff is inf");
    refused(ctx, "aev.radial.shift", 2, NAN, "aev.radial.shift holds nan at [2, 0]");
    refused(ctx, "aev.angular.shift_theta", 1, INFINITY, "aev.angular.shift_theta holds inf at [1, 0]");
    refused(ctx, "self_energy", 1, -INFINITY, "self_energy holds -inf at [1, 0]");
    refused(ctx, "network.C.1.0.weight", 7, NAN, "network.C.1.0.weight holds nan at [0, 7]");
    refused(ctx, "network.H.0.2.bias", 0, INFINITY, "network.H.0.2.bias holds inf at [0, 0]");
    refused(ctx, "network.H.0.activation_alpha", 1, 0.0, "network.H.0.activation_alpha is 0 for layer 1");
    refused(ctx, "network.C.0.activation_alpha", 0, NAN, "network.C.0.activation_alpha is nan for layer 0");

    mlff_context_destroy(ctx);
    ncw_model_free(source);
    ncw_remove_tree(dir);
    free(dir);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
