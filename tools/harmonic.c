/* Harmonic analysis of a Hessian (harmonic.h), through LAPACK's symmetric
 * eigensolver. */
#include "harmonic.h"

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

/* sqrt(eV / (Angstrom^2 amu)) in rad/s over 2 pi c in cm/s (CODATA 2018):
 * the wavenumber of an eigenvalue of 1 eV / (Angstrom^2 amu). */
static double wavenumber_of_unit_eigenvalue(void)
{
    const double ev = 1.602176634e-19, amu = 1.66053906660e-27, angstrom = 1e-10, c = 2.99792458e10;
    return sqrt(ev / (angstrom * angstrom * amu)) / (2 * M_PI * c);
}

/* h c in eV cm: a wavenumber's energy. */
#define EV_PER_WAVENUMBER 1.239841984e-4

/* Adds v (n, in mass-weighted coordinates) to the orthonormal set basis
 * (count of them) where it is independent of them. */
static int add_orthonormal(double *basis, int count, double *v, int64_t n)
{
    for (int k = 0; k < count; k++) {
        double dot = 0;
        for (int64_t i = 0; i < n; i++)
            dot += basis[k * n + i] * v[i];
        for (int64_t i = 0; i < n; i++)
            v[i] -= dot * basis[k * n + i];
    }
    double norm = 0;
    for (int64_t i = 0; i < n; i++)
        norm += v[i] * v[i];
    norm = sqrt(norm);
    /* A linear molecule's rotation about its axis vanishes. */
    if (norm < 1e-6)
        return count;
    for (int64_t i = 0; i < n; i++)
        basis[count * n + i] = v[i] / norm;
    return count + 1;
}

/* The rigid motions of the atoms in mass-weighted coordinates, orthonormal:
 * translations, and with rotations about the centre of mass. */
static int rigid_motions(int64_t atoms, const double *masses, const double *positions, harmonic_projection projection,
                         double *basis, double *scratch)
{
    const int64_t n = 3 * atoms;
    double com[3] = {0}, total = 0;
    for (int64_t a = 0; a < atoms; a++) {
        total += masses[a];
        for (int c = 0; c < 3; c++)
            com[c] += masses[a] * positions[3 * a + c];
    }
    for (int c = 0; c < 3 && total > 0; c++)
        com[c] /= total;
    int count = 0;
    for (int axis = 0; axis < 3; axis++) {
        for (int64_t a = 0; a < atoms; a++)
            for (int c = 0; c < 3; c++)
                scratch[3 * a + c] = c == axis ? sqrt(masses[a]) : 0;
        count = add_orthonormal(basis, count, scratch, n);
    }
    for (int axis = 0; projection == HARMONIC_PROJECT_RIGID && axis < 3; axis++) {
        for (int64_t a = 0; a < atoms; a++) {
            const double r[3] = {positions[3 * a] - com[0], positions[3 * a + 1] - com[1], positions[3 * a + 2] - com[2]};
            /* e_axis x r */
            const double e[3] = {axis == 0, axis == 1, axis == 2};
            const double cross[3] = {e[1] * r[2] - e[2] * r[1], e[2] * r[0] - e[0] * r[2], e[0] * r[1] - e[1] * r[0]};
            for (int c = 0; c < 3; c++)
                scratch[3 * a + c] = sqrt(masses[a]) * cross[c];
        }
        count = add_orthonormal(basis, count, scratch, n);
    }
    return count;
}

/* h = P h P with P = 1 - B^T B for the orthonormal rows of B (count of
 * them), through C = B h: h - B^T C - C^T B + B^T (C B^T) B, without P. */
static int project(double *h, const double *b, int count, int64_t n)
{
    double *c = malloc((size_t)(count * n) * sizeof *c), d[6][6];
    if (!c)
        return 0;
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
    return 1;
}

int harmonic_analysis(int64_t atoms, const double *masses, const double *positions, const double *hessian,
                      harmonic_projection projection, harmonic_result *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    const int64_t n = 3 * atoms;
    if (n <= 0 || n > 46340) {
        snprintf(error, error_size, "a Hessian of %lld atoms cannot be analysed", (long long)atoms);
        return -1;
    }
    for (int64_t a = 0; a < atoms; a++)
        if (!(masses[a] > 0)) {
            snprintf(error, error_size, "atom %lld has mass %g", (long long)(a + 1), masses[a]);
            return -1;
        }
    double *h = malloc((size_t)(n * n) * sizeof *h), *w = malloc((size_t)n * sizeof *w);
    double *basis = malloc((size_t)(6 * n) * sizeof *basis), *scratch = malloc((size_t)n * sizeof *scratch);
    int ok = h && w && basis && scratch;
    for (int64_t i = 0; ok && i < n; i++)
        for (int64_t j = 0; j < n; j++)
            h[i * n + j] = hessian[i * n + j] / sqrt(masses[i / 3] * masses[j / 3]);
    int rigid = 0;
    if (ok && projection != HARMONIC_PROJECT_NONE) {
        rigid = rigid_motions(atoms, masses, positions, projection, basis, scratch);
        ok = project(h, basis, rigid, n);
    }
    /* Eigenvalues ascending, eigenvectors in h's rows (column-major for LAPACK). */
    const int order = (int)n;
    int info = 0, lwork = -1, liwork = -1, iwork_size = 0;
    double work_size = 0;
    if (ok)
        dsyevd_("V", "U", &order, h, &order, w, &work_size, &lwork, &iwork_size, &liwork, &info);
    lwork = (int)work_size;
    liwork = iwork_size;
    double *work = ok && info == 0 ? malloc((size_t)lwork * sizeof *work) : NULL;
    int *iwork = work ? malloc((size_t)liwork * sizeof *iwork) : NULL;
    if (iwork)
        dsyevd_("V", "U", &order, h, &order, w, work, &lwork, iwork, &liwork, &info);
    free(work);
    free(iwork);
    if (!ok || !iwork || info != 0) {
        snprintf(error, error_size, ok && iwork ? "the eigensolver failed (LAPACK info %d)" : "out of memory", info);
        free(h);
        free(w);
        free(basis);
        free(scratch);
        return -1;
    }
    const double unit = wavenumber_of_unit_eigenvalue();
    double zpe = 0;
    for (int64_t k = 0; k < n; k++) {
        w[k] = w[k] < 0 ? -unit * sqrt(-w[k]) : unit * sqrt(w[k]);
        for (int64_t i = 0; i < n; i++)
            h[k * n + i] /= sqrt(masses[i / 3]);
    }
    /* The rigid motions projected out have the smallest |eigenvalues|:
     * the zero-point energy counts the real modes among the others. */
    if (rigid) {
        char *is_rigid = calloc((size_t)n, 1);
        for (int r = 0; is_rigid && r < rigid; r++) {
            int64_t best = -1;
            for (int64_t k = 0; k < n; k++)
                if (!is_rigid[k] && (best < 0 || fabs(w[k]) < fabs(w[best])))
                    best = k;
            is_rigid[best] = 1;
            w[best] = 0;
        }
        for (int64_t k = 0; is_rigid && k < n; k++)
            if (!is_rigid[k] && w[k] > 0)
                zpe += 0.5 * EV_PER_WAVENUMBER * w[k];
        free(is_rigid);
    } else {
        for (int64_t k = 0; k < n; k++)
            if (w[k] > 0)
                zpe += 0.5 * EV_PER_WAVENUMBER * w[k];
    }
    free(basis);
    free(scratch);
    out->n = n;
    out->wavenumbers = w;
    out->modes = h;
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
