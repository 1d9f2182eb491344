/*
 * What fuzzing found in the API (issue 57, tests/fuzz), each case with the
 * status and the message it must give, on the CPU or MLFF_TEST_DEVICE's
 * device, through contexts without and with a Verlet skin:
 *  - geometry whose pair search would take gigabytes (a slab whose two
 *    periodic vectors are a thousandth of an Angstrom, a wire as thin,
 *    atoms piled far denser than any material) is refused before the search
 *    allocates for it;
 *  - coordinates and cells beyond what float32 kernels can square;
 *  - atoms a subnormal distance apart (once an infinite bin index);
 *  - empty batches, empty systems and isolated atoms (once NULL passed to
 *    memcpy, and offsets of NULL) are valid: zero energies and forces, or
 *    the atoms' self energies;
 *  - after every error the context gives the numbers it gave before;
 *  - the degenerate cases again in a child process whose address space is
 *    limited (setrlimit; the library's budget follows the limit), which
 *    must end normally with the same refusals, its peak memory reported.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlff.h"
#include "tests/common/model.h"
#include "tests/common/sanitizer.h"

static int failures;


static int expect(mlff_context *ctx, mlff_status got, mlff_status want, const char *needle, int64_t want_system,
                  int64_t want_atom, const char *what)
{
    int64_t system = -2, atom = -2;
    mlff_last_error_location(ctx, &system, &atom);
    const char *msg = mlff_last_error(ctx);
    const int ok = got == want && strstr(msg, needle) && (want != MLFF_OK || !*msg) &&
                   (want_system == -2 || system == want_system) && (want_atom == -2 || atom == want_atom);
    printf("%-4s %-44s status %d, system %lld, atom %lld: %s\n", ok ? "ok" : "FAIL", what, (int)got,
           (long long)system, (long long)atom, msg);
    failures += !ok;
    return ok;
}

static void check(int ok, const char *what)
{
    printf("%-4s %s\n", ok ? "ok" : "FAIL", what);
    failures += !ok;
}

/* Water, then methane: the batch every context must keep getting right. */
static const int32_t z_ref[8] = {8, 1, 1, 6, 1, 1, 1, 1};
static const double pos_ref[24] = {0.0,    0.0,    0.119,  0.0,    0.763,  -0.477, 0.0,    -0.763,
                                   -0.477, 5.0,    0.0,    0.0,    5.629,  0.629,  0.629,  4.371,
                                   -0.629, 0.629,  5.629,  -0.629, -0.629, 4.371,  0.629,  -0.629};
static const int64_t offsets_ref[3] = {0, 3, 8};

static mlff_status reference(mlff_model *m, double e[2], double f[24])
{
    const mlff_batch b = {2, offsets_ref, z_ref, pos_ref, NULL, NULL};
    return mlff_evaluate(m, &b, e, f);
}

/* Two H atoms (or n) in system 0 with the given cell and pbc. */
static mlff_status two_atoms(mlff_model *m, const double cell[9], const uint8_t pbc[3], double z_gap)
{
    const int64_t offsets[2] = {0, 2};
    const int32_t z[2] = {1, 1};
    const double pos[6] = {0.0, 0.0, 0.0, 0.0, 0.0, z_gap};
    const mlff_batch b = {1, offsets, z, pos, cell, pbc};
    double e, f[6], v[9];
    const mlff_results r = {.energies = &e, .forces = f, .virials = v};
    return mlff_compute(m, &b, &r);
}

/* The cases whose pair search would once have taken gigabytes; each refused
 * at once. Returns how many gave the expected refusal. */
