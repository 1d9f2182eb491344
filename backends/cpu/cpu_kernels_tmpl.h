/*
 * CPU kernels for ops whose tensors are all of one real type. This file is a
 * template: cpu_kernels.c includes it once with `real` = float and once with
 * `real` = double (FN() appends _f32 or _f64 to names).
 * Semantics of every op: core/ops.h.
 */

#define KERNEL(name) static mlff_status FN(name)(mlff_backend * be, const mlff_exec_node *n, mlff_error *err)
#define IN(k) ((const real *)n->inputs[k].buffer)
#define IDX(k) ((const int32_t *)n->inputs[k].buffer)
#define OUT ((real *)n->output.buffer)
#define UNUSED_ARGS ((void)be, (void)err)
#define RANGE(name) static void FN(name)(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
/* Below this many items a loop is not worth waking the workers for. */
#define SERIAL_BELOW 64

KERNEL(fill)
{
    UNUSED_ARGS;
    const int64_t total = n->output.rows * n->output.cols;
    const real v = (real)n->attrs.f[0];
    real *y = OUT;
    for (int64_t k = 0; k < total; k++)
        y[k] = v;
    return MLFF_OK;
}

KERNEL(add)
{
    UNUSED_ARGS;
    const int64_t total = n->output.rows * n->output.cols;
    const real *a = IN(0), *b = IN(1);
    real *y = OUT;
    for (int64_t k = 0; k < total; k++)
        y[k] = a[k] + b[k];
    return MLFF_OK;
}

KERNEL(scale)
{
    UNUSED_ARGS;
    const int64_t total = n->output.rows * n->output.cols;
    const real f = (real)n->attrs.f[0], *x = IN(0);
    real *y = OUT;
    for (int64_t k = 0; k < total; k++)
        y[k] = f * x[k];
    return MLFF_OK;
}

/* The directions of a node that takes tangents (core/ops.h, "Tangents"). */
#define TANGENTS mlff_op_tangents(n->op, &n->attrs)

static inline real FN(length3)(const real *v)
{
    return (real)sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
}

KERNEL(mul)
{
    UNUSED_ARGS;
    /* b applies to each of a's blocks of its width (a tiled product, a
     * tangent's T blocks), or is one column. */
    const int64_t rows = n->output.rows, cols = n->output.cols, bcols = n->inputs[1].cols;
    const real *a = IN(0), *b = IN(1);
    real *y = OUT;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            y[r * cols + c] = a[r * cols + c] * b[r * bcols + c % bcols];
    return MLFF_OK;
}

KERNEL(concat_cols)
{
    UNUSED_ARGS;
    const int64_t t_count = TANGENTS, rows = n->output.rows;
    const int64_t ka = n->inputs[0].cols / t_count, kb = n->inputs[1].cols / t_count;
    const real *a = IN(0), *b = IN(1);
    real *y = OUT;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t t = 0; t < t_count; t++) {
            real *dst = y + (r * t_count + t) * (ka + kb);
            memcpy(dst, a + (r * t_count + t) * ka, (size_t)ka * sizeof(real));
            memcpy(dst + ka, b + (r * t_count + t) * kb, (size_t)kb * sizeof(real));
        }
    return MLFF_OK;
}

KERNEL(slice_cols)
{
    UNUSED_ARGS;
    const int64_t t_count = TANGENTS, rows = n->output.rows, k = n->inputs[0].cols / t_count;
    const int64_t start = n->attrs.i[0], count = n->attrs.i[1];
    const real *x = IN(0);
    real *y = OUT;
    for (int64_t r = 0; r < rows * t_count; r++)
        memcpy(y + r * count, x + r * k + start, (size_t)count * sizeof(real));
    return MLFF_OK;
}

KERNEL(sum_cols)
{
    UNUSED_ARGS;
    const int64_t t_count = TANGENTS, rows = n->output.rows, k = n->inputs[0].cols / t_count;
    const int64_t summed = n->attrs.i[0];
    const double f = n->attrs.f[0];
    const real *x = IN(0);
    real *y = OUT;
    for (int64_t r = 0; r < rows * t_count; r++) {
        double s = 0.0;
        for (int64_t c = 0; c < summed; c++)
            s += x[r * k + c];
        y[r] = (real)(f * s);
    }
    return MLFF_OK;
}

KERNEL(broadcast_cols)
{
    UNUSED_ARGS;
    const int64_t t_count = TANGENTS, rows = n->output.rows, k = n->output.cols / t_count, filled = n->attrs.i[0];
    const real f = (real)n->attrs.f[0], *x = IN(0);
    real *y = OUT;
    for (int64_t r = 0; r < rows * t_count; r++)
        for (int64_t c = 0; c < k; c++)
            y[r * k + c] = c < filled ? f * x[r] : 0;
    return MLFF_OK;
}

/* Dot product with several independent sums so the compiler can vectorise it. */
static inline real FN(dot)(const real *a, const real *b, int64_t len)
{
    real s[8] = {0};
    int64_t c = 0;
    for (; c + 8 <= len; c += 8)
        for (int u = 0; u < 8; u++)
            s[u] += a[c + u] * b[c + u];
    real t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; c < len; c++)
        t += a[c] * b[c];
    return t;
}

RANGE(linear_rows)
{
    (void)extra;
    const int64_t groups = n->attrs.i[0];
    const int64_t in = n->inputs[1].cols, out = n->output.cols / groups;
    const real *x = IN(0), *w = IN(1), *b = IN(2);
    real *y = OUT;
    for (int64_t r = begin; r < end; r++) {
        const int64_t stack = cpu_run_of_row(n, r) * groups * out;
        for (int64_t g = 0; g < groups; g++) {
            const real *xr = x + r * groups * in + g * in;
            for (int64_t o = 0; o < out; o++) {
                const int64_t wo = stack + g * out + o;
                y[r * groups * out + g * out + o] = b[wo] + FN(dot)(w + wo * in, xr, in);
            }
        }
    }
}

KERNEL(linear)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows, 2, FN(linear_rows), n, NULL);
    return MLFF_OK;
}

RANGE(linear_vjp_rows)
{
    (void)extra;
    const int64_t groups = n->attrs.i[0];
    const int64_t in = n->inputs[1].cols, out = n->inputs[0].cols / groups;
    const real *gy = IN(0), *w = IN(1);
    real *gx = OUT;
    for (int64_t r = begin; r < end; r++) {
        const int64_t stack = cpu_run_of_row(n, r) * groups * out;
        for (int64_t g = 0; g < groups; g++) {
            real *gxr = gx + r * groups * in + g * in;
            for (int64_t c = 0; c < in; c++)
                gxr[c] = 0;
            for (int64_t o = 0; o < out; o++) {
                const int64_t wo = stack + g * out + o;
                const real s = gy[r * groups * out + g * out + o];
                const real *wr = w + wo * in;
                for (int64_t c = 0; c < in; c++)
                    gxr[c] += s * wr[c];
            }
        }
    }
}

KERNEL(linear_vjp)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows, 2, FN(linear_vjp_rows), n, NULL);
    return MLFF_OK;
}

RANGE(celu_items)
{
    (void)extra;
    const real alpha = (real)n->attrs.f[0], *x = IN(0);
    real *y = OUT;
    for (int64_t k = begin; k < end; k++)
        y[k] = x[k] > 0 ? x[k] : alpha * expm1(x[k] / alpha);
}

