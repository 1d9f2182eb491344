/* Groups of a molecule's atoms and their ghosts (hessian_groups.h). */
#include "hessian_groups.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct keyed_atom {
    double key;
    int32_t atom;
} keyed_atom;

static int by_key(const void *a, const void *b)
{
    const keyed_atom *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->atom > y->atom) - (x->atom < y->atom);
}

/* Orders g->order[first .. first + count) into groups, halving along the
 * longest extent; scratch holds count entries. */
static void split(mlff_hessian_groups *g, int64_t first, int64_t count, const double *pos, int64_t group_atoms,
                  keyed_atom *scratch)
{
    if (count <= group_atoms) {
        g->start[++g->n_groups] = first + count;
        return;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t k = first; k < first + count; k++)
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], pos[3 * g->order[k] + c]);
            hi[c] = fmax(hi[c], pos[3 * g->order[k] + c]);
        }
    int axis = 0;
    for (int c = 1; c < 3; c++)
        if (hi[c] - lo[c] > hi[axis] - lo[axis])
            axis = c;
    for (int64_t k = 0; k < count; k++)
        scratch[k] = (keyed_atom){pos[3 * g->order[first + k] + axis], g->order[first + k]};
    qsort(scratch, (size_t)count, sizeof *scratch, by_key);
    for (int64_t k = 0; k < count; k++)
        g->order[first + k] = scratch[k].atom;
    /* Halves of whole groups where that keeps them even, so that no group is a sliver. */
    const int64_t groups = (count + group_atoms - 1) / group_atoms, left = (groups / 2) * count / groups;
    split(g, first, left, pos, group_atoms, scratch);
    split(g, first + left, count - left, pos, group_atoms, scratch);
}

mlff_status mlff_hessian_groups_make(mlff_hessian_groups *g, int64_t n_atoms, const double *positions,
                                     int64_t group_atoms, mlff_error *err)
{
    memset(g, 0, sizeof *g);
    g->n_atoms = n_atoms;
    g->order = malloc((size_t)n_atoms * sizeof *g->order);
    g->start = malloc((size_t)(n_atoms + 1) * sizeof *g->start);
    g->local = malloc((size_t)n_atoms * sizeof *g->local);
    g->taken = calloc((size_t)n_atoms, 1);
    keyed_atom *scratch = malloc((size_t)n_atoms * sizeof *scratch);
    if (!g->order || !g->start || !g->local || !g->taken || !scratch) {
        free(scratch);
        mlff_hessian_groups_free(g);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "no memory for the Hessian's groups of %lld atoms",
                         (long long)n_atoms);
    }
    for (int64_t a = 0; a < n_atoms; a++)
        g->order[a] = (int32_t)a;
    g->start[0] = 0;
    split(g, 0, n_atoms, positions, group_atoms > 0 ? group_atoms : 1, scratch);
    free(scratch);
    return MLFF_OK;
}

int64_t mlff_hessian_group_atoms(mlff_hessian_groups *g, int64_t k, const double *pos, double reach)
{
    const int64_t first = g->start[k], owned = g->start[k + 1] - first;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int64_t i = 0; i < owned; i++) {
        const int32_t a = g->order[first + i];
        g->local[i] = a;
        g->taken[a] = 1;
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], pos[3 * a + c]);
            hi[c] = fmax(hi[c], pos[3 * a + c]);
        }
    }
    /* A little beyond the reach: an extra ghost costs directions, a missing one the answer. */
    const double r2 = reach * reach * (1 + 1e-9);
    int64_t n = owned;
    for (int32_t j = 0; j < g->n_atoms; j++) {
        if (g->taken[j])
            continue;
        double box = 0;
        for (int c = 0; c < 3; c++) {
            const double d = fmax(0, fmax(lo[c] - pos[3 * j + c], pos[3 * j + c] - hi[c]));
            box += d * d;
        }
        if (box > r2)
            continue;
        for (int64_t i = 0; i < owned; i++) {
            const double *x = pos + 3 * g->local[i], *y = pos + 3 * j;
            const double d2 = (x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]) + (x[2] - y[2]) * (x[2] - y[2]);
            if (d2 <= r2) {
                g->local[n++] = j;
                break;
            }
        }
    }
    for (int64_t i = 0; i < owned; i++)
        g->taken[g->local[i]] = 0;
    return n;
}

void mlff_hessian_groups_free(mlff_hessian_groups *g)
{
    free(g->order);
    free(g->start);
    free(g->local);
    free(g->taken);
    memset(g, 0, sizeof *g);
}
