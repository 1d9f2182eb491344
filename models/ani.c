/*
 * ANI as an operator graph:
 *   AEV = [radial | angular] per atom (pair lists within the two cutoffs)
 *   for each element: gather its atoms' AEVs, run every ensemble member side
 *   by side (first layer as one wide GEMM, later layers as grouped GEMMs),
 *   average the members, scatter the atomic energies back;
 *   energy per system = (sum of atomic energies + self energies) in eV.
 * The reverse pass of this graph gives the forces; nothing here knows about it.
 *
 * A graph may serve a subset of the model's elements (those a batch holds):
 * its AEV then has only the columns of those elements and their pairs, and
 * the first layers only the matching weight columns. The columns left out
 * are zero for every atom of such a batch, so the numbers are the same; the
 * work is not (a water box keeps 128 of ANI-2x's 1008 columns).
 */
#include "ani.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/elements.h"

#define HARTREE_TO_EV 27.211386024367243
#define ANI_MAX_ELEMENTS 32
#define ANI_MAX_LAYERS 16

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

static const mlff_model_tensor *need_tensor(ani_source *src, const char *name, int64_t rows,
                                            int64_t cols, mlff_dtype dtype)
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

static int need_scalar(ani_source *src, const char *name, double *value)
{
    const mlff_model_tensor *t = need_tensor(src, name, 1, 1, MLFF_DTYPE_F64);
    if (t)
        *value = *(const double *)t->data;
    return t != NULL;
}

/* A [n, 1] F64 column of the model file as a REAL graph parameter. */
static int column_param(mlff_graph *g, ani_source *src, const char *name)
{
    const mlff_model_tensor *t = need_tensor(src, name, -1, 1, MLFF_DTYPE_F64);
    if (!t)
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

/* The stacked weights of one layer of every member: [members*out, in] and [members*out, 1]. */
typedef struct ani_layer {
    int weight, bias;
    int64_t in, out;
    int activation;
    double alpha;
} ani_layer;

/* Row o of the stacked weights: the kept columns of row o of the file's. */
static void copy_weight_rows(float *dst, const float *src, int64_t rows, int64_t in, const ani_columns *keep)
{
    if (!keep) {
        memcpy(dst, src, (size_t)(rows * in) * sizeof *dst);
        return;
    }
    for (int64_t o = 0; o < rows; o++)
        for (int64_t c = 0; c < keep->length; c++)
            dst[o * keep->length + c] = src[o * in + keep->model_column[c]];
}

/* width: the inputs layer l must take (the model's AEV length for the
 * first); keep: the AEV columns the first layer reads (NULL for later layers). */
static int stack_layer(mlff_graph *g, ani_source *src, const char *el, int members, int l, int64_t width,
                       const ani_columns *keep, ani_layer *layer)
{
    char name[96];
    const mlff_model_tensor *w0;
    snprintf(name, sizeof name, "network.%s.0.%d.weight", el, l);
    if (!(w0 = need_tensor(src, name, -1, -1, MLFF_DTYPE_F32)))
        return 0;
    layer->out = w0->rows;
    layer->in = w0->cols;
    if (layer->in != width) {
        mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s layer %d takes %lld inputs, not %lld", el, l,
                  (long long)layer->in, (long long)width);
        return 0;
    }
    const int64_t cols = keep ? keep->length : layer->in;
    size_t wsize = (size_t)(layer->out * cols), bsize = (size_t)layer->out;
    float *w = malloc((size_t)members * wsize * sizeof *w);
    float *b = malloc((size_t)members * bsize * sizeof *b);
    int ok = w && b;
    if (!ok)
        mlff_fail(src->err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory stacking layers");
    for (int m = 0; ok && m < members; m++) {
        const mlff_model_tensor *wt, *bt, *act, *alpha;
        snprintf(name, sizeof name, "network.%s.%d.%d.weight", el, m, l);
        ok = (wt = need_tensor(src, name, layer->out, layer->in, MLFF_DTYPE_F32)) != NULL;
        snprintf(name, sizeof name, "network.%s.%d.%d.bias", el, m, l);
        ok = ok && (bt = need_tensor(src, name, layer->out, 1, MLFF_DTYPE_F32)) != NULL;
        snprintf(name, sizeof name, "network.%s.%d.activation", el, m);
        ok = ok && (act = need_tensor(src, name, -1, 1, MLFF_DTYPE_I32)) != NULL;
        snprintf(name, sizeof name, "network.%s.%d.activation_alpha", el, m);
        ok = ok && (alpha = need_tensor(src, name, act->rows, 1, MLFF_DTYPE_F64)) != NULL;
        if (!ok)
            break;
        if (l >= act->rows) {
            ok = 0;
            mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s member %d: no activation for "
                      "layer %d", el, m, l);
            break;
        }
        int code = ((const int32_t *)act->data)[l];
        double a = ((const double *)alpha->data)[l];
        if (m == 0) {
            layer->activation = code;
            layer->alpha = a;
        } else if (code != layer->activation || a != layer->alpha) {
            ok = 0;
            mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s: members differ in the "
                      "activation of layer %d", el, l);
            break;
        }
        copy_weight_rows(w + m * wsize, wt->data, layer->out, layer->in, keep);
        memcpy(b + m * bsize, bt->data, bsize * sizeof *b);
    }
    if (!ok) {
        free(w);
        free(b);
        return 0;
    }
    /* The graph takes the stacked arrays: the weights are copied once here, not twice. */
    snprintf(name, sizeof name, "network.%s.%d.weight", el, l);
    layer->weight = mlff_graph_param_take(g, name, MLFF_DTYPE_REAL, members * layer->out, cols,
                                          MLFF_DTYPE_F32, w);
    snprintf(name, sizeof name, "network.%s.%d.bias", el, l);
    layer->bias = mlff_graph_param_take(g, name, MLFF_DTYPE_REAL, members * layer->out, 1, MLFF_DTYPE_F32, b);
    return layer->weight >= 0 && layer->bias >= 0;
}

