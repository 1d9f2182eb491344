/*
 * The generic family: the op graph a model file stores (graph_model.h),
 * checked row by row and built with the op builders. Everything a file
 * says is checked before it reaches an op: codes, references to earlier
 * rows, which values may be row indices and column maps and what they
 * index, attributes, the constants' shapes and numbers. A message names
 * the file's row and code, or its tensor.
 */
#include "graph_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/elements.h"

#define MOST_ELEMENTS 118

static const char *const code_names[MLFF_GRAPH_CODES] = {
    "input", "param", "add", "mul", "scale", "unary", "gather_cols", "scatter_add_cols", "affine_cols",
    "concat_cols", "slice_cols", "sum_cols", "linear", "gather_rows", "scatter_add_rows", "norm3",
    "cosine_cutoff", "energy", "fill", "celu",
};

/* Inputs each code takes: at least, at most. */
static const int8_t code_inputs[MLFF_GRAPH_CODES][2] = {
    [MLFF_GRAPH_INPUT] = {0, 0},        [MLFF_GRAPH_PARAM] = {0, 0},       [MLFF_GRAPH_ADD] = {2, 2},
    [MLFF_GRAPH_MUL] = {2, 2},          [MLFF_GRAPH_SCALE] = {1, 1},       [MLFF_GRAPH_UNARY] = {1, 1},
    [MLFF_GRAPH_GATHER_COLS] = {2, 2},  [MLFF_GRAPH_SCATTER_ADD_COLS] = {2, 2},
    [MLFF_GRAPH_AFFINE_COLS] = {2, 3},  [MLFF_GRAPH_CONCAT_COLS] = {2, 2}, [MLFF_GRAPH_SLICE_COLS] = {1, 1},
    [MLFF_GRAPH_SUM_COLS] = {1, 1},     [MLFF_GRAPH_LINEAR] = {3, 3},      [MLFF_GRAPH_GATHER_ROWS] = {2, 2},
    [MLFF_GRAPH_SCATTER_ADD_ROWS] = {2, 2}, [MLFF_GRAPH_NORM3] = {1, 1},   [MLFF_GRAPH_COSINE_CUTOFF] = {1, 1},
    [MLFF_GRAPH_ENERGY] = {1, 1},       [MLFF_GRAPH_FILL] = {0, 0},        [MLFF_GRAPH_CELU] = {1, 1},
};

/* What a row's value is, beyond its tensor. */
typedef enum value_kind {
    VALUE_REAL = 0,
    VALUE_MAP,      /* an I32 PARAM: a column map */
    VALUE_SPECIES,  /* the row indices of the inputs */
    VALUE_PAIR_SIDE,
    VALUE_SYSTEM,
} value_kind;

typedef struct loader {
    const mlff_model_file *mf;
    mlff_error *err;
    mlff_graph *g;
    const int32_t *rows; /* graph.nodes */
    const double *attrs; /* graph.attrs */
    int64_t n;
    int *tensor;         /* per row: the graph's tensor */
    value_kind *kind;
    char *species_table; /* per row: a PARAM with a row per model element */
    int model_element[MOST_ELEMENTS], n_served, n_model;
    double cutoff;
    int pairs;           /* the pair list input, made on first use */
} loader;

static int row_fail(loader *L, int64_t r, const char *fmt, const char *what)
{
    const int code = L->rows[r * MLFF_GRAPH_NODE_COLS];
    mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT, "graph model: graph.nodes row %lld (%s): %s%s", (long long)r,
              code >= 0 && code < MLFF_GRAPH_CODES ? code_names[code] : "unknown code", fmt, what ? what : "");
    return 0;
}

static const mlff_model_tensor *tensor_of(loader *L, const char *name, mlff_dtype dtype, int64_t cols)
{
    const mlff_model_tensor *t = mlff_model_file_tensor(L->mf, name);
    if (!t) {
        mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT, "graph model: no tensor %s", name);
        return NULL;
    }
    if (t->dtype != dtype || t->rows < 1 || (cols >= 0 && t->cols != cols)) {
        mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT, "graph model: tensor %s is [%lld, %lld] of the wrong type or shape",
                  name, (long long)t->rows, (long long)t->cols);
        return NULL;
    }
    return t;
}