KERNEL(celu)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows * n->output.cols, 1 << 14, FN(celu_items), n, NULL);
    return MLFF_OK;
}

/* y is one block, gy T-blocked: entry k of gy reads y's entry of its row and column. */
static inline int64_t FN(block_entry)(int64_t k, int64_t block, int64_t t_count)
{
    return k / (block * t_count) * block + k % block;
}

/* CELU's derivative from y as PyTorch takes it (core/ops.h,
 * mlff_celu_derivative_power: k is 1 in float32). */
static inline double FN(celu_power)(double alpha)
{
    return sizeof(real) == sizeof(double) ? mlff_celu_derivative_power(alpha) : 1.0;
}

static inline real FN(celu_derivative)(real h, real alpha, double k)
{
    if (h > 0)
        return 1;
    return k == 1.0 ? h / alpha + 1 : (real)(k * pow((double)(h / alpha + 1), k));
}

RANGE(celu_vjp_items)
{
    (void)extra;
    const int64_t t_count = TANGENTS, block = n->inputs[1].cols;
    const real alpha = (real)n->attrs.f[0], *gy = IN(0), *y = IN(1);
    const double power = FN(celu_power)(n->attrs.f[0]);
    real *gx = OUT;
    for (int64_t k = begin; k < end; k++)
        gx[k] = gy[k] * FN(celu_derivative)(y[FN(block_entry)(k, block, t_count)], alpha, power);
}

/* The tangent of CELU_VJP (core/ops.h): dgy celu' + gy celu'' dx, with
 * celu'' dx = k dy / alpha where y < 0. */
RANGE(celu_vjp_jvp_items)
{
    (void)extra;
    const int64_t t_count = TANGENTS, block = n->inputs[1].cols;
    const real alpha = (real)n->attrs.f[0], *gy = IN(0), *y = IN(1), *dy = IN(2);
    const double power = FN(celu_power)(n->attrs.f[0]);
    const real *dgy = n->n_inputs > 3 ? IN(3) : NULL, curvature = (real)(power / n->attrs.f[0]);
    real *out = OUT;
    for (int64_t k = begin; k < end; k++) {
        const int64_t e = FN(block_entry)(k, block, t_count);
        const real h = y[e];
        real v = h < 0 ? gy[e] * dy[k] * curvature : 0;
        if (dgy)
            v += dgy[k] * FN(celu_derivative)(h, alpha, power);
        out[k] = v;
    }
}

KERNEL(celu_vjp_jvp)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows * n->output.cols, 1 << 14, FN(celu_vjp_jvp_items), n, NULL);
    return MLFF_OK;
}

KERNEL(celu_vjp)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows * n->output.cols, 1 << 14, FN(celu_vjp_items), n, NULL);
    return MLFF_OK;
}

/* CELU_MLP row by row, group by group: each layer's output of a row stays
 * in `a`/`z` (widths are at most MLFF_MLP_MAX_WIDTH). */
RANGE(celu_mlp_rows)
{
    (void)extra;
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    const real alpha = (real)n->attrs.f[0], *x = IN(0);
    real *y = OUT, a[MLFF_MLP_MAX_WIDTH], z[MLFF_MLP_MAX_WIDTH];
    for (int64_t r = begin; r < end; r++) {
        const int64_t stack = cpu_run_of_row(n, r) * m.groups;
        for (int64_t g = 0; g < m.groups; g++) {
            const int64_t wg = stack + g; /* the weights' group */
            memcpy(a, x + (r * m.groups + g) * m.width[0], (size_t)m.width[0] * sizeof *a);
            for (int l = 1; l <= m.layers; l++) {
                const int64_t in = m.width[l - 1], out = m.width[l];
                const real *w = (const real *)m.weights[l]->buffer + wg * out * in;
                const real *b = (const real *)n->inputs[2 * l].buffer + wg * out;
                real *dst = y + r * m.cols + m.block[l] + g * out;
                for (int64_t o = 0; o < out; o++) {
                    z[o] = b[o] + FN(dot)(w + o * in, a, in);
                    if (l < m.layers)
                        z[o] = z[o] > 0 ? z[o] : alpha * expm1(z[o] / alpha);
                    dst[o] = z[o];
                }
                memcpy(a, z, (size_t)out * sizeof *a);
            }
        }
    }
}

KERNEL(celu_mlp)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows, 2, FN(celu_mlp_rows), n, NULL);
    return MLFF_OK;
}

RANGE(celu_mlp_vjp_rows)
{
    (void)extra;
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    const real alpha = (real)n->attrs.f[0], *gy = IN(0), *y = IN(1);
    const double power = FN(celu_power)(n->attrs.f[0]);
    real *gx = OUT, gz[MLFF_MLP_MAX_WIDTH], gin[MLFF_MLP_MAX_WIDTH];
    const int64_t gy_cols = n->inputs[0].cols, gy_hidden = gy_cols == m.cols;
    for (int64_t r = begin; r < end; r++) {
        const int64_t stack = cpu_run_of_row(n, r) * m.groups;
        for (int64_t g = 0; g < m.groups; g++) {
            const int64_t top = m.width[m.layers], wg = stack + g;
            memcpy(gz, gy + r * gy_cols + g * top, (size_t)top * sizeof *gz);
            for (int l = m.layers; l >= 1; l--) {
                const int64_t in = m.width[l - 1], out = m.width[l];
                const real *w = (const real *)m.weights[l]->buffer + wg * out * in;
                for (int64_t c = 0; c < in; c++)
                    gin[c] = 0;
                for (int64_t o = 0; o < out; o++)
                    for (int64_t c = 0; c < in; c++)
                        gin[c] += gz[o] * w[o * in + c];
                if (l == 1) {
                    memcpy(gx + (r * m.groups + g) * in, gin, (size_t)in * sizeof *gin);
                    break;
                }
                const int64_t at = r * m.cols + m.block[l - 1] + g * in;
                for (int64_t c = 0; c < in; c++) {
                    const real d = FN(celu_derivative)(y[at + c], alpha, power);
                    gz[c] = (gin[c] + (gy_hidden ? gy[at + c] : 0)) * d;
                }
            }
        }
    }
}

KERNEL(celu_mlp_vjp)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows, 2, FN(celu_mlp_vjp_rows), n, NULL);
    return MLFF_OK;
}

/* The shift of pair p: n . cell of the system of its first atom (pair_shifts). */
static inline void FN(image_shift)(const real *cells, const int32_t *images, const int32_t *ij, const int32_t *system,
                                   int64_t p, real shift[3])
{
    const real *cell = cells + 9 * (int64_t)system[ij[2 * p]];
    const real n0 = (real)mlff_image_offset(images[p], 0), n1 = (real)mlff_image_offset(images[p], 1),
               n2 = (real)mlff_image_offset(images[p], 2);
    for (int b = 0; b < 3; b++)
        shift[b] = n0 * cell[b] + n1 * cell[3 + b] + n2 * cell[6 + b];
}

/* Pair p's vector from positions and cells as hi + lo (core/graph.h), in
 * double, rounded once: hi + lo is exact in double, and so is n . cell of
 * its 15-bit highs; in float64 the lows are zero and this is the plain sum. */
