#include "graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grows *array (of elem bytes each) so that it holds at least need items. */
static int grow(void **array, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 1;
    int new_cap = *cap ? *cap * 2 : 16;
    while (new_cap < need)
        new_cap *= 2;
    void *p = realloc(*array, (size_t)new_cap * elem);
    if (!p)
        return 0;
    *array = p;
    *cap = new_cap;
    return 1;
}

mlff_graph *mlff_graph_create(void)
{
    mlff_graph *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    mlff_error_clear(&g->error);
    for (int r = 0; r < MLFF_OUTPUT_COUNT; r++)
        g->outputs[r] = -1;
    for (int k = 0; k < MLFF_MAX_GRADIENT_LISTS; k++)
        g->gradient_pairs[k] = -1;
    if (mlff_graph_new_symbol(g, "atoms") != MLFF_SYMBOL_ATOMS ||
        mlff_graph_new_symbol(g, "systems") != MLFF_SYMBOL_SYSTEMS) {
        mlff_graph_destroy(g);
        return NULL;
    }
    return g;
}

void mlff_graph_destroy(mlff_graph *g)
{
    if (!g)
        return;
    for (int t = 0; t < g->n_tensors; t++)
        free(g->tensors[t].host_data);
    free(g->tensors);
    free(g->nodes);
    free(g->symbols);
    free(g);
}

mlff_status mlff_graph_status(const mlff_graph *g)
{
    return g->error.status;
}

