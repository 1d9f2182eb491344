#include "batch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elements.h"

mlff_status mlff_batch_work_init(mlff_batch_work *w, const mlff_graph *g, mlff_error *err)
{
    memset(w, 0, sizeof *w);
    w->n_tensors = g->n_tensors;
    w->inputs = calloc((size_t)g->n_tensors, sizeof *w->inputs);
    w->input_dtypes = calloc((size_t)g->n_tensors, sizeof *w->input_dtypes);
    w->symbols = calloc((size_t)g->n_symbols, sizeof *w->symbols);
    if (!w->inputs || !w->input_dtypes || !w->symbols) {
        mlff_batch_work_free(w);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    return MLFF_OK;
}

void mlff_batch_work_free(mlff_batch_work *w)
{
    if (w->inputs)
        for (int t = 0; t < w->n_tensors; t++)
            free(w->inputs[t].data);
    free(w->inputs);
    free(w->input_dtypes);
    free(w->symbols);
    memset(w, 0, sizeof *w);
}

/* The host array of input t, grown to hold `bytes` (grows by 1.5x, never shrinks). */
static void *reserve(mlff_batch_work *w, int t, size_t bytes, mlff_error *err)
{
    mlff_host_array *a = &w->inputs[t];
    if (bytes == 0)
        bytes = 1;
    if (bytes > a->capacity) {
        size_t size = bytes + bytes / 2;
        void *p = realloc(a->data, size);
        if (!p) {
            mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory preparing the batch (%zu bytes)",
                      size);
            return NULL;
        }
        a->data = p;
        a->capacity = size;
    }
    return a->data;
}

static mlff_status check_layout(const mlff_batch *b, mlff_error *err)
{
    if (b->n_systems < 0)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "n_systems is negative");
    if (!b->system_offsets)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "system_offsets is NULL");
    if (b->system_offsets[0] != 0)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "system_offsets[0] must be 0");
    for (int64_t s = 0; s < b->n_systems; s++)
        if (b->system_offsets[s + 1] < b->system_offsets[s])
            return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT,
                             "system_offsets decrease at system %lld", (long long)s);
    int64_t n_atoms = b->system_offsets[b->n_systems];
    if (n_atoms > INT32_MAX / 2)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "%lld atoms in one batch is too many",
                         (long long)n_atoms);
    if (n_atoms > 0 && (!b->atomic_numbers || !b->positions))
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "atomic_numbers or positions is NULL");
    return MLFF_OK;
}

static mlff_status check_atoms(const mlff_batch *b, const int32_t *system, const int *species_index,
                               const char *model_name, const char *element_list, mlff_error *err)
{
    int64_t n_atoms = b->system_offsets[b->n_systems];
    for (int64_t a = 0; a < n_atoms; a++) {
        int64_t s = system[a], local = a - b->system_offsets[s];
        int z = b->atomic_numbers[a];
        if (z < 1 || z > MLFF_MAX_ATOMIC_NUMBER)
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, local,
                                  "atomic number %d is not an element", z);
        if (species_index[z] < 0)
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, local,
                                  "element %s (Z=%d) is not in model %s (elements: %s)",
                                  mlff_element_symbol_internal(z), z, model_name, element_list);
        const double *r = b->positions + 3 * a;
        if (!isfinite(r[0]) || !isfinite(r[1]) || !isfinite(r[2]))
            return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, local,
                                  "coordinates are not finite numbers (%g %g %g)", r[0], r[1], r[2]);
    }
    for (int64_t s = 0; b->pbc && s < b->n_systems; s++)
        if (b->pbc[3 * s] || b->pbc[3 * s + 1] || b->pbc[3 * s + 2])
            return mlff_fail_atom(err, MLFF_ERROR_UNSUPPORTED, s, -1,
                                  "periodic boundary conditions are not supported yet "
                                  "(only the dense path for molecules and clusters exists)");
    return MLFF_OK;
}

