/*
 * ANI's element networks: each element's ensemble (every member side by
 * side: the first layer as one wide GEMM, the rest as one CELU_MLP) on the
 * AEV rows of its atoms, averaged over the members, summed per system.
 *
 * Three forms give the same numbers:
 * - stacked: the owned atoms' rows ordered by element, each element's run
 *   of rows through its own networks in one op a layer for every element
 *   (stacks, core/ops.h): the layers padded to the widest element's widths
 *   with zero weights (CELU(0) = 0, so padded units stay 0) and stacked
 *   element after element; their energies summed per system straight from
 *   that order. 5 launches forward (the gather of the rows, the first
 *   layer, CELU_MLP, the members' mean, the sum per system) and 3 back for
 *   any number of elements.
 * - merged: every element's networks on every atom, stacked as above, then
 *   each atom's own picked out by a mask of its species: fewer launches
 *   still (no gather or scatter of rows), at n_elements times the network
 *   work. Worth it where launches cost more than that work: small batches
 *   on a GPU (core/model_plans.c).
 * - separate: per element, gather its atoms' rows, run its networks and
 *   scatter their energies back (about 6 launches an element forward, 4 in
 *   the reverse pass); no padding.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ani_internal.h"

#define ANI_MAX_LAYERS 16

/* One layer of an element's members, stacked: weights [members*out, in]
 * (in: the kept AEV columns for the first layer) and biases [members*out, 1],
 * host arrays until a graph takes them. */
typedef struct ani_layer {
    float *w, *b;
    int64_t in, out;
    int activation;
    double alpha;
} ani_layer;

typedef struct ani_network {
    ani_layer layers[ANI_MAX_LAYERS];
    int n_layers;
} ani_network;

static void network_free(ani_network *net)
{
    for (int l = 0; l < net->n_layers; l++) {
        free(net->layers[l].w);
        free(net->layers[l].b);
    }
    memset(net, 0, sizeof *net);
}

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
static int read_layer(ani_source *src, const char *el, int members, int l, int64_t width,
                      const ani_columns *keep, ani_layer *layer)
{
    char name[96];
    const mlff_model_tensor *w0;
    snprintf(name, sizeof name, "network.%s.0.%d.weight", el, l);
    if (!(w0 = ani_need_tensor(src, name, -1, -1, MLFF_DTYPE_F32)))
        return 0;
    const int64_t file_in = w0->cols;
    layer->out = w0->rows;
    if (file_in != width) {
        mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s layer %d takes %lld inputs, not %lld", el, l,
                  (long long)file_in, (long long)width);
        return 0;
    }
    layer->in = keep ? keep->length : file_in;
    size_t wsize = (size_t)(layer->out * layer->in), bsize = (size_t)layer->out;
    layer->w = malloc((size_t)members * wsize * sizeof *layer->w);
    layer->b = malloc((size_t)members * bsize * sizeof *layer->b);
    if (!layer->w || !layer->b) {
        mlff_fail(src->err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory stacking layers");
        return 0;
    }
    for (int m = 0; m < members; m++) {
        const mlff_model_tensor *wt, *bt, *act, *alpha;
        snprintf(name, sizeof name, "network.%s.%d.%d.weight", el, m, l);
        if (!(wt = ani_need_tensor(src, name, layer->out, file_in, MLFF_DTYPE_F32)))
            return 0;
        snprintf(name, sizeof name, "network.%s.%d.%d.bias", el, m, l);
        if (!(bt = ani_need_tensor(src, name, layer->out, 1, MLFF_DTYPE_F32)))
            return 0;
        snprintf(name, sizeof name, "network.%s.%d.activation", el, m);
        if (!(act = ani_need_tensor(src, name, -1, 1, MLFF_DTYPE_I32)))
            return 0;
        snprintf(name, sizeof name, "network.%s.%d.activation_alpha", el, m);
        if (!(alpha = ani_need_tensor(src, name, act->rows, 1, MLFF_DTYPE_F64)))
            return 0;
        if (l >= act->rows)
            return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s member %d: no activation for "
                             "layer %d", el, m, l), 0;
        if (!ani_finite(src, wt) || !ani_finite(src, bt))
            return 0;
        int code = ((const int32_t *)act->data)[l];
        double a = ((const double *)alpha->data)[l];
        /* CELU divides by alpha: NaN, zero or negative would reach its exponential. */
        if (code == MLFF_ACTIVATION_CELU && !(a > 0.0 && a < HUGE_VAL))
            return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "ANI model tensor %s is %g for layer %d: a CELU "
                             "needs a positive alpha", alpha->name, a, l), 0;
        if (m == 0) {
            layer->activation = code;
            layer->alpha = a;
        } else if (code != layer->activation || a != layer->alpha) {
            return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s: members differ in the "
                             "activation of layer %d", el, l), 0;
        }
        copy_weight_rows(layer->w + m * wsize, wt->data, layer->out, file_in, keep);
        memcpy(layer->b + m * bsize, bt->data, bsize * sizeof *layer->b);
    }
    return 1;
}

