/*
 * A plan: a graph made ready to run on one backend in one precision.
 *
 * It owns device buffers for its tensors, one shared by working tensors
 * whose lives do not overlap (buffer_sharing.h), sized for the bound row
 * counts and kept between runs: a new batch of the same or smaller sizes (an MD
 * loop) allocates nothing; a larger one grows the buffers by at least 1.5x.
 * Parameters are uploaded once. Which nodes run depends on the outputs asked
 * for (energies alone skip the reverse pass), and on what changed since the
 * last run (mlff_plan_reused).
 */
#ifndef MLFF_RUNTIME_PLAN_H
#define MLFF_RUNTIME_PLAN_H

#include "backends/backend.h"
#include "core/graph.h"

typedef struct mlff_plan mlff_plan;

mlff_status mlff_plan_create(const mlff_graph *g, const mlff_backend_iface *iface,
                             mlff_backend *be, mlff_dtype real, mlff_plan **out, mlff_error *err);
void mlff_plan_destroy(mlff_plan *p);

/* Frees the buffers of everything but the parameters (a plan set aside);
 * the next bind allocates them again. */
void mlff_plan_release(mlff_plan *p);

/* Set the value of every size symbol (g->n_symbols of them) and make sure
 * every buffer is large enough. */
mlff_status mlff_plan_bind(mlff_plan *p, const int64_t *symbol_values, mlff_error *err);

/* Upload an input tensor from host data of host_dtype (converted to the
 * tensor's dtype), rows x cols as bound. */
mlff_status mlff_plan_write(mlff_plan *p, int tensor, mlff_dtype host_dtype, const void *data,
                            mlff_error *err);

/* The device buffer of an input tensor (as bound), for work that fills it
 * on the device instead of mlff_plan_write: from now on it counts as changed. */
void *mlff_plan_input_to_fill(mlff_plan *p, int tensor);

/* Whether pair list `tensor` ([P, 2]) holds, from the next run on, for
 * each pair (i, j, n) its reverse (j, i, -n), ordered by i, then j (pair
 * gradients then need no sort by neighbour: mlff_exec_tensor.symmetric). */
void mlff_plan_set_symmetric(mlff_plan *p, int tensor, int symmetric);

/* Run the nodes that the wanted outputs need (mask of 1 << mlff_output_role). */
mlff_status mlff_plan_run(mlff_plan *p, unsigned outputs, mlff_error *err);

/* Download a tensor as doubles (rows x cols as bound). */
mlff_status mlff_plan_read(mlff_plan *p, int tensor, double *dst, mlff_error *err);
/* The same in two steps, so that an evaluation's outputs wait for the
 * device once: dst holds the tensor once mlff_plan_wait returned OK. Every
 * read asked for must be waited for, also after a failure, before dst goes. */
mlff_status mlff_plan_read_later(mlff_plan *p, int tensor, double *dst, mlff_error *err);
mlff_status mlff_plan_wait(mlff_plan *p, mlff_error *err);

/* Rows of a tensor as bound. */
int64_t mlff_plan_rows(const mlff_plan *p, int tensor);

/* How many times buffers were (re)allocated: 1 after the first bind. */
uint64_t mlff_plan_builds(const mlff_plan *p);

/* How many node launches were saved because a node reads only parameters,
 * batch inputs (all but positions and pair lists) and such nodes, and
 * none of them changed since it ran: an MD loop reruns only what the
 * positions change. */
uint64_t mlff_plan_reused(const mlff_plan *p);

/* The nodes a run for `outputs` executes, after the backend's epilogues
 * were folded into the nodes before them (and pair vectors into the AEV
 * that reads them: vectors_in_aev.h). */
int mlff_plan_nodes(const mlff_plan *p, unsigned outputs);
/* ... and how many of them are of `op`. */
int mlff_plan_nodes_of(const mlff_plan *p, unsigned outputs, mlff_op op);

/* The device memory a row of size symbol `symbol` costs: in all buffers of
 * working tensors with rows of that symbol together (*total) and in the
 * widest of them (*widest). For the chunk planner. */
void mlff_plan_row_bytes(const mlff_plan *p, int symbol, size_t *total, size_t *widest);

/* Bytes the parameters (weights) take on the device. */
size_t mlff_plan_param_bytes(const mlff_plan *p);

/* Buffers may be up to this many times the bound size (growth headroom). */
#define MLFF_PLAN_HEADROOM 1.5

#endif
