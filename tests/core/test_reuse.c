/*
 * What the positions do not change is not computed again: in an MD-like
 * loop (the same batch, its atoms moved) the graph's constant nodes (ANI's
 * self energies, the head of its reverse pass) run once, and the numbers
 * are a fresh context's, bit for bit. A batch of the same size with other
 * species, or the same atoms in other systems, must run them again
 * (a stale self energy would be off by many eV), as must the same batch
 * after those. Small pair lists are compared like batch inputs (a
 * molecule's stay the same); a periodic molecule wrapped across its cell
 * keeps its pair count but changes its pairs' images, whose shifts must be
 * computed again. An MD step of molecules whose lists stay the same sorts
 * nothing again on a GPU backend, whichever made the lists (MLFF_CELL_LISTS);
 * molecules moved closer, whose lists gain pairs, give a fresh context's
 * numbers. With a Verlet skin, the lists are kept while no atom moved more
 * than half of it, whoever made them: pairs that cross a cutoff meanwhile
 * change no number (a fresh context's, to rounding: the device's lists add
 * zeros in another order), and the device sorts nothing again; but atoms
 * within the skin of the distance limit cut the lists' life short, so that
 * two atoms brought too close are refused though neither moved half the skin.
 * Usage: test_reuse REFERENCE_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/context.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s\n", what);
        failures++;
    }
}

enum { MOLECULES = 3, MOST_ATOMS = 64 };

typedef struct layout {
    int n_systems;
    int64_t offsets[MOLECULES + 1];
    int32_t z[MOST_ATOMS];
    double pos[3 * MOST_ATOMS];
} layout;

/* The molecules in the order given, one system each, or the first two as
 * one and an empty system after the third (as many systems, other ones). */
static void make(layout *l, const reference *const *mols, int merge_first_two)
{
    int64_t n = 0;
    l->n_systems = 0;
    l->offsets[0] = 0;
    for (int k = 0; k < MOLECULES; k++) {
        memcpy(l->z + n, mols[k]->species, (size_t)mols[k]->n_atoms * sizeof *l->z);
        memcpy(l->pos + 3 * n, mols[k]->positions, (size_t)mols[k]->n_atoms * 3 * sizeof *l->pos);
        n += mols[k]->n_atoms;
        /* the merged molecules sit 6 A apart, as one system */
        if (merge_first_two && k == 1)
            for (int64_t a = n - mols[k]->n_atoms; a < n; a++)
                l->pos[3 * a] += 6.0;
        if (!(merge_first_two && k == 0))
            l->offsets[++l->n_systems] = n;
    }
    if (merge_first_two)
        l->offsets[++l->n_systems] = n;
}

/* Indices sorted for segment sums so far (backends/common/segments.h; none on the CPU). */
static uint64_t segment_sorts(const mlff_context *ctx)
{
    mlff_backend_stats stats = {0};
    if (ctx->iface->get_stats)
        ctx->iface->get_stats(ctx->backend, &stats);
    return stats.segment_sorts;
}

/* Pairs of l's first system closer than r (those of the merged molecules among them). */
static int64_t pairs_within(const layout *l, double r)
{
    int64_t pairs = 0;
    for (int64_t i = l->offsets[0]; i < l->offsets[1]; i++)
        for (int64_t j = i + 1; j < l->offsets[1]; j++) {
            double d2 = 0;
            for (int k = 0; k < 3; k++)
                d2 += (l->pos[3 * j + k] - l->pos[3 * i + k]) * (l->pos[3 * j + k] - l->pos[3 * i + k]);
            pairs += d2 < r * r;
        }
    return pairs;
}

/* Energies and forces of l with every coordinate moved by step * (a small pattern). */
static int evaluate(mlff_model *m, const layout *l, double step, double *energies, double *forces)
{
    double pos[3 * MOST_ATOMS];
    const int64_t n = l->offsets[l->n_systems];
    for (int64_t k = 0; k < 3 * n; k++)
        pos[k] = l->pos[k] + step * 0.01 * sin(1.7 * (double)k);
    mlff_batch b = {l->n_systems, l->offsets, l->z, pos, NULL, NULL};
    return mlff_evaluate(m, &b, energies, forces) == MLFF_OK;
}