static inline void FN(pair_vector_exact)(const mlff_exec_node *n, int64_t p, real v[3])
{
    const real *pos = IN(0), *pos_low = IN(5), *cells = IN(3), *cells_low = IN(6);
    const int32_t *ij = IDX(1), *images = IDX(2);
    const int64_t i = ij[2 * p], j = ij[2 * p + 1], c = 9 * (int64_t)IDX(4)[i];
    for (int d = 0; d < 3; d++) {
        double shift = 0;
        for (int a = 0; a < 3; a++)
            shift += mlff_image_offset(images[p], a) * ((double)cells[c + 3 * a + d] + cells_low[c + 3 * a + d]);
        v[d] = (real)(((double)pos[3 * j + d] + pos_low[3 * j + d]) - ((double)pos[3 * i + d] + pos_low[3 * i + d]) +
                      shift);
    }
}

KERNEL(pair_vectors)
{
    UNUSED_ARGS;
    const int64_t pairs = n->output.rows;
    const real *pos = IN(0);
    const int32_t *ij = IDX(1);
    real *v = OUT;
    for (int64_t p = 0; p < pairs; p++) {
        real shift[3];
        if (n->n_inputs == 7) {
            FN(pair_vector_exact)(n, p, v + 3 * p);
            continue;
        }
        if (n->n_inputs == 3)
            for (int d = 0; d < 3; d++)
                shift[d] = IN(2)[3 * p + d];
        else
            FN(image_shift)(IN(3), IDX(2), ij, IDX(4), p, shift);
        for (int d = 0; d < 3; d++)
            v[3 * p + d] = pos[3 * ij[2 * p + 1] + d] - pos[3 * ij[2 * p] + d] + shift[d];
    }
    return MLFF_OK;
}

/* extra: each list's pair gradients, and its pairs by center and by neighbour. */
typedef struct FN(pair_sides) {
    const real *g[2];
    cpu_csr by[4];
} FN(pair_sides);

/* Each atom sums its pairs' gradients (+ as the neighbour, - as the
 * centre) in pair order, a block of columns at a time: 3 for positions, 3T
 * for a tangent, any width for ROW_DIFFERENCES' gradient. */
#define PAIR_SUM_COLS 96
RANGE(pair_vectors_vjp_atoms)
{
    const FN(pair_sides) *sides = extra;
    const cpu_csr *by = sides->by;
    const int64_t cols = n->output.cols;
    real *gpos = OUT;
    for (int64_t a = begin; a < end; a++)
        for (int64_t c0 = 0; c0 < cols; c0 += PAIR_SUM_COLS) {
            const int64_t width = cols - c0 < PAIR_SUM_COLS ? cols - c0 : PAIR_SUM_COLS;
            double g[PAIR_SUM_COLS] = {0};
            for (int l = 0; l < mlff_pair_vjp_lists(n->n_inputs); l++) {
                const real *gv = sides->g[l] + c0;
                const cpu_csr as_center = by[2 * l], as_neighbour = by[2 * l + 1];
                for (int64_t q = as_neighbour.offsets[a]; q < as_neighbour.offsets[a + 1]; q++)
                    for (int64_t d = 0; d < width; d++)
                        g[d] += gv[cols * as_neighbour.items[q] + d];
                for (int64_t q = as_center.offsets[a]; q < as_center.offsets[a + 1]; q++)
                    for (int64_t d = 0; d < width; d++)
                        g[d] -= gv[cols * as_center.items[q] + d];
            }
            for (int64_t d = 0; d < width; d++)
                gpos[cols * a + c0 + d] = (real)g[d];
        }
}

/* The radial features' pair gradients that a PAIR_VECTORS_VJP node of
 * seven inputs makes for its second list (core/ops.h), as the
 * ANI_RADIAL_VJP kernel makes them, into scratch memory. */
static mlff_status FN(radial_pair_gradients)(mlff_backend *be, const mlff_exec_node *n, const real **out,
                                             mlff_error *err)
{
    mlff_exec_node radial = {.op = MLFF_OP_ANI_RADIAL_VJP, .n_inputs = 5, .attrs = n->attrs};
    static const int from[5] = {2, 4, 3, 5, 6}; /* gy, vec, pairs, species, shifts */
    for (int k = 0; k < 5; k++)
        radial.inputs[k] = n->inputs[from[k]];
    radial.output = (mlff_exec_tensor){.dtype = n->output.dtype, .rows = n->inputs[3].rows, .cols = 3};
    radial.output.buffer = cpu_arena_alloc(&be->arena, (size_t)(radial.output.rows > 0 ? radial.output.rows : 1) *
                                                           3 * sizeof(real));
    if (!radial.output.buffer)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory for radial gradients");
    *out = radial.output.buffer;
    return be->kernels[sizeof(real) == 8][MLFF_OP_ANI_RADIAL_VJP](be, &radial, err);
}

KERNEL(pair_vectors_vjp)
{
    const int64_t atoms = n->output.rows;
    FN(pair_sides) sides = {.g = {IN(0), n->n_inputs > 2 ? IN(2) : NULL}};
    mlff_status s = MLFF_OK;
    if (mlff_pair_vjp_has_radial(n->n_inputs))
        s = FN(radial_pair_gradients)(be, n, &sides.g[1], err);
    for (int l = 0; l < mlff_pair_vjp_lists(n->n_inputs) && s == MLFF_OK; l++) {
        const int64_t pairs = n->inputs[2 * l + 1].rows;
        const int32_t *ij = IDX(2 * l + 1);
        s = cpu_csr_build(be, ij, 2, pairs, atoms, &sides.by[2 * l], err);
        if (s == MLFF_OK)
            s = cpu_csr_build(be, ij + 1, 2, pairs, atoms, &sides.by[2 * l + 1], err);
    }
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, atoms, SERIAL_BELOW, FN(pair_vectors_vjp_atoms), n, &sides);
    return s;
}

KERNEL(pair_shifts)
{
    UNUSED_ARGS;
    const int64_t t_count = TANGENTS;
    const real *cells = IN(1);
    const int32_t *images = IDX(0), *ij = IDX(2), *system = IDX(3);
    real *shift = OUT;
    for (int64_t p = 0; p < n->output.rows; p++)
        for (int64_t t = 0; t < t_count; t++) {
            const real *cell = cells + (system[ij[2 * p]] * t_count + t) * 9;
            for (int b = 0; b < 3; b++)
                shift[(p * t_count + t) * 3 + b] = (real)mlff_image_offset(images[p], 0) * cell[b] +
                                                   (real)mlff_image_offset(images[p], 1) * cell[3 + b] +
                                                   (real)mlff_image_offset(images[p], 2) * cell[6 + b];
        }
    return MLFF_OK;
}

/* Each atom sums the pairs it centres in pair order: deterministic. */
RANGE(pair_shifts_vjp_atoms)
{
    const cpu_csr by_center = *(const cpu_csr *)extra;
    const int64_t t_count = TANGENTS;
    const real *g = IN(0);
    const int32_t *images = IDX(1);
    real *out = OUT;
    for (int64_t i = begin; i < end; i++)
        for (int64_t t = 0; t < t_count; t++) {
            double sum[9] = {0};
            for (int64_t q = by_center.offsets[i]; q < by_center.offsets[i + 1]; q++) {
                const int64_t p = by_center.items[q];
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++)
                        sum[3 * a + b] += (double)mlff_image_offset(images[p], a) * g[(p * t_count + t) * 3 + b];
            }
            for (int k = 0; k < 9; k++)
                out[(i * t_count + t) * 9 + k] = (real)sum[k];
        }
}