static int degenerate_geometry(mlff_context *ctx, mlff_model *m)
{
    int ok = 0;
    /* Issue 57: Lattice="0.001 0 0 0 0.001 0 0 0 10" pbc="T T F", two H atoms
     * (14 s and 4.5 GB before "out of memory"). */
    const double slab[9] = {0.001, 0, 0, 0, 0.001, 0, 0, 0, 10};
    const uint8_t ttf[3] = {1, 1, 0};
    ok += expect(ctx, two_atoms(m, slab, ttf, 1.0), MLFF_ERROR_BAD_INPUT, "denser than any material", 0, -1,
                 "slab of a 0.001 A cell, pbc T T F");
    /* A wire as thin: periodic along one short vector. */
    const double wire[9] = {0.001, 0, 0, 0, 30, 0, 0, 0, 30};
    const uint8_t tff[3] = {1, 0, 0};
    ok += expect(ctx, two_atoms(m, wire, tff, 1.0), MLFF_ERROR_BAD_INPUT, "wire", 0, -1,
                 "wire of a 0.001 A period, pbc T F F");
    /* A slab whose periodic vectors are short, but not so short that its
     * atoms sit on their images: 0.12 A, 10^4 neighbours an atom, 10^7
     * angular triples, a minute of work for two atoms. */
    const double coarse[9] = {0.12, 0, 0, 0, 0.12, 0, 0, 0, 10};
    ok += expect(ctx, two_atoms(m, coarse, ttf, 1.0), MLFF_ERROR_BAD_INPUT, "denser than any material", 0, -1,
                 "slab of a 0.12 A cell, pbc T T F");
    /* One atom on a wire of period 0.08 A: too close to its own images. */
    {
        const int64_t offsets[2] = {0, 1};
        const int32_t z = 6;
        const double pos[3] = {0.0, 0.0, 0.0}, period[9] = {0.08, 0, 0, 0, 20, 0, 0, 0, 20};
        const mlff_batch b = {1, offsets, &z, pos, period, tff};
        double e;
        ok += expect(ctx, mlff_evaluate(m, &b, &e, NULL), MLFF_ERROR_BAD_INPUT, "own periodic image", 0, 0,
                     "an atom on a wire of period 0.08 A");
    }
    /* Fully periodic, as thin along one axis. */
    const double thin3[9] = {0.001, 0, 0, 0, 30, 0, 0, 0, 30};
    const uint8_t ttt[3] = {1, 1, 1};
    ok += expect(ctx, two_atoms(m, thin3, ttt, 1.0), MLFF_ERROR_BAD_INPUT, "denser than any material", 0, -1,
                 "cell 0.001 A thick, pbc T T T");
    /* 20000 atoms 0.22 A apart in a cube of 6 A, and one far away: the box
     * around them all is not dense, but the search would test 4e8 pairs. */
    enum { CLUSTER = 20000 };
    int32_t *z = malloc((CLUSTER + 1) * sizeof *z);
    double *pos = malloc(3 * (CLUSTER + 1) * sizeof *pos);
    if (!z || !pos)
        exit(1);
    for (int a = 0; a < CLUSTER; a++) {
        z[a] = 1;
        pos[3 * a] = 0.22 * (a % 27);
        pos[3 * a + 1] = 0.22 * (a / 27 % 27);
        pos[3 * a + 2] = 0.22 * (a / 729);
    }
    z[CLUSTER] = 8;
    pos[3 * CLUSTER] = pos[3 * CLUSTER + 1] = pos[3 * CLUSTER + 2] = 1e4;
    const int64_t offsets[2] = {0, CLUSTER + 1};
    const mlff_batch cluster = {1, offsets, z, pos, NULL, NULL};
    double e;
    ok += expect(ctx, mlff_evaluate(m, &cluster, &e, NULL), MLFF_ERROR_BAD_INPUT, "would test", 0, -1,
                 "a cluster 0.22 A apart and an atom far off");
    free(z);
    free(pos);
    return ok;
}

/* The same in a process of limited address space: it must end normally,
 * every case refused, within memory the library's budget bounds. */
static void degenerate_in_limited_child(void)
{
    fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) {
        check(0, "fork");
        return;
    }
    if (pid == 0) {
        alarm(300); /* a hang becomes a failure, not the suite's timeout */
        /* ASan reserves terabytes of address space for its shadow memory: an
         * address-space limit cannot be set under it, only the peak measured. */
        if (!UNDER_ASAN) {
            FILE *f = fopen("/proc/self/statm", "r");
            unsigned long pages = 0;
            if (!f || fscanf(f, "%lu", &pages) != 1)
                _exit(3);
            fclose(f);
            /* What the process maps now (the model, the threads' stacks, the
             * libraries), plus 1.5 GiB: the budget becomes an eighth of that. */
            const rlim_t limit = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)3 << 29);
            const struct rlimit rl = {limit, limit};
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                _exit(3);
            printf("     child: address space limited to %.0f MB\n", (double)limit / 1048576.0);
        }
        mlff_context *ctx;
        mlff_model *m = test_open_model(&ctx, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_AUTO, 0.0);
        double e[2], f[24];
        const int ok = reference(m, e, f) == MLFF_OK && degenerate_geometry(ctx, m) == 6 && reference(m, e, f) == MLFF_OK;
        mlff_context_destroy(ctx);
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    struct rusage use;
    if (wait4(pid, &status, 0, &use) != pid) {
        check(0, "wait for the child");
        return;
    }
    char what[160];
    snprintf(what, sizeof what, "degenerate geometry in a child of limited memory: exit %d, signal %d, peak %.0f MB",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
             (double)use.ru_maxrss / 1024.0);
    /* Without the refusals the slab alone took 4.5 GB; under ASan the peak
     * includes its shadow and quarantine. */
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && use.ru_maxrss < (UNDER_ASAN ? 2048L : 1024L) * 1024L,
          what);
}