static int param(loader *L, int64_t r, int64_t k)
{
    char name[48];
    snprintf(name, sizeof name, "param.%lld", (long long)k);
    const mlff_model_tensor *t = mlff_model_file_tensor(L->mf, name);
    if (!t || (t->dtype != MLFF_DTYPE_F64 && t->dtype != MLFF_DTYPE_I32))
        return row_fail(L, r, "no F64 or I32 tensor ", name);
    if (t->dtype == MLFF_DTYPE_I32) {
        if (t->cols != 1)
            return row_fail(L, r, "a column map must be [m, 1]: ", name);
        L->kind[r] = VALUE_MAP; /* its entries: checked by the op that reads it */
        L->tensor[r] = mlff_graph_param(L->g, name, MLFF_DTYPE_I32, t->rows, 1, MLFF_DTYPE_I32, t->data);
        return L->tensor[r] >= 0;
    }
    const double *v = t->data;
    for (int64_t e = 0; e < t->rows * t->cols; e++)
        if (!isfinite(v[e])) {
            mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT, "graph model: tensor %s holds %g at [%lld, %lld]", name, v[e],
                      (long long)(e / t->cols), (long long)(e % t->cols));
            return 0;
        }
    L->kind[r] = VALUE_REAL;
    if (L->species_table[r] && t->rows != L->n_model)
        return row_fail(L, r, "a table gathered by species needs a row per element: ", name);
    if (!L->species_table[r] || L->n_served == L->n_model) {
        L->tensor[r] = mlff_graph_param(L->g, name, MLFF_DTYPE_REAL, t->rows, t->cols, MLFF_DTYPE_F64, t->data);
        return L->tensor[r] >= 0;
    }
    /* A table with a row per element, of a graph that serves some: their rows. */
    double *sub = malloc((size_t)(L->n_served * t->cols) * sizeof *sub);
    if (!sub) {
        mlff_fail(L->err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
        return 0;
    }
    for (int e = 0; e < L->n_served; e++)
        memcpy(sub + e * t->cols, v + L->model_element[e] * t->cols, (size_t)t->cols * sizeof *sub);
    L->tensor[r] = mlff_graph_param_take(L->g, name, MLFF_DTYPE_REAL, L->n_served, t->cols, MLFF_DTYPE_F64, sub);
    return L->tensor[r] >= 0;
}

static int pair_list(loader *L)
{
    if (L->pairs < 0)
        L->pairs = mlff_graph_input_pairs(L->g, L->cutoff);
    return L->pairs;
}

static int input(loader *L, int64_t r, int64_t role)
{
    mlff_graph *g = L->g;
    switch (role) {
    case MLFF_GRAPH_IN_POSITIONS:
        L->tensor[r] = mlff_graph_input_positions(g);
        break;
    case MLFF_GRAPH_IN_SPECIES:
        L->kind[r] = VALUE_SPECIES;
        L->tensor[r] = mlff_graph_input_species(g);
        break;
    case MLFF_GRAPH_IN_PAIR_I:
    case MLFF_GRAPH_IN_PAIR_J:
        L->kind[r] = VALUE_PAIR_SIDE;
        L->tensor[r] = mlff_op_index_column(g, pair_list(L), role == MLFF_GRAPH_IN_PAIR_J);
        break;
    case MLFF_GRAPH_IN_SHIFTS:
        L->tensor[r] = mlff_graph_pair_shifts(g, pair_list(L));
        break;
    case MLFF_GRAPH_IN_SYSTEM:
        L->kind[r] = VALUE_SYSTEM;
        L->tensor[r] = mlff_graph_input_system(g);
        break;
    default:
        return row_fail(L, r, "unknown input role", NULL);
    }
    return 1;
}

/* Row r's input k: the row it names, which must hold a value of `want`. */
static int operand(loader *L, int64_t r, int k, value_kind want, int *row)
{
    const int32_t in = L->rows[r * MLFF_GRAPH_NODE_COLS + 1 + k];
    static const char *const kinds[] = {"a real tensor", "a column map (an I32 param)", "the species",
                                        "a side of the pair list", "the system index"};
    if (in < 0 || in >= r)
        return row_fail(L, r, "an input that is not an earlier row", NULL);
    if (want == VALUE_PAIR_SIDE ? L->kind[in] < VALUE_SPECIES : L->kind[in] != want)
        return row_fail(L, r, "an input must be ", kinds[want == VALUE_PAIR_SIDE ? VALUE_SPECIES : want]);
    *row = in;
    return 1;
}

