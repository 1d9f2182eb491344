/* Harmonic analysis of a Hessian (harmonic.h), through LAPACK's symmetric
 * eigensolver.
 *
 * The rigid motions are not only projected out but kept apart: the matrix
 * diagonalised is P H P + s B^T B, where B's rows are the rigid motions
 * (orthonormal, mass weighted), P = 1 - B^T B, and s lies above every
 * eigenvalue of P H P. The rigid motions are then exactly its top
 * eigenvalues, whatever the vibrations are; diagonalising P H P alone would
 * mix them with any vibration near zero (a floppy torsion), and picking
 * them out by the smallest eigenvalues would then take the wrong ones. */
#include "harmonic.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK (Fortran calling convention): eigenvalues and eigenvectors of a
 * symmetric matrix, divide and conquer. */
extern void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
                    double *work, const int *lwork, int *iwork, const int *liwork, int *info);

static const double standard_masses[118] = {
    1.008, 4.002602, 6.94, 9.0121831, 10.81, 12.011, 14.007, 15.999, 18.998403163, 20.1797, 22.98976928,
    24.305, 26.9815385, 28.085, 30.973761998, 32.06, 35.45, 39.948, 39.0983, 40.078, 44.955908, 47.867,
    50.9415, 51.9961, 54.938044, 55.845, 58.933194, 58.6934, 63.546, 65.38, 69.723, 72.63, 74.921595, 78.971,
    79.904, 83.798, 85.4678, 87.62, 88.90584, 91.224, 92.90637, 95.95, 97.90721, 101.07, 102.9055, 106.42,
    107.8682, 112.414, 114.818, 118.71, 121.76, 127.6, 126.90447, 131.293, 132.90545196, 137.327, 138.90547,
    140.116, 140.90766, 144.242, 144.91276, 150.36, 151.964, 157.25, 158.92535, 162.5, 164.93033, 167.259,
    168.93422, 173.054, 174.9668, 178.49, 180.94788, 183.84, 186.207, 190.23, 192.217, 195.084, 196.966569,
    200.592, 204.38, 207.2, 208.9804, 208.98243, 209.98715, 222.01758, 223.01974, 226.02541, 227.02775,
    232.0377, 231.03588, 238.02891, 237.04817, 244.06421, 243.06138, 247.07035, 247.07031, 251.07959, 252.083,
    257.09511, 258.09843, 259.101, 262.11, 267.122, 268.126, 271.134, 270.133, 269.1338, 278.156, 281.165,
    281.166, 285.177, 286.182, 289.19, 289.194, 293.204, 293.208, 294.214,
};

double harmonic_standard_mass(int z)
{
    return z >= 1 && z <= 118 ? standard_masses[z - 1] : 0.0;
}

/* ase.units of ASE 3.22 (CODATA 2014; TorchANI uses the same): the
 * elementary charge (J/eV), the atomic mass unit (kg), the speed of light
 * (m/s) and Planck's constant (J s). CODATA 2018 moves the wavenumbers by
 * about 1e-8 of themselves. */
#define ASE_E 1.6021766208e-19
#define ASE_AMU 1.660539040e-27
#define ASE_C 299792458.0
#define ASE_HPLANCK 6.626070040e-34

double harmonic_wavenumber_unit(void)
{
    /* sqrt(eV / (Angstrom^2 amu)) in rad/s, over 2 pi c in cm/s. */
    return sqrt(ASE_E / ASE_AMU) * 1e10 / (2 * M_PI * 100 * ASE_C);
}

double harmonic_ev_per_wavenumber(void)
{
    return 100 * ASE_C * ASE_HPLANCK / ASE_E; /* ase.units.invcm */
}

/* Eigenvalues (ascending, into w) and eigenvectors (into a's rows) of the
 * symmetric n x n matrix a. 0, or -1 with the reason in error. */
static int symmetric_eigen(int n, double *a, double *w, char *error, size_t error_size)
{
    int info = 0, lwork = -1, liwork = -1, iwork_size = 0;
    double work_size = 0;
    dsyevd_("V", "U", &n, a, &n, w, &work_size, &lwork, &iwork_size, &liwork, &info);
    if (info != 0 || !(work_size >= 1 && work_size <= INT_MAX) || iwork_size < 1) {
        snprintf(error, error_size, "the eigensolver's workspace query failed (LAPACK info %d)", info);
        return -1;
    }
    lwork = (int)work_size;
    liwork = iwork_size;
    double *work = malloc((size_t)lwork * sizeof *work);
    int *iwork = malloc((size_t)liwork * sizeof *iwork);
    if (work && iwork)
        dsyevd_("V", "U", &n, a, &n, w, work, &lwork, iwork, &liwork, &info);
    free(work);
    free(iwork);
    if (!work || !iwork) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    if (info != 0) {
        snprintf(error, error_size, "the eigensolver failed (LAPACK info %d)", info);
        return -1;
    }
    /* a is symmetric, so row-major and column-major are one: LAPACK's
     * eigenvector columns are our rows. */
    return 0;
}

