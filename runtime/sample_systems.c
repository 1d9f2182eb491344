/* Standard systems made in code (sample_systems.h). */
#include "sample_systems.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct atom {
    int32_t z;
    double x, y, z_;
} atom;

/* Geometries near their equilibria (Angstrom). */
static const atom methane[] = {{6, 0, 0, 0},           {1, 0.629, 0.629, 0.629}, {1, -0.629, -0.629, 0.629},
                               {1, -0.629, 0.629, -0.629}, {1, 0.629, -0.629, -0.629}};
static const atom water[] = {{8, 0, 0, 0}, {1, 0.757, 0.586, 0}, {1, -0.757, 0.586, 0}};
static const atom ammonia[] = {{7, 0, 0, 0.117}, {1, 0, 0.940, -0.273}, {1, 0.814, -0.470, -0.273},
                               {1, -0.814, -0.470, -0.273}};
static const atom methanol[] = {{6, -0.047, 0.665, 0},    {8, -0.047, -0.757, 0},  {1, -1.086, 0.976, 0},
                                {1, 0.437, 1.081, 0.889}, {1, 0.437, 1.081, -0.889}, {1, 0.873, -1.046, 0}};

static int alloc(mlff_sample *s, int64_t systems, int64_t atoms)
{
    memset(s, 0, sizeof *s);
    s->n_systems = systems;
    s->n_atoms = atoms;
    s->offsets = calloc((size_t)systems + 1, sizeof *s->offsets);
    s->numbers = malloc((size_t)atoms * sizeof *s->numbers);
    s->positions = malloc((size_t)atoms * 3 * sizeof *s->positions);
    if (!s->offsets || !s->numbers || !s->positions) {
        mlff_sample_free(s);
        return 0;
    }
    return 1;
}

/* Atom a of a molecule, turned by rotation r (3 x 3, rows) and moved to at. */
static void place(mlff_sample *s, int64_t k, const atom *a, const double r[9], const double at[3])
{
    const double p[3] = {a->x, a->y, a->z_};
    s->numbers[k] = a->z;
    for (int d = 0; d < 3; d++)
        s->positions[3 * k + d] = at[d] + r[3 * d] * p[0] + r[3 * d + 1] * p[1] + r[3 * d + 2] * p[2];
}

static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double origin[3] = {0, 0, 0};

static int one_molecule(mlff_sample *s, const atom *m, int n)
{
    if (!alloc(s, 1, n))
        return 0;
    s->offsets[1] = n;
    for (int k = 0; k < n; k++)
        place(s, k, &m[k], identity, origin);
    return 1;
}

int mlff_sample_methane(mlff_sample *s)
{
    return one_molecule(s, methane, 5);
}

int mlff_sample_benzene(mlff_sample *s)
{
    atom ring[12];
    for (int k = 0; k < 6; k++) {
        const double angle = k * M_PI / 3;
        ring[k] = (atom){6, 1.397 * cos(angle), 1.397 * sin(angle), 0};
        ring[6 + k] = (atom){1, 2.481 * cos(angle), 2.481 * sin(angle), 0};
    }
    return one_molecule(s, ring, 12);
}

/* A rotation from a unit quaternion of three numbers in [0, 1) (Shoemake's). */
static void rotation(double u1, double u2, double u3, double r[9])
{
    const double a = sqrt(1 - u1), b = sqrt(u1);
    const double w = a * sin(2 * M_PI * u2), x = a * cos(2 * M_PI * u2), y = b * sin(2 * M_PI * u3),
                 z = b * cos(2 * M_PI * u3);
    const double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w),     2 * (x * z + y * w),
                         2 * (x * y + z * w),     1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                         2 * (x * z - y * w),     2 * (y * z + x * w),     1 - 2 * (x * x + y * y)};
    memcpy(r, m, sizeof m);
}

static double next_uniform(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0;
}

typedef struct site {
    double at[3], r2;
} site;

static int by_distance(const void *a, const void *b)
{
    const double x = ((const site *)a)->r2, y = ((const site *)b)->r2;
    return (x > y) - (x < y);
}

int mlff_sample_water_cluster(mlff_sample *s, int molecules)
{
    if (molecules < 1)
        molecules = 1;
    /* Sites of a cubic lattice, nearest the centre first. */
    int side = 1;
    while (side * side * side < 2 * molecules)
        side++;
    const int n_sites = side * side * side;
    site *sites = malloc((size_t)n_sites * sizeof *sites);
    if (!sites || !alloc(s, 1, 3 * (int64_t)molecules)) {
        free(sites);
        memset(s, 0, sizeof *s);
        return 0;
    }
    const double spacing = 3.1, centre = (side - 1) / 2.0;
    for (int k = 0; k < n_sites; k++) {
        const int i[3] = {k / (side * side), (k / side) % side, k % side};
        sites[k].r2 = 0;
        for (int d = 0; d < 3; d++) {
            /* A small offset breaks the ties between sites at one distance the same way everywhere. */
            sites[k].at[d] = spacing * (i[d] - centre);
            sites[k].r2 += (sites[k].at[d] + 0.01 * (d + 1)) * (sites[k].at[d] + 0.01 * (d + 1));
        }
    }
    qsort(sites, (size_t)n_sites, sizeof *sites, by_distance);
    uint64_t state = 0x853c49e6748fea9bULL;
    for (int m = 0; m < molecules; m++) {
        double r[9];
        const double u1 = next_uniform(&state), u2 = next_uniform(&state), u3 = next_uniform(&state);
        rotation(u1, u2, u3, r);
        for (int k = 0; k < 3; k++)
            place(s, 3 * (int64_t)m + k, &water[k], r, sites[m].at);
    }
    s->offsets[1] = s->n_atoms;
    free(sites);
    return 1;
}

int mlff_sample_molecules(mlff_sample *s, int count)
{
    static const atom *const kinds[4] = {methane, water, ammonia, methanol};
    static const int sizes[4] = {5, 3, 4, 6};
    int64_t atoms = 0;
    for (int k = 0; k < count; k++)
        atoms += sizes[k % 4];
    if (!alloc(s, count, atoms))
        return 0;
    int64_t at = 0;
    for (int k = 0; k < count; k++) {
        for (int a = 0; a < sizes[k % 4]; a++)
            place(s, at++, &kinds[k % 4][a], identity, origin);
        s->offsets[k + 1] = at;
    }
    return 1;
}

void mlff_sample_free(mlff_sample *s)
{
    free(s->offsets);
    free(s->numbers);
    free(s->positions);
    memset(s, 0, sizeof *s);
}
