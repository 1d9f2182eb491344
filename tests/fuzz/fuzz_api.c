/*
 * The public C API on one device (FUZZ_DEVICE: the CPU, or OpenCL, which
 * is PoCL on a machine without a GPU), driven by fuzzer-chosen calls:
 * mlff_compute, mlff_evaluate and mlff_compute_subdomain with any counts,
 * offsets (decreasing, not starting at 0, claiming more atoms than a batch
 * may hold), atomic numbers, positions (NaN, infinities, 1e30, atoms a
 * subnormal distance apart or all at one point), cells (singular, tiny,
 * huge, negative, NaN) and pbc flags, outputs asked or not, on contexts of
 * several settings (precision, neighbour search, Verlet skin, atoms per
 * chunk) opened once per process. Every call must succeed with finite
 * results or fail with a known status and a message; after any sequence of
 * calls, successful or not, the context must still give the energy and
 * forces of a reference batch it gave when it opened.
 *
 * Models: ANI-2x itself on one context (one input in 32); on the others a model with
 * ANI-2x's elements, features and cutoffs but networks of 8 units, made at
 * start from the ANI-2x file: the same pair searches, chunks and memory
 * checks, at a fraction of the time an evaluation takes.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "mlff.h"
#include "models/model_file.h"

#ifndef FUZZ_DEVICE
#define FUZZ_DEVICE MLFF_DEVICE_CPU
#endif
/* FUZZ_COMPILED: a device whose graphs are programs its driver compiles. */

#define MOST_ATOMS 48
#define MOST_SYSTEMS 4

typedef struct setup {
    int ani2x; /* ANI-2x itself, else the small model */
    mlff_precision precision;
    mlff_neighbors neighbors;
    double skin;
    int64_t max_chunk_atoms;
    int threads;
} setup;

/* ANI-2x's last. On OpenCL, where each graph is a program the driver
 * compiles (PoCL: tens of seconds), fewer contexts, every batch through the
 * graph of all the model's elements, and chunks of more atoms: a chunk is a
 * pass of the whole graph, tens of launches (one atom a chunk made that
 * context's batches an order of magnitude slower than the others on PoCL);
 * the chunks' bookkeeping is the host's, which api_cpu cuts finest. */
#ifdef FUZZ_COMPILED
#define CHUNK(cpu, compiled) (compiled)
#else
#define CHUNK(cpu, compiled) (cpu)
#endif
static const setup setups[] = {
    {0, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_AUTO, 0.0, 0, 1},
    {0, MLFF_PRECISION_FLOAT64, MLFF_NEIGHBORS_SPARSE, 0.3, CHUNK(3, 8), 2},
#ifndef FUZZ_COMPILED
    {0, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_DENSE, 0.0, 0, 1},
#endif
    {0, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_SPARSE, 1.0, CHUNK(1, 4), 1},
    {1, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_AUTO, 0.0, 0, 1},
};
#define N_SETUPS (int)(sizeof setups / sizeof *setups)

static mlff_context *contexts[N_SETUPS];
static mlff_model *models[N_SETUPS];
static double check_energies[N_SETUPS][2], check_forces[N_SETUPS][3 * 8];

/* ------------------------------------------------------------------------ */
/* The small model                                                          */

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* ANI-2x's metadata, features and self energies, with two members of
 * (features -> 8 -> 1) networks of fixed pseudo-random weights. */