static int real_operands(loader *L, int64_t r, int count, int *t)
{
    for (int k = 0; k < count; k++) {
        int row;
        if (!operand(L, r, k, VALUE_REAL, &row))
            return 0;
        if (L->species_table[row])
            return row_fail(L, r, "reads a table gathered by species (its rows are the graph's elements)", NULL);
        t[k] = L->tensor[row];
    }
    return 1;
}

/* GATHER_ROWS and SCATTER_ADD_ROWS: x and an index of the rows it gathers
 * from (or scatters to). */
static int rows_node(loader *L, int64_t r, int scatter, const char *feeds_energy)
{
    mlff_graph *g = L->g;
    int x_row, index_row;
    if (!operand(L, r, 0, VALUE_REAL, &x_row) || !operand(L, r, 1, VALUE_PAIR_SIDE, &index_row))
        return 0;
    const int x = L->tensor[x_row], index = L->tensor[index_row];
    const value_kind by = L->kind[index_row];
    const mlff_graph_tensor tx = g->tensors[x];
    if (!scatter) {
        const int fits = by == VALUE_SPECIES      ? L->species_table[x_row]
                         : by == VALUE_PAIR_SIDE ? tx.rows_symbol == MLFF_SYMBOL_ATOMS
                                                  : tx.rows_symbol == MLFF_SYMBOL_SYSTEMS;
        if (!fits)
            return row_fail(L, r, "gathers rows by an index of other rows (species: a param with a row per element; "
                            "pair sides: a tensor of atoms; system: a tensor of systems)", NULL);
        L->tensor[r] = mlff_op_gather_rows(g, x, index, MLFF_DTYPE_REAL);
        return 1;
    }
    if (by == VALUE_PAIR_SIDE) {
        L->tensor[r] = mlff_op_scatter_add_rows(g, x, index, MLFF_SYMBOL_ATOMS, 0, MLFF_DTYPE_REAL);
        return 1;
    }
    if (by != VALUE_SYSTEM)
        return row_fail(L, r, "scatters to atoms by a pair side or to systems by the system index", NULL);
    /* Sums over systems count owned atoms only (graph.h): ghosts are some other chunk's. */
    const int owned = mlff_graph_input_owned(g, MLFF_DTYPE_REAL);
    const int x_owned = mlff_op_mul(g, x, owned);
    L->tensor[r] = mlff_op_scatter_add_few_rows(g, x_owned, index, MLFF_SYMBOL_SYSTEMS, 0,
                                                feeds_energy[r] ? MLFF_DTYPE_F64 : MLFF_DTYPE_REAL);
    return 1;
}

