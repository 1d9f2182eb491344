/*
 * The tuning record: every choice of kernel or graph form and every
 * measured threshold that picks one, for one device. The runtime fills it
 * once when the device opens (the table row of its API, vendor and kind,
 * then a record measured by `mlff tune`, then the environment, then the
 * API's settings.tuning); every choice is then a pure function of (node,
 * record). Fields hold 0 for "automatic" where a form can be forced.
 */
#ifndef MLFF_CORE_TUNING_H
#define MLFF_CORE_TUNING_H

#include <stdint.h>

/* How a model's per-element networks run (ANI: models/ani_networks.c):
 * each element's on its atoms, every element in one op a layer (stacked);
 * op by op, element after element (separate); or every element's on every
 * atom (merged: the fewest launches, n elements times the work). */
typedef enum mlff_element_networks {
    MLFF_ELEMENT_NETWORKS_AUTO = 0,
    MLFF_ELEMENT_NETWORKS_STACKED,
    MLFF_ELEMENT_NETWORKS_MERGED,
    MLFF_ELEMENT_NETWORKS_SEPARATE
} mlff_element_networks;

typedef struct mlff_tuning {
    mlff_element_networks element_networks; /* forced, or AUTO: by the two below */
    int64_t merged_networks_most_extra;     /* GPUs merge while (elements - 1) x atoms stays within it */
    int64_t stacked_networks_most_atoms;    /* ... else stack up to this many atoms, then separate */
} mlff_tuning;

/* The defaults: NVIDIA's measured numbers (bench/RESULTS.md). */
void mlff_tuning_defaults(mlff_tuning *t);

#endif