static double distance2(const double *p, int64_t i, int64_t j)
{
    double dx = p[3 * j] - p[3 * i], dy = p[3 * j + 1] - p[3 * i + 1], dz = p[3 * j + 2] - p[3 * i + 2];
    return dx * dx + dy * dy + dz * dz;
}

static mlff_status check_overlaps(const mlff_batch *b, const int32_t *system, mlff_error *err)
{
    int64_t n_atoms = b->system_offsets[b->n_systems];
    const double min2 = MLFF_MIN_DISTANCE * MLFF_MIN_DISTANCE;
    for (int64_t j = 0; j < n_atoms; j++) {
        int64_t s = system[j], first = b->system_offsets[s];
        for (int64_t i = first; i < j; i++) {
            double d2 = distance2(b->positions, i, j);
            if (d2 < min2)
                return mlff_fail_atom(err, MLFF_ERROR_BAD_INPUT, s, j - first,
                                      "atom is %.4g Angstrom from atom number %lld of the same "
                                      "system (counting from 1); atoms closer than %g Angstrom "
                                      "are rejected",
                                      sqrt(d2), (long long)(i - first + 1), MLFF_MIN_DISTANCE);
        }
    }
    return MLFF_OK;
}

/* Dense pair list: every ordered pair (i, j) of one system within the
 * cutoff, sorted by i then j; built in a counting pass and a filling pass. */
static mlff_status build_pairs(const mlff_graph *g, int t, const mlff_batch *b,
                               const int32_t *system, mlff_batch_work *w, mlff_error *err)
{
    const double rc2 = g->tensors[t].cutoff * g->tensors[t].cutoff;
    const int64_t n_atoms = w->n_atoms;
    int64_t n_pairs = 0;
    for (int pass = 0; pass < 2; pass++) {
        int32_t *pairs = NULL;
        if (pass == 1 && !(pairs = reserve(w, t, (size_t)n_pairs * 2 * sizeof(int32_t), err)))
            return err->status;
        int64_t p = 0;
        for (int64_t i = 0; i < n_atoms; i++) {
            int64_t s = system[i];
            for (int64_t j = b->system_offsets[s]; j < b->system_offsets[s + 1]; j++) {
                if (j == i || distance2(b->positions, i, j) > rc2)
                    continue;
                if (pairs) {
                    pairs[2 * p] = (int32_t)i;
                    pairs[2 * p + 1] = (int32_t)j;
                }
                p++;
            }
        }
        n_pairs = p;
    }
    if (n_pairs > INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "too many pairs (%lld)", (long long)n_pairs);
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    w->symbols[g->tensors[t].rows_symbol] = n_pairs;
    return MLFF_OK;
}

/* Angular triples: for each center, every unordered pair of its pairs. */
static mlff_status build_triples(const mlff_graph *g, int t, mlff_batch_work *w, mlff_error *err)
{
    const int list = g->tensors[t].role_link;
    const int32_t *pairs = w->inputs[list].data;
    const int64_t n_pairs = w->symbols[g->tensors[list].rows_symbol];
    int64_t n_triples = 0;
    for (int64_t start = 0, end; start < n_pairs; start = end) {
        for (end = start; end < n_pairs && pairs[2 * end] == pairs[2 * start]; end++)
            ;
        n_triples += (end - start) * (end - start - 1) / 2;
    }
    if (n_triples > INT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "too many angular triples (%lld)",
                         (long long)n_triples);
    int32_t *triples = reserve(w, t, (size_t)n_triples * 2 * sizeof(int32_t), err);
    if (!triples)
        return err->status;
    int64_t k = 0;
    for (int64_t start = 0, end; start < n_pairs; start = end) {
        for (end = start; end < n_pairs && pairs[2 * end] == pairs[2 * start]; end++)
            ;
        for (int64_t a = start; a < end; a++)
            for (int64_t c = a + 1; c < end; c++) {
                triples[2 * k] = (int32_t)a;
                triples[2 * k + 1] = (int32_t)c;
                k++;
            }
    }
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    w->symbols[g->tensors[t].rows_symbol] = n_triples;
    return MLFF_OK;
}

