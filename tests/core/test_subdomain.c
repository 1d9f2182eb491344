/*
 * Subdomains (mlff_compute_subdomain), as a domain decomposition gives
 * them: a periodic box cut into slabs along its first lattice vector, each
 * slab's atoms owned and, as ghosts, every periodic image of every atom
 * within reach of them (the way LAMMPS's ghost shell holds them). Over the
 * slabs, with ghost forces and virial shares added to the atoms they stand
 * for, the energy, forces and virial must be the periodic box's (the
 * sparse path with cells); per-atom energies add up to the energy and are
 * the same in every cut; per-atom virials add up to the virial. Boxes: the
 * 64-water box cut in 3 slabs thinner than the cutoff; the triclinic one in
 * 2; a molecule in a large empty box cut in 4 (slabs that own nothing).
 * Each also in chunks of at most 20 owned atoms (chunks.h), whose ghosts
 * are the subdomain's atoms, owned or not.
 * Then the Verlet skin: moved atoms reuse the pairs, renumbered ones do not,
 * and the numbers stay those of a fresh search.
 * Usage: test_subdomain REFERENCE_DIR
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/common/reference.h"
#include "mlff.h"

/* How far beyond the cutoff ghosts are kept (LAMMPS's skin, here only to
 * have ghosts that no pair reaches). */
#define GHOST_MARGIN 1.0

typedef struct subdomain {
    int64_t n_owned, n_atoms;
    int32_t *z;
    double *pos;
    int64_t *original; /* the box's atom each stands for */
} subdomain;

typedef struct totals {
    double energy, *forces, virial[9], *atom_energies, *atom_virials;
} totals;

static void inverse3(const double m[9], double inv[9])
{
    const double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                       m[2] * (m[3] * m[7] - m[4] * m[6]);
    inv[0] = (m[4] * m[8] - m[5] * m[7]) / det;
    inv[1] = (m[2] * m[7] - m[1] * m[8]) / det;
    inv[2] = (m[1] * m[5] - m[2] * m[4]) / det;
    inv[3] = (m[5] * m[6] - m[3] * m[8]) / det;
    inv[4] = (m[0] * m[8] - m[2] * m[6]) / det;
    inv[5] = (m[2] * m[3] - m[0] * m[5]) / det;
    inv[6] = (m[3] * m[7] - m[4] * m[6]) / det;
    inv[7] = (m[1] * m[6] - m[0] * m[7]) / det;
    inv[8] = (m[0] * m[4] - m[1] * m[3]) / det;
}

static void push(subdomain *d, int32_t z, const double r[3], int64_t original)
{
    d->z[d->n_atoms] = z;
    memcpy(d->pos + 3 * d->n_atoms, r, 3 * sizeof(double));
    d->original[d->n_atoms++] = original;
}

/* Slab k of n_slabs of a box (periodic along every axis whose pbc is set;
 * a box with none is one cell of empty space around a molecule): its
 * atoms, wrapped into the cell, then every image of every atom within
 * `reach` of one of them. */
static subdomain cut_slab(const reference *r, int k, int n_slabs, double reach)
{
    const int n = r->n_atoms;
    double inv[9];
    inverse3(r->cell, inv);
    double *wrapped = malloc((size_t)n * 3 * sizeof(double)), *frac0 = malloc((size_t)n * sizeof(double));
    for (int a = 0; a < n; a++) {
        double s[3];
        for (int c = 0; c < 3; c++) {
            s[c] = 0;
            for (int d = 0; d < 3; d++)
                s[c] += r->positions[3 * a + d] * inv[3 * d + c];
            if (r->pbc[c])
                s[c] -= floor(s[c]);
        }
        frac0[a] = s[0];
        for (int d = 0; d < 3; d++)
            wrapped[3 * a + d] = s[0] * r->cell[d] + s[1] * r->cell[3 + d] + s[2] * r->cell[6 + d];
    }
    int reach_images[3];
    for (int c = 0; c < 3; c++) {
        /* The distance between the lattice planes of axis c is 1 / |row c of inv^T|. */
        const double norm = sqrt(inv[c] * inv[c] + inv[3 + c] * inv[3 + c] + inv[6 + c] * inv[6 + c]);
        reach_images[c] = r->pbc[c] ? (int)ceil(reach * norm) + 1 : 0;
    }
    const int images = (2 * reach_images[0] + 1) * (2 * reach_images[1] + 1) * (2 * reach_images[2] + 1);
    subdomain d = {0};
    d.z = malloc((size_t)n * images * sizeof(int32_t));
    d.pos = malloc((size_t)n * images * 3 * sizeof(double));
    d.original = malloc((size_t)n * images * sizeof(int64_t));
    for (int a = 0; a < n; a++)
        if ((int)floor(frac0[a] * n_slabs) == k || (k == n_slabs - 1 && frac0[a] >= 1.0))
            push(&d, r->species[a], wrapped + 3 * a, a);
    d.n_owned = d.n_atoms;
    for (int i = -reach_images[0]; i <= reach_images[0]; i++)
        for (int j = -reach_images[1]; j <= reach_images[1]; j++)
            for (int l = -reach_images[2]; l <= reach_images[2]; l++)
                for (int a = 0; a < n; a++) {
                    double x[3];
                    for (int c = 0; c < 3; c++)
                        x[c] = wrapped[3 * a + c] + i * r->cell[c] + j * r->cell[3 + c] + l * r->cell[6 + c];
                    int near = 0, self = 0;
                    for (int64_t o = 0; o < d.n_owned && !self; o++) {
                        const double dx = x[0] - d.pos[3 * o], dy = x[1] - d.pos[3 * o + 1], dz = x[2] - d.pos[3 * o + 2];
                        const double r2 = dx * dx + dy * dy + dz * dz;
                        self = r2 == 0 && d.original[o] == a;
                        near |= r2 <= reach * reach;
                    }
                    if (near && !self)
                        push(&d, r->species[a], x, a);
                }
    free(wrapped);
    free(frac0);
    return d;
}

