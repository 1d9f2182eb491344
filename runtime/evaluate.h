/*
 * One evaluation, start to finish (evaluate.c), for what builds on it: the
 * batch and subdomain entry points there, Hessians (hessian.c).
 */
#ifndef MLFF_RUNTIME_EVALUATE_H
#define MLFF_RUNTIME_EVALUATE_H

#include "context.h"

/* What an evaluation writes (NULL skips an output): per system, or per
 * owned atom where the owned atoms are systems of their own
 * (mlff_atom_view.atom_systems); per atom of the view or the batch. */
typedef struct mlff_run_out {
    unsigned outputs;       /* mask of 1 << mlff_output_role */
    double *energies;
    double *forces;         /* [atoms][3] */
    double *cell_forces;    /* [systems][9] */
    double *atom_virials;   /* [atoms][9], from the pair gradients (a plan with pair_gradients) */
    double *force_tangents; /* [atoms][3T], the forces' tangent (a plan with tangents) */
} mlff_run_out;

/* Checks a batch and makes the plan of its elements active, with the
 * extras asked for; atoms from n_owned on are ghosts (-1: none) that reach
 * ghost_depth beyond the owned atoms (0: one cutoff). A model of several
 * interaction layers needs them that many cutoffs deep. */
mlff_status mlff_evaluate_prepare(mlff_model *m, const mlff_batch *batch, int64_t n_owned, double ghost_depth,
                                  const mlff_plan_extras *extras);

/* Evaluates the prepared batch into o, through the device's pair lists
 * where it makes them, else the host's; in one pass or in chunks. */
mlff_status mlff_evaluate_run(mlff_model *m, const mlff_batch *batch, const mlff_run_out *o, int atom_systems);

#endif
