/*
 * ANI as an operator graph:
 *   AEV = [radial | angular] per atom (pair lists within the two cutoffs)
 *   for each element: its ensemble's networks on its atoms' AEVs, averaged
 *   over the members (models/ani_networks.c);
 *   energy per system = (sum of atomic energies + self energies) in eV.
 * The reverse pass of this graph gives the forces; nothing here knows about it.
 *
 * A graph may serve a subset of the model's elements (those a batch holds):
 * its AEV then has only the columns of those elements and their pairs, and
 * the first layers only the matching weight columns. The columns left out
 * are zero for every atom of such a batch, so the numbers are the same; the
 * work is not (a water box keeps 128 of ANI-2x's 1008 columns).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/elements.h"
#include "ani_internal.h"

#define HARTREE_TO_EV 27.211386024367243

const mlff_model_tensor *ani_need_tensor(ani_source *src, const char *name, int64_t rows, int64_t cols,
                                         mlff_dtype dtype)
{
    const mlff_model_tensor *t = mlff_model_file_tensor(src->mf, name);
    if (!t) {
        mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "ANI model lacks tensor %s", name);
        return NULL;
    }
    if (t->dtype != dtype || (rows >= 0 && t->rows != rows) || (cols >= 0 && t->cols != cols)) {
        mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "ANI model tensor %s has shape [%lld, %lld] "
                  "or type unlike what ANI expects", name, (long long)t->rows, (long long)t->cols);
        return NULL;
    }
    return t;
}

/* A number that is not finite, for the messages: the file's tensor and where. */
static int not_finite(ani_source *src, const mlff_model_tensor *t, int64_t k, double value)
{
    mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "ANI model tensor %s holds %g at [%lld, %lld]: not a finite number",
              t->name, value, (long long)(k / t->cols), (long long)(k % t->cols));
    return 0;
}

int ani_finite(ani_source *src, const mlff_model_tensor *t)
{
    const int64_t n = t->rows * t->cols;
    if (t->dtype == MLFF_DTYPE_F32) {
        const float *x = t->data;
        for (int64_t k = 0; k < n; k++)
            if (!isfinite(x[k]))
                return not_finite(src, t, k, x[k]);
    } else if (t->dtype == MLFF_DTYPE_F64) {
        const double *x = t->data;
        for (int64_t k = 0; k < n; k++)
            if (!isfinite(x[k]))
                return not_finite(src, t, k, x[k]);
    }
    return 1;
}

/*
 * A scalar of the AEV, positive and at most `most`: NaN or negative widths
 * (eta, zeta) would reach the kernels' exponentials, where a float to int
 * conversion is undefined; a cutoff of hundreds of Angstrom means pair
 * lists of gigabytes, for features no ANI model has ever used (5.2 A at
 * most so far).
 */
static int need_positive(ani_source *src, const char *name, double most, double *value)
{
    const mlff_model_tensor *t = ani_need_tensor(src, name, 1, 1, MLFF_DTYPE_F64);
    if (!t)
        return 0;
    *value = *(const double *)t->data;
    if (!(*value > 0.0 && *value <= most && isfinite(*value))) {
        if (isfinite(most))
            mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT,
                      "ANI model tensor %s is %g: it must be positive and at most %g", name, *value, most);
        else
            mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "ANI model tensor %s is %g: it must be a positive number",
                      name, *value);
        return 0;
    }
    return 1;
}

/* A [n, 1] F64 column of the model file (finite numbers) as a REAL graph parameter. */
static int column_param(mlff_graph *g, ani_source *src, const char *name)
{
    const mlff_model_tensor *t = ani_need_tensor(src, name, -1, 1, MLFF_DTYPE_F64);
    if (!t || !ani_finite(src, t))
        return -1;
    return mlff_graph_param(g, name, MLFF_DTYPE_REAL, t->rows, 1, MLFF_DTYPE_F64, t->data);
}

/* Splits the "elements" metadata into symbols; returns the count or -1. */
static int parse_elements(ani_source *src, char symbols[][4])
{
    const char *list = mlff_model_file_meta(src->mf, "elements");
    if (!list)
        return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "ANI model lacks 'elements'"), -1;
    int n = 0;
    for (const char *p = list; *p;) {
        while (*p == ' ')
            p++;
        size_t len = strcspn(p, " ");
        if (len == 0)
            break;
        if (n == ANI_MAX_ELEMENTS || len > 3)
            return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "bad element list '%s'", list), -1;
        memcpy(symbols[n], p, len);
        symbols[n][len] = '\0';
        if (!mlff_element_number_internal(symbols[n]))
            return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "unknown element '%s' in model",
                             symbols[n]), -1;
        n++;
        p += len;
    }
    if (n == 0)
        return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "ANI model has no elements"), -1;
    return n;
}