KERNEL(pair_shifts_vjp)
{
    cpu_csr by_center;
    mlff_status s = cpu_csr_build(be, IDX(2), 2, n->inputs[0].rows, n->output.rows, &by_center, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->output.rows, SERIAL_BELOW, FN(pair_shifts_vjp_atoms), n, &by_center);
    return s;
}

KERNEL(norm3)
{
    UNUSED_ARGS;
    const int64_t rows = n->output.rows;
    const real *v = IN(0);
    real *y = OUT;
    for (int64_t r = 0; r < rows; r++)
        y[r] = (real)sqrt((double)v[3 * r] * v[3 * r] + (double)v[3 * r + 1] * v[3 * r + 1] +
                          (double)v[3 * r + 2] * v[3 * r + 2]);
    return MLFF_OK;
}

KERNEL(row_differences)
{
    UNUSED_ARGS;
    const int64_t pairs = n->output.rows, cols = n->output.cols;
    const real *x = IN(0);
    const int32_t *ij = IDX(1);
    real *y = OUT;
    for (int64_t p = 0; p < pairs; p++)
        for (int64_t c = 0; c < cols; c++)
            y[p * cols + c] = x[ij[2 * p + 1] * cols + c] - x[ij[2 * p] * cols + c];
    return MLFF_OK;
}

/* d|v| = v . dv / |v| for each direction. */
KERNEL(norm3_jvp)
{
    UNUSED_ARGS;
    const int64_t rows = n->output.rows, t_count = n->output.cols;
    const real *dv = IN(0), *v = IN(1);
    real *y = OUT;
    for (int64_t r = 0; r < rows; r++) {
        const real len = FN(length3)(v + 3 * r);
        for (int64_t t = 0; t < t_count; t++) {
            const real *d = dv + (r * t_count + t) * 3;
            y[r * t_count + t] = len > 0 ? (v[3 * r] * d[0] + v[3 * r + 1] * d[1] + v[3 * r + 2] * d[2]) / len : 0;
        }
    }
    return MLFF_OK;
}

/* The tangent of gy v / |v|: dgy v / |v| + gy (dv / |v| - v (v . dv) / |v|^3). */
KERNEL(norm3_vjp_jvp)
{
    UNUSED_ARGS;
    const int64_t rows = n->output.rows, t_count = TANGENTS;
    const real *gy = IN(0), *v = IN(1), *dv = IN(2), *dgy = n->n_inputs > 3 ? IN(3) : NULL;
    real *out = OUT;
    for (int64_t r = 0; r < rows; r++) {
        const real *u = v + 3 * r, len = FN(length3)(u);
        for (int64_t t = 0; t < t_count; t++) {
            const real *d = dv + (r * t_count + t) * 3;
            real *o = out + (r * t_count + t) * 3;
            const real along = len > 0 ? (u[0] * d[0] + u[1] * d[1] + u[2] * d[2]) / (len * len) : 0;
            for (int k = 0; k < 3; k++)
                o[k] = len > 0 ? gy[r] * (d[k] - u[k] * along) / len + (dgy ? dgy[r * t_count + t] * u[k] / len : 0) : 0;
        }
    }
    return MLFF_OK;
}

KERNEL(norm3_vjp)
{
    UNUSED_ARGS;
    const int64_t rows = n->output.rows;
    const real *gy = IN(0), *v = IN(1);
    real *gv = OUT;
    for (int64_t r = 0; r < rows; r++) {
        const real len = (real)sqrt((double)v[3 * r] * v[3 * r] + (double)v[3 * r + 1] * v[3 * r + 1] +
                                    (double)v[3 * r + 2] * v[3 * r + 2]);
        for (int d = 0; d < 3; d++)
            gv[3 * r + d] = len > 0 ? gy[r] * v[3 * r + d] / len : 0;
    }
    return MLFF_OK;
}

/* fc(d) = 0.5 cos(pi d / rc) + 0.5 inside the cutoff, and its derivative. */
static inline real FN(cutoff_fn)(real d, real rc)
{
    return d < rc ? (real)0.5 * cos((real)M_PI * d / rc) + (real)0.5 : 0;
}

static inline real FN(cutoff_grad)(real d, real rc)
{
    return d < rc ? (real)-0.5 * (real)M_PI / rc * sin((real)M_PI * d / rc) : 0;
}

KERNEL(cosine_cutoff)
{
    UNUSED_ARGS;
    const int64_t total = n->output.rows * n->output.cols;
    const real rc = (real)n->attrs.f[0], *d = IN(0);
    real *y = OUT;
    for (int64_t k = 0; k < total; k++)
        y[k] = FN(cutoff_fn)(d[k], rc);
    return MLFF_OK;
}

static inline real FN(cutoff_curvature)(real d, real rc)
{
    const real w = (real)M_PI / rc;
    return d < rc ? (real)-0.5 * w * w * cos(w * d) : 0;
}

KERNEL(cosine_cutoff_vjp)
{
    UNUSED_ARGS;
    const int64_t total = n->output.rows * n->output.cols, t_count = TANGENTS, block = n->inputs[1].cols;
    const real rc = (real)n->attrs.f[0], *gy = IN(0), *d = IN(1);
    real *gd = OUT;
    for (int64_t k = 0; k < total; k++)
        gd[k] = gy[k] * FN(cutoff_grad)(d[FN(block_entry)(k, block, t_count)], rc);
    return MLFF_OK;
}

KERNEL(cosine_cutoff_vjp_jvp)
{
    UNUSED_ARGS;
    const int64_t total = n->output.rows * n->output.cols, t_count = TANGENTS, block = n->inputs[1].cols;
    const real rc = (real)n->attrs.f[0], *gy = IN(0), *d = IN(1), *dd = IN(2);
    const real *dgy = n->n_inputs > 3 ? IN(3) : NULL;
    real *out = OUT;
    for (int64_t k = 0; k < total; k++) {
        const int64_t e = FN(block_entry)(k, block, t_count);
        out[k] = gy[e] * FN(cutoff_curvature)(d[e], rc) * dd[k] + (dgy ? dgy[k] * FN(cutoff_grad)(d[e], rc) : 0);
    }
    return MLFF_OK;
}


/* ---- ANI radial terms: one row of pairs per center atom ---- */

RANGE(ani_radial_atoms)
{
    const cpu_csr by_center = *(const cpu_csr *)extra;
    const int64_t cols = n->output.cols, ld = cpu_row_stride(&n->output), n_shifts = n->inputs[3].rows;
    const real eta = (real)n->attrs.f[0], rc = (real)n->attrs.f[1];
    const real *vec = IN(0), *shift = IN(3);
    const int32_t *ij = IDX(1), *species = IDX(2);
    real *y = OUT;
    for (int64_t i = begin; i < end; i++) {
        real *row = y + i * ld;
        memset(row, 0, (size_t)cols * sizeof(real));
        for (int64_t q = by_center.offsets[i]; q < by_center.offsets[i + 1]; q++) {
            const int64_t p = by_center.items[q];
            const real d = FN(length3)(vec + 3 * p);
            const real fc = FN(cutoff_fn)(d, rc);
            if (fc == 0)
                continue;
            real *slot = row + (int64_t)species[ij[2 * p + 1]] * n_shifts;
            for (int64_t r = 0; r < n_shifts; r++) {
                const real t = d - shift[r];
                slot[r] += (real)0.25 * exp(-eta * t * t) * fc;
            }
        }
    }
}