static void make_small_model(const char *path)
{
    mlff_error err;
    mlff_error_clear(&err);
    mlff_model_file *ani = NULL, *small = mlff_model_file_create();
    FUZZ_CHECK(small && mlff_model_file_read(FUZZ_ANI2X, &ani, &err) == MLFF_OK, "reading %s: %s", FUZZ_ANI2X,
               err.message);
    for (size_t k = 0; k < ani->n_meta; k++) {
        const char *value = strcmp(ani->meta[k].key, "ensemble_size") ? ani->meta[k].value : "2";
        FUZZ_CHECK(mlff_model_file_set_meta(small, ani->meta[k].key, value, &err) == MLFF_OK, "%s", err.message);
    }
    for (size_t k = 0; k < ani->n_tensors; k++) {
        const mlff_model_tensor *t = &ani->tensors[k];
        if (strncmp(t->name, "network.", 8))
            FUZZ_CHECK(mlff_model_file_add_tensor(small, t->name, t->dtype, t->rows, t->cols, t->data, &err) ==
                           MLFF_OK,
                       "%s", err.message);
    }
    const int64_t features = mlff_model_file_tensor(ani, "network.H.0.0.weight")->cols;
    char elements[128];
    snprintf(elements, sizeof elements, "%s", mlff_model_file_meta(ani, "elements"));
    float *w = malloc((size_t)features * 8 * sizeof *w);
    FUZZ_CHECK(w, "out of memory");
    uint64_t seed = 57;
    char *save = NULL;
    for (char *el = strtok_r(elements, " ", &save); el; el = strtok_r(NULL, " ", &save))
        for (int m = 0; m < 2; m++) {
            char name[96];
            const int64_t rows[2] = {8, 1}, cols[2] = {features, 8};
            for (int l = 0; l < 2; l++) {
                for (int64_t k = 0; k < rows[l] * cols[l]; k++)
                    w[k] = ((float)lcg(&seed) / 2147483648.0f - 0.5f) / sqrtf((float)cols[l]);
                snprintf(name, sizeof name, "network.%s.%d.%d.weight", el, m, l);
                mlff_model_file_add_tensor(small, name, MLFF_DTYPE_F32, rows[l], cols[l], w, &err);
                snprintf(name, sizeof name, "network.%s.%d.%d.bias", el, m, l);
                mlff_model_file_add_tensor(small, name, MLFF_DTYPE_F32, rows[l], 1, w, &err);
            }
            const int32_t activation[2] = {1, 0};
            const double alpha[2] = {0.1, 0.0};
            snprintf(name, sizeof name, "network.%s.%d.activation", el, m);
            mlff_model_file_add_tensor(small, name, MLFF_DTYPE_I32, 2, 1, activation, &err);
            snprintf(name, sizeof name, "network.%s.%d.activation_alpha", el, m);
            mlff_model_file_add_tensor(small, name, MLFF_DTYPE_F64, 2, 1, alpha, &err);
        }
    free(w);
    FUZZ_CHECK(err.status == MLFF_OK && mlff_model_file_write(small, path, &err) == MLFF_OK, "small model: %s",
               err.message);
    mlff_model_file_destroy(small);
    mlff_model_file_destroy(ani);
}

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */

/* A water molecule and a methane molecule, which every context evaluates
 * when it opens and again after each input. */
static const int64_t check_offsets[3] = {0, 3, 8};
static const int32_t check_z[8] = {8, 1, 1, 6, 1, 1, 1, 1};
static const double check_positions[24] = {0.00, 0.00, 0.00,  0.757, 0.586, 0.01, -0.76, 0.58,  0.05,
                                           5.00, 0.01, -0.02, 5.64,  0.62,  0.63, 4.37,  -0.64, 0.62,
                                           4.38, 0.63, -0.65, 5.63,  -0.61, -0.62};

static void check_status(int c, mlff_status s, const char *what)
{
    if (s == MLFF_OK)
        return;
    FUZZ_CHECK(s < 0 && s > MLFF_ERROR_INTERNAL, "%s: status %d (%s): %s", what, (int)s, mlff_strerror(s),
               mlff_last_error(contexts[c]));
    FUZZ_CHECK(*mlff_last_error(contexts[c]), "%s: status %d without a message", what, (int)s);
}