static void free_subdomain(subdomain *d)
{
    free(d->z);
    free(d->pos);
    free(d->original);
}

/* The slabs' results, each atom's share added to the atom it stands for. */
static totals decompose(mlff_model *model, mlff_context *ctx, const reference *r, int n_slabs, double reach)
{
    const int n = r->n_atoms;
    totals t = {0, calloc((size_t)n * 3, sizeof(double)), {0}, calloc((size_t)n, sizeof(double)),
                calloc((size_t)n * 9, sizeof(double))};
    for (int k = 0; k < n_slabs; k++) {
        subdomain d = cut_slab(r, k, n_slabs, reach);
        double energy, virial[9];
        double *forces = malloc((size_t)(d.n_atoms + 1) * 3 * sizeof(double));
        double *atom_e = malloc((size_t)(d.n_owned + 1) * sizeof(double));
        double *atom_v = malloc((size_t)(d.n_atoms + 1) * 9 * sizeof(double));
        const mlff_subdomain sub = {.n_owned = d.n_owned, .n_atoms = d.n_atoms, .atomic_numbers = d.z, .positions = d.pos, .renumbered = 1};
        const mlff_subdomain_results res = {&energy, forces, virial, atom_e, atom_v, {0}};
        const mlff_status s = mlff_compute_subdomain(model, &sub, &res);
        CHECK(s == MLFF_OK, "%s, slab %d of %d: %s", r->name, k, n_slabs, mlff_last_error(ctx));
        if (s == MLFF_OK) {
            t.energy += energy;
            for (int c = 0; c < 9; c++)
                t.virial[c] += virial[c];
            double sum_e = 0;
            for (int64_t a = 0; a < d.n_owned; a++) {
                t.atom_energies[d.original[a]] += atom_e[a];
                sum_e += atom_e[a];
            }
            CHECK(fabs(sum_e - energy) <= 1e-9 * (1 + fabs(energy)), "%s, slab %d: atom energies add up to %.12g, not %.12g",
                  r->name, k, sum_e, energy);
            for (int64_t a = 0; a < d.n_atoms; a++) {
                for (int c = 0; c < 3; c++)
                    t.forces[3 * d.original[a] + c] += forces[3 * a + c];
                for (int c = 0; c < 9; c++)
                    t.atom_virials[9 * d.original[a] + c] += atom_v[9 * a + c];
            }
        }
        printf("%s, slab %d of %d: %lld owned, %lld ghosts\n", r->name, k + 1, n_slabs, (long long)d.n_owned,
               (long long)(d.n_atoms - d.n_owned));
        free(forces);
        free(atom_e);
        free(atom_v);
        free_subdomain(&d);
    }
    return t;
}

static void free_totals(totals *t)
{
    free(t->forces);
    free(t->atom_energies);
    free(t->atom_virials);
}

/* The decomposition in n_slabs against the whole periodic box, and its
 * per-atom energies against one slab's (every atom owned). */
