/*
 * float32 dense layers on the packed GEMM. Weights are packed the first time
 * a layer runs (per group, forward as W^T, backward as W) and the packed
 * copies live in the weight buffer's header until the buffer is written.
 */
#include <stdlib.h>

#include "cpu_gemm.h"
#include "cpu_internal.h"
#include "cpu_pool.h"

typedef struct cpu_pack {
    int transposed;
    int64_t groups;
    uint64_t generation;
    cpu_packed_b *per_group;
    struct cpu_pack *next;
} cpu_pack;

static void pack_free(cpu_pack *p)
{
    for (int64_t g = 0; g < p->groups; g++)
        cpu_packed_b_free(&p->per_group[g]);
    free(p->per_group);
    free(p);
}

void cpu_buffer_drop_packs(cpu_buffer_header *h)
{
    while (h->packs) {
        cpu_pack *next = h->packs->next;
        pack_free(h->packs);
        h->packs = next;
    }
}

static void drop_stale_packs(cpu_buffer_header *h)
{
    for (cpu_pack **link = &h->packs; *link;) {
        cpu_pack *p = *link;
        if (p->generation == h->generation) {
            link = &p->next;
            continue;
        }
        *link = p->next;
        pack_free(p);
    }
}

/* The packed form of W [groups * out, in], made if missing or stale. */
static const cpu_packed_b *packed_weights(const mlff_exec_tensor *w, int64_t groups, int transposed,
                                          mlff_error *err)
{
    cpu_buffer_header *h = cpu_buffer_header_of(w->buffer);
    for (cpu_pack *p = h->packs; p; p = p->next)
        if (p->transposed == transposed && p->groups == groups && p->generation == h->generation)
            return p->per_group;
    drop_stale_packs(h);
    cpu_pack *p = calloc(1, sizeof *p);
    if (p)
        p->per_group = calloc((size_t)groups, sizeof *p->per_group);
    if (!p || !p->per_group) {
        free(p);
        mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory packing weights");
        return NULL;
    }
    p->transposed = transposed;
    p->groups = groups;
    p->generation = h->generation;
    const int64_t out = w->rows / groups, in = w->cols;
    for (int64_t g = 0; g < groups; g++)
        if (!cpu_pack_b(&p->per_group[g], (const float *)w->buffer + g * out * in, out, in, in,
                        transposed)) {
            p->groups = g;
            pack_free(p);
            mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory packing weights");
            return NULL;
        }
    p->next = h->packs;
    h->packs = p;
    return p->per_group;
}

/* C = A B (+ bias) per group, work split over (group, panel). Group g reads
 * A from column g * k and writes C (and reads the epilogue's celu_y) from
 * column g * n of rows with strides lda and ldc. */
typedef struct gemm_job {
    int64_t rows, groups, lda, ldc;
    const float *a;
    const cpu_packed_b *b;
    float *c;
    const cpu_k_ranges *ranges; /* NULL: all of k */
    cpu_gemm_epilogue epilogue; /* bias and celu_y point at group 0 */
} gemm_job;

static void gemm_tasks(const mlff_exec_node *n, void *extra, int64_t begin, int64_t end)
{
    (void)n;
    const gemm_job *j = extra;
    const int64_t panels = j->b[0].n_panels;
    for (int64_t t = begin; t < end; t++) {
        const int64_t g = t / panels, p = t % panels;
        const cpu_packed_b *b = &j->b[g];
        cpu_gemm_epilogue e = j->epilogue;
        if (e.bias)
            e.bias += g * b->n;
        if (e.celu_y)
            e.celu_y += g * b->n;
        cpu_sgemm_panels(j->rows, j->a + g * b->k, j->lda, b, p, p + 1, j->ranges, &e, j->c + g * b->n, j->ldc);
    }
}

static void run_gemm(mlff_backend *be, const mlff_exec_node *n, gemm_job *job)
{
    const int64_t tasks = job->groups * job->b[0].n_panels;
    /* Threads pay off once a task holds some real work. */
    const int64_t flops_per_task = job->rows * job->b[0].k * CPU_GEMM_NR;
    cpu_pool_for(be->pool, tasks, flops_per_task < 4096 ? tasks + 1 : 2, gemm_tasks, n, job);
}

/* A LINEAR or LINEAR_VJP node, run by run (core/ops.h: each run of rows
 * through its stack of the weights, b: every stack's groups); a wide
 * layer read by all groups (ANI's first layer, on the features) skips the
 * features that are zero for every row of a run. */
static mlff_status grouped_gemm(mlff_backend *be, const mlff_exec_node *n, const cpu_packed_b *b, const float *bias,
                                int skip_zero_columns, mlff_error *err)
{
    const int64_t groups = n->attrs.i[0], lda = groups * b->k, ldc = groups * b->n;
    int64_t *bounds = NULL;
    if (skip_zero_columns &&
        !(bounds = cpu_arena_alloc(&be->arena, (size_t)(b->k / CPU_GEMM_K_BLOCK + 1) * 2 * sizeof *bounds)))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory");
    for (int64_t e = 0; e < mlff_op_stacks(&n->attrs); e++) {
        int64_t first, end;
        cpu_run_rows(n, e, &first, &end);
        if (end <= first)
            continue;
        const float *a = (const float *)n->inputs[0].buffer + first * lda;
        gemm_job job = {end - first, groups, lda, ldc, a, b + e * groups, (float *)n->output.buffer + first * ldc,
                        NULL, {.bias = bias ? bias + e * groups * b->n : NULL, .alpha = (float)n->epilogue_alpha}};
        job.epilogue.celu = n->epilogue == MLFF_EPILOGUE_CELU;
        if (n->epilogue == MLFF_EPILOGUE_CELU_GRAD)
            job.epilogue.celu_y = (const float *)n->epilogue_input.buffer + first * ldc;
        cpu_k_ranges ranges;
        if (skip_zero_columns) {
            ranges = cpu_nonzero_columns(end - first, a, b->k, b->k, bounds);
            job.ranges = &ranges;
        }
        run_gemm(be, n, &job);
    }
    return MLFF_OK;
}

