/*
 * The fast float32 kernels of the CPU backend against the plain loops they
 * replace: the GEMM (packed weights) on shapes that exercise every row and
 * column remainder and grouped layers, inputs with all-zero feature blocks
 * (skipped by the GEMM), packed weights rebuilt after the
 * weight buffer is written, CELU and its derivative folded into the GEMM,
 * CELU_MLP and its VJP (a GEMM per layer) on ANI-2x's shapes,
 * the vectorised CELU and its derivative on their own, and the vectorised ANI
 * features (radial, angular, both VJPs) on random atoms with ANI-2x's constants.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_internal.h"

static int failures;

static void fill(float *v, int64_t n, unsigned *seed)
{
    for (int64_t k = 0; k < n; k++)
        v[k] = (float)rand_r(seed) / (float)RAND_MAX - 0.5f;
}

/* Tensors of the CPU backend (no index properties). */
static mlff_exec_tensor f32_tensor(void *buffer, int64_t rows, int64_t cols)
{
    return (mlff_exec_tensor){.buffer = buffer, .dtype = MLFF_DTYPE_F32, .rows = rows, .cols = cols};
}

static mlff_exec_tensor i32_tensor(void *buffer, int64_t rows, int64_t cols)
{
    return (mlff_exec_tensor){.buffer = buffer, .dtype = MLFF_DTYPE_I32, .rows = rows, .cols = cols};
}

static void *alloc(mlff_backend *be, size_t bytes)
{
    void *p;
    mlff_error err;
    return mlff_backend_cpu.buffer_alloc(be, bytes, &p, &err) == MLFF_OK ? p : NULL;
}