int mlff_graph_fail(mlff_graph *g, mlff_status status, const char *fmt, ...)
{
    if (g->error.status == MLFF_OK) {
        va_list ap;
        va_start(ap, fmt);
        g->error.status = status;
        vsnprintf(g->error.message, sizeof g->error.message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int mlff_graph_new_symbol(mlff_graph *g, const char *name)
{
    if (g->error.status != MLFF_OK)
        return -1;
    if (!grow((void **)&g->symbols, &g->cap_symbols, g->n_symbols + 1, sizeof *g->symbols))
        return mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory building the graph");
    snprintf(g->symbols[g->n_symbols], sizeof g->symbols[0], "%s", name);
    return g->n_symbols++;
}

static int new_tensor(mlff_graph *g, mlff_tensor_kind kind, mlff_dtype dtype, int rows_symbol,
                      int64_t rows, int64_t cols)
{
    if (g->error.status != MLFF_OK)
        return -1;
    if (!grow((void **)&g->tensors, &g->cap_tensors, g->n_tensors + 1, sizeof *g->tensors))
        return mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory building the graph");
    mlff_graph_tensor *t = &g->tensors[g->n_tensors];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->dtype = dtype;
    t->rows_symbol = rows_symbol;
    t->rows = rows_symbol == MLFF_FIXED_ROWS ? rows : 0;
    t->cols = cols;
    t->role_link = -1;
    return g->n_tensors++;
}

static int new_input(mlff_graph *g, mlff_input_role role, mlff_dtype dtype, int rows_symbol,
                     int64_t cols, int link, double cutoff)
{
    int t = new_tensor(g, MLFF_TENSOR_INPUT, dtype, rows_symbol, 0, cols);
    if (t < 0)
        return -1;
    g->tensors[t].role = role;
    g->tensors[t].role_link = link;
    g->tensors[t].cutoff = cutoff;
    return t;
}

/* Inputs that depend only on the atoms are shared: asking twice gives the same tensor. */
static int find_input(const mlff_graph *g, mlff_input_role role, int link)
{
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == MLFF_TENSOR_INPUT && g->tensors[t].role == role &&
            g->tensors[t].role_link == link)
            return t;
    return -1;
}

static int is_input(const mlff_graph *g, int t, mlff_input_role role)
{
    return t >= 0 && t < g->n_tensors && g->tensors[t].kind == MLFF_TENSOR_INPUT &&
           g->tensors[t].role == role;
}

static int atom_input(mlff_graph *g, mlff_input_role role, mlff_dtype dtype, int64_t cols)
{
    for (int t = 0; t < g->n_tensors; t++)
        if (is_input(g, t, role) && g->tensors[t].dtype == dtype)
            return t;
    return new_input(g, role, dtype, MLFF_SYMBOL_ATOMS, cols, -1, 0.0);
}

int mlff_graph_input_positions(mlff_graph *g)
{
    return atom_input(g, MLFF_INPUT_POSITIONS, MLFF_DTYPE_REAL, 3);
}

int mlff_graph_input_species(mlff_graph *g)
{
    return atom_input(g, MLFF_INPUT_SPECIES, MLFF_DTYPE_I32, 1);
}

int mlff_graph_input_system(mlff_graph *g)
{
    return atom_input(g, MLFF_INPUT_SYSTEM, MLFF_DTYPE_I32, 1);
}

int mlff_graph_input_owned(mlff_graph *g, mlff_dtype dtype)
{
    return atom_input(g, MLFF_INPUT_OWNED, dtype, 1);
}

int mlff_graph_input_tangents(mlff_graph *g, int64_t n_tangents)
{
    return atom_input(g, MLFF_INPUT_TANGENTS, MLFF_DTYPE_REAL, 3 * n_tangents);
}

int mlff_graph_input_pairs(mlff_graph *g, double cutoff)
{
    if (g->error.status != MLFF_OK)
        return -1;
    if (!(cutoff > 0.0))
        return mlff_graph_fail(g, MLFF_ERROR_MODEL_FORMAT, "pair list cutoff %g is not positive",
                               cutoff);
    for (int t = 0; t < g->n_tensors; t++)
        if (is_input(g, t, MLFF_INPUT_PAIRS) && g->tensors[t].cutoff == cutoff)
            return t;
    char name[32];
    snprintf(name, sizeof name, "pairs(%g)", cutoff);
    int sym = mlff_graph_new_symbol(g, name);
    return sym < 0 ? -1 : new_input(g, MLFF_INPUT_PAIRS, MLFF_DTYPE_I32, sym, 2, -1, cutoff);
}

int mlff_graph_input_cells(mlff_graph *g)
{
    int t = find_input(g, MLFF_INPUT_CELLS, -1);
    return t >= 0 ? t : new_input(g, MLFF_INPUT_CELLS, MLFF_DTYPE_REAL, MLFF_SYMBOL_SYSTEMS, 9, -1, 0.0);
}

int mlff_graph_input_positions_low(mlff_graph *g)
{
    return atom_input(g, MLFF_INPUT_POSITIONS_LOW, MLFF_DTYPE_REAL, 3);
}

int mlff_graph_input_cells_low(mlff_graph *g)
{
    int t = find_input(g, MLFF_INPUT_CELLS_LOW, -1);
    return t >= 0 ? t : new_input(g, MLFF_INPUT_CELLS_LOW, MLFF_DTYPE_REAL, MLFF_SYMBOL_SYSTEMS, 9, -1, 0.0);
}

int mlff_graph_pair_vectors(mlff_graph *g, int positions, int pairs)
{
    if (g->error.status != MLFF_OK)
        return -1;
    if (!is_input(g, pairs, MLFF_INPUT_PAIRS))
        return mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "pair vectors need a pair list input");
    int images = find_input(g, MLFF_INPUT_PAIR_IMAGES, pairs);
    if (images < 0)
        images = new_input(g, MLFF_INPUT_PAIR_IMAGES, MLFF_DTYPE_I32, g->tensors[pairs].rows_symbol, 1,
                           pairs, 0.0);
    const int exact = is_input(g, positions, MLFF_INPUT_POSITIONS); /* with the low parts (graph.h) */
    return mlff_op_pair_vectors_of_images(g, positions, pairs, images, mlff_graph_input_cells(g),
                                          mlff_graph_input_system(g), exact ? mlff_graph_input_positions_low(g) : -1,
                                          exact ? mlff_graph_input_cells_low(g) : -1);
}

int mlff_graph_pair_shifts(mlff_graph *g, int pairs)
{
    if (g->error.status != MLFF_OK)
        return -1;
    if (!is_input(g, pairs, MLFF_INPUT_PAIRS))
        return mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "pair shifts need a pair list input");
    int images = find_input(g, MLFF_INPUT_PAIR_IMAGES, pairs);
    if (images < 0)
        images = new_input(g, MLFF_INPUT_PAIR_IMAGES, MLFF_DTYPE_I32, g->tensors[pairs].rows_symbol, 1, pairs, 0.0);
    return mlff_op_pair_shifts(g, images, mlff_graph_input_cells(g), pairs, mlff_graph_input_system(g));
}

int mlff_graph_triples(mlff_graph *g, int pairs)
{
    if (g->error.status != MLFF_OK)
        return -1;
    if (!is_input(g, pairs, MLFF_INPUT_PAIRS))
        return mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "triples need a pair list input");
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == MLFF_OP_PAIR_TRIPLES && g->nodes[k].inputs[0] == pairs)
            return g->nodes[k].output;
    char name[32];
    snprintf(name, sizeof name, "triples(%g)", g->tensors[pairs].cutoff);
    const int sym = mlff_graph_new_symbol(g, name);
    const int starts = sym < 0 ? -1
                               : new_input(g, MLFF_INPUT_TRIPLE_STARTS, MLFF_DTYPE_I32,
                                           g->tensors[pairs].rows_symbol, 1, pairs, 0.0);
    return starts < 0 ? -1 : mlff_op_pair_triples(g, pairs, starts, sym, 0);
}