KERNEL(ani_radial)
{
    cpu_csr by_center;
    mlff_status s = cpu_csr_build(be, IDX(1), 2, n->inputs[0].rows, n->output.rows, &by_center, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->output.rows, SERIAL_BELOW, FN(ani_radial_atoms), n, &by_center);
    return s;
}

RANGE(ani_radial_vjp_pairs)
{
    (void)extra;
    const int64_t cols = n->inputs[0].cols;
    const int64_t n_shifts = n->inputs[4].rows;
    const real eta = (real)n->attrs.f[0], rc = (real)n->attrs.f[1];
    const real *gy = IN(0), *vec = IN(1), *shift = IN(4);
    const int32_t *ij = IDX(2), *species = IDX(3);
    real *gv = OUT;
    for (int64_t p = begin; p < end; p++) {
        const real *v = vec + 3 * p;
        const real d = FN(length3)(v);
        const real fc = FN(cutoff_fn)(d, rc), dfc = FN(cutoff_grad)(d, rc);
        real dE_dd = 0;
        if (fc != 0 || dfc != 0) {
            const real *g = gy + ij[2 * p] * cols + (int64_t)species[ij[2 * p + 1]] * n_shifts;
            for (int64_t r = 0; r < n_shifts; r++) {
                const real t = d - shift[r];
                const real e = exp(-eta * t * t);
                dE_dd += g[r] * (real)0.25 * e * (dfc - 2 * eta * t * fc);
            }
        }
        for (int k = 0; k < 3; k++)
            gv[3 * p + k] = d > 0 ? dE_dd * v[k] / d : 0;
    }
}

KERNEL(ani_radial_vjp)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows, SERIAL_BELOW, FN(ani_radial_vjp_pairs), n, NULL);
    return MLFF_OK;
}

/* ---- ANI angular terms: triples grouped by center atom ---- */

/* Geometry of one triple, shared by the forward and backward kernels. */
typedef struct FN(triple) {
    const real *va, *vb;
    real da, db, cos_raw, theta, fca, fcb;
    int64_t slot; /* first column of the species pair's block */
} FN(triple);

static inline int FN(triple_setup)(FN(triple) * t, const mlff_exec_node *n, int64_t a, int64_t b)
{
    const real rc = (real)n->attrs.f[2];
    const real *vec = IN(0);
    const int32_t *ij = IDX(1), *species = IDX(3);
    const int64_t n_species = n->attrs.i[0];
    const int64_t block = n->inputs[4].rows * n->inputs[5].rows;
    t->va = vec + 3 * a;
    t->vb = vec + 3 * b;
    t->da = FN(length3)(t->va);
    t->db = FN(length3)(t->vb);
    t->fca = FN(cutoff_fn)(t->da, rc);
    t->fcb = FN(cutoff_fn)(t->db, rc);
    if (t->fca == 0 || t->fcb == 0)
        return 0;
    const real dot = t->va[0] * t->vb[0] + t->va[1] * t->vb[1] + t->va[2] * t->vb[2];
    t->cos_raw = dot / (t->da * t->db);
    t->theta = acos((real)0.95 * t->cos_raw);
    t->slot = cpu_species_pair(species[ij[2 * a + 1]], species[ij[2 * b + 1]], n_species) * block;
    return 1;
}

RANGE(ani_angular_atoms)
{
    const cpu_csr by_center = *(const cpu_csr *)extra;
    const int64_t out_cols = n->output.cols, head = cpu_angular_head_cols(n), cols = out_cols - head;
    const int64_t n_z = n->inputs[4].rows, n_r = n->inputs[5].rows;
    const real zeta = (real)n->attrs.f[0], eta = (real)n->attrs.f[1];
    const real *shift_z = IN(4), *shift_r = IN(5);
    const int32_t *abc = IDX(2);
    real *y = OUT;
    for (int64_t i = begin; i < end; i++) {
        real *row = y + i * out_cols + head;
        memset(row, 0, (size_t)cols * sizeof(real));
        for (int64_t q = by_center.offsets[i]; q < by_center.offsets[i + 1]; q++) {
            const int64_t t = by_center.items[q];
            FN(triple) tr;
            if (!FN(triple_setup)(&tr, n, abc[2 * t], abc[2 * t + 1]))
                continue;
            const real mean_d = (tr.da + tr.db) / 2, fcc = 2 * tr.fca * tr.fcb;
            real angular[MLFF_ANI_MAX_SHIFTS];
            for (int64_t z = 0; z < n_z; z++)
                angular[z] = pow((1 + cos(tr.theta - shift_z[z])) / 2, zeta);
            for (int64_t r = 0; r < n_r; r++) {
                const real u = mean_d - shift_r[r];
                const real radial = exp(-eta * u * u) * fcc;
                real *out = row + tr.slot + r * n_z;
                for (int64_t z = 0; z < n_z; z++)
                    out[z] += angular[z] * radial;
            }
        }
    }
}

KERNEL(ani_angular)
{
    if (mlff_angular_has_radial(n->n_inputs)) {
        const mlff_exec_node radial = cpu_angular_radial_part(n);
        mlff_status s = FN(ani_radial)(be, &radial, err);
        if (s != MLFF_OK)
            return s;
    }
    cpu_csr by_center;
    mlff_status s = cpu_triples_by_center(be, IDX(1), IDX(2), n->inputs[2].rows, n->output.rows,
                                          &by_center, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->output.rows, SERIAL_BELOW, FN(ani_angular_atoms), n, &by_center);
    return s;
}

/* The backward kernel reads the forward node's view of its inputs. */
typedef struct FN(angular_vjp_job) {
    cpu_csr by_center;
    mlff_exec_node forward;
} FN(angular_vjp_job);