/* Slot of the unordered pair of elements a <= b among n (upper-triangle order). */
static int64_t pair_slot(int64_t a, int64_t b, int64_t n)
{
    return a * n - a * (a - 1) / 2 + (b - a);
}

/* The model's AEV columns that the graph's elements keep: each kept
 * element's radial block, then each kept pair's angular block, in the
 * model's order. */
static int keep_columns(ani_source *src, const int *model_element, int n, int n_model, int64_t radial,
                        int64_t angular, ani_columns *keep)
{
    keep->model_length = n_model * radial + pair_slot(n_model, n_model, n_model) * angular;
    keep->length = n * radial + pair_slot(n, n, n) * angular;
    if (!(keep->model_column = malloc((size_t)keep->length * sizeof *keep->model_column)))
        return mlff_fail(src->err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory"), 0;
    int64_t k = 0;
    for (int a = 0; a < n; a++)
        for (int64_t r = 0; r < radial; r++)
            keep->model_column[k++] = model_element[a] * radial + r;
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++)
            for (int64_t c = 0; c < angular; c++)
                keep->model_column[k++] =
                    n_model * radial + pair_slot(model_element[a], model_element[b], n_model) * angular + c;
    return 1;
}

static mlff_status build_graph(ani_source *src, const int *model_element, int n, int n_model,
                               char elements[][4], mlff_element_networks networks, mlff_graph *g)
{
    const mlff_model_file *mf = src->mf;
    mlff_error *err = src->err;
    const char *ens = mlff_model_file_meta(mf, "ensemble_size");
    int members = ens ? atoi(ens) : 0;
    if (members < 1 || members > 1024)
        return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "bad ensemble_size '%s'", ens ? ens : "");

    double rcr, rca, eta_r, zeta, eta_a;
    if (!need_positive(src, "aev.radial.cutoff", ANI_MOST_CUTOFF, &rcr) ||
        !need_positive(src, "aev.radial.eta", HUGE_VAL, &eta_r) ||
        !need_positive(src, "aev.angular.cutoff", ANI_MOST_CUTOFF, &rca) ||
        !need_positive(src, "aev.angular.zeta", HUGE_VAL, &zeta) ||
        !need_positive(src, "aev.angular.eta", HUGE_VAL, &eta_a))
        return err->status;
    const mlff_model_tensor *sae = ani_need_tensor(src, "self_energy", n_model, 1, MLFF_DTYPE_F64);
    if (!sae || !ani_finite(src, sae))
        return err->status;

    int pos = mlff_graph_input_positions(g);
    int species = mlff_graph_input_species(g);
    int system = mlff_graph_input_system(g);

    /* The self energies per system, in double throughout; first, so that
     * the networks' sum, which runs every call, can take the add. */
    double self_energies[ANI_MAX_ELEMENTS];
    for (int e = 0; e < n; e++)
        self_energies[e] = HARTREE_TO_EV * ((const double *)sae->data)[model_element[e]];
    int sae_table = mlff_graph_param(g, "self_energy", MLFF_DTYPE_F64, n, 1, MLFF_DTYPE_F64, self_energies);
    int sae_atoms = mlff_op_mul(g, mlff_op_gather_rows(g, sae_table, species, MLFF_DTYPE_F64),
                                mlff_graph_input_owned(g, MLFF_DTYPE_F64));
    int self = mlff_op_scatter_add_few_rows(g, sae_atoms, system, MLFF_SYMBOL_SYSTEMS, 0, MLFF_DTYPE_F64);

    int pairs_r = mlff_graph_input_pairs(g, rcr);
    int shift_r = column_param(g, src, "aev.radial.shift");
    const mlff_ani_radial_inputs radial = {mlff_graph_pair_vectors(g, pos, pairs_r), pairs_r, shift_r, eta_r, rcr};

    int pairs_a = mlff_graph_input_pairs(g, rca);
    int vec_a = mlff_graph_pair_vectors(g, pos, pairs_a);
    int shift_theta = column_param(g, src, "aev.angular.shift_theta");
    int shift_a = column_param(g, src, "aev.angular.shift_r");
    /* The radial and angular features in one node: one launch. */
    int aev = mlff_op_ani_aev(g, &radial, vec_a, pairs_a, mlff_graph_triples(g, pairs_a), species, shift_theta,
                              shift_a, zeta, eta_a, rca, n);
    if (err->status != MLFF_OK)
        return err->status;
    mlff_graph_set_name(g, aev, "aev");
    if (mlff_graph_status(g) != MLFF_OK)
        return mlff_fail(err, mlff_graph_status(g), "building the ANI graph: %s", g->error.message);

    ani_columns keep;
    if (!keep_columns(src, model_element, n, n_model, g->tensors[shift_r].rows,
                      g->tensors[shift_theta].rows * g->tensors[shift_a].rows, &keep))
        return err->status;
    /* In eV from the start: the members' mean takes the conversion. */
    int network = ani_network_energies(g, src, elements, model_element, n, members, aev, &keep, networks,
                                       HARTREE_TO_EV);
    free(keep.model_column);
    if (err->status != MLFF_OK)
        return err->status;
    mlff_graph_set_name(g, network, "network_energies");
    int energy = mlff_op_add(g, network, self);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, energy);

    if (mlff_graph_status(g) != MLFF_OK)
        return mlff_fail(err, mlff_graph_status(g), "building the ANI graph: %s", g->error.message);
    return MLFF_OK;
}

