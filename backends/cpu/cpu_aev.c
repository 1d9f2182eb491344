/*
 * ANI features in float32, vectorised: pairs and triples are taken in blocks
 * whose geometry (lengths, cosines, cutoffs) is computed in loops over the
 * block, and whose radial factors are computed in loops over the block or
 * over the shells: plain arithmetic (cpu_math.h) the compiler turns into
 * SIMD, where the plain kernels (cpu_kernels_tmpl.h, the reference) call libm
 * once per term. The angular factor ((1 + cos(theta - s)) / 2)^zeta keeps
 * libm's powf: with zeta = 14 a polynomial log/exp would cost float32 digits.
 * cos(theta - s) itself needs no trigonometry: cos(theta) = 0.95 c and
 * sin(theta) = sqrt(1 - (0.95 c)^2), so acos is never called.
 * Sums over pairs and triples are accumulated in double: in a 200-atom box,
 * float32 sums alone put the forces' noise at the scale of the tolerances.
 * The kernels are compiled for AVX-512, AVX2 and the baseline (cpu_isa.h).
 * Semantics: core/ops.h (ani_radial, ani_angular and their VJPs).
 */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"
#include "cpu_isa.h"
#include "cpu_math.h"

#define BLOCK 64

/* The thread pool's callback (cpu_pool.h), for CPU_MULTIVERSION. */
#define POOL_PARAMS (const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
#define POOL_ARGS (n, extra, begin, end)

#define IN(k) ((const float *)n->inputs[k].buffer)
#define IDX(k) ((const int32_t *)n->inputs[k].buffer)

/* Lengths and cutoffs of up to BLOCK pair vectors (given by index). */
typedef struct pair_block {
    float d[BLOCK], fc[BLOCK], dfc[BLOCK];
} pair_block;

static inline void pair_geometry(const float *vec, const int64_t *pairs, int m, float rc, int grad,
                                 pair_block *b)
{
    float x[BLOCK], y[BLOCK], z[BLOCK];
    for (int k = 0; k < m; k++) {
        x[k] = vec[3 * pairs[k]];
        y[k] = vec[3 * pairs[k] + 1];
        z[k] = vec[3 * pairs[k] + 2];
    }
    for (int k = 0; k < m; k++) {
        b->d[k] = sqrtf(x[k] * x[k] + y[k] * y[k] + z[k] * z[k]);
        b->fc[k] = cpu_cutoff(b->d[k], rc);
    }
    if (grad)
        for (int k = 0; k < m; k++)
            b->dfc[k] = cpu_cutoff_grad(b->d[k], rc);
}

static inline int block_size(int64_t first, int64_t last)
{
    return (int)(last - first < BLOCK ? last - first : BLOCK);
}

/* ---- radial ---- */

CPU_BODY void radial_atoms_body(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    const cpu_csr by_center = *(const cpu_csr *)extra;
    const int64_t cols = n->output.cols, ld = cpu_row_stride(&n->output), n_r = n->inputs[3].rows;
    const float eta = (float)n->attrs.f[0], rc = (float)n->attrs.f[1];
    const float *vec = IN(0), *shift = IN(3);
    const int32_t *ij = IDX(1), *species = IDX(2);
    float *y = (float *)n->output.buffer;
    double row[MLFF_ANI_MAX_FEATURES]; /* the atom's sums */
    for (int64_t i = begin; i < end; i++) {
        memset(row, 0, (size_t)cols * sizeof *row);
        const int64_t last = by_center.offsets[i + 1];
        for (int64_t q0 = by_center.offsets[i]; q0 < last; q0 += BLOCK) {
            const int m = block_size(q0, last);
            int64_t pairs[BLOCK];
            for (int k = 0; k < m; k++)
                pairs[k] = by_center.items[q0 + k];
            pair_block b;
            float terms[MLFF_ANI_MAX_SHIFTS];
            pair_geometry(vec, pairs, m, rc, 0, &b);
            for (int k = 0; k < m; k++) {
                if (b.fc[k] == 0)
                    continue;
                const float d = b.d[k], scale = 0.25f * b.fc[k];
                for (int64_t r = 0; r < n_r; r++) {
                    const float t = d - shift[r];
                    terms[r] = scale * cpu_exp_nonpositive(-eta * t * t);
                }
                double *slot = row + (int64_t)species[ij[2 * pairs[k] + 1]] * n_r;
                for (int64_t r = 0; r < n_r; r++)
                    slot[r] += terms[r];
            }
        }
        for (int64_t c = 0; c < cols; c++)
            y[i * ld + c] = (float)row[c];
    }
}
CPU_MULTIVERSION(static, radial_atoms, POOL_PARAMS, POOL_ARGS)