static void check(mlff_backend *be, int64_t rows, int64_t groups, int64_t in, int64_t out,
                  unsigned seed)
{
    mlff_error err;
    float *x = alloc(be, (size_t)(rows * groups * in) * 4), *w = alloc(be, (size_t)(groups * out * in) * 4);
    float *b = alloc(be, (size_t)(groups * out) * 4), *gy = alloc(be, (size_t)(rows * groups * out) * 4);
    float *y1 = alloc(be, (size_t)(rows * groups * out) * 4), *y2 = alloc(be, (size_t)(rows * groups * out) * 4);
    float *gx1 = alloc(be, (size_t)(rows * groups * in) * 4), *gx2 = alloc(be, (size_t)(rows * groups * in) * 4);
    for (int round = 0; round < 2; round++) {
        /* The second round writes new weights through the backend: packs must follow. */
        float *host = malloc((size_t)(groups * out * in) * 4);
        fill(host, groups * out * in, &seed);
        mlff_backend_cpu.buffer_write(be, w, 0, host, (size_t)(groups * out * in) * 4, &err);
        free(host);
        fill(x, rows * groups * in, &seed);
        /* In the second round some features are zero in every row (whole
         * blocks, and a tail): the fast GEMM skips such blocks. */
        for (int64_t r = 0; round == 1 && r < rows; r++)
            for (int64_t k = 0; k < groups * in; k++)
                if ((k >= 8 && k < 24) || k >= groups * in - 5)
                    x[r * groups * in + k] = 0.0f;
        fill(b, groups * out, &seed);
        fill(gy, rows * groups * out, &seed);
        mlff_exec_node fwd = {.op = MLFF_OP_LINEAR, .n_inputs = 3, .attrs = {.i = {groups}}};
        fwd.inputs[0] = f32_tensor(x, rows, groups * in);
        fwd.inputs[1] = f32_tensor(w, groups * out, in);
        fwd.inputs[2] = f32_tensor(b, groups * out, 1);
        fwd.output = f32_tensor(y1, rows, groups * out);
        mlff_exec_node bwd = {.op = MLFF_OP_LINEAR_VJP, .n_inputs = 2, .attrs = {.i = {groups}}};
        bwd.inputs[0] = f32_tensor(gy, rows, groups * out);
        bwd.inputs[1] = fwd.inputs[1];
        bwd.output = f32_tensor(gx1, rows, groups * in);
        be->kernels[0][MLFF_OP_LINEAR](be, &fwd, &err);
        be->kernels[0][MLFF_OP_LINEAR_VJP](be, &bwd, &err);
        fwd.output.buffer = y2;
        bwd.output.buffer = gx2;
        cpu_plain_kernels[0][MLFF_OP_LINEAR](be, &fwd, &err);
        cpu_plain_kernels[0][MLFF_OP_LINEAR_VJP](be, &bwd, &err);
        double worst = 0;
        for (int64_t k = 0; k < rows * groups * out; k++)
            worst = fmax(worst, fabs(y1[k] - y2[k]));
        for (int64_t k = 0; k < rows * groups * in; k++)
            worst = fmax(worst, fabs(gx1[k] - gx2[k]));

        /* Fused epilogues against the plain ops one after the other:
         * celu(linear) forward; linear_vjp then celu_vjp with y = x (any
         * values shaped like the output serve as the CELU output there). */
        mlff_exec_node celu = {.op = MLFF_OP_CELU, .n_inputs = 1, .attrs = {.f = {0.1}}};
        celu.inputs[0] = fwd.output; /* y2: plain linear */
        celu.output = fwd.output;
        cpu_plain_kernels[0][MLFF_OP_CELU](be, &celu, &err);
        fwd.output.buffer = y1;
        fwd.epilogue = MLFF_EPILOGUE_CELU;
        fwd.epilogue_alpha = 0.1;
        be->kernels[0][MLFF_OP_LINEAR](be, &fwd, &err);
        mlff_exec_node celu_vjp = {.op = MLFF_OP_CELU_VJP, .n_inputs = 2, .attrs = {.f = {0.1}}};
        celu_vjp.inputs[0] = bwd.output; /* gx2: plain linear_vjp */
        celu_vjp.inputs[1] = f32_tensor(x, rows, groups * in);
        celu_vjp.output = bwd.output;
        cpu_plain_kernels[0][MLFF_OP_CELU_VJP](be, &celu_vjp, &err);
        bwd.output.buffer = gx1;
        bwd.epilogue = MLFF_EPILOGUE_CELU_GRAD;
        bwd.epilogue_alpha = 0.1;
        bwd.epilogue_input = celu_vjp.inputs[1];
        be->kernels[0][MLFF_OP_LINEAR_VJP](be, &bwd, &err);
        for (int64_t k = 0; k < rows * groups * out; k++)
            worst = fmax(worst, fabs(y1[k] - y2[k]));
        for (int64_t k = 0; k < rows * groups * in; k++)
            worst = fmax(worst, fabs(gx1[k] - gx2[k]));
        int ok = worst < 1e-4;
        failures += !ok;
        printf("%-4s rows %3lld groups %lld in %4lld out %4lld round %d: max difference %.2e\n",
               ok ? "ok" : "FAIL", (long long)rows, (long long)groups, (long long)in, (long long)out,
               round, worst);
    }
    void *buffers[] = {x, w, b, gy, y1, y2, gx1, gx2};
    for (int k = 0; k < 8; k++)
        mlff_backend_cpu.buffer_free(be, buffers[k]);
}

