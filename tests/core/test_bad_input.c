/*
 * Bad input through the C API: each case gives its status, a message that
 * names the problem, and the system and atom it is about; nothing crashes.
 * On the CPU, or MLFF_TEST_DEVICE's device (whose own pair lists must hand
 * what they cannot judge to the host's search).
 * Usage: test_bad_input SCRATCH_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/model.h"
#include "mlff.h"

static int failures;

static void expect(mlff_context *ctx, mlff_status got, mlff_status want, const char *needle,
                   int64_t want_system, int64_t want_atom, const char *what)
{
    int64_t system = -2, atom = -2;
    mlff_last_error_location(ctx, &system, &atom);
    const char *msg = mlff_last_error(ctx);
    int ok = got == want && strstr(msg, needle) && system == want_system && atom == want_atom;
    printf("%-4s %-34s status %d, system %lld, atom %lld: %s\n", ok ? "ok" : "FAIL", what, (int)got,
           (long long)system, (long long)atom, msg);
    failures += !ok;
}

/* Two systems: water, then methane whose atom 2 we spoil. */
static int32_t z[8] = {8, 1, 1, 6, 1, 1, 1, 1};
static double pos[8 * 3] = {
    0.0, 0.0, 0.119, 0.0, 0.763, -0.477, 0.0, -0.763, -0.477,
    0.0, 0.0, 0.0, 0.629, 0.629, 0.629, -0.629, -0.629, 0.629, 0.629, -0.629, -0.629, -0.629, 0.629, -0.629,
};
static int64_t offsets[3] = {0, 3, 8};