static int node(loader *L, int64_t r, const char *feeds_energy)
{
    mlff_graph *g = L->g;
    const int32_t *row = L->rows + r * MLFF_GRAPH_NODE_COLS;
    const int code = row[0];
    const int64_t i0 = row[4], i1 = row[5];
    const double f0 = L->attrs[2 * r], f1 = L->attrs[2 * r + 1];
    if (code < 0 || code >= MLFF_GRAPH_CODES)
        return row_fail(L, r, "an unknown code", NULL);
    int n_in = 0;
    while (n_in < 3 && row[1 + n_in] >= 0)
        n_in++;
    for (int k = n_in; k < 3; k++)
        if (row[1 + k] != -1)
            return row_fail(L, r, "inputs after an absent one (-1)", NULL);
    if (n_in < code_inputs[code][0] || n_in > code_inputs[code][1])
        return row_fail(L, r, "the wrong number of inputs", NULL);
    if (!isfinite(f0) || !isfinite(f1))
        return row_fail(L, r, "an attribute that is not a finite number", NULL);
    if (code == MLFF_GRAPH_ENERGY && r != L->n - 1)
        return row_fail(L, r, "energy must be the last row", NULL);
    int t[3] = {-1, -1, -1}, map_row;
    L->kind[r] = VALUE_REAL;
    L->tensor[r] = -1;
    switch ((mlff_graph_code)code) {
    case MLFF_GRAPH_INPUT:
        if (!input(L, r, i0))
            return 0;
        break;
    case MLFF_GRAPH_PARAM:
        if (!param(L, r, i0))
            return 0;
        break;
    case MLFF_GRAPH_ADD:
        if (!real_operands(L, r, 2, t))
            return 0;
        L->tensor[r] = mlff_op_add(g, t[0], t[1]);
        break;
    case MLFF_GRAPH_MUL:
        if (!real_operands(L, r, 2, t))
            return 0;
        L->tensor[r] = mlff_op_mul(g, t[0], t[1]);
        break;
    case MLFF_GRAPH_SCALE:
        if (!real_operands(L, r, 1, t))
            return 0;
        L->tensor[r] = mlff_op_scale(g, t[0], f0);
        break;
    case MLFF_GRAPH_UNARY:
        /* The second derivatives are the passes' own: nothing could differentiate them. */
        if (i0 < 0 || i0 >= MLFF_UNARY_KINDS || i0 == MLFF_UNARY_SIGMOID_D2 || i0 == MLFF_UNARY_TANH_D2 ||
            i0 == MLFF_UNARY_SILU_D2)
            return row_fail(L, r, "an unknown function", NULL);
        if (!real_operands(L, r, 1, t))
            return 0;
        L->tensor[r] = mlff_op_unary(g, t[0], (mlff_unary_kind)i0, f0, f1);
        break;
    case MLFF_GRAPH_GATHER_COLS:
    case MLFF_GRAPH_SCATTER_ADD_COLS:
        if (!real_operands(L, r, 1, t) || !operand(L, r, 1, VALUE_MAP, &map_row))
            return 0;
        if (code == MLFF_GRAPH_SCATTER_ADD_COLS && (i0 < 1 || i0 > MLFF_GRAPH_MOST_COLS))
            return row_fail(L, r, "a column count out of range", NULL);
        L->tensor[r] = code == MLFF_GRAPH_GATHER_COLS ? mlff_op_gather_cols(g, t[0], L->tensor[map_row])
                                                      : mlff_op_scatter_add_cols(g, t[0], L->tensor[map_row], i0);
        break;
    case MLFF_GRAPH_AFFINE_COLS:
        if (!real_operands(L, r, n_in, t))
            return 0;
        L->tensor[r] = mlff_op_affine_cols(g, t[0], t[1], t[2]);
        break;
    case MLFF_GRAPH_CONCAT_COLS:
        if (!real_operands(L, r, 2, t))
            return 0;
        L->tensor[r] = mlff_op_concat_cols(g, t[0], t[1]);
        break;
    case MLFF_GRAPH_SLICE_COLS: {
        if (!real_operands(L, r, 1, t))
            return 0;
        /* As a column gather: SLICE_COLS is a backward op, with no VJP of its own. */
        if (i0 < 0 || i1 < 1 || i0 + i1 > g->tensors[t[0]].cols)
            return row_fail(L, r, "columns out of range", NULL);
        int32_t *map = malloc((size_t)i1 * sizeof *map);
        if (!map) {
            mlff_fail(L->err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
            return 0;
        }
        for (int64_t c = 0; c < i1; c++)
            map[c] = (int32_t)(i0 + c);
        L->tensor[r] = mlff_op_gather_cols_of(g, t[0], map, i1);
        free(map);
        break;
    }
    case MLFF_GRAPH_SUM_COLS:
        if (!real_operands(L, r, 1, t))
            return 0;
        L->tensor[r] = mlff_op_sum_cols(g, t[0], f0);
        break;
    case MLFF_GRAPH_LINEAR:
        if (!real_operands(L, r, 3, t))
            return 0;
        if (i0 < 1 || i0 > 1024)
            return row_fail(L, r, "a group count out of range", NULL);
        L->tensor[r] = mlff_op_linear(g, t[0], t[1], t[2], i0);
        break;
    case MLFF_GRAPH_GATHER_ROWS:
    case MLFF_GRAPH_SCATTER_ADD_ROWS:
        if (!rows_node(L, r, code == MLFF_GRAPH_SCATTER_ADD_ROWS, feeds_energy))
            return 0;
        break;
    case MLFF_GRAPH_NORM3:
        if (!real_operands(L, r, 1, t))
            return 0;
        L->tensor[r] = mlff_op_norm3(g, t[0]);
        break;
    case MLFF_GRAPH_COSINE_CUTOFF:
        if (!real_operands(L, r, 1, t))
            return 0;
        if (!(f0 > 0 && f0 <= MLFF_GRAPH_MOST_CUTOFF))
            return row_fail(L, r, "a cutoff out of range", NULL);
        L->tensor[r] = mlff_op_cosine_cutoff(g, t[0], f0);
        break;
    case MLFF_GRAPH_CELU:
        if (!real_operands(L, r, 1, t))
            return 0;
        if (!(f0 > 0))
            return row_fail(L, r, "alpha must be positive", NULL);
        L->tensor[r] = mlff_op_celu(g, t[0], f0);
        break;
    case MLFF_GRAPH_FILL: {
        if (i0 < 0 || i0 > 2 || i1 < 1 || i1 > MLFF_GRAPH_MOST_COLS)
            return row_fail(L, r, "rows or columns out of range", NULL);
        const int pairs = i0 == 1 ? pair_list(L) : -1;
        if (i0 == 1 && pairs < 0)
            break; /* the graph failed: said below */
        const int symbol = i0 == 0 ? MLFF_SYMBOL_ATOMS : i0 == 2 ? MLFF_SYMBOL_SYSTEMS : g->tensors[pairs].rows_symbol;
        L->tensor[r] = mlff_op_fill(g, symbol, 0, i1, MLFF_DTYPE_REAL, f0);
        break;
    }
    case MLFF_GRAPH_ENERGY: {
        int in = row[1];
        if (in < 0 || in >= r || !feeds_energy[in] || g->tensors[L->tensor[in]].cols != 1 ||
            g->tensors[L->tensor[in]].rows_symbol != MLFF_SYMBOL_SYSTEMS)
            return row_fail(L, r, "energy must read a sum over systems (scatter_add_rows by system) of one column",
                            NULL);
        L->tensor[r] = L->tensor[in];
        mlff_graph_set_output(g, MLFF_OUTPUT_ENERGY, L->tensor[r]);
        break;
    }
    default:
        return row_fail(L, r, "an unknown code", NULL);
    }
    if (mlff_graph_status(g) != MLFF_OK)
        return row_fail(L, r, g->error.message, NULL);
    if (L->tensor[r] < 0)
        return row_fail(L, r, "no value made", NULL);
    /* Bounded rows: a file's few bytes must not ask for gigabytes an atom. */
    if (g->tensors[L->tensor[r]].cols > MLFF_GRAPH_MOST_COLS)
        return row_fail(L, r, "more columns than a graph model may have", NULL);
    return 1;
}

/* The most gathers by a pair's second atom on a path to the energy: an
 * atom's energy depends on atoms that many cutoffs away. Found from the
 * rows (checked by then), not taken from the file's word. */
static int interaction_layers(const loader *L)
{
    int *depth = calloc((size_t)L->n, sizeof *depth), most = 0;
    if (!depth)
        return INT32_MAX; /* no chunks then: exact, if slow */
    for (int64_t r = 0; r < L->n; r++) {
        const int32_t *row = L->rows + r * MLFF_GRAPH_NODE_COLS;
        for (int k = 0; k < 3; k++)
            if (row[1 + k] >= 0 && depth[row[1 + k]] > depth[r])
                depth[r] = depth[row[1 + k]];
        if (row[0] == MLFF_GRAPH_GATHER_ROWS && L->kind[row[2]] == VALUE_PAIR_SIDE &&
            L->rows[row[2] * MLFF_GRAPH_NODE_COLS + 4] == MLFF_GRAPH_IN_PAIR_J)
            depth[r]++;
        most = depth[r] > most ? depth[r] : most;
    }
    free(depth);
    return most;
}

static int parse_elements(loader *L)
{
    const char *list = mlff_model_file_meta(L->mf, "elements");
    int n = 0;
    for (const char *p = list ? list : ""; *p;) {
        while (*p == ' ')
            p++;
        const size_t len = strcspn(p, " ");
        if (!len)
            break;
        char symbol[4] = {0};
        if (len > 3 || n == MOST_ELEMENTS)
            return mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT, "graph model: bad element list '%s'", list), 0;
        memcpy(symbol, p, len);
        if (!mlff_element_number_internal(symbol))
            return mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT, "graph model: unknown element '%s'", symbol), 0;
        n++;
        p += len;
    }
    if (!n)
        return mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT, "graph model: no elements"), 0;
    L->n_model = n;
    return 1;
}