static void far_and_close(mlff_context *ctx, mlff_model *m)
{
    const uint8_t none[3] = {0, 0, 0};
    int64_t offsets[2] = {0, 2};
    int32_t z[2] = {1, 8};
    double pos[6] = {0.0, 0.0, 0.0, 0.9, 0.0, 0.0}, e, f[6];
    mlff_batch b = {1, offsets, z, pos, NULL, NULL};
    double e0;
    expect(ctx, mlff_evaluate(m, &b, &e0, f), MLFF_OK, "", -2, -2, "OH at 0.9 A");
    /* Atoms a subnormal distance apart along x: one bin along x (its
     * extent once made the bin index infinite); the same numbers. */
    pos[3] = 4.9e-324;
    pos[4] = 0.9;
    expect(ctx, mlff_evaluate(m, &b, &e, f), MLFF_OK, "", -2, -2, "atoms a subnormal distance apart");
    check(fabs(e - e0) <= 1e-9 * fabs(e0), "... the energy of the same pair along another axis");
    pos[4] = 0.0;
    pos[3] = 0.0;
    expect(ctx, mlff_evaluate(m, &b, &e, f), MLFF_ERROR_BAD_INPUT, "closer than 0.1 Angstrom", 0, 1,
           "all atoms at one point");
    pos[3] = 0.9;
    pos[0] = 1e300;
    expect(ctx, mlff_evaluate(m, &b, &e, f), MLFF_ERROR_BAD_INPUT, "more than 1e+10 Angstrom", 0, 0,
           "a coordinate of 1e300");
    pos[0] = -2e10;
    expect(ctx, mlff_evaluate(m, &b, &e, f), MLFF_ERROR_BAD_INPUT, "from the origin", 0, 0,
           "a coordinate of -2e10");
    pos[0] = 0.0;
    const double huge[9] = {1e30, 0, 0, 0, 10, 0, 0, 0, 10};
    const uint8_t txx[3] = {1, 0, 0};
    b.cells = huge;
    b.pbc = txx;
    expect(ctx, mlff_evaluate(m, &b, &e, f), MLFF_ERROR_BAD_INPUT, "cell entry 1 is 1e+30", 0, -1,
           "a periodic cell of 1e30 A");
    /* The same cell without periodic axes is not used. */
    b.pbc = none;
    expect(ctx, mlff_evaluate(m, &b, &e, f), MLFF_OK, "", -2, -2, "that cell, no periodic axis");
    const double nan_cell[9] = {NAN, 0, 0, 0, 10, 0, 0, 0, 10};
    b.cells = nan_cell;
    b.pbc = txx;
    expect(ctx, mlff_evaluate(m, &b, &e, f), MLFF_ERROR_BAD_INPUT, "not a finite number", 0, -1,
           "a periodic cell holding NaN");
}