/* Element el's network from the file, its first layer reading the kept AEV columns. */
static int read_network(ani_source *src, const char *el, int members, const ani_columns *keep,
                        ani_network *net)
{
    char name[96];
    int n_layers = 0;
    for (;; n_layers++) {
        snprintf(name, sizeof name, "network.%s.0.%d.weight", el, n_layers);
        if (!mlff_model_file_tensor(src->mf, name))
            break;
    }
    if (n_layers == 0 || n_layers > ANI_MAX_LAYERS)
        return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s has %d layers", el, n_layers), 0;
    int64_t width = keep->model_length;
    for (int l = 0; l < n_layers; l++) {
        ani_layer *layer = &net->layers[l];
        net->n_layers = l + 1; /* what network_free frees */
        if (!read_layer(src, el, members, l, width, l == 0 ? keep : NULL, layer))
            return 0;
        if (layer->activation != MLFF_ACTIVATION_CELU && layer->activation != MLFF_ACTIVATION_IDENTITY)
            return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s layer %d: unknown activation "
                             "%d", el, l, layer->activation), 0;
        width = layer->out;
    }
    if (width != 1)
        return mlff_fail(src->err, MLFF_ERROR_MODEL_FORMAT, "network %s ends in %lld outputs, not 1", el,
                         (long long)width), 0;
    return 1;
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

/* Layer l as graph parameters (`networks` side by side), which take its arrays. */
static void layer_params(mlff_graph *g, const char *name, int l, ani_layer *layer, int64_t networks, int *weight,
                         int *bias)
{
    char full[96];
    snprintf(full, sizeof full, "network.%s.%d.weight", name, l);
    *weight = mlff_graph_param_take(g, full, MLFF_DTYPE_REAL, networks * layer->out, layer->in, MLFF_DTYPE_F32,
                                    layer->w);
    snprintf(full, sizeof full, "network.%s.%d.bias", name, l);
    *bias = mlff_graph_param_take(g, full, MLFF_DTYPE_REAL, networks * layer->out, 1, MLFF_DTYPE_F32, layer->b);
    layer->w = layer->b = NULL;
}

/* x through the layers, each holding `stacks` stacks of `groups` networks
 * side by side (the first layer reads every group's input, x; with starts,
 * run e of x's rows goes through stack e), CELU_MLP output: each group's
 * result in its first `groups` columns. The layers' arrays go to the graph. */
static int run_layers(mlff_graph *g, const char *name, ani_layer *layers, int n_layers, int64_t groups,
                      int64_t stacks, int x, int starts)
{
    int h = x, l = 0;
    for (; l < n_layers && (l == 0 || !tail_is_mlp(layers + l, n_layers - l)); l++) {
        int weight, bias;
        layer_params(g, name, l, &layers[l], stacks * groups, &weight, &bias);
        h = mlff_op_linear_stacked(g, h, weight, bias, l == 0 ? 1 : groups, starts);
        if (layers[l].activation == MLFF_ACTIVATION_CELU)
            h = mlff_op_celu(g, h, layers[l].alpha);
    }
    if (l == n_layers)
        return h;
    /* The rest as one op (one kernel on a GPU instead of one per layer and
     * activation); its result, each group's energy, comes first. */
    int weights[MLFF_MLP_MAX_LAYERS], biases[MLFF_MLP_MAX_LAYERS];
    for (int k = l; k < n_layers; k++)
        layer_params(g, name, k, &layers[k], stacks * groups, &weights[k - l], &biases[k - l]);
    const double alpha = n_layers - l > 1 ? layers[l].alpha : 1.0;
    return mlff_op_celu_mlp_stacked(g, h, weights, biases, n_layers - l, groups, alpha, starts);
}

