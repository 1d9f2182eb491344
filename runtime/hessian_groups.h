/*
 * A large molecule's atoms cut into compact groups, and each group's
 * ghosts, for its Hessian by groups (hessian.c): E is the sum of the
 * atoms' energies and an atom's energy depends only on the atoms within
 * the model's reach (interaction layers x cutoff), so the Hessian is the
 * sum over groups of the Hessians of their atoms' energies, each taken
 * along the coordinates of the group and its ghosts alone.
 */
#ifndef MLFF_RUNTIME_HESSIAN_GROUPS_H
#define MLFF_RUNTIME_HESSIAN_GROUPS_H

#include <stdint.h>

#include "core/error.h"

typedef struct mlff_hessian_groups {
    int64_t n_atoms, n_groups;
    int32_t *order;  /* atoms by group: group g owns order[start[g] .. start[g + 1]) */
    int64_t *start;  /* n_groups + 1 */
    int32_t *local;  /* a group's atoms then ghosts (mlff_hessian_group_atoms), n_atoms */
    uint8_t *taken;  /* scratch: atoms already in the group being listed */
} mlff_hessian_groups;

/* Cuts atoms 0 .. n_atoms-1 at positions ([n_atoms][3]) into groups of at
 * most group_atoms by halving the longest extent again and again. */
mlff_status mlff_hessian_groups_make(mlff_hessian_groups *g, int64_t n_atoms, const double *positions,
                                     int64_t group_atoms, mlff_error *err);

/* Writes group k's atoms, then every other atom within reach of one of
 * them, to g->local; returns how many in all (the group's own come first). */
int64_t mlff_hessian_group_atoms(mlff_hessian_groups *g, int64_t k, const double *positions, double reach);

void mlff_hessian_groups_free(mlff_hessian_groups *g);

#endif