/* The same evaluation in a fresh context gives the same bits. */
static void check_fresh(mlff_precision precision, const layout *l, double step, const double *energies,
                        const double *forces, const char *what)
{
    mlff_context *ctx;
    mlff_model *m = test_open_model(&ctx, precision, MLFF_NEIGHBORS_AUTO, 0.0);
    double e[MOLECULES], f[3 * MOST_ATOMS];
    check(evaluate(m, l, step, e, f), "evaluate in a fresh context");
    const int64_t n = l->offsets[l->n_systems];
    int same = !memcmp(e, energies, (size_t)l->n_systems * sizeof *e) &&
               !memcmp(f, forces, (size_t)(3 * n) * sizeof *f);
    if (!same)
        fprintf(stderr, "%s: energy %.12f here, %.12f fresh\n", what, energies[0], e[0]);
    check(same, what);
    mlff_context_destroy(ctx);
}

/* Energy and forces of `water` in a periodic cubic cell, moved by dz along
 * z and wrapped into the cell, as MD codes wrap their atoms. */
static int evaluate_wrapped(mlff_model *m, const reference *water, double dz, double *energy, double *forces)
{
    const double side = 9.0, cell[9] = {side, 0, 0, 0, side, 0, 0, 0, side};
    const uint8_t pbc[3] = {1, 1, 1};
    const int64_t offsets[2] = {0, water->n_atoms};
    double pos[3 * MOST_ATOMS];
    for (int64_t k = 0; k < 3 * water->n_atoms; k++) {
        /* The oxygen (atom 0) starts 0.02 A above the face z = 0, the
         * hydrogens (0.6 A below it) wrapped to the top of the cell. */
        pos[k] = water->positions[k] - (k % 3 == 2 ? water->positions[2] - 0.02 - dz : 0.0);
        pos[k] -= side * floor(pos[k] / side);
    }
    mlff_batch b = {1, offsets, water->species, pos, cell, pbc};
    return mlff_evaluate(m, &b, energy, forces) == MLFF_OK;
}

/* The oxygen crosses the face and joins the hydrogens (its pairs with them
 * get another image, their count stays): the numbers must be a fresh context's. */
static void check_wrapped(mlff_precision precision, const reference *water)
{
    mlff_context *ctx, *fresh_ctx;
    mlff_model *m = test_open_model(&ctx, precision, MLFF_NEIGHBORS_AUTO, 0.0);
    mlff_model *fresh = test_open_model(&fresh_ctx, precision, MLFF_NEIGHBORS_AUTO, 0.0);
    double e = 0, f[3 * MOST_ATOMS] = {0}, e_fresh = 0, f_fresh[3 * MOST_ATOMS] = {0};
    check(evaluate_wrapped(m, water, 0.0, &e, f) && evaluate_wrapped(m, water, -0.04, &e, f) &&
              evaluate_wrapped(fresh, water, -0.04, &e_fresh, f_fresh),
          "evaluate a wrapped periodic molecule");
    const int same = e == e_fresh && !memcmp(f, f_fresh, (size_t)(3 * water->n_atoms) * sizeof *f);
    if (!same)
        fprintf(stderr, "wrapped: energy %.12f here, %.12f fresh\n", e, e_fresh);
    check(same, "a molecule wrapped across its cell: the numbers are a fresh context's");
    mlff_context_destroy(fresh_ctx);
    mlff_context_destroy(ctx);
}

/* Energies and forces of l moved by `shift` along x (the second molecule
 * only: the first system's atoms after the first molecule), and a fresh
 * context's without a skin, agree to `tolerance`. */