mlff_status cpu_linear_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    const int64_t groups = n->attrs.i[0];
    const cpu_packed_b *w = packed_weights(&n->inputs[1], groups * mlff_op_stacks(&n->attrs), 1, err);
    if (!w)
        return err->status;
    return grouped_gemm(be, n, w, n->inputs[2].buffer, groups == 1, err);
}

mlff_status cpu_linear_vjp_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    const cpu_packed_b *w = packed_weights(&n->inputs[1], n->attrs.i[0] * mlff_op_stacks(&n->attrs), 0, err);
    if (!w)
        return err->status;
    return grouped_gemm(be, n, w, NULL, 0, err);
}

/* CELU_MLP: one GEMM per layer and run, each writing its block of the output. */
mlff_status cpu_celu_mlp_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    float *y = n->output.buffer;
    for (int l = 1; l <= m.layers; l++) {
        const cpu_packed_b *w = packed_weights(m.weights[l], m.groups * m.stacks, 1, err);
        if (!w)
            return err->status;
        const float *bias = n->inputs[2 * l].buffer;
        for (int64_t e = 0; e < m.stacks; e++) {
            int64_t first, end;
            cpu_run_rows(n, e, &first, &end);
            if (end <= first)
                continue;
            gemm_job job = {end - first, m.groups, m.cols, m.cols, y + first * m.cols + m.block[l - 1],
                            w + e * m.groups, y + first * m.cols + m.block[l], NULL,
                            {.bias = bias + e * m.groups * m.width[l], .celu = l < m.layers,
                             .alpha = (float)n->attrs.f[0]}};
            if (l == 1) {
                job.lda = m.groups * m.width[0];
                job.a = (const float *)n->inputs[0].buffer + first * job.lda;
            }
            run_gemm(be, n, &job);
        }
    }
    return MLFF_OK;
}

/* CELU_MLP_VJP: the gradient of each hidden block, laid out as in y (so that
 * the GEMM's CELU-derivative epilogue reads y beside it), in scratch; run by
 * run, each through its stack of the weights. */
mlff_status cpu_celu_mlp_vjp_f32(mlff_backend *be, const mlff_exec_node *n, mlff_error *err)
{
    const mlff_mlp_shape m = mlff_mlp_shape_of(n);
    const int64_t rows = n->output.rows;
    const float alpha = (float)n->attrs.f[0];
    float *scratch = m.layers > 1 ? cpu_arena_alloc(&be->arena, (size_t)(rows * m.cols) * sizeof *scratch) : NULL;
    if (m.layers > 1 && !scratch)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "cpu: out of memory");
    const cpu_packed_b *packed[MLFF_MLP_MAX_LAYERS + 1];
    for (int l = 1; l <= m.layers; l++)
        if (!(packed[l] = packed_weights(m.weights[l], m.groups * m.stacks, 0, err)))
            return err->status;
    const int64_t gy_cols = n->inputs[0].cols, gy_hidden = gy_cols == m.cols;
    for (int64_t e = 0; e < m.stacks; e++) {
        int64_t first, end;
        cpu_run_rows(n, e, &first, &end);
        if (end <= first)
            continue;
        /* The gradient of layer l's output: gy's result block, then scratch, row stride m.cols. */
        const float *gy = (const float *)n->inputs[0].buffer + first * gy_cols;
        const float *y = (const float *)n->inputs[1].buffer + first * m.cols;
        float *grad = scratch ? scratch + first * m.cols : NULL;
        const float *gz = gy;
        int64_t gz_stride = gy_cols;
        for (int l = m.layers; l >= 1; l--) {
            const cpu_packed_b *w = packed[l] + e * m.groups;
            if (l == 1) {
                const int64_t ldc = m.groups * m.width[0];
                gemm_job job = {end - first, m.groups, gz_stride, ldc, gz, w, (float *)n->output.buffer + first * ldc,
                                NULL, {.alpha = (float)n->epilogue_alpha}};
                if (n->epilogue == MLFF_EPILOGUE_CELU_GRAD)
                    job.epilogue.celu_y = (const float *)n->epilogue_input.buffer + first * ldc;
                run_gemm(be, n, &job);
                break;
            }
            const int64_t at = m.block[l - 1], width = m.groups * m.width[l - 1];
            gemm_job job = {end - first, m.groups, gz_stride, m.cols, gz, w, grad + at, NULL,
                            {.celu_y = y + at, .alpha = alpha}};
            run_gemm(be, n, &job);
            /* gy's own share of the hidden block, through the same derivative. */
            for (int64_t r = 0; gy_hidden && r < end - first; r++)
                cpu_celu_vjp_accumulate_f32(gy + r * m.cols + at, y + r * m.cols + at, grad + r * m.cols + at, width,
                                            alpha);
            gz = grad + at;
            gz_stride = m.cols;
        }
    }
    return MLFF_OK;
}