static int parse_settings(loader *L)
{
    const mlff_model_file *mf = L->mf;
    const char *energy = mlff_model_file_meta(mf, "energy_unit"), *length = mlff_model_file_meta(mf, "length_unit");
    if (strcmp(energy, "eV") || strcmp(length, "Angstrom"))
        return mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT,
                         "graph model: units '%s' and '%s', where mlff takes eV and Angstrom", energy, length), 0;
    const char *rc = mlff_model_file_meta(mf, "cutoff");
    char *end;
    L->cutoff = strtod(rc, &end);
    if (end == rc || *end || !(L->cutoff > 0 && L->cutoff <= MLFF_GRAPH_MOST_CUTOFF))
        return mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT, "graph model: cutoff '%s' is not a number in (0, %g]", rc,
                         MLFF_GRAPH_MOST_CUTOFF), 0;
    const mlff_model_tensor *nodes = tensor_of(L, "graph.nodes", MLFF_DTYPE_I32, MLFF_GRAPH_NODE_COLS);
    const mlff_model_tensor *attrs = nodes ? tensor_of(L, "graph.attrs", MLFF_DTYPE_F64, 2) : NULL;
    if (!attrs)
        return 0;
    if (nodes->rows != attrs->rows || nodes->rows > MLFF_GRAPH_MOST_NODES)
        return mlff_fail(L->err, MLFF_ERROR_MODEL_FORMAT,
                         "graph model: graph.nodes has %lld rows and graph.attrs %lld (at most %d, the same)",
                         (long long)nodes->rows, (long long)attrs->rows, MLFF_GRAPH_MOST_NODES), 0;
    L->rows = nodes->data;
    L->attrs = attrs->data;
    L->n = nodes->rows;
    return 1;
}