CPU_BODY void radial_vjp_pairs_body(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    (void)extra;
    const int64_t cols = n->inputs[0].cols, n_r = n->inputs[4].rows;
    const float eta = (float)n->attrs.f[0], rc = (float)n->attrs.f[1];
    const float *gy = IN(0), *vec = IN(1), *shift = IN(4);
    const int32_t *ij = IDX(2), *species = IDX(3);
    float *gv = (float *)n->output.buffer;
    for (int64_t p0 = begin; p0 < end; p0 += BLOCK) {
        const int m = block_size(p0, end);
        int64_t pairs[BLOCK];
        for (int k = 0; k < m; k++)
            pairs[k] = p0 + k;
        pair_block b;
        pair_geometry(vec, pairs, m, rc, 1, &b);
        for (int k = 0; k < m; k++) {
            const int64_t p = p0 + k;
            double de_dd = 0;
            if (b.fc[k] != 0 || b.dfc[k] != 0) {
                const float *g = gy + ij[2 * p] * cols + (int64_t)species[ij[2 * p + 1]] * n_r;
                float terms[MLFF_ANI_MAX_SHIFTS];
                for (int64_t r = 0; r < n_r; r++) {
                    const float t = b.d[k] - shift[r];
                    terms[r] = g[r] * 0.25f * cpu_exp_nonpositive(-eta * t * t) *
                               (b.dfc[k] - 2 * eta * t * b.fc[k]);
                }
                for (int64_t r = 0; r < n_r; r++)
                    de_dd += terms[r];
            }
            for (int c = 0; c < 3; c++)
                gv[3 * p + c] = b.d[k] > 0 ? (float)(de_dd * vec[3 * p + c] / b.d[k]) : 0;
        }
    }
}
CPU_MULTIVERSION(static, radial_vjp_pairs, POOL_PARAMS, POOL_ARGS)

/* ---- angular ---- */

/* Geometry of up to BLOCK triples of one center. */
typedef struct triple_block {
    int m;
    int64_t a[BLOCK], b[BLOCK], slot[BLOCK];
    float cos_raw[BLOCK], fcc[BLOCK];
    double c95[BLOCK], sin_theta[BLOCK]; /* double: 1 - c95^2 and the sums below cancel */
    pair_block pa, pb;
} triple_block;

/* n: the forward op (vec, pairs, triples, species, shift_theta, shift_r). */
static inline void triple_geometry(const mlff_exec_node *n, const int32_t *triples, int m, int grad,
                                   triple_block *t)
{
    const float *vec = IN(0);
    const int32_t *ij = IDX(1), *abc = IDX(2), *species = IDX(3);
    const int64_t block = n->inputs[4].rows * n->inputs[5].rows;
    const float rc = (float)n->attrs.f[2];
    t->m = m;
    for (int k = 0; k < m; k++) {
        t->a[k] = abc[2 * triples[k]];
        t->b[k] = abc[2 * triples[k] + 1];
        t->slot[k] = cpu_species_pair(species[ij[2 * t->a[k] + 1]], species[ij[2 * t->b[k] + 1]],
                                  n->attrs.i[0]) * block;
    }
    pair_geometry(vec, t->a, m, rc, grad, &t->pa);
    pair_geometry(vec, t->b, m, rc, grad, &t->pb);
    for (int k = 0; k < m; k++) {
        const float *va = vec + 3 * t->a[k], *vb = vec + 3 * t->b[k];
        const double dot = (double)va[0] * vb[0] + (double)va[1] * vb[1] + (double)va[2] * vb[2];
        const double dd = (double)t->pa.d[k] * t->pb.d[k];
        const double c = dd > 0 ? dot / dd : 0;
        t->cos_raw[k] = (float)c;
        t->c95[k] = 0.95 * c;
        t->sin_theta[k] = sqrt(1 - t->c95[k] * t->c95[k]);
        t->fcc[k] = 2 * t->pa.fc[k] * t->pb.fc[k];
    }
}

/* A[z][k] = ((1 + cos(theta_k - s_z)) / 2)^zeta, and dA/dc (c the raw cosine) if asked. */
static inline void angular_factors(const triple_block *t, const double *cos_s, const double *sin_s,
                                   int64_t n_z, float zeta, float (*A)[BLOCK], float (*dA)[BLOCK])
{
    for (int64_t z = 0; z < n_z; z++) {
        float base[BLOCK];
        for (int k = 0; k < t->m; k++)
            base[k] = (float)(0.5 * (1 + t->c95[k] * cos_s[z] + t->sin_theta[k] * sin_s[z]));
        for (int k = 0; k < t->m; k++)
            A[z][k] = powf(base[k], zeta);
        if (!dA)
            continue;
        /* d sin(theta) / dc = -0.95^2 c / sin(theta) */
        for (int k = 0; k < t->m; k++) {
            const float dbase =
                (float)(0.5 * (0.95 * cos_s[z] - sin_s[z] * 0.95 * t->c95[k] / t->sin_theta[k]));
            dA[z][k] = base[k] > 0 ? zeta * A[z][k] / base[k] * dbase : 0;
        }
    }
}