/* The energy graph (eV per system) of an ANI model file for the model's
 * elements in the request (all when it names none), numbered from 0 in the
 * model's order; the request's form says how the element networks run. */
static mlff_status build_ani_graph(const mlff_model_file *mf, const mlff_graph_request *r, mlff_graph *g,
                                   mlff_error *err)
{
    const mlff_element_set *subset = r->elements;
    const mlff_element_networks networks = (mlff_element_networks)r->form;
    ani_source src = {mf, err};
    char elements[ANI_MAX_ELEMENTS][4];
    int n_model = parse_elements(&src, elements);
    if (n_model < 0)
        return err->status;
    int model_element[ANI_MAX_ELEMENTS], n = 0;
    for (int e = 0; e < n_model; e++)
        if (!subset || mlff_element_set_has(subset, e))
            model_element[n++] = e;
    if (n == 0)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "an ANI graph for none of the model's elements");
    return build_graph(&src, model_element, n, n_model, elements, networks, g);
}

/*
 * How a batch's element networks run, as measured on an NVIDIA H200
 * (bench/RESULTS.md, 2026-11-25). Separate networks take about 10 launches
 * an element, stacked ones 10 in all (6 forward, 4 back) and merged ones 6
 * without gathers and scatters of rows, at n - 1 networks an atom more;
 * stacked and merged pad every element's layers to the widest.
 * - Merged: methane (2 elements) 0.14-0.16 ms on OpenCL, stacked 0.15-0.18;
 *   from 15 atoms of water stacked is as fast or faster on both backends.
 *   So a GPU merges while the extra networks, (n - 1) x atoms, stay within
 *   the record's merged_networks_most_extra.
 * - Stacked against separate: 64 molecules of 5 elements (560 atoms)
 *   1.17-1.22 -> 0.73-0.74 ms on OpenCL, 1.73-1.80 -> 1.16 on Vulkan; the
 *   1536-atom water box 1.04-1.08 -> 0.97-1.01 on OpenCL, as fast on Vulkan;
 *   from 5184 atoms the padded widths cost more (OpenCL 2.07-2.22 -> 2.30-2.43
 *   ms). So GPUs stack up to stacked_networks_most_atoms. On the CPU, where
 *   launches cost nothing, separate networks run (the padding made the 64
 *   molecules 31.5-31.7 -> 32.8-33.4 ms on 2 cores).
 */
static int plan_form(int n_elements, int64_t atoms, const mlff_tuning *t)
{
    if (t->element_networks != MLFF_ELEMENT_NETWORKS_AUTO)
        return t->element_networks;
    const int64_t extra = (int64_t)(n_elements - 1) * atoms;
    return extra <= t->merged_networks_most_extra    ? MLFF_ELEMENT_NETWORKS_MERGED
           : atoms <= t->stacked_networks_most_atoms ? MLFF_ELEMENT_NETWORKS_STACKED
                                                     : MLFF_ELEMENT_NETWORKS_SEPARATE;
}

static const char *const metadata[] = {"ensemble_size", NULL};
static const char *const tensors[] = {"aev.radial.cutoff", "aev.radial.eta", "aev.radial.shift", "aev.angular.cutoff",
                                      "aev.angular.zeta", "aev.angular.shift_theta", "aev.angular.eta",
                                      "aev.angular.shift_r", "self_energy", "network.", NULL};

const mlff_model_family mlff_family_ani = {
    .name = "ani",
    .metadata = metadata,
    .tensors = tensors,
    .build_graph = build_ani_graph,
    .plan_form = plan_form,
    .default_form = MLFF_ELEMENT_NETWORKS_SEPARATE,
};