RANGE(ani_angular_vjp_atoms)
{
    const FN(angular_vjp_job) *job = extra;
    const cpu_csr by_center = job->by_center;
    const int64_t cols = n->inputs[0].cols;
    const int64_t n_z = n->inputs[5].rows, n_r = n->inputs[6].rows;
    const real zeta = (real)n->attrs.f[0], eta = (real)n->attrs.f[1];
    const real *gy = IN(0), *shift_z = IN(5), *shift_r = IN(6);
    const int32_t *abc = IDX(3);
    real *gv = OUT;
    const int64_t block = cpu_angular_vjp_offset(n);
    for (int64_t i = begin; i < end; i++) {
        const real *g_row = gy + i * cols + block;
        for (int64_t q = by_center.offsets[i]; q < by_center.offsets[i + 1]; q++) {
            const int64_t t = by_center.items[q], a = abc[2 * t], b = abc[2 * t + 1];
            FN(triple) tr;
            if (!FN(triple_setup)(&tr, &job->forward, a, b))
                continue;
            const real mean_d = (tr.da + tr.db) / 2;
            /* Sums over the block of this triple's gradient times the angular
             * factor A_z, its theta-derivative A'_z, the radial factor B_r and
             * its derivative B'_r with respect to the mean distance. */
            real a_z[MLFF_ANI_MAX_SHIFTS], da_z[MLFF_ANI_MAX_SHIFTS];
            for (int64_t z = 0; z < n_z; z++) {
                const real phase = tr.theta - shift_z[z];
                const real base = (1 + cos(phase)) / 2;
                a_z[z] = pow(base, zeta);
                da_z[z] = zeta * pow(base, zeta - 1) * (-sin(phase) / 2);
            }
            real s_ab = 0, s_dtheta = 0, s_dmean = 0;
            for (int64_t r = 0; r < n_r; r++) {
                const real u = mean_d - shift_r[r];
                const real b_r = exp(-eta * u * u), db_r = -2 * eta * u * b_r;
                const real *g = g_row + tr.slot + r * n_z;
                real g_a = 0, g_da = 0;
                for (int64_t z = 0; z < n_z; z++) {
                    g_a += g[z] * a_z[z];
                    g_da += g[z] * da_z[z];
                }
                s_ab += g_a * b_r;
                s_dtheta += g_da * b_r;
                s_dmean += g_a * db_r;
            }
            const real fcc = 2 * tr.fca * tr.fcb;
            const real dfa = FN(cutoff_grad)(tr.da, (real)n->attrs.f[2]);
            const real dfb = FN(cutoff_grad)(tr.db, (real)n->attrs.f[2]);
            const real c95 = (real)0.95 * tr.cos_raw;
            const real dtheta_dcos = (real)-0.95 / sqrt(1 - c95 * c95);
            const real inv_dadb = 1 / (tr.da * tr.db);
            /* dE/dd_a (through the mean distance and fc(d_a)); likewise b. */
            const real de_dda = fcc * s_dmean / 2 + 2 * dfa * tr.fcb * s_ab;
            const real de_ddb = fcc * s_dmean / 2 + 2 * tr.fca * dfb * s_ab;
            const real de_dcos = fcc * s_dtheta * dtheta_dcos;
            real *ga = gv + 3 * a, *gb = gv + 3 * b;
            for (int k = 0; k < 3; k++) {
                const real ua = tr.va[k] / tr.da, ub = tr.vb[k] / tr.db;
                const real dcos_da = tr.vb[k] * inv_dadb - tr.cos_raw * ua / tr.da;
                const real dcos_db = tr.va[k] * inv_dadb - tr.cos_raw * ub / tr.db;
                ga[k] += de_dda * ua + de_dcos * dcos_da;
                gb[k] += de_ddb * ub + de_dcos * dcos_db;
            }
        }
    }
}

KERNEL(ani_angular_vjp)
{
    /* inputs: 0 gy, 1 vec, 2 pairs, 3 triples, 4 species, 5 shift_theta, 6 shift_r;
     * the forward op's inputs are these shifted by one. */
    FN(angular_vjp_job) job = {.forward = *n};
    for (int k = 0; k < 6; k++)
        job.forward.inputs[k] = n->inputs[k + 1];
    memset(n->output.buffer, 0, (size_t)n->output.rows * 3 * sizeof(real));
    mlff_status s = cpu_triples_by_center(be, IDX(2), IDX(3), n->inputs[3].rows, n->inputs[0].rows,
                                          &job.by_center, err);
    /* A center's triples only touch that center's pairs: no two threads write one row. */
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->inputs[0].rows, SERIAL_BELOW, FN(ani_angular_vjp_atoms), n, &job);
    return s;
}

/* ---- ANI second order: forward mode inside the kernels ----
 * A dual number carries a value and its derivative along one direction;
 * the tangents of the ANI terms and of their gradients come from the same
 * formulas as the values and gradients above, each operation carrying its
 * derivative: no second derivative is written out by hand. */
typedef struct FN(dual) {
    real v, d;
} FN(dual);
#define DUAL FN(dual)

static inline DUAL FN(dconst)(real v) { return (DUAL){v, 0}; }
static inline DUAL FN(dadd)(DUAL a, DUAL b) { return (DUAL){a.v + b.v, a.d + b.d}; }
static inline DUAL FN(dsub)(DUAL a, DUAL b) { return (DUAL){a.v - b.v, a.d - b.d}; }
static inline DUAL FN(dmul)(DUAL a, DUAL b) { return (DUAL){a.v * b.v, a.d * b.v + a.v * b.d}; }
static inline DUAL FN(dscale)(DUAL a, real k) { return (DUAL){k * a.v, k * a.d}; }
static inline DUAL FN(ddiv)(DUAL a, DUAL b)
{
    const real q = a.v / b.v;
    return (DUAL){q, (a.d - q * b.d) / b.v};
}
static inline DUAL FN(dsqrt)(DUAL a)
{
    const real r = sqrt(a.v);
    return (DUAL){r, r > 0 ? a.d / (2 * r) : 0};
}
static inline DUAL FN(dexp)(DUAL a)
{
    const real e = exp(a.v);
    return (DUAL){e, e * a.d};
}
static inline DUAL FN(dcos)(DUAL a) { return (DUAL){cos(a.v), -sin(a.v) * a.d}; }
static inline DUAL FN(dsin)(DUAL a) { return (DUAL){sin(a.v), cos(a.v) * a.d}; }
static inline DUAL FN(dacos)(DUAL a) { return (DUAL){acos(a.v), -a.d / sqrt(1 - a.v * a.v)}; }
static inline DUAL FN(dpow)(DUAL a, real z) { return (DUAL){pow(a.v, z), z * pow(a.v, z - 1) * a.d}; }
static inline DUAL FN(dcutoff)(DUAL d, real rc) { return (DUAL){FN(cutoff_fn)(d.v, rc), FN(cutoff_grad)(d.v, rc) * d.d}; }
static inline DUAL FN(dcutoff_grad)(DUAL d, real rc)
{
    return (DUAL){FN(cutoff_grad)(d.v, rc), FN(cutoff_curvature)(d.v, rc) * d.d};
}

/* Vector p of vec moved along direction t of dvec ([P, 3T]); and its length. */
static inline void FN(dvector)(const real *vec, const real *dvec, int64_t p, int64_t t, int64_t t_count, DUAL v[3])
{
    for (int k = 0; k < 3; k++)
        v[k] = (DUAL){vec[3 * p + k], dvec[(p * t_count + t) * 3 + k]};
}
static inline DUAL FN(dlength)(const DUAL v[3])
{
    return FN(dsqrt)(FN(dadd)(FN(dadd)(FN(dmul)(v[0], v[0]), FN(dmul)(v[1], v[1])), FN(dmul)(v[2], v[2])));
}

/* ANI_RADIAL_JVP: inputs (dvec, vec, pairs, species, shifts). */
RANGE(ani_radial_jvp_atoms)
{
    const cpu_csr by_center = *(const cpu_csr *)extra;
    const int64_t t_count = TANGENTS, cols = n->output.cols / t_count, n_shifts = n->inputs[4].rows;
    const real eta = (real)n->attrs.f[0], rc = (real)n->attrs.f[1];
    const real *dvec = IN(0), *vec = IN(1), *shift = IN(4);
    const int32_t *ij = IDX(2), *species = IDX(3);
    real *y = OUT;
    for (int64_t i = begin; i < end; i++) {
        memset(y + i * t_count * cols, 0, (size_t)(t_count * cols) * sizeof(real));
        for (int64_t q = by_center.offsets[i]; q < by_center.offsets[i + 1]; q++) {
            const int64_t p = by_center.items[q];
            for (int64_t t = 0; t < t_count; t++) {
                DUAL v[3];
                FN(dvector)(vec, dvec, p, t, t_count, v);
                const DUAL d = FN(dlength)(v), fc = FN(dcutoff)(d, rc);
                if (fc.v == 0)
                    continue;
                real *slot = y + (i * t_count + t) * cols + (int64_t)species[ij[2 * p + 1]] * n_shifts;
                for (int64_t r = 0; r < n_shifts; r++) {
                    const DUAL u = FN(dsub)(d, FN(dconst)(shift[r]));
                    slot[r] += FN(dscale)(FN(dmul)(FN(dexp)(FN(dscale)(FN(dmul)(u, u), -eta)), fc), (real)0.25).d;
                }
            }
        }
    }
}