const mlff_graph_node *mlff_graph_producer(const mlff_graph *g, int t)
{
    for (int k = g->n_nodes - 1; k >= 0; k--)
        if (g->nodes[k].output == t)
            return &g->nodes[k];
    return NULL;
}

int mlff_graph_ascending(const mlff_graph *g, int t)
{
    const mlff_graph_tensor *x = &g->tensors[t];
    if (x->kind == MLFF_TENSOR_INPUT)
        return x->role == MLFF_INPUT_PAIRS || x->role == MLFF_INPUT_ELEMENT_ATOMS;
    const mlff_graph_node *n = mlff_graph_producer(g, t);
    return n && n->op == MLFF_OP_PAIR_TRIPLES && is_input(g, n->inputs[0], MLFF_INPUT_PAIRS) &&
           is_input(g, n->inputs[1], MLFF_INPUT_TRIPLE_STARTS);
}

/* A parameter first[] that is the running count of pair_triples(pairs, .)'s
 * triples, and triples with that many rows. */
static int is_running_count(const mlff_graph_tensor *pairs, const mlff_graph_tensor *first,
                            const mlff_graph_tensor *triples)
{
    if (pairs->kind != MLFF_TENSOR_PARAM || first->kind != MLFF_TENSOR_PARAM || pairs->host_dtype != MLFF_DTYPE_I32 ||
        first->host_dtype != MLFF_DTYPE_I32 || pairs->cols != 2 || first->cols != 1 || first->rows != pairs->rows ||
        triples->rows_symbol != MLFF_FIXED_ROWS)
        return 0;
    const int32_t *p = pairs->host_data, *f = first->host_data;
    int64_t count = 0;
    for (int64_t a = 0; a < pairs->rows; a++) {
        if (f[a] != count)
            return 0;
        for (int64_t c = a + 1; c < pairs->rows && p[2 * c] == p[2 * a]; c++)
            count++;
    }
    return triples->rows == count;
}

int mlff_graph_pair_triples_of(const mlff_graph *g, int triples, int pairs)
{
    const mlff_graph_node *n = mlff_graph_producer(g, triples);
    if (!n || n->op != MLFF_OP_PAIR_TRIPLES || n->inputs[0] != pairs)
        return 0;
    const int first = n->inputs[1];
    if (is_input(g, first, MLFF_INPUT_TRIPLE_STARTS)) /* written with the triples' count (core/batch.c) */
        return g->tensors[first].role_link == pairs;
    return is_running_count(&g->tensors[pairs], &g->tensors[first], &g->tensors[triples]);
}

int mlff_graph_input_element_atoms(mlff_graph *g, int element)
{
    if (g->error.status != MLFF_OK)
        return -1;
    int t = find_input(g, MLFF_INPUT_ELEMENT_ATOMS, element);
    if (t >= 0)
        return t;
    char name[32];
    snprintf(name, sizeof name, "atoms of element %d", element);
    int sym = mlff_graph_new_symbol(g, name);
    return sym < 0 ? -1
                   : new_input(g, MLFF_INPUT_ELEMENT_ATOMS, MLFF_DTYPE_I32, sym, 1, element, 0.0);
}

int mlff_graph_input_element_order(mlff_graph *g)
{
    if (g->error.status != MLFF_OK)
        return -1;
    int t = find_input(g, MLFF_INPUT_ELEMENT_ORDER, -1);
    if (t >= 0)
        return t;
    int sym = mlff_graph_new_symbol(g, "owned atoms by element");
    return sym < 0 ? -1 : new_input(g, MLFF_INPUT_ELEMENT_ORDER, MLFF_DTYPE_I32, sym, 1, -1, 0.0);
}

int mlff_graph_input_element_systems(mlff_graph *g)
{
    const int order = mlff_graph_input_element_order(g);
    if (order < 0)
        return -1;
    const int t = find_input(g, MLFF_INPUT_ELEMENT_SYSTEMS, -1);
    return t >= 0 ? t
                  : new_input(g, MLFF_INPUT_ELEMENT_SYSTEMS, MLFF_DTYPE_I32, g->tensors[order].rows_symbol, 1, -1,
                              0.0);
}