static mlff_status evaluate(mlff_model *model)
{
    mlff_batch b = {2, offsets, z, pos, NULL, NULL};
    double e[2], f[8 * 3];
    return mlff_evaluate(model, &b, e, f);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.device = test_device();
    mlff_context *ctx;
    mlff_model *model = NULL;
    if (mlff_context_create(&settings, &ctx) != MLFF_OK || mlff_model_load(ctx, NULL, &model) != MLFF_OK) {
        fprintf(stderr, "%s\n", mlff_last_error(ctx));
        return 1;
    }
    expect(ctx, evaluate(model), MLFF_OK, "", -1, -1, "valid batch");
    if (mlff_version() != MLFF_VERSION || strcmp(mlff_version_string(), MLFF_VERSION_STRING) != 0 ||
        strcmp(MLFF_VERSION_STRING, MESON_PROJECT_VERSION) != 0) {
        printf("FAIL the library is %s, its header says %s, the build %s\n", mlff_version_string(),
               MLFF_VERSION_STRING, MESON_PROJECT_VERSION);
        failures++;
    }

    z[5] = 11;
    expect(ctx, evaluate(model), MLFF_ERROR_BAD_INPUT, "element Na (Z=11) is not in model ANI-2x", 1, 2,
           "unknown element");
    z[5] = 1;

    pos[5 * 3 + 1] = NAN;
    expect(ctx, evaluate(model), MLFF_ERROR_BAD_INPUT, "not finite", 1, 2, "NaN coordinate");
    pos[5 * 3 + 1] = INFINITY;
    expect(ctx, evaluate(model), MLFF_ERROR_BAD_INPUT, "not finite", 1, 2, "infinite coordinate");
    pos[5 * 3 + 1] = -0.629;

    double keep[3] = {pos[15], pos[16], pos[17]};
    pos[15] = pos[12] + 0.05;
    pos[16] = pos[13];
    pos[17] = pos[14];
    expect(ctx, evaluate(model), MLFF_ERROR_BAD_INPUT, "closer than 0.1 Angstrom", 1, 2,
           "overlapping atoms");
    memcpy(pos + 15, keep, sizeof keep);

    /* The same in a cluster of 50 waters, 3.1 A apart: one bin of 22500
     * pairs to test, which a device's cell lists count on the host
     * (pair_count.h) and must hand to the host's search. */
    {
        enum { WATERS = 50 };
        int32_t cz[3 * WATERS];
        double cpos[9 * WATERS];
        for (int w = 0; w < WATERS; w++)
            for (int a = 0; a < 3; a++) {
                cz[3 * w + a] = z[a];
                const double grid[3] = {3.1 * (w % 4), 3.1 * (w / 4 % 4), 3.1 * (w / 16)};
                for (int d = 0; d < 3; d++)
                    cpos[9 * w + 3 * a + d] = pos[3 * a + d] + grid[d];
            }
        memcpy(cpos + 3 * 60, cpos + 3 * 30, 3 * sizeof *cpos);
        cpos[3 * 60] += 0.05;
        int64_t cluster_offsets[2] = {0, 3 * WATERS};
        mlff_batch cluster = {1, cluster_offsets, cz, cpos, NULL, NULL};
        double ce[1], cf[9 * WATERS];
        expect(ctx, mlff_evaluate(model, &cluster, ce, cf), MLFF_ERROR_BAD_INPUT, "closer than 0.1 Angstrom", 0, 60,
               "overlapping atoms in a cluster");
    }

    uint8_t pbc[6] = {0, 0, 0, 1, 1, 1};
    double cells[18] = {0};
    mlff_batch periodic = {2, offsets, z, pos, cells, pbc};
    double e[2];
    expect(ctx, mlff_evaluate(model, &periodic, e, NULL), MLFF_ERROR_BAD_INPUT, "singular", 1, -1,
           "periodic system with a zero cell");
    mlff_batch no_cell = {2, offsets, z, pos, NULL, pbc};
    expect(ctx, mlff_evaluate(model, &no_cell, e, NULL), MLFF_ERROR_BAD_INPUT, "no cell", 1, -1,
           "periodic system without cells");
    /* A cell in the wrong unit (nm): rejected before any search. */
    for (int k = 0; k < 3; k++)
        cells[9 + 4 * k] = 1.2;
    expect(ctx, mlff_evaluate(model, &periodic, e, NULL), MLFF_ERROR_BAD_INPUT, "denser than any material", 1,
           -1, "impossibly dense cell");
    /* A wire whose period is shorter than 0.1 Angstrom: its atoms would sit
     * on their own images, and are far denser than any material
     * (test_fuzz_regressions: a single atom on its images). */
    uint8_t wire[6] = {0, 0, 0, 1, 0, 0};
    cells[9] = 0.08;
    mlff_batch thin = {2, offsets, z, pos, cells, wire};
    expect(ctx, mlff_evaluate(model, &thin, e, NULL), MLFF_ERROR_BAD_INPUT, "denser than any material", 1, -1,
           "period shorter than 0.1 Angstrom");

    /* A hydrogen of methane 600 cells from the others: it sees them through images too far to carry. */
    for (int k = 0; k < 3; k++)
        cells[9 + 4 * k] = 10.0;
    uint8_t cubic[6] = {0, 0, 0, 1, 1, 1};
    mlff_batch far = {2, offsets, z, pos, cells, cubic};
    pos[3 * 4] += 6000.0;
    expect(ctx, mlff_evaluate(model, &far, e, NULL), MLFF_ERROR_BAD_INPUT, "wrap the positions", 1, 0,
           "an atom 600 cells outside its cell");
    pos[3 * 4] -= 6000.0;

    int64_t bad_offsets[3] = {0, 5, 3};
    mlff_batch decreasing = {2, bad_offsets, z, pos, NULL, NULL};
    expect(ctx, mlff_evaluate(model, &decreasing, e, NULL), MLFF_ERROR_INVALID_ARGUMENT, "decrease", -1, -1,
           "decreasing offsets");
    expect(ctx, evaluate(model), MLFF_OK, "", -1, -1, "valid batch after errors");

    /* Model files: missing, corrupt (one flipped byte), and not a model at all. */
    mlff_model *other = NULL;
    expect(ctx, mlff_model_load(ctx, "/nonexistent/model.mlff", &other), MLFF_ERROR_IO,
           "/nonexistent/model.mlff", -1, -1, "missing model file");
    mlff_model_info info;
    mlff_model_get_info(model, &info);
    FILE *in = fopen(info.path, "rb");
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)size);
    if (fread(bytes, 1, (size_t)size, in) != (size_t)size)
        return 1;
    fclose(in);
    char path[1024];
    snprintf(path, sizeof path, "%s/corrupt.mlff", argv[1]);
    bytes[size / 2] ^= 0x40;
    FILE *out = fopen(path, "wb");
    fwrite(bytes, 1, (size_t)size, out);
    fclose(out);
    expect(ctx, mlff_model_load(ctx, path, &other), MLFF_ERROR_MODEL_FORMAT, "checksum", -1, -1,
           "corrupt model file");
    out = fopen(path, "wb");
    fputs("not a model\n", out);
    fclose(out);
    expect(ctx, mlff_model_load(ctx, path, &other), MLFF_ERROR_MODEL_FORMAT, path, -1, -1,
           "not a model file");
    fclose(fopen(path, "wb"));
    expect(ctx, mlff_model_load(ctx, path, &other), MLFF_ERROR_MODEL_FORMAT, "truncated (0 bytes)", -1, -1,
           "empty model file");
    free(bytes);
    mlff_context_destroy(ctx);

    /* mlff_open (device and model side by side): the model's errors, the
     * device's errors, and on success the same model as the two calls. */
    mlff_context *both = NULL;
    mlff_status s = mlff_open(&settings, path, &both, &other);
    expect(both, s, MLFF_ERROR_MODEL_FORMAT, "truncated", -1, -1, "mlff_open: empty model file");
    if (other)
        failures++, printf("FAIL mlff_open gave a model after failing\n");
    mlff_context_destroy(both);
    remove(path);
    settings.device = MLFF_DEVICE_VULKAN;
    settings.device_index = 99;
    s = mlff_open(&settings, NULL, &both, &other);
    expect(both, s, MLFF_ERROR_DEVICE, "vulkan", -1, -1, "mlff_open: unavailable device");
    mlff_context_destroy(both);
    settings.device = test_device();
    settings.device_index = -1;
    s = mlff_open(&settings, NULL, &both, &other);
    expect(both, s, MLFF_OK, "", -1, -1, "mlff_open: CPU and the default model");
    if (s == MLFF_OK)
        expect(both, evaluate(other), MLFF_OK, "", -1, -1, "mlff_open: evaluation");
    mlff_context_destroy(both);

    /* Devices that are not there are errors, not a quiet fall back to the CPU. */
    settings.device = MLFF_DEVICE_OPENCL;
    settings.device_index = 99;
    s = mlff_context_create(&settings, &ctx);
    expect(ctx, s, MLFF_ERROR_DEVICE, "opencl", -1, -1, "unavailable OpenCL device");
    mlff_context_destroy(ctx);
    settings.device = MLFF_DEVICE_VULKAN;
    s = mlff_context_create(&settings, &ctx);
    expect(ctx, s, MLFF_ERROR_DEVICE, "vulkan", -1, -1, "unavailable Vulkan device");
    mlff_context_destroy(ctx);

    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
