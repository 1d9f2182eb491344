/*
 * End to end: an ANI-1x-like model written in NeuroChem format, converted
 * with the importer, loaded and evaluated through the public API (CPU,
 * float64), against an independent reference implementation of ANI written
 * here in plain double loops, straight from the formulas (DESIGN.md, "ANI
 * facts"): AEVs, atomic networks, ensemble mean, self energies, and forces
 * by central finite differences of the reference energy.
 *
 * Nothing here shares code with the engine, so agreement to 1e-9 (energy,
 * relative) and 1e-7 eV/A (forces) means both compute the same function.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mlff.h"
#include "models/model_file.h"
#include "models/neurochem.h"
#include "neurochem_writer.h"
#include "tests/common/check.h"

#define HARTREE_TO_EV 27.211386024367243
#define MAX_ATOMS 16
#define MAX_AEV 512


/* ------------------------------------------------------------------------ */
/* Reference ANI                                                            */

static double cutoff_fn(double r, double rc)
{
    return r < rc ? 0.5 * cos(M_PI * r / rc) + 0.5 : 0.0;
}

static double distance(const double *a, const double *b)
{
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Index of the unordered species pair (a, b) in upper-triangle order:
 * (0,0), (0,1), ..., (0,n-1), (1,1), (1,2), ... */
static int pair_index(int a, int b, int n)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    int index = 0;
    for (int i = 0; i < n; i++)
        for (int j = i; j < n; j++, index++)
            if (i == a && j == b)
                return index;
    return -1;
}

static void reference_aev(const ncw_model *m, int n, const int *species, const double *pos,
                          double aev[][MAX_AEV])
{
    const ncw_spec *s = &m->spec;
    const ncw_aev *c = &m->aev;
    const int radial_len = s->n_elements * s->n_shfr, pair_len = s->n_shfa * s->n_shfz;
    for (int i = 0; i < n; i++)
        memset(aev[i], 0, sizeof aev[i]);
    for (int i = 0; i < n; i++) {
        /* radial: every other atom j within Rcr, in the slot of j's species */
        for (int j = 0; j < n; j++) {
            if (j == i)
                continue;
            double r = distance(pos + 3 * i, pos + 3 * j);
            if (r >= c->rcr)
                continue;
            for (int k = 0; k < s->n_shfr; k++)
                aev[i][species[j] * s->n_shfr + k] +=
                    0.25 * exp(-c->etar * (r - c->shfr[k]) * (r - c->shfr[k])) * cutoff_fn(r, c->rcr);
        }
        /* angular: unordered neighbour pairs j < k within Rca */
        for (int j = 0; j < n; j++)
            for (int k = j + 1; k < n; k++) {
                if (j == i || k == i)
                    continue;
                const double *pi = pos + 3 * i, *pj = pos + 3 * j, *pk = pos + 3 * k;
                double rij = distance(pi, pj), rik = distance(pi, pk);
                if (rij >= c->rca || rik >= c->rca)
                    continue;
                double dot = 0;
                for (int d = 0; d < 3; d++)
                    dot += (pj[d] - pi[d]) * (pk[d] - pi[d]);
                double theta = acos(0.95 * dot / (rij * rik));
                double fcs = cutoff_fn(rij, c->rca) * cutoff_fn(rik, c->rca);
                int p = pair_index(species[j], species[k], s->n_elements);
                for (int a = 0; a < s->n_shfa; a++) {
                    double dr = (rij + rik) / 2 - c->shfa[a];
                    double radial = exp(-c->etaa * dr * dr);
                    for (int z = 0; z < s->n_shfz; z++) {
                        double angular = pow((1 + cos(theta - c->shfz[z])) / 2, c->zeta);
                        aev[i][radial_len + p * pair_len + a * s->n_shfz + z] +=
                            2 * angular * radial * fcs;
                    }
                }
            }
    }
}

static double celu(double x, double alpha)
{
    return x > 0 ? x : alpha * (exp(x / alpha) - 1);
}

/* One atomic network on one AEV, in double (weights widened from float32). */
static double run_network(const ncw_network *net, const double *aev)
{
    double in[MAX_AEV], out[MAX_AEV];
    int n_in = net->layers[0].in;
    memcpy(in, aev, (size_t)n_in * sizeof *in);
    for (int l = 0; l < net->n_layers; l++) {
        const ncw_layer *ly = &net->layers[l];
        for (int o = 0; o < ly->out; o++) {
            double sum = ly->biases[o];
            for (int k = 0; k < ly->in; k++)
                sum += (double)ly->weights[(size_t)o * ly->in + k] * in[k];
            out[o] = ly->activation_code == 9 ? celu(sum, 0.1) : sum;
        }
        memcpy(in, out, (size_t)ly->out * sizeof *in);
    }
    return in[0];
}

