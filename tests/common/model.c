#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skip.h"

/* MLFF_TEST_DEVICE=cpu|opencl|vulkan: the device the model tests run on. */
mlff_device_kind test_device(void)
{
    const char *name = getenv("MLFF_TEST_DEVICE");
    if (!name || !strcmp(name, "cpu"))
        return MLFF_DEVICE_CPU;
    if (!strcmp(name, "opencl"))
        return MLFF_DEVICE_OPENCL;
    if (!strcmp(name, "vulkan"))
        return MLFF_DEVICE_VULKAN;
    fprintf(stderr, "MLFF_TEST_DEVICE=%s: expected cpu, opencl or vulkan\n", name);
    exit(2);
}

mlff_model *test_open_model(mlff_context **ctx, mlff_precision precision, mlff_neighbors neighbors,
                            double skin)
{
    mlff_settings s;
    mlff_default_settings(&s);
    s.precision = precision;
    s.neighbors = neighbors;
    s.skin = skin;
    return test_open_model_with(ctx, s);
}

mlff_model *test_open_model_with(mlff_context **ctx, mlff_settings s)
{
    s.device = test_device();
    mlff_model *model = NULL;
    mlff_status status = mlff_context_create(&s, ctx);
    if (status == MLFF_ERROR_DEVICE)
        test_skip(mlff_last_error(*ctx));
    if (status != MLFF_OK || mlff_model_load(*ctx, NULL, &model) != MLFF_OK) {
        fprintf(stderr, "cannot load the default model: %s\n", mlff_last_error(*ctx));
        exit(1);
    }
    return model;
}

int test_device_fp64(void)
{
    const char *env = getenv("MLFF_DEVICE_FP64");
    return !(env && (!strcmp(env, "off") || !strcmp(env, "0")));
}