/* CELU and its derivative over [-40, 5] with alpha 0.1 (exp of -400 .. 0 inside). */
static void check_celu(mlff_backend *be)
{
    enum { N = 100003 }; /* odd: vector remainders too */
    mlff_error err;
    float *x = alloc(be, N * 4), *gy = alloc(be, N * 4), *fast = alloc(be, N * 4), *plain = alloc(be, N * 4);
    for (int k = 0; k < N; k++) {
        x[k] = -40.0f + 45.0f * (float)k / N;
        gy[k] = 1.0f + (float)(k % 7);
    }
    double worst[2] = {0, 0};
    /* The derivative reads CELU's output: take plain CELU of x as y. */
    float *y = alloc(be, N * 4);
    mlff_exec_node forward = {.op = MLFF_OP_CELU, .n_inputs = 1, .attrs = {.f = {0.1}}};
    forward.inputs[0] = f32_tensor(x, N, 1);
    forward.output = f32_tensor(y, N, 1);
    cpu_plain_kernels[0][MLFF_OP_CELU](be, &forward, &err);
    for (int vjp = 0; vjp < 2; vjp++) {
        mlff_exec_node node = {.op = vjp ? MLFF_OP_CELU_VJP : MLFF_OP_CELU, .n_inputs = 1 + vjp,
                               .attrs = {.f = {0.1}}};
        node.inputs[0] = f32_tensor(vjp ? gy : x, N, 1);
        node.inputs[1] = f32_tensor(y, N, 1);
        node.output = f32_tensor(fast, N, 1);
        be->kernels[0][node.op](be, &node, &err);
        node.output.buffer = plain;
        cpu_plain_kernels[0][node.op](be, &node, &err);
        /* CELU relative to its value; the derivative relative to the gradient it scales
         * (y / alpha + 1 cancels to ~1e-7 absolute where x is very negative). */
        for (int k = 0; k < N; k++)
            worst[vjp] = fmax(worst[vjp], fabs(fast[k] - plain[k]) / (1e-6 + fabs(vjp ? gy[k] : plain[k])));
    }
    int ok = worst[0] < 1e-5 && worst[1] < 1e-5;
    failures += !ok;
    printf("%-4s celu: max relative difference %.2e, derivative %.2e\n", ok ? "ok" : "FAIL", worst[0],
           worst[1]);
    void *buffers[] = {x, y, gy, fast, plain};
    for (int k = 0; k < 5; k++)
        mlff_backend_cpu.buffer_free(be, buffers[k]);
}

/* Largest |fast - plain| relative to the largest |plain| of an output. */
static double relative_difference(const float *fast, const float *plain, int64_t n)
{
    double diff = 0, scale = 1e-30;
    for (int64_t k = 0; k < n; k++) {
        diff = fmax(diff, fabs((double)fast[k] - plain[k]));
        scale = fmax(scale, fabs((double)plain[k]));
    }
    return diff / scale;
}

