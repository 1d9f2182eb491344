#include "model.h"

#include <stdio.h>
#include <stdlib.h>

mlff_model *test_open_model(mlff_context **ctx, mlff_precision precision, mlff_neighbors neighbors,
                            double skin)
{
    mlff_settings s;
    mlff_default_settings(&s);
    s.device = MLFF_DEVICE_CPU;
    s.precision = precision;
    s.neighbors = neighbors;
    s.skin = skin;
    mlff_model *model = NULL;
    if (mlff_context_create(&s, ctx) != MLFF_OK || mlff_model_load(*ctx, NULL, &model) != MLFF_OK) {
        fprintf(stderr, "cannot load the default model: %s\n", mlff_last_error(*ctx));
        exit(1);
    }
    return model;
}