/* Whether the last `count` layers, after the first (whose input is the
 * shared AEV), can run as one CELU_MLP: no more than it takes, CELU of one
 * alpha after each but the last, nothing after the last. */
static int tail_is_mlp(const ani_layer *layers, int count)
{
    if (count > MLFF_MLP_MAX_LAYERS || layers[count - 1].activation != MLFF_ACTIVATION_IDENTITY)
        return 0;
    for (int k = 0; k < count; k++)
        if (layers[k].in > MLFF_MLP_MAX_WIDTH || layers[k].out > MLFF_MLP_MAX_WIDTH ||
            (k + 1 < count && (layers[k].activation != MLFF_ACTIVATION_CELU || layers[k].alpha != layers[0].alpha)))
            return 0;
    return 1;
}

/* Atomic energies (Hartree, [n_el, 1]) of the atoms of one element. */
static int element_network(mlff_graph *g, ani_source *src, const char *el, int members, int aev,
                           int atoms, const ani_columns *aev_columns)
{
    char name[96];
    int n_layers = 0;
    for (;; n_layers++) {
        snprintf(name, sizeof name, "network.%s.0.%d.weight", el, n_layers);
        if (!mlff_model_file_tensor(src->mf, name))
            break;
    }
    if (n_layers == 0 || n_layers > ANI_MAX_LAYERS) {
        mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s has %d layers", el, n_layers);
        return -1;
    }
    ani_layer layers[ANI_MAX_LAYERS];
    int64_t width = aev_columns->model_length;
    for (int l = 0; l < n_layers; l++) {
        ani_layer *layer = &layers[l];
        memset(layer, 0, sizeof *layer);
        if (!stack_layer(g, src, el, members, l, width, l == 0 ? aev_columns : NULL, layer))
            return -1;
        if (layer->activation != MLFF_ACTIVATION_CELU && layer->activation != MLFF_ACTIVATION_IDENTITY) {
            mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s layer %d: unknown activation "
                      "%d", el, l, layer->activation);
            return -1;
        }
        width = layer->out;
    }
    if (width != 1) {
        mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s ends in %lld outputs, not 1", el,
                  (long long)width);
        return -1;
    }
    /* Every member reads the same AEV, so the first layer is one wide GEMM;
     * after it each member has its own block of columns. */
    int h = mlff_op_gather_rows(g, aev, atoms, MLFF_DTYPE_REAL);
    int l = 0;
    for (; l < n_layers && (l == 0 || !tail_is_mlp(layers + l, n_layers - l)); l++) {
        h = mlff_op_linear(g, h, layers[l].weight, layers[l].bias, l == 0 ? 1 : members);
        if (layers[l].activation == MLFF_ACTIVATION_CELU)
            h = mlff_op_celu(g, h, layers[l].alpha);
    }
    if (l == n_layers)
        return mlff_op_sum_cols(g, h, 1.0 / members);
    /* The rest as one op (one kernel on a GPU instead of one per layer and
     * activation); its result, each member's energy, comes first. */
    int weights[MLFF_MLP_MAX_LAYERS], biases[MLFF_MLP_MAX_LAYERS];
    for (int k = l; k < n_layers; k++) {
        weights[k - l] = layers[k].weight;
        biases[k - l] = layers[k].bias;
    }
    const double alpha = n_layers - l > 1 ? layers[l].alpha : 1.0;
    h = mlff_op_celu_mlp(g, h, weights, biases, n_layers - l, members, alpha);
    return mlff_op_sum_first_cols(g, h, members, 1.0 / members);
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
                               char elements[][4], mlff_graph *g)
{
    const mlff_model_file *mf = src->mf;
    mlff_error *err = src->err;
    const char *ens = mlff_model_file_meta(mf, "ensemble_size");
    int members = ens ? atoi(ens) : 0;
    if (members < 1 || members > 1024)
        return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "bad ensemble_size '%s'", ens ? ens : "");

    double rcr, rca, eta_r, zeta, eta_a;
    if (!need_scalar(src, "aev.radial.cutoff", &rcr) || !need_scalar(src, "aev.radial.eta", &eta_r) ||
        !need_scalar(src, "aev.angular.cutoff", &rca) || !need_scalar(src, "aev.angular.zeta", &zeta) ||
        !need_scalar(src, "aev.angular.eta", &eta_a))
        return err->status;
    const mlff_model_tensor *sae = need_tensor(src, "self_energy", n_model, 1, MLFF_DTYPE_F64);
    if (!sae)
        return err->status;

    int pos = mlff_graph_input_positions(g);
    int species = mlff_graph_input_species(g);
    int system = mlff_graph_input_system(g);

    int pairs_r = mlff_graph_input_pairs(g, rcr);
    int vec_r = mlff_op_pair_vectors(g, pos, pairs_r, mlff_graph_pair_shifts(g, pairs_r));
    int shift_r = column_param(g, src, "aev.radial.shift");
    int radial = mlff_op_ani_radial(g, vec_r, pairs_r, species, shift_r, eta_r, rcr, n);

    int pairs_a = mlff_graph_input_pairs(g, rca);
    int vec_a = mlff_op_pair_vectors(g, pos, pairs_a, mlff_graph_pair_shifts(g, pairs_a));
    int shift_theta = column_param(g, src, "aev.angular.shift_theta");
    int shift_a = column_param(g, src, "aev.angular.shift_r");
    int angular = mlff_op_ani_angular(g, vec_a, pairs_a, mlff_graph_triples(g, pairs_a),
                                      species, shift_theta, shift_a, zeta, eta_a, rca, n);
    if (err->status != MLFF_OK)
        return err->status;
    int aev = mlff_op_concat_cols(g, radial, angular);
    mlff_graph_set_name(g, aev, "aev");
    if (mlff_graph_status(g) != MLFF_OK)
        return mlff_fail(err, mlff_graph_status(g), "building the ANI graph: %s", g->error.message);

    ani_columns keep;
    if (!keep_columns(src, model_element, n, n_model, g->tensors[shift_r].rows,
                      g->tensors[shift_theta].rows * g->tensors[shift_a].rows, &keep))
        return err->status;
    /* Atomic network energies, each element's scattered back into atom order. */
    int atomic = -1;
    for (int e = 0; e < n; e++) {
        int atoms = mlff_graph_input_element_atoms(g, e);
        int energy = element_network(g, src, elements[model_element[e]], members, aev, atoms, &keep);
        if (err->status != MLFF_OK)
            break;
        int per_atom = mlff_op_scatter_add_rows(g, energy, atoms, MLFF_SYMBOL_ATOMS, 0,
                                                MLFF_DTYPE_REAL);
        atomic = atomic < 0 ? per_atom : mlff_op_add(g, atomic, per_atom);
    }
    free(keep.model_column);
    if (err->status != MLFF_OK)
        return err->status;
    /* Sums per system in double; the self energies never leave double. */
    mlff_graph_set_name(g, atomic, "atomic_network_energies");
    int network = mlff_op_scatter_add_few_rows(g, atomic, system, MLFF_SYMBOL_SYSTEMS, 0, MLFF_DTYPE_F64);
    double self_energies[ANI_MAX_ELEMENTS];
    for (int e = 0; e < n; e++)
        self_energies[e] = ((const double *)sae->data)[model_element[e]];
    int sae_table = mlff_graph_param(g, "self_energy", MLFF_DTYPE_F64, n, 1, MLFF_DTYPE_F64, self_energies);
    int sae_atoms = mlff_op_mul(g, mlff_op_gather_rows(g, sae_table, species, MLFF_DTYPE_F64),
                                mlff_graph_input_owned(g));
    int self = mlff_op_scatter_add_few_rows(g, sae_atoms, system, MLFF_SYMBOL_SYSTEMS, 0, MLFF_DTYPE_F64);
    int energy = mlff_op_scale(g, mlff_op_add(g, network, self), HARTREE_TO_EV);
    mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, energy);

    if (mlff_graph_status(g) != MLFF_OK)
        return mlff_fail(err, mlff_graph_status(g), "building the ANI graph: %s", g->error.message);
    return MLFF_OK;
}

mlff_status mlff_ani_build_graph(const mlff_model_file *mf, const mlff_element_set *subset, mlff_graph *g,
                                 mlff_error *err)
{
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
    return build_graph(&src, model_element, n, n_model, elements, g);
}