/* One element's atomic energies times unit, scattered back to the atoms ([atoms, 1]). */
static int separate_network(mlff_graph *g, const char *el, ani_network *net, int members, int aev, int atoms,
                            double unit)
{
    int rows = mlff_op_gather_rows(g, aev, atoms, MLFF_DTYPE_REAL);
    int h = run_layers(g, el, net->layers, net->n_layers, members, 1, rows, -1);
    return mlff_op_scatter_add_row_sums(g, h, -1, members, unit / members, atoms, MLFF_SYMBOL_ATOMS, 0,
                                        MLFF_DTYPE_REAL, 0);
}

/* The layers of n networks padded to the widest and stacked, element after
 * element (group e*members + m), into merged[]; 0 when they differ in depth
 * or activations. */
static int merge_layers(ani_network *nets, int n, int members, ani_layer *merged, mlff_error *err)
{
    const int n_layers = nets[0].n_layers;
    for (int e = 1; e < n; e++)
        if (nets[e].n_layers != n_layers)
            return 0;
    for (int l = 0; l < n_layers; l++) {
        ani_layer *m = &merged[l];
        *m = nets[0].layers[l];
        m->w = m->b = NULL;
        for (int e = 1; e < n; e++) {
            const ani_layer *x = &nets[e].layers[l];
            if (x->activation != m->activation || x->alpha != m->alpha)
                return 0;
            m->in = l == 0 || x->in < m->in ? m->in : x->in;
            m->out = x->out > m->out ? x->out : m->out;
        }
    }
    for (int l = 0; l < n_layers; l++) {
        ani_layer *m = &merged[l];
        const size_t rows = (size_t)n * members * m->out;
        m->w = calloc(rows * (size_t)m->in, sizeof *m->w);
        m->b = calloc(rows, sizeof *m->b);
        if (!m->w || !m->b)
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory merging networks"), 0;
        for (int e = 0; e < n; e++) {
            const ani_layer *x = &nets[e].layers[l];
            for (int64_t r = 0; r < members * x->out; r++) {
                const int64_t row = (e * members + r / x->out) * m->out + r % x->out;
                memcpy(m->w + row * m->in, x->w + r * x->in, (size_t)x->in * sizeof *m->w);
                m->b[row] = x->b[r];
            }
        }
    }
    return 1;
}

/* The layers of n networks padded and stacked (merge_layers) into layers[];
 * 0 when they cannot be (layers[] then freed) or cannot end in a CELU_MLP. */
static int stack_layers(ani_network *nets, int n, int members, ani_layer *layers, mlff_error *err)
{
    memset(layers, 0, ANI_MAX_LAYERS * sizeof *layers);
    const int n_layers = nets[0].n_layers;
    if (merge_layers(nets, n, members, layers, err) && n_layers >= 2 && tail_is_mlp(layers + 1, n_layers - 1))
        return 1;
    ani_network padded = {.n_layers = n_layers};
    memcpy(padded.layers, layers, ANI_MAX_LAYERS * sizeof *layers);
    network_free(&padded);
    return 0;
}

/* Each element's networks on its atoms (the owned atoms ordered by element,
 * a run of rows each), every element in one op a layer; the energies summed
 * per system from that order ([systems, 1] F64). -2: the networks cannot be
 * stacked. */
