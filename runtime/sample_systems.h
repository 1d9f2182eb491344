/*
 * Standard systems made in code, the same every time: methane, benzene,
 * water clusters of any size, a batch of small molecules. `mlff tune`
 * measures on them, and `mlff bench` where the repository's reference
 * files are not at hand (the tool compiles this file too: it uses nothing
 * but the C library).
 */
#ifndef MLFF_RUNTIME_SAMPLE_SYSTEMS_H
#define MLFF_RUNTIME_SAMPLE_SYSTEMS_H

#include <stdint.h>

typedef struct mlff_sample {
    int64_t n_systems, n_atoms;
    int64_t *offsets;  /* n_systems + 1 */
    int32_t *numbers;  /* atomic numbers, n_atoms */
    double *positions; /* n_atoms x 3, Angstrom */
} mlff_sample;

/* Each returns 0 when out of memory (*s then empty). */
int mlff_sample_methane(mlff_sample *s);
int mlff_sample_benzene(mlff_sample *s);
/* `molecules` waters around a centre, 3.1 A apart, each turned its own way. */
int mlff_sample_water_cluster(mlff_sample *s, int molecules);
/* A batch of `count` molecules of 3 to 6 atoms (methane, water, ammonia,
 * methanol in turn), each a system. */
int mlff_sample_molecules(mlff_sample *s, int count);
void mlff_sample_free(mlff_sample *s);

#endif