static void check_finite(const double *x, int64_t n, const char *what)
{
    for (int64_t k = 0; x && k < n; k++)
        FUZZ_CHECK(isfinite(x[k]), "%s[%lld] = %g after a call that succeeded", what, (long long)k, x[k]);
}

static void evaluate_check(int c, double energies[2], double forces[24])
{
    const mlff_batch b = {2, check_offsets, check_z, check_positions, NULL, NULL};
    const mlff_status s = mlff_evaluate(models[c], &b, energies, forces);
    FUZZ_CHECK(s == MLFF_OK, "context %d: the reference batch: %s", c, mlff_last_error(contexts[c]));
}

/* The reference batch after whatever came before: the numbers it gave at
 * first (a Verlet skin may change the order of sums, not more). */
static void check_context(int c)
{
    double e[2], f[24];
    evaluate_check(c, e, f);
    const double tol = setups[c].precision == MLFF_PRECISION_FLOAT32 ? 1e-4 : 1e-9;
    for (int k = 0; k < 2; k++)
        FUZZ_CHECK(fabs(e[k] - check_energies[c][k]) <= tol * fabs(check_energies[c][k]),
                   "context %d: the reference energy %d is %.12g, %.12g at first", c, k, e[k], check_energies[c][k]);
    for (int k = 0; k < 24; k++)
        FUZZ_CHECK(fabs(f[k] - check_forces[c][k]) <= 100 * tol, "context %d: the reference force %d is %.12g, %.12g at first",
                   c, k, f[k], check_forces[c][k]);
}

static void warm_up(int c);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    FUZZ_CHECK(fuzz_scratch_dir(), "cannot make a scratch directory");
#ifdef FUZZ_COMPILED
    /* No binaries in mlff's kernel cache: PoCL makes a program's binary by
     * compiling a work-group function for every kernel it holds (half a
     * minute for a graph's, more than its build), and keeps what it built
     * from the same source in its own cache (POCL_CACHE_DIR) anyway: a
     * program again is its cached build, and each kernel's work-group
     * function is compiled only for the launches the fuzzer makes. */
    setenv("MLFF_CACHE", "off", 1);
#endif
    make_small_model(fuzz_path("small.mlff"));
    for (int c = 0; c < N_SETUPS; c++) {
        mlff_settings s;
        mlff_default_settings(&s);
        s.device = FUZZ_DEVICE;
        s.precision = setups[c].precision;
        s.neighbors = setups[c].neighbors;
        s.skin = setups[c].skin;
        s.max_chunk_atoms = setups[c].max_chunk_atoms;
        s.n_threads = setups[c].threads;
#ifdef FUZZ_COMPILED
        s.tuning = "element_plans=off";
#endif
        const mlff_status st = mlff_open(&s, setups[c].ani2x ? FUZZ_ANI2X : fuzz_path("small.mlff"), &contexts[c],
                                         &models[c]);
        if (st == MLFF_ERROR_DEVICE && FUZZ_DEVICE != MLFF_DEVICE_CPU) {
            fprintf(stderr, "no device: %s\n", mlff_last_error(contexts[c]));
            exit(77);
        }
        FUZZ_CHECK(st == MLFF_OK, "context %d: %s", c, contexts[c] ? mlff_last_error(contexts[c]) : "out of memory");
        warm_up(c);
        evaluate_check(c, check_energies[c], check_forces[c]);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */

static const int32_t model_elements[] = {1, 6, 7, 8, 16, 9, 17};
static const int32_t odd_elements[] = {0, -1, 2, 119, INT32_MAX, INT32_MIN, 92, 3};

static int32_t atomic_number(fuzz_reader *r)
{
    const uint8_t b = fuzz_byte(r);
    return b < 224 ? model_elements[b % 7] : odd_elements[b % 8];
}

/* A coordinate: mostly near the atom before (chains and clusters at bond
 * lengths, some too close), else far away or a value from the edges of
 * what doubles hold. */
static double coordinate(fuzz_reader *r, double previous)
{
    const uint8_t b = fuzz_byte(r);
    if (b < 160)
        return previous + (b - 80) / 50.0;
    if (b < 176)
        return (fuzz_byte(r) - 128) * 3.0;
    switch (b % 16) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 1e30;
    case 4: return -1e30;
    case 5: return 1e300;
    case 6: return previous + 4.9e-324;
    case 7: return previous; /* at one point with the atom before */
    case 8: return -0.0;
    case 9: return 1e-300;
    case 10: return DBL_MAX;
    case 11: return previous + 1e-12;
    case 12: return 1e15;
    case 13: return previous * (1 + DBL_EPSILON);
    default: {
        const uint64_t bits = fuzz_u64(r);
        double x;
        memcpy(&x, &bits, sizeof x);
        return x;
    }
    }
}