static int evaluate_shifted(mlff_model *m, const layout *l, int64_t first_moved, double shift, double tolerance,
                            mlff_precision precision)
{
    layout moved = *l;
    for (int64_t k = first_moved; k < l->offsets[1]; k++)
        moved.pos[3 * k] += shift;
    double e[MOLECULES], f[3 * MOST_ATOMS], e_fresh[MOLECULES], f_fresh[3 * MOST_ATOMS];
    mlff_context *fresh_ctx;
    mlff_model *fresh = test_open_model(&fresh_ctx, precision, MLFF_NEIGHBORS_SPARSE, 0.0);
    const int ok = evaluate(m, &moved, 0, e, f) && evaluate(fresh, &moved, 0, e_fresh, f_fresh);
    mlff_context_destroy(fresh_ctx);
    const int64_t n = l->offsets[l->n_systems];
    double worst = 0.0;
    for (int s = 0; s < l->n_systems; s++)
        worst = fmax(worst, fabs(e[s] - e_fresh[s]));
    for (int64_t k = 0; k < 3 * n; k++)
        worst = fmax(worst, fabs(f[k] - f_fresh[k]));
    if (worst > tolerance)
        fprintf(stderr, "shifted %.2f A: differs from a fresh context's by %.3g\n", shift, worst);
    return ok && worst <= tolerance;
}

/* An H2 of bond length r at the origin, along x. */
static int evaluate_h2(mlff_model *m, double r)
{
    const int64_t offsets[2] = {0, 2};
    const int32_t z[2] = {1, 1};
    const double pos[6] = {0, 0, 0, r, 0, 0};
    mlff_batch b = {1, offsets, z, pos, NULL, NULL};
    double e, f[6];
    if (mlff_evaluate(m, &b, &e, f) == MLFF_OK)
        return 1;
    fprintf(stderr, "H2 of %.2f A: %s\n", r, mlff_last_error(m->ctx));
    return 0;
}

static void check_skin(mlff_precision precision, const reference *refs)
{
    const reference *order[MOLECULES] = {&refs[0], &refs[1], &refs[2]};
    layout l;
    make(&l, order, 1); /* methane and water 5.75 A apart, as one system: their closest atoms 5.13 A */
    const int64_t water = refs[0].n_atoms;
    for (int64_t k = water; k < l.offsets[1]; k++)
        l.pos[3 * k] -= 0.25;
    const double skin = 0.5, tolerance = precision == MLFF_PRECISION_FLOAT64 ? 1e-10 : 1e-4;
    mlff_context *ctx;
    mlff_model *m = test_open_model(&ctx, precision, MLFF_NEIGHBORS_SPARSE, skin);
    mlff_stats searched, kept;
    check(evaluate_shifted(m, &l, water, 0.0, tolerance, precision), "a skin's first call");
    mlff_get_stats(ctx, &searched);
    const uint64_t sorts = segment_sorts(ctx);
    /* The water 0.24 A closer: pairs cross ANI's radial cutoff (5.1 A), and no atom moved skin / 2. */
    layout closer = l;
    for (int64_t k = water; k < l.offsets[1]; k++)
        closer.pos[3 * k] -= 0.24;
    check(pairs_within(&closer, 5.1) > pairs_within(&l, 5.1), "pairs cross the cutoff");
    check(evaluate_shifted(m, &l, water, -0.24, tolerance, precision),
          "pairs that crossed a cutoff within the skin: a fresh context's numbers");
    mlff_get_stats(ctx, &kept);
    check(kept.neighbor_builds == searched.neighbor_builds, "the skin keeps the lists");
    check(searched.device_pair_lists == 0 || segment_sorts(ctx) == sorts,
          "lists kept on the device are not sorted again");
    /* Moved more than half the skin: searched again. */
    check(evaluate_shifted(m, &l, water, -0.6, tolerance, precision), "moved beyond the skin");
    mlff_get_stats(ctx, &kept);
    check(kept.neighbor_builds == searched.neighbor_builds + 1, "moved beyond the skin: a new search");
    /* H2 at 0.3 A, 0.2 A from the limit (0.1): its atoms may move 0.1 A
     * before a new search, not skin / 2. */
    mlff_get_stats(ctx, &searched);
    check(evaluate_h2(m, 0.3) && evaluate_h2(m, 0.22), "an H2 of 0.3 A, then 0.22 A");
    mlff_get_stats(ctx, &kept);
    check(kept.neighbor_builds == searched.neighbor_builds + 1, "atoms 0.2 A from the limit moved 0.08 A: kept");
    check(!evaluate_h2(m, 0.08) && strstr(mlff_last_error(ctx), "Angstrom from atom"),
          "atoms brought too close within the skin are refused");
    mlff_context_destroy(ctx);
}