/* B[r][k] = exp(-eta ((d_a + d_b) / 2 - s_r)^2), and dB/d(mean distance) if asked. */
static inline void radial_factors(const triple_block *t, const float *shift_r, int64_t n_r, float eta,
                                  float (*B)[BLOCK], float (*dB)[BLOCK])
{
    for (int64_t r = 0; r < n_r; r++)
        for (int k = 0; k < t->m; k++) {
            const float u = 0.5f * (t->pa.d[k] + t->pb.d[k]) - shift_r[r];
            B[r][k] = cpu_exp_nonpositive(-eta * u * u);
            if (dB)
                dB[r][k] = -2 * eta * u * B[r][k];
        }
}

/* What the angular kernels share across threads. */
typedef struct angular_job {
    cpu_csr by_center;       /* triples by center atom */
    mlff_exec_node forward;  /* the forward op's view of the inputs */
    double cos_s[MLFF_ANI_MAX_SHIFTS], sin_s[MLFF_ANI_MAX_SHIFTS];
    double *pair_grad;       /* backward: [pairs, 3], summed in double */
} angular_job;

CPU_BODY void angular_atoms_body(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    const angular_job *job = extra;
    const int64_t out_cols = n->output.cols, head = cpu_angular_head_cols(n), cols = out_cols - head;
    const int64_t n_z = n->inputs[4].rows, n_r = n->inputs[5].rows;
    const float zeta = (float)n->attrs.f[0], eta = (float)n->attrs.f[1];
    float *y = (float *)n->output.buffer;
    float A[MLFF_ANI_MAX_SHIFTS][BLOCK], B[MLFF_ANI_MAX_SHIFTS][BLOCK];
    double row[MLFF_ANI_MAX_FEATURES]; /* the atom's sums */
    for (int64_t i = begin; i < end; i++) {
        memset(row, 0, (size_t)cols * sizeof *row);
        const int64_t last = job->by_center.offsets[i + 1];
        for (int64_t q0 = job->by_center.offsets[i]; q0 < last; q0 += BLOCK) {
            triple_block t;
            triple_geometry(n, job->by_center.items + q0, block_size(q0, last), 0, &t);
            angular_factors(&t, job->cos_s, job->sin_s, n_z, zeta, A, NULL);
            radial_factors(&t, IN(5), n_r, eta, B, NULL);
            for (int k = 0; k < t.m; k++) {
                if (t.fcc[k] == 0)
                    continue;
                double *out = row + t.slot[k];
                for (int64_t r = 0; r < n_r; r++)
                    for (int64_t z = 0; z < n_z; z++)
                        out[r * n_z + z] += A[z][k] * B[r][k] * t.fcc[k];
            }
        }
        for (int64_t c = 0; c < cols; c++)
            y[i * out_cols + head + c] = (float)row[c];
    }
}
CPU_MULTIVERSION(static, angular_atoms, POOL_PARAMS, POOL_ARGS)