static mlff_status build_element_atoms(const mlff_graph *g, int t, const int32_t *species,
                                       mlff_batch_work *w, mlff_error *err)
{
    int32_t *atoms = reserve(w, t, (size_t)w->n_atoms * sizeof(int32_t), err);
    if (!atoms)
        return err->status;
    int64_t n = 0;
    for (int64_t a = 0; a < w->n_atoms; a++)
        if (species[a] == g->tensors[t].role_link)
            atoms[n++] = (int32_t)a;
    w->input_dtypes[t] = MLFF_DTYPE_I32;
    w->symbols[g->tensors[t].rows_symbol] = n;
    return MLFF_OK;
}

/* Finds the graph's input of a role; -1 if the graph does not use it. */
static int input_of(const mlff_graph *g, mlff_input_role role)
{
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == MLFF_TENSOR_INPUT && g->tensors[t].role == role)
            return t;
    return -1;
}

mlff_status mlff_batch_prepare(const mlff_graph *g, const mlff_batch *b, const int *species_index,
                               const char *model_name, const char *element_list,
                               mlff_batch_work *w, mlff_error *err)
{
    mlff_status s = check_layout(b, err);
    if (s != MLFF_OK)
        return s;
    w->n_atoms = b->system_offsets[b->n_systems];
    w->symbols[MLFF_SYMBOL_ATOMS] = w->n_atoms;
    w->symbols[MLFF_SYMBOL_SYSTEMS] = b->n_systems;

    /* System and species of every atom come first: the checks and lists use them. */
    int t_system = input_of(g, MLFF_INPUT_SYSTEM), t_species = input_of(g, MLFF_INPUT_SPECIES);
    if (t_system < 0 || t_species < 0)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "graph lacks the species or system input");
    int32_t *system = reserve(w, t_system, (size_t)w->n_atoms * sizeof(int32_t), err);
    int32_t *species = system ? reserve(w, t_species, (size_t)w->n_atoms * sizeof(int32_t), err) : NULL;
    if (!species)
        return err->status;
    for (int64_t sys = 0; sys < b->n_systems; sys++)
        for (int64_t a = b->system_offsets[sys]; a < b->system_offsets[sys + 1]; a++)
            system[a] = (int32_t)sys;
    if ((s = check_atoms(b, system, species_index, model_name, element_list, err)) != MLFF_OK ||
        (s = check_overlaps(b, system, err)) != MLFF_OK)
        return s;
    for (int64_t a = 0; a < w->n_atoms; a++)
        species[a] = species_index[b->atomic_numbers[a]];
    w->input_dtypes[t_system] = w->input_dtypes[t_species] = MLFF_DTYPE_I32;

    /* Pair lists before what depends on them (shifts, triples). */
    for (int pass = 0; pass < 2; pass++)
        for (int t = 0; t < g->n_tensors && s == MLFF_OK; t++) {
            const mlff_graph_tensor *gt = &g->tensors[t];
            if (gt->kind != MLFF_TENSOR_INPUT)
                continue;
            if (pass == 0 && gt->role == MLFF_INPUT_PAIRS)
                s = build_pairs(g, t, b, system, w, err);
            else if (pass == 0 && gt->role == MLFF_INPUT_ELEMENT_ATOMS)
                s = build_element_atoms(g, t, species, w, err);
            else if (pass == 1 && gt->role == MLFF_INPUT_TRIPLES)
                s = build_triples(g, t, w, err);
            else if (pass == 1 && gt->role == MLFF_INPUT_PAIR_SHIFTS) {
                /* Molecules only for now: no periodic images, so no shifts. */
                size_t bytes = (size_t)w->symbols[gt->rows_symbol] * 3 * sizeof(double);
                void *shifts = reserve(w, t, bytes, err);
                if (!shifts)
                    return err->status;
                memset(shifts, 0, bytes);
                w->input_dtypes[t] = MLFF_DTYPE_F64;
            } else if (pass == 0 && gt->role == MLFF_INPUT_POSITIONS) {
                w->input_dtypes[t] = MLFF_DTYPE_F64; /* read straight from the caller */
            }
        }
    return s;
}
