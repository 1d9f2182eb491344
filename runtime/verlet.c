#include "verlet.h"

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "pair_lists.h"

int mlff_verlet_holds(const mlff_verlet *v, const mlff_batch *b, double radius)
{
    const int64_t n_atoms = b->system_offsets[b->n_systems];
    if (!v->valid || v->skin <= 0.0 || v->radius != radius || v->n_atoms != n_atoms ||
        v->n_systems != b->n_systems)
        return 0;
    if (memcmp(v->offsets, b->system_offsets, (size_t)(b->n_systems + 1) * sizeof *v->offsets) != 0)
        return 0;
    for (int64_t s = 0; s < b->n_systems; s++) {
        uint8_t pbc[3] = {0, 0, 0};
        if (b->pbc)
            memcpy(pbc, b->pbc + 3 * s, 3);
        if (memcmp(pbc, v->pbc + 3 * s, 3) != 0 ||
            (mlff_batch_is_periodic(b, s) && memcmp(b->cells + 9 * s, v->cells + 9 * s, 9 * sizeof(double)) != 0))
            return 0;
    }
    const double limit = 0.25 * v->skin * v->skin;
    for (int64_t k = 0; k < n_atoms; k++) {
        const double dx = b->positions[3 * k] - v->positions[3 * k];
        const double dy = b->positions[3 * k + 1] - v->positions[3 * k + 1];
        const double dz = b->positions[3 * k + 2] - v->positions[3 * k + 2];
        if (dx * dx + dy * dy + dz * dz > limit)
            return 0;
    }
    return 1;
}

mlff_status mlff_verlet_remember(mlff_verlet *v, const mlff_batch *b, double radius, double skin, mlff_error *err)
{
    const int64_t n_atoms = b->system_offsets[b->n_systems], n_sys = b->n_systems;
    v->valid = 0;
    /* offsets, cells and pbc share one capacity (in systems). */
    int64_t offsets_cap = v->systems_capacity, cells_cap = v->systems_capacity;
    if (!mlff_grow((void **)&v->positions, &v->atoms_capacity, n_atoms, 3 * sizeof(double)) ||
        !mlff_grow((void **)&v->offsets, &offsets_cap, n_sys + 1, sizeof(int64_t)) ||
        !mlff_grow((void **)&v->cells, &cells_cap, n_sys + 1, 9 * sizeof(double)) ||
        !mlff_grow((void **)&v->pbc, &v->systems_capacity, n_sys + 1, 3))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for the neighbour list");
    if (n_atoms > 0) /* an empty batch may have no positions at all */
        memcpy(v->positions, b->positions, (size_t)n_atoms * 3 * sizeof(double));
    memcpy(v->offsets, b->system_offsets, (size_t)(n_sys + 1) * sizeof(int64_t));
    for (int64_t s = 0; s < n_sys; s++) {
        memset(v->pbc + 3 * s, 0, 3);
        if (b->pbc)
            memcpy(v->pbc + 3 * s, b->pbc + 3 * s, 3);
        if (b->cells)
            memcpy(v->cells + 9 * s, b->cells + 9 * s, 9 * sizeof(double));
    }
    v->n_atoms = n_atoms;
    v->n_systems = n_sys;
    v->radius = radius;
    v->skin = skin;
    v->valid = 1;
    return MLFF_OK;
}

void mlff_verlet_free(mlff_verlet *v)
{
    free(v->positions);
    free(v->offsets);
    free(v->cells);
    free(v->pbc);
    memset(v, 0, sizeof *v);
}
