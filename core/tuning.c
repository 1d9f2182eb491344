/* The tuning record's defaults (tuning.h). */
#include "tuning.h"

#include <string.h>

void mlff_tuning_defaults(mlff_tuning *t)
{
    memset(t, 0, sizeof *t);
    t->element_networks = MLFF_ELEMENT_NETWORKS_AUTO;
    /* Measured on an NVIDIA H200 (bench/RESULTS.md, 2026-11-25): merged
     * networks win for methane and lose from 15 atoms of water; stacked
     * ones lose to separate ones from about 5000 atoms (their padded
     * widths). */
    t->merged_networks_most_extra = 8;
    t->stacked_networks_most_atoms = 2048;
}