static void check_box(mlff_model *model, mlff_context *ctx, const reference *r, int n_slabs, double cutoff)
{
    const int n = r->n_atoms;
    double energy, virial[9], *forces = malloc((size_t)n * 3 * sizeof(double));
    const int64_t offsets[2] = {0, n};
    const int periodic = r->pbc[0] || r->pbc[1] || r->pbc[2];
    const mlff_batch b = {1, offsets, r->species, r->positions, periodic ? r->cell : NULL, periodic ? r->pbc : NULL};
    const mlff_results res = {.energies = &energy, .forces = forces, .virials = virial};
    CHECK(mlff_compute(model, &b, &res) == MLFF_OK, "%s: the whole box", r->name);
    totals parts = decompose(model, ctx, r, n_slabs, cutoff + GHOST_MARGIN);
    totals one = decompose(model, ctx, r, 1, cutoff + GHOST_MARGIN);
    double sum_v[9] = {0};
    for (int a = 0; a < n; a++)
        for (int c = 0; c < 9; c++)
            sum_v[c] += parts.atom_virials[9 * a + c];
    const double de = fabs(parts.energy - energy), df = test_max_diff(parts.forces, forces, 3 * (int64_t)n);
    const double dv = test_max_diff(parts.virial, virial, 9), dav = test_max_diff(sum_v, virial, 9);
    const double dae = test_max_diff(parts.atom_energies, one.atom_energies, n);
    printf("%s in %d slabs against the whole: energy %.2e eV, forces %.2e eV/A, virial %.2e eV, atom energies "
           "against one slab %.2e eV, atom virials' sum %.2e eV\n",
           r->name, n_slabs, de, df, dv, dae, dav);
    CHECK(de <= 1e-9 * n, "%s: energy %.12f in slabs, %.12f whole", r->name, parts.energy, energy);
    CHECK(df <= 1e-10, "%s: forces differ by %.3g eV/A", r->name, df);
    CHECK(dv <= 1e-9 * n, "%s: virial differs by %.3g eV", r->name, dv);
    CHECK(dae <= 1e-10, "%s: atom energies differ between cuts by %.3g eV", r->name, dae);
    CHECK(dav <= 1e-9 * n, "%s: atom virials add up to the virial within %.3g eV", r->name, dav);
    /* Each atom's share is the same in every cut: the terms of its pairs,
     * in whichever slab they were made (x (x) F of ghosts would not be). */
    const double spread = test_max_diff(parts.atom_virials, one.atom_virials, 9 * (int64_t)n);
    CHECK(spread <= 1e-9, "%s: atom virials differ between cuts by %.3g eV", r->name, spread);
    free_totals(&parts);
    free_totals(&one);
    free(forces);
}

/* A molecule alone in a box of empty space, cut in 4 slabs: it spans the
 * first two, the others own nothing. */
static void check_molecule(mlff_model *model, mlff_context *ctx, reference *r, double cutoff)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int a = 0; a < r->n_atoms; a++) {
        lo = fmin(lo, r->positions[3 * a]);
        hi = fmax(hi, r->positions[3 * a]);
    }
    const double length = 2 * (hi - lo) + 0.4;
    memset(r->cell, 0, sizeof r->cell);
    r->cell[0] = length;
    r->cell[4] = r->cell[8] = 100.0;
    for (int a = 0; a < r->n_atoms; a++)
        r->positions[3 * a] -= lo - 0.1;
    check_box(model, ctx, r, 4, cutoff);
}

/* The skin: a second call with moved atoms reuses the pairs, one with the
 * atoms renumbered searches again; both give a fresh search's numbers. */