static void check_ani(mlff_backend *be)
{
    enum { ATOMS = 40, S = 7, R = 16, Z = 4, RA = 8 };
    mlff_error err;
    unsigned seed = 11;
    /* Atoms in a 7 A cube; every ordered pair within 5.1 A, sorted by center. */
    double pos[ATOMS][3];
    for (int a = 0; a < ATOMS; a++)
        for (int d = 0; d < 3; d++)
            pos[a][d] = 7.0 * rand_r(&seed) / RAND_MAX;
    int32_t *pairs = alloc(be, ATOMS * ATOMS * 2 * 4), *species = alloc(be, ATOMS * 4);
    float *vec = alloc(be, ATOMS * ATOMS * 3 * 4);
    int64_t n_pairs = 0;
    for (int i = 0; i < ATOMS; i++) {
        species[i] = rand_r(&seed) % S;
        for (int j = 0; j < ATOMS; j++) {
            double v[3], d2 = 0;
            for (int d = 0; d < 3; d++) {
                v[d] = pos[j][d] - pos[i][d];
                d2 += v[d] * v[d];
            }
            if (i == j || d2 > 5.1 * 5.1 || d2 < 0.64)
                continue;
            pairs[2 * n_pairs] = i;
            pairs[2 * n_pairs + 1] = j;
            for (int d = 0; d < 3; d++)
                vec[3 * n_pairs + d] = (float)v[d];
            n_pairs++;
        }
    }
    int32_t *triples = alloc(be, (size_t)n_pairs * ATOMS * 2 * 4);
    int64_t n_triples = 0;
    for (int64_t a = 0; a < n_pairs; a++)
        for (int64_t b = a + 1; b < n_pairs && pairs[2 * b] == pairs[2 * a]; b++) {
            triples[2 * n_triples] = (int32_t)a;
            triples[2 * n_triples + 1] = (int32_t)b;
            n_triples++;
        }
    float *shift_r = alloc(be, R * 4), *shift_theta = alloc(be, Z * 4), *shift_a = alloc(be, RA * 4);
    for (int r = 0; r < R; r++)
        shift_r[r] = 0.8f + 0.26875f * r;
    for (int z = 0; z < Z; z++)
        shift_theta[z] = 0.39269908f + 0.78539816f * z;
    for (int r = 0; r < RA; r++)
        shift_a[r] = 0.8f + 0.3375f * r;
    const int64_t rad_cols = S * R, ang_cols = S * (S + 1) / 2 * RA * Z;
    const int64_t aev_cols = rad_cols + ang_cols;
    float *fast = alloc(be, (size_t)ATOMS * aev_cols * 4), *plain = alloc(be, (size_t)ATOMS * aev_cols * 4);
    float *gy = alloc(be, (size_t)ATOMS * ang_cols * 4);
    for (int64_t k = 0; k < ATOMS * ang_cols; k++)
        gy[k] = (float)rand_r(&seed) / (float)RAND_MAX - 0.5f;
    const mlff_exec_tensor tv = f32_tensor(vec, n_pairs, 3), tp = i32_tensor(pairs, n_pairs, 2),
                           ts = i32_tensor(species, ATOMS, 1), tt = i32_tensor(triples, n_triples, 2),
                           tr = f32_tensor(shift_r, R, 1), tz = f32_tensor(shift_theta, Z, 1),
                           ta = f32_tensor(shift_a, RA, 1);
    mlff_exec_node nodes[5] = {
        {.op = MLFF_OP_ANI_RADIAL, .n_inputs = 4, .inputs = {tv, tp, ts, tr},
         .output = f32_tensor(NULL, ATOMS, rad_cols), .attrs = {.f = {19.7, 5.1}, .i = {S}}},
        {.op = MLFF_OP_ANI_RADIAL_VJP, .n_inputs = 5,
         .inputs = {f32_tensor(gy, ATOMS, rad_cols), tv, tp, ts, tr},
         .output = f32_tensor(NULL, n_pairs, 3), .attrs = {.f = {19.7, 5.1}, .i = {S}}},
        {.op = MLFF_OP_ANI_ANGULAR, .n_inputs = 6, .inputs = {tv, tp, tt, ts, tz, ta},
         .output = f32_tensor(NULL, ATOMS, ang_cols), .attrs = {.f = {14.1, 12.5, 3.5}, .i = {S}}},
        {.op = MLFF_OP_ANI_ANGULAR_VJP, .n_inputs = 7,
         .inputs = {f32_tensor(gy, ATOMS, ang_cols), tv, tp, tt, ts, tz, ta},
         .output = f32_tensor(NULL, n_pairs, 3), .attrs = {.f = {14.1, 12.5, 3.5}, .i = {S}}},
        {.op = MLFF_OP_ANI_ANGULAR, .n_inputs = 9, .inputs = {tv, tp, tt, ts, tz, ta, tv, tp, tr},
         .output = f32_tensor(NULL, ATOMS, aev_cols), .attrs = {.f = {14.1, 12.5, 3.5, 19.7, 5.1}, .i = {S}}},
    };
    for (int k = 0; k < 5; k++) {
        mlff_exec_node node = nodes[k];
        const int64_t size = node.output.rows * node.output.cols;
        node.output.buffer = fast;
        be->kernels[0][node.op](be, &node, &err);
        node.output.buffer = plain;
        cpu_plain_kernels[0][node.op](be, &node, &err);
        const double diff = relative_difference(fast, plain, size);
        const int ok = diff < 2e-6;
        failures += !ok;
        printf("%-4s %-16s %lld pairs, %lld triples: max difference %.2e of the largest value\n",
               ok ? "ok" : "FAIL", mlff_op_get(node.op)->name, (long long)n_pairs, (long long)n_triples, diff);
    }
    void *buffers[] = {pairs, species, vec, triples, shift_r, shift_theta, shift_a, fast, plain, gy};
    for (int k = 0; k < 10; k++)
        mlff_backend_cpu.buffer_free(be, buffers[k]);
}