int mlff_graph_input_element_starts(mlff_graph *g, int n_elements)
{
    if (g->error.status != MLFF_OK)
        return -1;
    int t = find_input(g, MLFF_INPUT_ELEMENT_STARTS, -1);
    if (t >= 0)
        return g->tensors[t].rows == n_elements + 1
                   ? t
                   : mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "element starts asked for %d and %lld elements",
                                     n_elements, (long long)g->tensors[t].rows - 1);
    t = new_tensor(g, MLFF_TENSOR_INPUT, MLFF_DTYPE_I32, MLFF_FIXED_ROWS, n_elements + 1, 1);
    if (t >= 0) {
        g->tensors[t].role = MLFF_INPUT_ELEMENT_STARTS;
        g->tensors[t].role_link = -1;
    }
    return t;
}

int mlff_graph_param_take(mlff_graph *g, const char *name, mlff_dtype dtype, int64_t rows, int64_t cols,
                          mlff_dtype host_dtype, void *data)
{
    int t = -1;
    if (g->error.status == MLFF_OK) {
        if (rows <= 0 || cols <= 0 || mlff_dtype_size(host_dtype) == 0)
            mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "parameter %s has a bad shape", name);
        else if (!data)
            mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory for parameter %s", name);
        else
            t = new_tensor(g, MLFF_TENSOR_PARAM, dtype, MLFF_FIXED_ROWS, rows, cols);
    }
    if (t < 0) {
        free(data);
        return -1;
    }
    g->tensors[t].host_dtype = host_dtype;
    g->tensors[t].host_data = data;
    snprintf(g->tensors[t].name, sizeof g->tensors[t].name, "%s", name);
    return t;
}

int mlff_graph_param(mlff_graph *g, const char *name, mlff_dtype dtype, int64_t rows, int64_t cols,
                     mlff_dtype host_dtype, const void *data)
{
    const size_t bytes = rows > 0 && cols > 0 ? (size_t)rows * (size_t)cols * mlff_dtype_size(host_dtype) : 0;
    void *copy = g->error.status == MLFF_OK && bytes ? malloc(bytes) : NULL;
    if (copy)
        memcpy(copy, data, bytes);
    return mlff_graph_param_take(g, name, dtype, rows, cols, host_dtype, copy);
}

void mlff_graph_set_name(mlff_graph *g, int tensor, const char *name)
{
    if (tensor >= 0 && tensor < g->n_tensors)
        snprintf(g->tensors[tensor].name, sizeof g->tensors[tensor].name, "%s", name);
}

int mlff_graph_find(const mlff_graph *g, const char *name)
{
    for (int t = 0; t < g->n_tensors; t++)
        if (strcmp(g->tensors[t].name, name) == 0)
            return t;
    return -1;
}

void mlff_graph_set_output(mlff_graph *g, mlff_output_role role, int tensor)
{
    if (g->error.status == MLFF_OK && tensor < 0)
        mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "output %d set to an invalid tensor", (int)role);
    g->outputs[role] = tensor;
}

int mlff_graph_add_node(mlff_graph *g, mlff_op op, const int *inputs, int n_inputs,
                        const mlff_op_attrs *attrs, mlff_dtype out_dtype, int rows_symbol,
                        int64_t rows, int64_t cols)
{
    if (g->error.status != MLFF_OK)
        return -1;
    for (int k = 0; k < n_inputs; k++)
        if (inputs[k] < 0 || inputs[k] >= g->n_tensors)
            return mlff_graph_fail(g, MLFF_ERROR_INTERNAL, "op %s: input %d is invalid",
                                   mlff_op_get(op)->name, k);
    if (!grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes))
        return mlff_graph_fail(g, MLFF_ERROR_OUT_OF_MEMORY, "out of memory building the graph");
    int out = new_tensor(g, MLFF_TENSOR_INTERNAL, out_dtype, rows_symbol, rows, cols);
    if (out < 0)
        return -1;
    mlff_graph_node *n = &g->nodes[g->n_nodes++];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->n_inputs = n_inputs;
    if (n_inputs > 0)
        memcpy(n->inputs, inputs, (size_t)n_inputs * sizeof *inputs);
    n->output = out;
    if (attrs)
        n->attrs = *attrs;
    g->n_forward_nodes = g->n_nodes;
    return out;
}

int mlff_graph_same_rows(const mlff_graph *g, int a, int b)
{
    const mlff_graph_tensor *ta = &g->tensors[a], *tb = &g->tensors[b];
    if (ta->rows_symbol != tb->rows_symbol)
        return 0;
    return ta->rows_symbol != MLFF_FIXED_ROWS || ta->rows == tb->rows;
}

int mlff_graph_second_order(const mlff_graph *g)
{
    for (int k = 0; k < g->n_nodes; k++)
        if (mlff_op_of_tangents(g->nodes[k].op) || mlff_op_tangents(g->nodes[k].op, &g->nodes[k].attrs) > 1)
            return 1;
    return 0;
}