static double length(fuzz_reader *r)
{
    static const double lengths[] = {10.0, 3.0, 0.001, 1e-10, 1e30, 1e6, 2.5, 25.0,
                                     -10.0, 0.0, 5.1, 1e-300, NAN, INFINITY, 7.3, 100.0};
    return lengths[fuzz_byte(r) % 16];
}

static void cell(fuzz_reader *r, double *m)
{
    memset(m, 0, 9 * sizeof *m);
    switch (fuzz_byte(r) % 8) {
    case 0: /* orthorhombic */
        for (int d = 0; d < 3; d++)
            m[4 * d] = length(r);
        break;
    case 1: /* triclinic */
        for (int k = 0; k < 9; k++)
            m[k] = (k % 4 == 0 ? 8.0 : 0.0) + (fuzz_byte(r) - 128) / 16.0;
        break;
    case 2: /* singular: two equal rows */
        m[0] = m[3] = length(r);
        m[8] = length(r);
        break;
    case 3: /* as in the issue: a thin slab whose two short vectors are periodic */
        m[0] = m[4] = 0.001;
        m[8] = 10.0;
        break;
    case 4: /* one value anywhere */
        for (int d = 0; d < 3; d++)
            m[4 * d] = 10.0;
        m[fuzz_byte(r) % 9] = coordinate(r, 0.0);
        break;
    case 5:
        for (int k = 0; k < 9; k++)
            m[k] = coordinate(r, 0.0);
        break;
    default: /* cubic */
        m[0] = m[4] = m[8] = length(r);
        break;
    }
}

typedef struct batch_data {
    int64_t offsets[MOST_SYSTEMS + 1];
    int32_t z[MOST_ATOMS];
    double positions[3 * MOST_ATOMS];
    double cells[9 * MOST_SYSTEMS];
    uint8_t pbc[3 * MOST_SYSTEMS];
    int64_t n_atoms; /* what the arrays hold */
} batch_data;

/* Atoms, then positions, for n atoms. */
static void atoms(fuzz_reader *r, batch_data *d, int64_t n)
{
    double previous[3] = {0, 0, 0};
    for (int64_t a = 0; a < n; a++) {
        d->z[a] = atomic_number(r);
        for (int k = 0; k < 3; k++)
            previous[k] = d->positions[3 * a + k] = coordinate(r, previous[k]);
    }
}