/* Sum over atoms of the ensemble-mean atomic energy (Hartree), without the
 * self energies: the part that depends on positions. */
static double network_energy(const ncw_model *m, int n, const int *species, const double *pos)
{
    static double aev[MAX_ATOMS][MAX_AEV];
    reference_aev(m, n, species, pos, aev);
    double total = 0;
    for (int i = 0; i < n; i++) {
        double mean = 0;
        for (int member = 0; member < m->spec.ensemble_size; member++)
            mean += run_network(ncw_get_network(m, species[i], member), aev[i]);
        total += mean / m->spec.ensemble_size;
    }
    return total;
}

/* Energy (eV) and forces (eV/A, central differences of the energy). */
static double reference_energy(const ncw_model *m, int n, const int *species, const double *pos,
                               double *forces)
{
    double self = 0;
    for (int i = 0; i < n; i++)
        self += m->spec.self_energies[species[i]];
    const double h = 1e-5;
    double p[3 * MAX_ATOMS];
    memcpy(p, pos, (size_t)n * 3 * sizeof *p);
    for (int k = 0; k < 3 * n; k++) {
        p[k] = pos[k] + h;
        double plus = network_energy(m, n, species, p);
        p[k] = pos[k] - h;
        double minus = network_energy(m, n, species, p);
        p[k] = pos[k];
        forces[k] = -(plus - minus) / (2 * h) * HARTREE_TO_EV;
    }
    return (self + network_energy(m, n, species, pos)) * HARTREE_TO_EV;
}

/* ------------------------------------------------------------------------ */
/* Molecules                                                                */

typedef struct molecule {
    const char *name;
    int n;
    int z[MAX_ATOMS];
    double pos[3 * MAX_ATOMS];
} molecule;

/* Slightly distorted, so that no force vanishes by symmetry. */
static const molecule molecules[] = {
    {"CH4", 5, {6, 1, 1, 1, 1},
     {0.00, 0.01, -0.02, 0.64, 0.62, 0.63, -0.63, -0.64, 0.62, -0.62, 0.63, -0.65, 0.63, -0.61,
      -0.62}},
    {"NH3", 4, {7, 1, 1, 1},
     {0.00, 0.00, 0.11, 0.94, 0.02, -0.27, -0.47, 0.82, -0.26, -0.48, -0.80, -0.28}},
    {"H2O", 3, {8, 1, 1}, {0.00, 0.00, 0.00, 0.757, 0.586, 0.01, -0.76, 0.58, 0.05}},
    {"HCONH2", 6, {6, 8, 7, 1, 1, 1},
     {0.00, 0.42, 0.00, 1.21, 0.50, 0.02, -0.75, -0.72, 0.01, -0.55, 1.35, 0.03, -1.75, -0.65,
      0.05, -0.30, -1.62, -0.04}},
};

static int species_of(int z)
{
    switch (z) {
    case 1: return 0;
    case 6: return 1;
    case 7: return 2;
    case 8: return 3;
    default: return -1;
    }
}

/* Evaluates the molecules [first, first + count) as one batch and compares. */
static void check_batch(mlff_context *ctx, mlff_model *model, const ncw_model *m, int first,
                        int count)
{
    int64_t offsets[8] = {0};
    int32_t z[8 * MAX_ATOMS];
    double pos[3 * 8 * MAX_ATOMS], forces[3 * 8 * MAX_ATOMS], energies[8];
    int total = 0;
    for (int s = 0; s < count; s++) {
        const molecule *mol = &molecules[first + s];
        for (int i = 0; i < mol->n; i++)
            z[total + i] = mol->z[i];
        memcpy(pos + 3 * total, mol->pos, (size_t)mol->n * 3 * sizeof *pos);
        total += mol->n;
        offsets[s + 1] = total;
    }
    mlff_batch batch = {.n_systems = count, .system_offsets = offsets, .atomic_numbers = z,
                        .positions = pos};
    mlff_status st = mlff_evaluate(model, &batch, energies, forces);
    CHECK(st == MLFF_OK, "evaluate: %s", mlff_last_error(ctx));
    if (st != MLFF_OK)
        return;
    for (int s = 0; s < count; s++) {
        const molecule *mol = &molecules[first + s];
        int species[MAX_ATOMS];
        double ref_forces[3 * MAX_ATOMS];
        for (int i = 0; i < mol->n; i++)
            species[i] = species_of(mol->z[i]);
        double ref = reference_energy(m, mol->n, species, mol->pos, ref_forces);
        double e = energies[s], worst = 0;
        for (int k = 0; k < 3 * mol->n; k++)
            worst = fmax(worst, fabs(forces[3 * offsets[s] + k] - ref_forces[k]));
        double max_force = 0;
        for (int k = 0; k < 3 * mol->n; k++)
            max_force = fmax(max_force, fabs(ref_forces[k]));
        printf("%-7s (batch of %d) energy %.10f eV, reference %.10f (difference %.1e); "
               "largest force %.3f, max force error %.1e eV/A\n", mol->name, count, e, ref, e - ref,
               max_force, worst);
        CHECK(fabs(e - ref) <= 1e-9 * fabs(ref), "%s: energy %.12f vs reference %.12f", mol->name,
              e, ref);
        CHECK(worst <= 1e-7, "%s: force error %.3g eV/A", mol->name, worst);
    }
}