static void check_skin(const reference *box, double cutoff)
{
    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.precision = MLFF_PRECISION_FLOAT64;
    settings.skin = 0.5;
    mlff_context *ctx, *fresh_ctx;
    mlff_model *model = test_open_model_with(&ctx, settings);
    settings.skin = 0;
    mlff_model *fresh = test_open_model_with(&fresh_ctx, settings);
    subdomain d = cut_slab(box, 0, 2, cutoff + GHOST_MARGIN);
    double *f = malloc((size_t)d.n_atoms * 3 * sizeof(double)), *g = malloc((size_t)d.n_atoms * 3 * sizeof(double));
    mlff_stats before, after;
    for (int step = 0; step < 3; step++) {
        if (step > 0)
            for (int64_t a = 0; a < d.n_atoms; a++)
                d.pos[3 * a + (a % 3)] += 0.03 * (a % 2 ? 1 : -1);
        if (step == 2) { /* swap the first two owned atoms and two ghosts: the pairs are not the same */
            for (int64_t x = 0; x < 2; x++) {
                const int64_t i = x ? d.n_owned : 0, j = x ? d.n_atoms - 1 : 1;
                double t[3];
                memcpy(t, d.pos + 3 * i, sizeof t);
                memcpy(d.pos + 3 * i, d.pos + 3 * j, sizeof t);
                memcpy(d.pos + 3 * j, t, sizeof t);
                const int32_t z = d.z[i];
                d.z[i] = d.z[j];
                d.z[j] = z;
            }
        }
        double e, e_fresh;
        mlff_get_stats(ctx, &before);
        const mlff_subdomain sub = {.n_owned = d.n_owned, .n_atoms = d.n_atoms, .atomic_numbers = d.z, .positions = d.pos, .renumbered = step != 1};
        const mlff_subdomain_results res = {.energy = &e, .forces = f}, fres = {.energy = &e_fresh, .forces = g};
        CHECK(mlff_compute_subdomain(model, &sub, &res) == MLFF_OK, "skin, step %d: %s", step, mlff_last_error(ctx));
        CHECK(mlff_compute_subdomain(fresh, &sub, &fres) == MLFF_OK, "fresh, step %d: %s", step,
              mlff_last_error(fresh_ctx));
        mlff_get_stats(ctx, &after);
        const uint64_t searches = after.neighbor_builds - before.neighbor_builds;
        printf("skin, step %d (%s): %llu searches, energy %.2e eV and forces %.2e eV/A from a fresh search\n", step,
               step == 1 ? "moved" : "renumbered", (unsigned long long)searches, fabs(e - e_fresh),
               test_max_diff(f, g, 3 * d.n_atoms));
        CHECK(searches == (step == 1 ? 0u : 1u), "step %d: %llu searches", step, (unsigned long long)searches);
        CHECK(fabs(e - e_fresh) <= 1e-9 && test_max_diff(f, g, 3 * d.n_atoms) <= 1e-10, "step %d: the skin's numbers",
              step);
    }
    free(f);
    free(g);
    free_subdomain(&d);
    mlff_context_destroy(ctx);
    mlff_context_destroy(fresh_ctx);
}

/* Bad subdomains are refused with a message. */
static void check_errors(mlff_model *model, mlff_context *ctx)
{
    int32_t z[2] = {1, 1};
    double pos[6] = {0, 0, 0, 0.01, 0, 0};
    double e;
    const mlff_subdomain_results res = {.energy = &e};
    mlff_subdomain bad = {.n_owned = 3, .n_atoms = 2, .atomic_numbers = z, .positions = pos, .renumbered = 1};
    CHECK(mlff_compute_subdomain(model, &bad, &res) == MLFF_ERROR_INVALID_ARGUMENT && strstr(mlff_last_error(ctx), "n_owned"),
          "more owned atoms than atoms: '%s'", mlff_last_error(ctx));
    mlff_subdomain close = {.n_owned = 1, .n_atoms = 2, .atomic_numbers = z, .positions = pos, .renumbered = 1};
    CHECK(mlff_compute_subdomain(model, &close, &res) == MLFF_ERROR_BAD_INPUT && strstr(mlff_last_error(ctx), "Angstrom"),
          "atoms too close: '%s'", mlff_last_error(ctx));
    z[1] = 92;
    pos[3] = 2.0;
    CHECK(mlff_compute_subdomain(model, &close, &res) == MLFF_ERROR_BAD_INPUT && strstr(mlff_last_error(ctx), "U"),
          "an element the model lacks: '%s'", mlff_last_error(ctx));
    CHECK(mlff_compute_subdomain(model, NULL, &res) == MLFF_ERROR_INVALID_ARGUMENT, "no subdomain");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s REFERENCE_DIR\n", argv[0]);
        return 2;
    }
    reference box, triclinic, molecule;
    if (!reference_load(&box, argv[1], "water_box_64") || !reference_load(&triclinic, argv[1], "water_box_64_triclinic") ||
        !reference_load(&molecule, argv[1], "g2_CH3CONH2"))
        return 1;
    double cutoff = 0;
    for (int chunked = 0; chunked < 2; chunked++) {
        mlff_settings settings;
        mlff_default_settings(&settings);
        settings.precision = MLFF_PRECISION_FLOAT64;
        settings.max_chunk_atoms = chunked ? 20 : 0;
        mlff_context *ctx;
        mlff_model *model = test_open_model_with(&ctx, settings);
        mlff_model_info info;
        mlff_model_get_info(model, &info);
        cutoff = info.cutoff;
        printf("%s\n", chunked ? "in chunks of 20 owned atoms:" : "in one pass:");
        check_box(model, ctx, &box, 3, cutoff);
        check_box(model, ctx, &triclinic, 2, cutoff);
        if (!chunked)
            check_molecule(model, ctx, &molecule, cutoff);
        check_errors(model, ctx);
        mlff_context_destroy(ctx);
    }
    check_skin(&box, cutoff);
    reference_free(&box);
    reference_free(&triclinic);
    reference_free(&molecule);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