/* Empty batches and systems, isolated atoms: valid, no pairs anywhere. */
static void empty_and_isolated(mlff_context *ctx, mlff_model *m)
{
    const int64_t zero[1] = {0};
    const mlff_batch none = {0, zero, NULL, NULL, NULL, NULL};
    double v[9 * 3] = {1}, e[3] = {1, 1, 1}, f[9] = {1};
    const mlff_results all = {.energies = e, .forces = f, .virials = v};
    expect(ctx, mlff_compute(m, &none, &all), MLFF_OK, "", -2, -2, "no systems, NULL arrays");
    const int64_t empties[3] = {0, 0, 0};
    const mlff_batch two_empty = {2, empties, NULL, NULL, NULL, NULL};
    expect(ctx, mlff_compute(m, &two_empty, &all), MLFF_OK, "", -2, -2, "two systems of no atoms");
    check(e[0] == 0.0 && e[1] == 0.0 && v[0] == 0.0 && v[17] == 0.0, "... zero energies and virials");

    /* An empty system, one isolated H, one isolated O in a periodic box
     * larger than the cutoff: each what it gives alone (its self energy and
     * its network's output for an environment of nothing), no forces. */
    const int64_t offsets[4] = {0, 0, 1, 2};
    const int32_t z[2] = {1, 8};
    const double pos[6] = {0.0, 0.0, 0.0, 1.0, 2.0, 3.0};
    const double cells[27] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 12, 0, 0, 0, 12};
    const uint8_t pbc[9] = {0, 0, 0, 0, 0, 0, 1, 1, 1};
    const mlff_batch isolated = {3, offsets, z, pos, cells, pbc};
    expect(ctx, mlff_compute(m, &isolated, &all), MLFF_OK, "", -2, -2, "an empty system and isolated atoms");
    int zero_forces = 1;
    for (int k = 0; k < 6; k++)
        zero_forces &= f[k] == 0.0;
    double alone[2];
    for (int a = 0; a < 2; a++) {
        const int64_t one[2] = {0, 1};
        const mlff_batch b = {1, one, z + a, pos + 3 * a, NULL, NULL};
        alone[a] = NAN;
        mlff_evaluate(m, &b, &alone[a], NULL);
    }
    check(e[0] == 0.0 && fabs(e[1] - alone[0]) <= 1e-6 * fabs(alone[0]) &&
              fabs(e[2] - alone[1]) <= 1e-6 * fabs(alone[1]) && zero_forces,
          "... zero, then each atom's energy alone, and no forces");
    /* ANI-2x's self energy of O is -75.19 Hartree; its network adds little. */
    check(fabs(alone[1] / 27.211386024367243 - -75.19106774742086) < 1.0, "... O's about its self energy");

    mlff_subdomain sd = {.n_owned = 0, .n_atoms = 0};
    double energy = 1, virial[9];
    const mlff_subdomain_results sr = {.energy = &energy, .forces = f, .virial = virial};
    expect(ctx, mlff_compute_subdomain(m, &sd, &sr), MLFF_OK, "", -2, -2, "a subdomain of no atoms");
    check(energy == 0.0, "... zero energy");
    sd = (mlff_subdomain){.n_owned = 1, .n_atoms = 1, .atomic_numbers = z, .positions = pos};
    double atom_energy, atom_virial[9];
    const mlff_subdomain_results one = {.energy = &energy, .forces = f, .virial = virial, .atom_energies = &atom_energy,
                                        .atom_virials = atom_virial};
    expect(ctx, mlff_compute_subdomain(m, &sd, &one), MLFF_OK, "", -2, -2, "a subdomain of one isolated atom");
    check(energy == atom_energy && f[0] == 0.0 && atom_virial[0] == 0.0, "... its energy, no force, no virial");
}

static void run(mlff_context *ctx, mlff_model *m, const char *name)
{
    printf("-- %s\n", name);
    double e0[2], f0[24], e[2], f[24];
    if (!expect(ctx, reference(m, e0, f0), MLFF_OK, "", -2, -2, "reference batch"))
        return;
    degenerate_geometry(ctx, m);
    far_and_close(ctx, m);
    empty_and_isolated(ctx, m);
    expect(ctx, reference(m, e, f), MLFF_OK, "", -2, -2, "reference batch after the errors");
    check(fabs(e[0] - e0[0]) <= 1e-6 * fabs(e0[0]) && fabs(e[1] - e0[1]) <= 1e-6 * fabs(e0[1]),
          "... the same energies as before them");
}

int main(void)
{
    /* First, before this process opens a device: a child forked from a
     * process holding a CUDA context (NVIDIA's OpenCL) hangs in the driver. */
    degenerate_in_limited_child();
    mlff_context *ctx;
    mlff_model *m = test_open_model(&ctx, MLFF_PRECISION_FLOAT32, MLFF_NEIGHBORS_AUTO, 0.0);
    run(ctx, m, "float32, no skin");
    mlff_context_destroy(ctx);
    m = test_open_model(&ctx, MLFF_PRECISION_FLOAT64, MLFF_NEIGHBORS_SPARSE, 0.5);
    run(ctx, m, "float64, sparse, skin 0.5 A");
    mlff_context_destroy(ctx);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