static int convert(const ncw_model *m, const char *name, const char *out_path)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *mf = NULL;
    mlff_status s = mlff_neurochem_import(m->info_path, name, &mf, &err);
    if (s == MLFF_OK)
        s = mlff_model_file_write(mf, out_path, &err);
    mlff_model_file_destroy(mf);
    if (s != MLFF_OK)
        fprintf(stderr, "conversion failed: %s\n", err.message);
    return s == MLFF_OK;
}

/* ------------------------------------------------------------------------ */
/* Small models of every shape                                              */

/*
 * 84 small ANI-type models (2 to 4 elements, one to four hidden layers, one
 * to four members, varied shift counts): each converted, loaded, and
 * evaluated on a molecule of all its elements and on one of a single
 * element (a graph of a subset of the elements), against the reference.
 * Building their graphs once read freed memory in 27 of them (a VJP kept a
 * pointer into the tensor array across an append, which moves it): ANI-2x's
 * sizes happened to stay clear of it, under ASan these do not.
 */
static const char *const small_symbols[] = {"H", "C", "N", "O"};
static const int small_numbers[] = {1, 6, 7, 8};
static const double small_sae[] = {-0.600952980000, -38.08316124000, -54.70775770000, -75.19446356000};

static void small_spec(int k, ncw_spec *spec, int *numbers)
{
    static const int layer_sets[7][6] = {{4, 1},       {8, 1},    {3, 5, 1},      {16, 8, 1},
                                         {2, 2, 2, 1}, {7, 3, 1}, {5, 4, 3, 2, 1}};
    static const int members[] = {1, 2, 3, 4};
    ncw_spec_ani1x_like(spec);
    const int n_el = 2 + k / 28, layers = k % 7, ensemble = members[(k / 7) % 4];
    spec->n_elements = n_el;
    for (int e = 0; e < n_el; e++) {
        const int which = (e + k) % 4; /* subsets in different orders */
        spec->elements[e] = small_symbols[which];
        spec->self_energies[e] = small_sae[which];
        numbers[e] = small_numbers[which];
    }
    spec->n_shfr = 2 + k % 5;
    spec->n_shfz = 1 + k % 4;
    spec->n_shfa = 1 + k % 3;
    for (int i = 0; i < spec->n_shfr; i++)
        spec->shfr[i] = 0.9 + 4.0 / spec->n_shfr * i;
    for (int i = 0; i < spec->n_shfz; i++)
        spec->shfz[i] = M_PI / (2 * spec->n_shfz) + i * M_PI / spec->n_shfz;
    for (int i = 0; i < spec->n_shfa; i++)
        spec->shfa[i] = 0.9 + 2.5 / spec->n_shfa * i;
    spec->ensemble_size = ensemble;
    spec->n_layers = 0;
    for (int l = 0; l < 5 && layer_sets[layers][l]; l++) {
        spec->layer_sizes[l] = layer_sets[layers][l];
        spec->activation_codes[l] = layer_sets[layers][l + 1] ? 9 : 6;
        spec->n_layers++;
    }
    spec->seed = 1000 + (uint64_t)k;
}

/* Six atoms within the angular cutoff of each other, cycling through the
 * first n_el elements (or all of one element). */
static void small_molecule(const int *numbers, int n_el, int only, molecule *mol)
{
    static const double pos[18] = {0.00, 0.00, 0.00, 1.21, 0.10, -0.05, -0.35, 1.12, 0.20,
                                   0.45, -0.30, 1.18, -1.02, -0.55, -0.40, 1.60, 1.25, 0.62};
    mol->n = 6;
    for (int i = 0; i < 6; i++)
        mol->z[i] = only >= 0 ? numbers[only] : numbers[i % n_el];
    memcpy(mol->pos, pos, sizeof pos);
}