KERNEL(ani_radial_jvp)
{
    cpu_csr by_center;
    mlff_status s = cpu_csr_build(be, IDX(2), 2, n->inputs[1].rows, n->output.rows, &by_center, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->output.rows, SERIAL_BELOW, FN(ani_radial_jvp_atoms), n, &by_center);
    return s;
}

/* ANI_RADIAL_VJP_JVP: inputs (g, vec, pairs, species, shifts, dvec[, dg]);
 * each pair's gradient dE/dd v / d, in duals. */
RANGE(ani_radial_vjp_jvp_pairs)
{
    (void)extra;
    const int64_t t_count = TANGENTS, cols = n->inputs[0].cols, n_shifts = n->inputs[4].rows;
    const real eta = (real)n->attrs.f[0], rc = (real)n->attrs.f[1];
    const real *gy = IN(0), *vec = IN(1), *shift = IN(4), *dvec = IN(5), *dg = n->n_inputs > 6 ? IN(6) : NULL;
    const int32_t *ij = IDX(2), *species = IDX(3);
    real *out = OUT;
    for (int64_t p = begin; p < end; p++) {
        const int64_t i = ij[2 * p], column = (int64_t)species[ij[2 * p + 1]] * n_shifts;
        for (int64_t t = 0; t < t_count; t++) {
            DUAL v[3];
            FN(dvector)(vec, dvec, p, t, t_count, v);
            const DUAL d = FN(dlength)(v), fc = FN(dcutoff)(d, rc), dfc = FN(dcutoff_grad)(d, rc);
            DUAL de_dd = FN(dconst)(0);
            if (fc.v != 0 || dfc.v != 0)
                for (int64_t r = 0; r < n_shifts; r++) {
                    const DUAL g = {gy[i * cols + column + r], dg ? dg[(i * t_count + t) * cols + column + r] : 0};
                    const DUAL u = FN(dsub)(d, FN(dconst)(shift[r]));
                    const DUAL e = FN(dexp)(FN(dscale)(FN(dmul)(u, u), -eta));
                    const DUAL slope = FN(dsub)(dfc, FN(dscale)(FN(dmul)(u, fc), 2 * eta));
                    de_dd = FN(dadd)(de_dd, FN(dscale)(FN(dmul)(g, FN(dmul)(e, slope)), (real)0.25));
                }
            for (int k = 0; k < 3; k++)
                out[(p * t_count + t) * 3 + k] = d.v > 0 ? FN(ddiv)(FN(dmul)(de_dd, v[k]), d).d : 0;
        }
    }
}

KERNEL(ani_radial_vjp_jvp)
{
    (void)err;
    cpu_pool_for(be->pool, n->output.rows, SERIAL_BELOW, FN(ani_radial_vjp_jvp_pairs), n, NULL);
    return MLFF_OK;
}

/* A triple's geometry in duals along one direction: lengths, cutoffs, the
 * cosine as the formulas take it, the angle, and the species pair's slot. */
typedef struct FN(dtriple) {
    DUAL va[3], vb[3], da, db, fca, fcb, cos_raw, theta;
    int64_t slot;
} FN(dtriple);

static inline int FN(dtriple_setup)(FN(dtriple) * tr, const real *vec, const real *dvec, const int32_t *ij,
                                    const int32_t *species, int64_t a, int64_t b, int64_t t, int64_t t_count,
                                    real rc, int64_t n_species, int64_t block)
{
    FN(dvector)(vec, dvec, a, t, t_count, tr->va);
    FN(dvector)(vec, dvec, b, t, t_count, tr->vb);
    tr->da = FN(dlength)(tr->va);
    tr->db = FN(dlength)(tr->vb);
    tr->fca = FN(dcutoff)(tr->da, rc);
    tr->fcb = FN(dcutoff)(tr->db, rc);
    if (tr->fca.v == 0 || tr->fcb.v == 0)
        return 0;
    DUAL dot = FN(dconst)(0);
    for (int k = 0; k < 3; k++)
        dot = FN(dadd)(dot, FN(dmul)(tr->va[k], tr->vb[k]));
    tr->cos_raw = FN(ddiv)(dot, FN(dmul)(tr->da, tr->db));
    tr->theta = FN(dacos)(FN(dscale)(tr->cos_raw, (real)0.95));
    tr->slot = cpu_species_pair(species[ij[2 * a + 1]], species[ij[2 * b + 1]], n_species) * block;
    return 1;
}

/* ANI_ANGULAR_JVP: inputs (dvec, vec, pairs, triples, species, shift_theta, shift_r). */
RANGE(ani_angular_jvp_atoms)
{
    const cpu_csr by_center = *(const cpu_csr *)extra;
    const int64_t t_count = TANGENTS, cols = n->output.cols / t_count;
    const int64_t n_z = n->inputs[5].rows, n_r = n->inputs[6].rows;
    const real zeta = (real)n->attrs.f[0], eta = (real)n->attrs.f[1], rc = (real)n->attrs.f[2];
    const real *dvec = IN(0), *vec = IN(1), *shift_z = IN(5), *shift_r = IN(6);
    const int32_t *ij = IDX(2), *abc = IDX(3), *species = IDX(4);
    real *y = OUT;
    for (int64_t i = begin; i < end; i++) {
        memset(y + i * t_count * cols, 0, (size_t)(t_count * cols) * sizeof(real));
        for (int64_t q = by_center.offsets[i]; q < by_center.offsets[i + 1]; q++) {
            const int64_t tri = by_center.items[q];
            for (int64_t t = 0; t < t_count; t++) {
                FN(dtriple) tr;
                if (!FN(dtriple_setup)(&tr, vec, dvec, ij, species, abc[2 * tri], abc[2 * tri + 1], t, t_count, rc,
                                       n->attrs.i[0], n_z * n_r))
                    continue;
                const DUAL mean = FN(dscale)(FN(dadd)(tr.da, tr.db), (real)0.5);
                const DUAL fcc = FN(dscale)(FN(dmul)(tr.fca, tr.fcb), 2);
                DUAL angular[MLFF_ANI_MAX_SHIFTS];
                for (int64_t z = 0; z < n_z; z++) {
                    const DUAL base = FN(dscale)(FN(dadd)(FN(dconst)(1), FN(dcos)(FN(dsub)(tr.theta, FN(dconst)(shift_z[z])))),
                                                 (real)0.5);
                    angular[z] = FN(dpow)(base, zeta);
                }
                real *row = y + (i * t_count + t) * cols + tr.slot;
                for (int64_t r = 0; r < n_r; r++) {
                    const DUAL u = FN(dsub)(mean, FN(dconst)(shift_r[r]));
                    const DUAL radial = FN(dmul)(FN(dexp)(FN(dscale)(FN(dmul)(u, u), -eta)), fcc);
                    for (int64_t z = 0; z < n_z; z++)
                        row[r * n_z + z] += FN(dmul)(angular[z], radial).d;
                }
            }
        }
    }
}