/* CELU_MLP and its VJP, fast against plain, on ANI-2x's layers 2-4 (8 members). */
static void check_celu_mlp(mlff_backend *be, int64_t rows, unsigned seed)
{
    enum { G = 8, LAYERS = 3 };
    static const int64_t widths[LAYERS + 1] = {256, 192, 160, 1};
    const int64_t cols = G * (widths[3] + widths[1] + widths[2]);
    mlff_error err;
    mlff_exec_node fwd = {.op = MLFF_OP_CELU_MLP, .n_inputs = 1 + 2 * LAYERS, .attrs = {.f = {0.1}, .i = {G}}};
    mlff_exec_node bwd = {.op = MLFF_OP_CELU_MLP_VJP, .n_inputs = 2 + LAYERS, .attrs = fwd.attrs};
    void *owned[2 * LAYERS + 5];
    int n_owned = 0;
#define TENSOR(r, c) f32_tensor(owned[n_owned++] = alloc(be, (size_t)((r) * (c)) * 4), r, c)
    fwd.inputs[0] = TENSOR(rows, G * widths[0]);
    for (int l = 1; l <= LAYERS; l++) {
        fwd.inputs[2 * l - 1] = bwd.inputs[1 + l] = TENSOR(G * widths[l], widths[l - 1]);
        fwd.inputs[2 * l] = TENSOR(G * widths[l], 1);
    }
    bwd.inputs[0] = TENSOR(rows, cols);
    fwd.output = bwd.inputs[1] = TENSOR(rows, cols);
    bwd.output = TENSOR(rows, G * widths[0]);
#undef TENSOR
    for (int k = 0; k < 2 * LAYERS + 1; k++)
        fill(fwd.inputs[k].buffer, fwd.inputs[k].rows * fwd.inputs[k].cols, &seed);
    fill(bwd.inputs[0].buffer, rows * cols, &seed);
    float *plain_y = malloc((size_t)(rows * cols) * 4), *plain_gx = malloc((size_t)(rows * G * widths[0]) * 4);
    cpu_plain_kernels[0][MLFF_OP_CELU_MLP](be, &fwd, &err);
    cpu_plain_kernels[0][MLFF_OP_CELU_MLP_VJP](be, &bwd, &err);
    memcpy(plain_y, fwd.output.buffer, (size_t)(rows * cols) * 4);
    memcpy(plain_gx, bwd.output.buffer, (size_t)(rows * G * widths[0]) * 4);
    be->kernels[0][MLFF_OP_CELU_MLP](be, &fwd, &err);
    be->kernels[0][MLFF_OP_CELU_MLP_VJP](be, &bwd, &err);
    double worst = 0;
    for (int64_t k = 0; k < rows * cols; k++)
        worst = fmax(worst, fabs(plain_y[k] - ((float *)fwd.output.buffer)[k]));
    for (int64_t k = 0; k < rows * G * widths[0]; k++)
        worst = fmax(worst, fabs(plain_gx[k] - ((float *)bwd.output.buffer)[k]));
    int ok = worst < 1e-4;
    failures += !ok;
    printf("%-4s celu_mlp rows %3lld, 8 x (256, 192, 160, 1), and its VJP: max difference %.2e\n", ok ? "ok" : "FAIL",
           (long long)rows, worst);
    free(plain_y);
    free(plain_gx);
    for (int k = 0; k < n_owned; k++)
        mlff_backend_cpu.buffer_free(be, owned[k]);
}

int main(void)
{
    mlff_backend_options opts = {.device_index = -1, .n_threads = 2};
    mlff_backend *be;
    mlff_error err;
    if (mlff_backend_cpu.open(&opts, &be, &err) != MLFF_OK)
        return 1;
    static const int64_t shapes[][4] = {
        {1, 1, 1008, 256}, {5, 1, 37, 33}, {6, 1, 64, 32}, {13, 8, 40, 17},
        {7, 8, 192, 160}, {100, 8, 160, 1}, {2, 3, 31, 65}, {0, 2, 8, 8},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        check(be, shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3], (unsigned)s + 1);
    check_celu(be);
    check_celu_mlp(be, 1, 11);
    check_celu_mlp(be, 37, 12);
    check_ani(be);
    mlff_backend_cpu.close(be);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