/* The rigid motions of the atoms in mass-weighted coordinates, orthonormal
 * rows of basis (n each): the translations, and with RIGID the rotations
 * about the principal axes of inertia through the centre of mass (which are
 * orthogonal to each other and to the translations as they stand), except
 * about an axis the atoms lie on (a linear molecule's; every axis of one
 * atom). Their number, or -1 with error. */
static int rigid_motions(int64_t atoms, const double *masses, const double *positions, harmonic_projection projection,
                         double *basis, char *error, size_t error_size)
{
    const int64_t n = 3 * atoms;
    double com[3] = {0, 0, 0}, total = 0;
    for (int64_t a = 0; a < atoms; a++) {
        total += masses[a];
        for (int c = 0; c < 3; c++)
            com[c] += masses[a] * positions[3 * a + c];
    }
    for (int c = 0; c < 3; c++)
        com[c] /= total;
    memset(basis, 0, (size_t)(6 * n) * sizeof *basis);
    int count = 0;
    for (int axis = 0; axis < 3; axis++, count++)
        for (int64_t a = 0; a < atoms; a++)
            basis[count * n + 3 * a + axis] = sqrt(masses[a] / total);
    if (projection != HARMONIC_PROJECT_RIGID)
        return count;

    double inertia[9] = {0}, moments[3];
    for (int64_t a = 0; a < atoms; a++) {
        const double r[3] = {positions[3 * a] - com[0], positions[3 * a + 1] - com[1], positions[3 * a + 2] - com[2]};
        const double rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                inertia[3 * i + j] += masses[a] * ((i == j ? rr : 0) - r[i] * r[j]);
    }
    if (symmetric_eigen(3, inertia, moments, error, error_size) != 0)
        return -1;
    for (int k = 0; k < 3; k++) {
        /* The rms distance of the mass from axis k is sqrt(moment / total). */
        if (!(moments[k] > total * HARMONIC_LINEAR_TOLERANCE * HARMONIC_LINEAR_TOLERANCE))
            continue;
        const double *e = inertia + 3 * k, norm = sqrt(moments[k]);
        for (int64_t a = 0; a < atoms; a++) {
            const double r[3] = {positions[3 * a] - com[0], positions[3 * a + 1] - com[1],
                                 positions[3 * a + 2] - com[2]};
            const double cross[3] = {e[1] * r[2] - e[2] * r[1], e[2] * r[0] - e[0] * r[2], e[0] * r[1] - e[1] * r[0]};
            for (int c = 0; c < 3; c++)
                basis[count * n + 3 * a + c] = sqrt(masses[a]) * cross[c] / norm;
        }
        count++;
    }
    return count;
}

/* h = P h P with P = 1 - B^T B for the orthonormal rows of B (count of
 * them), through C = B h: h - B^T C - C^T B + B^T (C B^T) B, without P
 * (h symmetric). 0, or -1 when out of memory. */
static int project(double *h, const double *b, int count, int64_t n)
{
    double *c = malloc((size_t)(count * n) * sizeof *c), d[6][6];
    if (!c)
        return -1;
    for (int k = 0; k < count; k++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t i = 0; i < n; i++)
                s += b[k * n + i] * h[i * n + j];
            c[k * n + j] = s;
        }
    for (int k = 0; k < count; k++)
        for (int l = 0; l < count; l++) {
            double s = 0;
            for (int64_t j = 0; j < n; j++)
                s += c[k * n + j] * b[l * n + j];
            d[k][l] = s;
        }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = h[i * n + j];
            for (int k = 0; k < count; k++) {
                s -= b[k * n + i] * c[k * n + j] + c[k * n + i] * b[k * n + j];
                for (int l = 0; l < count; l++)
                    s += b[k * n + i] * d[k][l] * b[l * n + j];
            }
            h[i * n + j] = s;
        }
    free(c);
    return 0;
}

/* The largest eigenvalue of symmetric h is at most its largest row sum of
 * magnitudes (Gershgorin). */