CPU_BODY void angular_vjp_atoms_body(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    const angular_job *job = extra;
    const mlff_exec_node *fwd = &job->forward;
    const int64_t cols = n->inputs[0].cols, n_z = fwd->inputs[4].rows, n_r = fwd->inputs[5].rows;
    const float zeta = (float)n->attrs.f[0], eta = (float)n->attrs.f[1];
    const float *gy = IN(0), *vec = (const float *)fwd->inputs[0].buffer;
    double *gv = job->pair_grad; /* a center's triples touch only its own pairs */
    float A[MLFF_ANI_MAX_SHIFTS][BLOCK], dA[MLFF_ANI_MAX_SHIFTS][BLOCK];
    float B[MLFF_ANI_MAX_SHIFTS][BLOCK], dB[MLFF_ANI_MAX_SHIFTS][BLOCK];
    const int64_t block = cpu_angular_vjp_offset(n);
    for (int64_t i = begin; i < end; i++) {
        const float *g_row = gy + i * cols + block;
        const int64_t last = job->by_center.offsets[i + 1];
        for (int64_t q0 = job->by_center.offsets[i]; q0 < last; q0 += BLOCK) {
            triple_block t;
            triple_geometry(fwd, job->by_center.items + q0, block_size(q0, last), 1, &t);
            angular_factors(&t, job->cos_s, job->sin_s, n_z, zeta, A, dA);
            radial_factors(&t, (const float *)fwd->inputs[5].buffer, n_r, eta, B, dB);
            for (int k = 0; k < t.m; k++) {
                if (t.fcc[k] == 0)
                    continue;
                /* Sums over the triple's block of the gradient times A B, dA B and A dB. */
                const float *g = g_row + t.slot[k];
                double s_ab = 0, s_dcos = 0, s_dmean = 0;
                for (int64_t r = 0; r < n_r; r++) {
                    float g_a = 0, g_da = 0;
                    for (int64_t z = 0; z < n_z; z++) {
                        g_a += g[r * n_z + z] * A[z][k];
                        g_da += g[r * n_z + z] * dA[z][k];
                    }
                    s_ab += g_a * B[r][k];
                    s_dcos += g_da * B[r][k];
                    s_dmean += g_a * dB[r][k];
                }
                const double da = t.pa.d[k], db = t.pb.d[k], fcc = t.fcc[k], c = t.cos_raw[k];
                const double de_dda = fcc * s_dmean / 2 + 2 * t.pa.dfc[k] * t.pb.fc[k] * s_ab;
                const double de_ddb = fcc * s_dmean / 2 + 2 * t.pa.fc[k] * t.pb.dfc[k] * s_ab;
                const double de_dcos = fcc * s_dcos, inv_dadb = 1 / (da * db);
                const float *va = vec + 3 * t.a[k], *vb = vec + 3 * t.b[k];
                double *ga = gv + 3 * t.a[k], *gb = gv + 3 * t.b[k];
                for (int x = 0; x < 3; x++) {
                    const double ua = va[x] / da, ub = vb[x] / db;
                    ga[x] += de_dda * ua + de_dcos * (vb[x] * inv_dadb - c * ua / da);
                    gb[x] += de_ddb * ub + de_dcos * (va[x] * inv_dadb - c * ub / db);
                }
            }
        }
    }
}
CPU_MULTIVERSION(static, angular_vjp_atoms, POOL_PARAMS, POOL_ARGS)

static void angle_tables(angular_job *job, const float *shift_theta, int64_t n_z)
{
    for (int64_t z = 0; z < n_z; z++) {
        job->cos_s[z] = cos(shift_theta[z]);
        job->sin_s[z] = sin(shift_theta[z]);
    }
}

mlff_status cpu_ani_radial_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    cpu_csr by_center;
    mlff_status s = cpu_csr_build(be, IDX(1), 2, n->inputs[0].rows, n->output.rows, &by_center, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->output.rows, 64, radial_atoms, n, &by_center);
    return s;
}

mlff_status cpu_ani_radial_vjp_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows, 256, radial_vjp_pairs, n, NULL);
    return MLFF_OK;
}

mlff_status cpu_ani_angular_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    if (mlff_angular_has_radial(n->n_inputs)) {
        const mlff_exec_node radial = cpu_angular_radial_part(n);
        mlff_status s = cpu_ani_radial_f32(be, &radial, err);
        if (s != MLFF_OK)
            return s;
    }
    angular_job job = {.forward = *n};
    angle_tables(&job, IN(4), n->inputs[4].rows);
    mlff_status s = cpu_triples_by_center(be, IDX(1), IDX(2), n->inputs[2].rows, n->output.rows,
                                      &job.by_center, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->output.rows, 64, angular_atoms, n, &job);
    return s;
}

mlff_status cpu_ani_angular_vjp_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    /* inputs: gy, then the forward op's six. */
    angular_job job = {.forward = *n};
    for (int k = 0; k < 6; k++)
        job.forward.inputs[k] = n->inputs[k + 1];
    angle_tables(&job, (const float *)job.forward.inputs[4].buffer, job.forward.inputs[4].rows);
    const int64_t pairs = n->output.rows;
    job.pair_grad = cpu_arena_alloc(&be->arena, (size_t)(pairs > 0 ? pairs : 1) * 3 * sizeof(double));
    if (!job.pair_grad)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory for angular gradients");
    memset(job.pair_grad, 0, (size_t)pairs * 3 * sizeof(double));
    mlff_status s = cpu_triples_by_center(be, IDX(2), IDX(3), n->inputs[3].rows, n->inputs[0].rows,
                                      &job.by_center, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->inputs[0].rows, 64, angular_vjp_atoms, n, &job);
    float *gv = (float *)n->output.buffer;
    for (int64_t k = 0; k < 3 * pairs; k++)
        gv[k] = (float)job.pair_grad[k];
    return s;
}