/* Energy and forces of mol through the API against the reference. */
static void check_small(mlff_context *ctx, mlff_model *model, const ncw_model *m, const int *numbers,
                        const molecule *mol, const char *what)
{
    int species[MAX_ATOMS];
    for (int i = 0; i < mol->n; i++)
        for (int e = 0; e < m->spec.n_elements; e++)
            if (numbers[e] == mol->z[i])
                species[i] = e;
    int64_t offsets[2] = {0, mol->n};
    double energy, forces[3 * MAX_ATOMS], ref_forces[3 * MAX_ATOMS];
    mlff_batch batch = {.n_systems = 1, .system_offsets = offsets, .atomic_numbers = mol->z, .positions = mol->pos};
    mlff_status st = mlff_evaluate(model, &batch, &energy, forces);
    CHECK(st == MLFF_OK, "%s: evaluate: %s", what, mlff_last_error(ctx));
    if (st != MLFF_OK)
        return;
    const double ref = reference_energy(m, mol->n, species, mol->pos, ref_forces);
    double worst = 0;
    for (int k = 0; k < 3 * mol->n; k++)
        worst = fmax(worst, fabs(forces[k] - ref_forces[k]));
    CHECK(fabs(energy - ref) <= 1e-9 * fabs(ref), "%s: energy %.12f vs reference %.12f", what, energy, ref);
    CHECK(worst <= 1e-7, "%s: force error %.3g eV/A", what, worst);
}

static void check_small_models(const char *dir, mlff_context *ctx)
{
    int models = 0;
    for (int k = 0; k < 84; k++) {
        ncw_spec spec;
        int numbers[4];
        small_spec(k, &spec, numbers);
        char sub[4200], path[4300], what[64];
        snprintf(sub, sizeof sub, "%s/small%d", dir, k);
        snprintf(path, sizeof path, "%s/small%d.mlff", dir, k);
        snprintf(what, sizeof what, "small model %d (%d elements, %d layers, %d members)", k, spec.n_elements,
                 spec.n_layers, spec.ensemble_size);
        ncw_model *m = mkdir(sub, 0700) == 0 ? ncw_write(&spec, sub) : NULL;
        CHECK(m && convert(m, "small", path), "%s: written and converted", what);
        mlff_model *model = NULL;
        mlff_status st = m ? mlff_model_load(ctx, path, &model) : MLFF_ERROR_IO;
        CHECK(st == MLFF_OK, "%s: load: %s", what, mlff_last_error(ctx));
        if (st == MLFF_OK) {
            molecule mol = {.name = ""};
            small_molecule(numbers, spec.n_elements, -1, &mol);
            check_small(ctx, model, m, numbers, &mol, what);
            small_molecule(numbers, spec.n_elements, k % spec.n_elements, &mol);
            check_small(ctx, model, m, numbers, &mol, what);
            mlff_model_free(model);
            models++;
        }
        ncw_model_free(m);
    }
    printf("%d small models of 2-4 elements: energies and forces as the reference's\n", models);
}

int main(void)
{
    char *dir = ncw_make_temp_dir("ani-reference");
    if (!dir)
        return 1;
    ncw_spec spec;
    ncw_spec_ani1x_like(&spec);
    ncw_model *m = ncw_write(&spec, dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/ani-1x-like.mlff", dir);
    if (!m || !convert(m, "ANI-1x-like", path)) {
        ncw_model_free(m);
        ncw_remove_tree(dir);
        free(dir);
        return 1;
    }

    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.device = MLFF_DEVICE_CPU;
    settings.precision = MLFF_PRECISION_FLOAT64;
    mlff_context *ctx = NULL;
    mlff_model *model = NULL;
    mlff_status st = mlff_context_create(&settings, &ctx);
    CHECK(st == MLFF_OK, "context: %s", ctx ? mlff_last_error(ctx) : "out of memory");
    if (st == MLFF_OK) {
        st = mlff_model_load(ctx, path, &model);
        CHECK(st == MLFF_OK, "load %s: %s", path, mlff_last_error(ctx));
    }
    if (st == MLFF_OK) {
        mlff_model_info info;
        CHECK(mlff_model_get_info(model, &info) == MLFF_OK && !strcmp(info.name, "ANI-1x-like") &&
                  info.n_elements == 4,
              "model info");
        check_batch(ctx, model, m, 0, 1); /* CH4 */
        check_batch(ctx, model, m, 1, 2); /* NH3 + H2O as one batch of two systems */
        check_batch(ctx, model, m, 3, 1); /* formamide: H C N O with angles */
        check_small_models(dir, ctx);
    }
    mlff_context_destroy(ctx);
    ncw_model_free(m);
    ncw_remove_tree(dir);
    free(dir);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