KERNEL(ani_angular_jvp)
{
    cpu_csr by_center;
    mlff_status s = cpu_triples_by_center(be, IDX(2), IDX(3), n->inputs[3].rows, n->output.rows, &by_center, err);
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->output.rows, SERIAL_BELOW, FN(ani_angular_jvp_atoms), n, &by_center);
    return s;
}

/* ANI_ANGULAR_VJP_JVP: inputs (g, vec, pairs, triples, species, shift_theta,
 * shift_r, dvec[, dg]); ani_angular_vjp_atoms' formulas, in duals. */
RANGE(ani_angular_vjp_jvp_atoms)
{
    const cpu_csr by_center = *(const cpu_csr *)extra;
    const int64_t t_count = TANGENTS, cols = n->inputs[0].cols;
    const int64_t n_z = n->inputs[5].rows, n_r = n->inputs[6].rows;
    const real zeta = (real)n->attrs.f[0], eta = (real)n->attrs.f[1], rc = (real)n->attrs.f[2];
    const real *gy = IN(0), *vec = IN(1), *shift_z = IN(5), *shift_r = IN(6), *dvec = IN(7);
    const real *dg = n->n_inputs > 8 ? IN(8) : NULL;
    const int32_t *ij = IDX(2), *abc = IDX(3), *species = IDX(4);
    const int64_t species_count = n->attrs.i[0];
    const int64_t offset = cols - species_count * (species_count + 1) / 2 * n_z * n_r;
    real *out = OUT;
    for (int64_t i = begin; i < end; i++)
        for (int64_t q = by_center.offsets[i]; q < by_center.offsets[i + 1]; q++) {
            const int64_t tri = by_center.items[q], a = abc[2 * tri], b = abc[2 * tri + 1];
            for (int64_t t = 0; t < t_count; t++) {
                FN(dtriple) tr;
                if (!FN(dtriple_setup)(&tr, vec, dvec, ij, species, a, b, t, t_count, rc, species_count, n_z * n_r))
                    continue;
                const real *g_row = gy + i * cols + offset + tr.slot;
                const real *dg_row = dg ? dg + (i * t_count + t) * cols + offset + tr.slot : NULL;
                const DUAL mean = FN(dscale)(FN(dadd)(tr.da, tr.db), (real)0.5);
                DUAL a_z[MLFF_ANI_MAX_SHIFTS], da_z[MLFF_ANI_MAX_SHIFTS];
                for (int64_t z = 0; z < n_z; z++) {
                    const DUAL phase = FN(dsub)(tr.theta, FN(dconst)(shift_z[z]));
                    const DUAL base = FN(dscale)(FN(dadd)(FN(dconst)(1), FN(dcos)(phase)), (real)0.5);
                    a_z[z] = FN(dpow)(base, zeta);
                    da_z[z] = FN(dmul)(FN(dscale)(FN(dpow)(base, zeta - 1), zeta), FN(dscale)(FN(dsin)(phase), (real)-0.5));
                }
                DUAL s_ab = FN(dconst)(0), s_dtheta = FN(dconst)(0), s_dmean = FN(dconst)(0);
                for (int64_t r = 0; r < n_r; r++) {
                    const DUAL u = FN(dsub)(mean, FN(dconst)(shift_r[r]));
                    const DUAL b_r = FN(dexp)(FN(dscale)(FN(dmul)(u, u), -eta));
                    const DUAL db_r = FN(dscale)(FN(dmul)(u, b_r), -2 * eta);
                    DUAL g_a = FN(dconst)(0), g_da = FN(dconst)(0);
                    for (int64_t z = 0; z < n_z; z++) {
                        const DUAL g = {g_row[r * n_z + z], dg_row ? dg_row[r * n_z + z] : 0};
                        g_a = FN(dadd)(g_a, FN(dmul)(g, a_z[z]));
                        g_da = FN(dadd)(g_da, FN(dmul)(g, da_z[z]));
                    }
                    s_ab = FN(dadd)(s_ab, FN(dmul)(g_a, b_r));
                    s_dtheta = FN(dadd)(s_dtheta, FN(dmul)(g_da, b_r));
                    s_dmean = FN(dadd)(s_dmean, FN(dmul)(g_a, db_r));
                }
                const DUAL fcc = FN(dscale)(FN(dmul)(tr.fca, tr.fcb), 2);
                const DUAL dfa = FN(dcutoff_grad)(tr.da, rc), dfb = FN(dcutoff_grad)(tr.db, rc);
                const DUAL c95 = FN(dscale)(tr.cos_raw, (real)0.95);
                const DUAL dtheta_dcos =
                    FN(ddiv)(FN(dconst)((real)-0.95), FN(dsqrt)(FN(dsub)(FN(dconst)(1), FN(dmul)(c95, c95))));
                const DUAL inv_dadb = FN(ddiv)(FN(dconst)(1), FN(dmul)(tr.da, tr.db));
                const DUAL half_mean = FN(dscale)(FN(dmul)(fcc, s_dmean), (real)0.5);
                const DUAL de_dda = FN(dadd)(half_mean, FN(dscale)(FN(dmul)(FN(dmul)(dfa, tr.fcb), s_ab), 2));
                const DUAL de_ddb = FN(dadd)(half_mean, FN(dscale)(FN(dmul)(FN(dmul)(tr.fca, dfb), s_ab), 2));
                const DUAL de_dcos = FN(dmul)(FN(dmul)(fcc, s_dtheta), dtheta_dcos);
                real *ga = out + (a * t_count + t) * 3, *gb = out + (b * t_count + t) * 3;
                for (int k = 0; k < 3; k++) {
                    const DUAL ua = FN(ddiv)(tr.va[k], tr.da), ub = FN(ddiv)(tr.vb[k], tr.db);
                    const DUAL dcos_da =
                        FN(dsub)(FN(dmul)(tr.vb[k], inv_dadb), FN(ddiv)(FN(dmul)(tr.cos_raw, ua), tr.da));
                    const DUAL dcos_db =
                        FN(dsub)(FN(dmul)(tr.va[k], inv_dadb), FN(ddiv)(FN(dmul)(tr.cos_raw, ub), tr.db));
                    ga[k] += FN(dadd)(FN(dmul)(de_dda, ua), FN(dmul)(de_dcos, dcos_da)).d;
                    gb[k] += FN(dadd)(FN(dmul)(de_ddb, ub), FN(dmul)(de_dcos, dcos_db)).d;
                }
            }
        }
}

KERNEL(ani_angular_vjp_jvp)
{
    memset(n->output.buffer, 0, (size_t)(n->output.rows * n->output.cols) * sizeof(real));
    cpu_csr by_center;
    mlff_status s = cpu_triples_by_center(be, IDX(2), IDX(3), n->inputs[3].rows, n->inputs[0].rows, &by_center, err);
    /* A center's triples only touch that center's pairs: no two threads write one row. */
    if (s == MLFF_OK)
        cpu_pool_for(be->pool, n->inputs[0].rows, SERIAL_BELOW, FN(ani_angular_vjp_jvp_atoms), n, &by_center);
    return s;
}

#include "cpu_message_tmpl.h"

#undef DUAL
#undef TANGENTS
#undef KERNEL
#undef IN
#undef IDX
#undef OUT
#undef UNUSED_ARGS