static void make_batch(fuzz_reader *r, batch_data *d, mlff_batch *b)
{
    memset(d, 0, sizeof *d);
    const uint8_t shape = fuzz_byte(r);
    b->n_systems = shape == 255 ? -1 : shape % (MOST_SYSTEMS + 1);
    int64_t n = 0;
    for (int64_t s = 0; s < b->n_systems; s++) {
        const int64_t count = fuzz_byte(r) % 13;
        n = n + count <= MOST_ATOMS ? n + count : n;
        d->offsets[s + 1] = n;
    }
    d->n_atoms = n;
    /* Offsets the API must refuse before it reads an atom. */
    const uint8_t odd = fuzz_byte(r);
    if (b->n_systems > 0 && odd >= 240) {
        const int64_t s = odd % b->n_systems;
        static const int64_t bad[] = {-1, INT64_MAX, INT32_MAX, (int64_t)1 << 40, 3, -((int64_t)1 << 40)};
        d->offsets[odd % 2 ? s + 1 : 0] = bad[odd % 6];
    }
    atoms(r, d, n);
    const uint8_t periodic = fuzz_byte(r);
    for (int64_t s = 0; s < b->n_systems; s++) {
        cell(r, d->cells + 9 * s);
        const uint8_t flags = fuzz_byte(r);
        for (int k = 0; k < 3; k++)
            d->pbc[3 * s + k] = flags & 0x80 ? (uint8_t)(flags >> k) : (flags >> k) & 1;
    }
    b->system_offsets = d->offsets;
    b->atomic_numbers = d->z;
    b->positions = d->positions;
    b->cells = periodic & 1 ? d->cells : NULL;
    b->pbc = periodic & 2 ? d->pbc : NULL;
    if (periodic == 255) /* arrays the API must not read: no atoms */
        b->atomic_numbers = NULL, b->positions = NULL;
}

/* ------------------------------------------------------------------------ */
/* Calls                                                                    */

/*
 * The outputs a call asks for (bits: compute's energies 1, forces 2,
 * virials 4; a subdomain's energy 1, forces 2, virial 4, atom energies 8,
 * atom virials 16). Each set of outputs runs a node list of its own, which
 * on a compiled device is a program of its own: compiled, and each kernel's
 * work-group function compiled at its first launch (a minute on PoCL here).
 * PoCL 3.1 then keeps 128 work-group functions loaded and reloads the rest
 * from disk at each launch: with the node lists of every set of outputs in
 * use, each input reloaded about a hundred. So on a compiled device any
 * output asked for asks for them all, which the reference batch's
 * evaluation shares (energies and forces: mlff_evaluate and subdomains;
 * compute adds the virials; atom virials run a plan of their own): three
 * lists a context, compiled when it opens (warm_up), none at an input.
 * Which arrays are NULL is the host's business, the same on every device:
 * api_cpu takes the fuzzer's choice as it comes.
 */
static uint8_t compute_outputs(uint8_t outputs)
{
#ifdef FUZZ_COMPILED
    return outputs & 7 ? 7 : 0;
#else
    return outputs;
#endif
}

static uint8_t subdomain_outputs(uint8_t outputs)
{
#ifdef FUZZ_COMPILED
    return outputs & 31 ? (outputs & 16 ? 31 : 15) : 0;
#else
    return outputs;
#endif
}

static void compute(fuzz_reader *r, int c, int evaluate_only)
{
    batch_data d;
    mlff_batch b;
    make_batch(r, &d, &b);
    const uint8_t outputs = compute_outputs(fuzz_byte(r));
    double energies[MOST_SYSTEMS], forces[3 * MOST_ATOMS], virials[9 * MOST_SYSTEMS];
    mlff_results res = {.energies = outputs & 1 ? energies : NULL,
                        .forces = outputs & 2 ? forces : NULL,
                        .virials = outputs & 4 && !evaluate_only ? virials : NULL};
    const mlff_status s = evaluate_only ? mlff_evaluate(models[c], &b, res.energies, res.forces)
                                        : mlff_compute(models[c], &b, &res);
    check_status(c, s, evaluate_only ? "mlff_evaluate" : "mlff_compute");
    if (s != MLFF_OK)
        return;
    check_finite(res.energies, b.n_systems, "energies");
    check_finite(res.forces, 3 * d.n_atoms, "forces");
    check_finite(res.virials, 9 * b.n_systems, "virials");
}