static int stacked_networks(mlff_graph *g, ani_network *nets, int n, int members, int aev, double unit,
                            mlff_error *err)
{
    ani_layer layers[ANI_MAX_LAYERS];
    if (!stack_layers(nets, n, members, layers, err))
        return err->status != MLFF_OK ? -1 : -2;
    const int order = mlff_graph_input_element_order(g);
    const int starts = n > 1 ? mlff_graph_input_element_starts(g, n) : -1;
    int h = run_layers(g, "stacked", layers, nets[0].n_layers, members, n,
                       mlff_op_gather_rows(g, aev, order, MLFF_DTYPE_REAL), starts);
    return mlff_op_scatter_add_row_sums(g, h, -1, members, unit / members, mlff_graph_input_element_systems(g),
                                        MLFF_SYMBOL_SYSTEMS, 0, MLFF_DTYPE_F64, 1);
}

/* Every element's networks on every atom; each atom's own energies (its
 * species' `members` columns of the result) summed per system ([systems, 1]
 * F64) through a mask that is 1 there for owned atoms and 0 elsewhere. -2:
 * the networks cannot be merged. */
static int merged_networks(mlff_graph *g, ani_network *nets, int n, int members, int aev, double unit,
                           mlff_error *err)
{
    ani_layer layers[ANI_MAX_LAYERS];
    if (!stack_layers(nets, n, members, layers, err))
        return err->status != MLFF_OK ? -1 : -2;
    const int64_t groups = (int64_t)n * members;
    int out = run_layers(g, "merged", layers, nets[0].n_layers, groups, 1, aev, -1);
    if (out < 0)
        return -1;
    const int64_t cols = g->tensors[out].cols;
    float *table = calloc((size_t)(n * cols), sizeof *table);
    if (!table)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory merging networks"), -1;
    for (int e = 0; e < n; e++)
        for (int m = 0; m < members; m++)
            table[e * cols + e * members + m] = 1.0f;
    int mask_table = mlff_graph_param_take(g, "merged.mask", MLFF_DTYPE_REAL, n, cols, MLFF_DTYPE_F32, table);
    int species = mlff_graph_input_species(g);
    int mask = mlff_op_mul(g, mlff_op_gather_rows(g, mask_table, species, MLFF_DTYPE_REAL),
                           mlff_graph_input_owned(g, MLFF_DTYPE_REAL));
    return mlff_op_scatter_add_row_sums(g, out, mask, groups, unit / members, mlff_graph_input_system(g),
                                        MLFF_SYMBOL_SYSTEMS, 0, MLFF_DTYPE_F64, 1);
}

int ani_network_energies(mlff_graph *g, ani_source *src, char elements[][4], const int *model_element, int n,
                         int members, int aev, const ani_columns *keep, mlff_element_networks networks, double unit)
{
    ani_network *nets = calloc((size_t)n, sizeof *nets);
    if (!nets)
        return mlff_fail(src->err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory"), -1;
    int energies = -2, ok = 1;
    for (int e = 0; ok && e < n; e++)
        ok = read_network(src, elements[model_element[e]], members, keep, &nets[e]);
    if (ok && networks == MLFF_ELEMENT_NETWORKS_MERGED && n > 1)
        energies = merged_networks(g, nets, n, members, aev, unit, src->err);
    else if (ok && networks != MLFF_ELEMENT_NETWORKS_SEPARATE)
        energies = stacked_networks(g, nets, n, members, aev, unit, src->err);
    if (ok && energies == -2) {
        int atomic = -1;
        for (int e = 0; e < n; e++) {
            int per_atom = separate_network(g, elements[model_element[e]], &nets[e], members, aev,
                                            mlff_graph_input_element_atoms(g, e), unit);
            atomic = atomic < 0 ? per_atom : mlff_op_add(g, atomic, per_atom);
        }
        /* Sums per system in double. */
        energies = mlff_op_scatter_add_few_rows(g, atomic, mlff_graph_input_system(g), MLFF_SYMBOL_SYSTEMS, 0,
                                                MLFF_DTYPE_F64);
    }
    for (int e = 0; e < n; e++)
        network_free(&nets[e]);
    free(nets);
    return ok ? energies : -1;
}
