/*
 * What models/ani.c (the AEV and the energy sums) and models/ani_networks.c
 * (the element networks) share.
 */
#ifndef MLFF_MODELS_ANI_INTERNAL_H
#define MLFF_MODELS_ANI_INTERNAL_H

#include "ani.h"

#define ANI_MAX_ELEMENTS 32

typedef struct ani_source {
    const mlff_model_file *mf;
    mlff_error *err;
} ani_source;

/* Which columns of the model's AEV (model_length of them) the graph's AEV
 * keeps, in the graph's order. */
typedef struct ani_columns {
    int64_t *model_column;
    int64_t length, model_length;
} ani_columns;

/* The largest cutoff an ANI model may have, Angstrom: ANI-1x and ANI-2x
 * use 5.2 and 5.1; far more is a broken file, and costs pair lists of
 * gigabytes before anything else could say so. */
#define ANI_MOST_CUTOFF 20.0

/* Whether every number of tensor t (F32 or F64) is finite; if not, 0 with
 * *src->err naming the tensor and the entry. */
int ani_finite(ani_source *src, const mlff_model_tensor *t);

/* The file's tensor `name`, checked for its shape (-1: any) and dtype; NULL
 * (and *src->err set) when it is missing or unlike that. */
const mlff_model_tensor *ani_need_tensor(ani_source *src, const char *name, int64_t rows, int64_t cols,
                                         mlff_dtype dtype);

/* The network energies per system ([systems, 1] F64) of the owned atoms
 * of the graph's n elements (elements[model_element[e]] their symbols),
 * each atom's the mean of `members` networks that read its row of aev,
 * times unit (the networks give Hartree), run as `networks` says
 * (models/ani.h; models whose networks cannot be stacked or merged get
 * separate ones). -1 on failure (*src->err set). */
int ani_network_energies(mlff_graph *g, ani_source *src, char elements[][4], const int *model_element, int n,
                         int members, int aev, const ani_columns *keep, mlff_element_networks networks,
                         double unit);

#endif
