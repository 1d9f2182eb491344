#include "fuzz_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

/* The context, and whether to say what each load did: opened and read
 * once, by fuzz_model_init. */
static mlff_context *ctx;
static int verbose;

void fuzz_model_init(int argc, char **argv)
{
    for (int k = 1; k < argc; k++)
        verbose |= !strcmp(argv[k], "--verbose");
    fuzz_model_context();
}

mlff_context *fuzz_model_context(void)
{
    if (!ctx) {
        mlff_settings s;
        mlff_default_settings(&s);
        s.device = MLFF_DEVICE_CPU;
        s.n_threads = 1;
        FUZZ_CHECK(mlff_context_create(&s, &ctx) == MLFF_OK, "cannot open the CPU: %s", mlff_last_error(ctx));
    }
    return ctx;
}

/* A status an API call may return with a message. */
static void check_refusal(mlff_context *ctx, mlff_status s, const char *what)
{
    FUZZ_CHECK(s >= MLFF_ERROR_INTERNAL && s < 0 && s != MLFF_ERROR_INTERNAL && s != MLFF_ERROR_INVALID_ARGUMENT,
               "%s: status %d (%s): %s", what, (int)s, mlff_strerror(s), mlff_last_error(ctx));
    FUZZ_CHECK(*mlff_last_error(ctx), "%s: status %d without a message", what, (int)s);
}

mlff_status fuzz_model_load_and_run(const char *path)
{
    mlff_context *ctx = fuzz_model_context();
    mlff_model *model = NULL;
    const mlff_status s = mlff_model_load(ctx, path, &model);
    if (verbose)
        fprintf(stderr, "load: %s\n", s == MLFF_OK ? "ok" : mlff_last_error(ctx));
    if (s != MLFF_OK) {
        FUZZ_CHECK(!model, "a failed load gave a model");
        check_refusal(ctx, s, "load");
        return s;
    }
    mlff_model_info info;
    FUZZ_CHECK(mlff_model_get_info(model, &info) == MLFF_OK && info.n_elements > 0 && info.n_elements <= 118,
               "model info");
    FUZZ_CHECK(isfinite(info.cutoff) && info.cutoff > 0, "the model's cutoff is %g", info.cutoff);
    /* Four atoms about 1.2 A apart, cycling through the first elements,
     * and an isolated atom as a second system. */
    static const double positions[15] = {0, 0, 0, 1.2, 0.1, 0, -0.3, 1.1, 0.2, 0.4, -0.3, 1.15, 0, 0, 0};
    int32_t z[5];
    for (int a = 0; a < 5; a++)
        z[a] = info.atomic_numbers[a % 4 % info.n_elements];
    const int64_t offsets[3] = {0, 4, 5};
    double energies[2], forces[15];
    const mlff_batch batch = {2, offsets, z, positions, NULL, NULL};
    const mlff_status e = mlff_evaluate(model, &batch, energies, forces);
    if (verbose)
        fprintf(stderr, "evaluate: %s\n", e == MLFF_OK ? "ok" : mlff_last_error(ctx));
    if (e != MLFF_OK)
        check_refusal(ctx, e, "evaluate");
    mlff_model_free(model);
    return s;
}