static mlff_status build_graph(const mlff_model_file *mf, const mlff_graph_request *request, mlff_graph *g,
                               mlff_error *err)
{
    loader L = {.mf = mf, .err = err, .g = g, .pairs = -1};
    if (!parse_elements(&L) || !parse_settings(&L))
        return err->status;
    for (int e = 0; e < L.n_model; e++)
        if (!request->elements || mlff_element_set_has(request->elements, e))
            L.model_element[L.n_served++] = e;
    if (!L.n_served)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "a graph model's graph for none of its elements");
    L.tensor = malloc((size_t)L.n * sizeof *L.tensor);
    L.kind = malloc((size_t)L.n * sizeof *L.kind);
    L.species_table = calloc((size_t)L.n, 1);
    char *feeds_energy = calloc((size_t)L.n, 1);
    if (!L.tensor || !L.kind || !L.species_table || !feeds_energy) {
        mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
    } else {
        const int32_t *last = L.rows + (L.n - 1) * MLFF_GRAPH_NODE_COLS;
        if (last[0] != MLFF_GRAPH_ENERGY)
            mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "graph model: the last row of graph.nodes must be energy");
        else if (last[1] >= 0 && last[1] < L.n - 1 && L.rows[last[1] * MLFF_GRAPH_NODE_COLS] == MLFF_GRAPH_SCATTER_ADD_ROWS)
            feeds_energy[last[1]] = 1;
        /* The tables gathered by species: params whose rows are the elements. */
        for (int64_t r = 0; r < L.n; r++) {
            const int32_t *row = L.rows + r * MLFF_GRAPH_NODE_COLS;
            const int32_t x = row[1], index = row[2];
            if (row[0] == MLFF_GRAPH_GATHER_ROWS && x >= 0 && x < r && index >= 0 && index < r &&
                L.rows[x * MLFF_GRAPH_NODE_COLS] == MLFF_GRAPH_PARAM &&
                L.rows[index * MLFF_GRAPH_NODE_COLS] == MLFF_GRAPH_INPUT &&
                L.rows[index * MLFF_GRAPH_NODE_COLS + 4] == MLFF_GRAPH_IN_SPECIES)
                L.species_table[x] = 1;
        }
        for (int64_t r = 0; r < L.n && err->status == MLFF_OK; r++)
            node(&L, r, feeds_energy);
        if (err->status == MLFF_OK)
            g->interaction_layers = interaction_layers(&L);
    }
    free(L.tensor);
    free(L.kind);
    free(L.species_table);
    free(feeds_energy);
    return err->status;
}

static const char *const metadata[] = {"cutoff", "energy_unit", "length_unit", NULL};
static const char *const tensors[] = {"graph.nodes", "graph.attrs", NULL};

const mlff_model_family mlff_family_graph = {
    .name = "graph",
    .metadata = metadata,
    .tensors = tensors,
    .build_graph = build_graph,
    .plan_form = NULL,
    .default_form = 0,
};