static double spectrum_bound(const double *h, int64_t n)
{
    double bound = 0;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t j = 0; j < n; j++)
            s += fabs(h[i * n + j]);
        bound = s > bound ? s : bound;
    }
    return bound;
}

/* dsyevd's workspace (1 + 6 n + 2 n^2 doubles) must be counted in an int. */
#define HARMONIC_MAX_N 32766

int harmonic_analysis(int64_t atoms, const double *masses, const double *positions, const double *hessian,
                      harmonic_projection projection, harmonic_result *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    const int64_t n = 3 * atoms;
    if (atoms <= 0 || n > HARMONIC_MAX_N) {
        snprintf(error, error_size, "a Hessian of %lld atoms cannot be analysed (1 to %d atoms)", (long long)atoms,
                 HARMONIC_MAX_N / 3);
        return -1;
    }
    for (int64_t a = 0; a < atoms; a++)
        if (!(masses[a] > 0) || !isfinite(masses[a])) {
            snprintf(error, error_size, "atom %lld has mass %g; masses must be positive", (long long)(a + 1),
                     masses[a]);
            return -1;
        }
    for (int64_t i = 0; i < n * n; i++)
        if (!isfinite(hessian[i])) {
            snprintf(error, error_size, "the Hessian holds a non-finite number");
            return -1;
        }
    double *h = malloc((size_t)(n * n) * sizeof *h), *w = malloc((size_t)n * sizeof *w);
    double *basis = malloc((size_t)(6 * n) * sizeof *basis);
    double *wavenumbers = malloc((size_t)n * sizeof *wavenumbers), *modes = malloc((size_t)(n * n) * sizeof *modes);
    int failed = !h || !w || !basis || !wavenumbers || !modes;
    if (failed)
        snprintf(error, error_size, "out of memory (a Hessian of %lld atoms)", (long long)atoms);
    /* Mass weighted and symmetrised (dsyevd reads one triangle). */
    for (int64_t i = 0; !failed && i < n; i++)
        for (int64_t j = 0; j < n; j++)
            h[i * n + j] = 0.5 * (hessian[i * n + j] + hessian[j * n + i]) / sqrt(masses[i / 3] * masses[j / 3]);
    int rigid = 0;
    if (!failed && projection != HARMONIC_PROJECT_NONE) {
        rigid = rigid_motions(atoms, masses, positions, projection, basis, error, error_size);
        failed = rigid < 0;
        if (!failed && project(h, basis, rigid, n) != 0) {
            snprintf(error, error_size, "out of memory (a Hessian of %lld atoms)", (long long)atoms);
            failed = 1;
        }
        if (!failed) {
            const double shift = 1 + 2 * spectrum_bound(h, n);
            for (int k = 0; k < rigid; k++)
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = 0; j < n; j++)
                        h[i * n + j] += shift * basis[k * n + i] * basis[k * n + j];
        }
    }
    if (!failed)
        failed = symmetric_eigen((int)n, h, w, error, error_size) != 0;
    if (failed) {
        free(h);
        free(w);
        free(basis);
        free(wavenumbers);
        free(modes);
        return -1;
    }

    /* The vibrations are the first n - rigid eigenpairs (ascending); the
     * rigid motions, exactly 0, go between the imaginary ones and the rest,
     * with the basis' pure translations and rotations as their modes. */
    const double unit = harmonic_wavenumber_unit();
    const int64_t vibrations = n - rigid;
    int64_t imaginary = 0;
    while (imaginary < vibrations && w[imaginary] < 0)
        imaginary++;
    double zpe = 0;
    for (int64_t k = 0, slot = 0; k < n; k++) {
        const double *vector;
        double nu;
        if (k < imaginary || k >= imaginary + rigid) {
            const int64_t v = k < imaginary ? k : k - rigid;
            vector = h + v * n;
            nu = w[v] < 0 ? -unit * sqrt(-w[v]) : unit * sqrt(w[v]);
            if (nu > 0)
                zpe += 0.5 * harmonic_ev_per_wavenumber() * nu;
        } else {
            vector = basis + (slot++) * n;
            nu = 0;
        }
        wavenumbers[k] = nu;
        for (int64_t i = 0; i < n; i++)
            modes[k * n + i] = vector[i] / sqrt(masses[i / 3]);
    }
    free(h);
    free(w);
    free(basis);
    out->n = n;
    out->wavenumbers = wavenumbers;
    out->modes = modes;
    out->rigid = rigid;
    out->zero_point_energy = zpe;
    return 0;
}

void harmonic_result_free(harmonic_result *r)
{
    free(r->wavenumbers);
    free(r->modes);
    memset(r, 0, sizeof *r);
}