static void subdomain(fuzz_reader *r, int c)
{
    batch_data d;
    memset(&d, 0, sizeof d);
    const int64_t n = fuzz_byte(r) % (MOST_ATOMS + 1);
    atoms(r, &d, n);
    const uint8_t owned = fuzz_byte(r);
    mlff_subdomain sd = {.n_atoms = n, .atomic_numbers = d.z, .positions = d.positions, .renumbered = owned & 1};
    sd.n_owned = owned >= 250 ? (owned == 255 ? -1 : n + 1) : n - (owned >> 1) % (n + 1);
    const uint8_t outputs = subdomain_outputs(fuzz_byte(r));
    double energy, forces[3 * MOST_ATOMS], virial[9], atom_energies[MOST_ATOMS], atom_virials[9 * MOST_ATOMS];
    const mlff_subdomain_results res = {.energy = outputs & 1 ? &energy : NULL,
                                        .forces = outputs & 2 ? forces : NULL,
                                        .virial = outputs & 4 ? virial : NULL,
                                        .atom_energies = outputs & 8 ? atom_energies : NULL,
                                        .atom_virials = outputs & 16 ? atom_virials : NULL};
    const mlff_status s = mlff_compute_subdomain(models[c], &sd, &res);
    check_status(c, s, "mlff_compute_subdomain");
    if (s != MLFF_OK)
        return;
    check_finite(res.energy, 1, "energy");
    check_finite(res.forces, 3 * n, "forces");
    check_finite(res.virial, 9, "virial");
    check_finite(res.atom_energies, sd.n_owned, "atom energies");
    check_finite(res.atom_virials, 9 * n, "atom virials");
}

/* On a compiled device, every node list the bucketed outputs can ask for
 * (compute_outputs, subdomain_outputs), in and out of a periodic cell, made
 * once: the programs come from PoCL's cache after the first run, and no
 * input waits for a compiler. */
static void warm_up(int c)
{
#ifdef FUZZ_COMPILED
    static const double cells[18] = {10, 0, 0, 0, 10, 0, 0, 0, 10, 10, 0, 0, 0, 10, 0, 0, 0, 10};
    static const uint8_t pbc[6] = {1, 1, 1, 1, 1, 1};
    double energies[2], forces[24], virials[18], atom_energies[8], atom_virials[72], energy, virial[9];
    for (int periodic = 0; periodic < 2; periodic++) {
        const mlff_batch b = {2, check_offsets, check_z, check_positions, periodic ? cells : NULL, periodic ? pbc : NULL};
        const mlff_results res = {.energies = energies, .forces = forces, .virials = virials};
        check_status(c, mlff_compute(models[c], &b, &res), "warming up mlff_compute");
    }
    for (int atom_virials_too = 0; atom_virials_too < 2; atom_virials_too++) {
        const mlff_subdomain sd = {.n_atoms = 8, .n_owned = 5, .atomic_numbers = check_z, .positions = check_positions};
        const mlff_subdomain_results res = {.energy = &energy,
                                            .forces = forces,
                                            .virial = virial,
                                            .atom_energies = atom_energies,
                                            .atom_virials = atom_virials_too ? atom_virials : NULL};
        check_status(c, mlff_compute_subdomain(models[c], &sd, &res), "warming up mlff_compute_subdomain");
    }
#else
    (void)c;
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader r = {data, size, 0};
    /* ANI-2x itself one time in 32 (a new set of its elements costs a
     * graph and a copy of its weights), the small model else. */
    const uint8_t first = fuzz_byte(&r);
    const int c = first % 32 == 31 ? N_SETUPS - 1 : first % (N_SETUPS - 1);
    const int calls = 1 + (first >> 3) % 3;
    for (int k = 0; k < calls && (k == 0 || fuzz_left(&r)); k++) {
        switch (fuzz_byte(&r) % 3) {
        case 0: compute(&r, c, 0); break;
        case 1: compute(&r, c, 1); break;
        default: subdomain(&r, c); break;
        }
    }
    check_context(c);
    return 0;
}