static void run(mlff_precision precision, const reference *refs)
{
    const reference *order_a[MOLECULES] = {&refs[0], &refs[1], &refs[2]};
    const reference *order_b[MOLECULES] = {&refs[2], &refs[1], &refs[0]};
    layout a, b, c;
    make(&a, order_a, 0);
    make(&b, order_b, 0); /* same atoms, other species at each index */
    make(&c, order_a, 1); /* same atoms and species, other systems */
    check(a.offsets[a.n_systems] == b.offsets[b.n_systems] && a.n_systems == c.n_systems, "the same sizes");

    mlff_context *ctx;
    mlff_model *m = test_open_model(&ctx, precision, MLFF_NEIGHBORS_AUTO, 0.0);
    double e[MOLECULES], f[3 * MOST_ATOMS];
    mlff_stats before, after;
    check(evaluate(m, &a, 0, e, f), "evaluate");
    mlff_get_stats(ctx, &before);
    check(evaluate(m, &a, 1, e, f), "evaluate, atoms moved");
    mlff_get_stats(ctx, &after);
    check(before.nodes_reused == 0 && after.nodes_reused > 0, "an MD step reuses the constant nodes");
    printf("%s: %llu nodes reused in an MD step\n", precision == MLFF_PRECISION_FLOAT64 ? "float64" : "float32",
           (unsigned long long)after.nodes_reused);
    check_fresh(precision, &a, 1, e, f, "the MD step's numbers are a fresh context's");
    const uint64_t sorts = segment_sorts(ctx);
    check(evaluate(m, &a, 2, e, f), "evaluate, atoms moved again");
    check(segment_sorts(ctx) == sorts, "an MD step of molecules whose lists stay the same sorts nothing again");
    check(test_device() == MLFF_DEVICE_CPU || sorts > 0, "a GPU backend sorts the first call's indices");

    check(evaluate(m, &b, 2, e, f), "evaluate other species");
    check_fresh(precision, &b, 2, e, f, "other species at the same size");
    check(evaluate(m, &c, 3, e, f), "evaluate other systems");
    check_fresh(precision, &c, 3, e, f, "the same atoms in other systems");
    /* The merged molecules 0.8 A closer: pairs between them join ANI's radial list (5.1 A). */
    const int64_t apart = pairs_within(&c, 5.1);
    for (int64_t k = c.offsets[0] + order_a[0]->n_atoms; k < c.offsets[1]; k++)
        c.pos[3 * k] -= 0.8;
    check(pairs_within(&c, 5.1) > apart, "pairs join the list");
    check(evaluate(m, &c, 3, e, f), "evaluate the molecules moved closer");
    check_fresh(precision, &c, 3, e, f, "the molecules moved closer");
    check(evaluate(m, &a, 4, e, f), "evaluate the first batch again");
    check_fresh(precision, &a, 4, e, f, "the first batch again");
    mlff_context_destroy(ctx);
    check_wrapped(precision, &refs[1]);
    check_skin(precision, refs);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    reference refs[MOLECULES];
    const char *names[MOLECULES] = {"g2_CH4", "g2_H2O", "g2_NH3"};
    for (int k = 0; k < MOLECULES; k++)
        if (!reference_load(&refs[k], argv[1], names[k]))
            return 1;
    run(MLFF_PRECISION_FLOAT32, refs);
    if (test_device_fp64())
        run(MLFF_PRECISION_FLOAT64, refs);
    for (int k = 0; k < MOLECULES; k++)
        reference_free(&refs[k]);
    if (failures)
        return 1;
    printf("all passed\n");
    return 0;
}
