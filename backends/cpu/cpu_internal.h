/* Internals of the OpenMP CPU backend. */
#ifndef MLFF_BACKENDS_CPU_INTERNAL_H
#define MLFF_BACKENDS_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "cpu_pool.h"

/* Scratch memory for one node at a time (index sorts). Reset before each
 * node; grows to the largest need and then stays, so a steady state of
 * repeated evaluations allocates nothing. */
typedef struct cpu_arena {
    char *base;
    size_t capacity, used;
    size_t overflow;     /* bytes that did not fit since the last reset */
    void **spill;        /* blocks allocated for them, freed at reset */
    int n_spill, cap_spill;
} cpu_arena;

typedef mlff_status (*cpu_kernel_fn)(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);

struct mlff_backend {
    int n_threads;
    mlff_thread_pool *pool;
    int owns_pool; /* started for this backend (none was given) */
    cpu_kernel_fn kernels[2][MLFF_OP_COUNT]; /* what runs, per type: [0] float, [1] double */
    char description[96];
    cpu_arena arena;
};

/* Stacks (core/ops.h): a dense node's run e of rows, [*first, *end)
 * (without stacks, all of them). A stacked node's T directions (its
 * tangent, which the plan runs as T times the rows) make each run T times
 * as long. */
static inline void cpu_run_rows(const mlff_exec_node *n, int64_t e, int64_t *first, int64_t *end)
{
    if (mlff_op_stacks(&n->attrs) == 1) {
        *first = 0;
        *end = n->output.rows;
        return;
    }
    const int32_t *starts = n->inputs[n->n_inputs - 1].buffer;
    const int64_t t_count = mlff_op_tangents(n->op, &n->attrs);
    *first = starts[e] * t_count;
    *end = starts[e + 1] * t_count;
}

/* The run (and weight stack) of row r of a dense node. */
static inline int64_t cpu_run_of_row(const mlff_exec_node *n, int64_t r)
{
    const int64_t stacks = mlff_op_stacks(&n->attrs), t_count = mlff_op_tangents(n->op, &n->attrs);
    const int32_t *starts = stacks > 1 ? n->inputs[n->n_inputs - 1].buffer : NULL;
    int64_t e = 0;
    while (e + 1 < stacks && r >= starts[e + 1] * t_count)
        e++;
    return e;
}

void *cpu_arena_alloc(cpu_arena *a, size_t bytes);
void cpu_arena_reset(cpu_arena *a);
void cpu_arena_free(cpu_arena *a);

/* Rows sorted by key (backends/common/counting_sort.h) in arena memory:
 * the rows with key t are items[offsets[t] .. offsets[t+1]) in row order.
 * This is how every scatter is made deterministic and race-free. */
typedef struct cpu_csr {
    int32_t *offsets; /* n_keys + 1 */
    int32_t *items;   /* n */
} cpu_csr;

mlff_status cpu_csr_build(mlff_backend *be, const int32_t *keys, int64_t stride, int64_t n,
                          int64_t n_keys, cpu_csr *out, mlff_error *err);

/* ANI angular triples grouped by their center atom (the center of their first pair). */
mlff_status cpu_triples_by_center(mlff_backend *be, const int32_t *pairs, const int32_t *triples,
                                  int64_t n_triples, int64_t atoms, cpu_csr *out, mlff_error *err);

/* ANI_ANGULAR: the radial features' columns in front of the angular ones
 * (0 without them). */
static inline int64_t cpu_angular_head_cols(const mlff_exec_node *n)
{
    return mlff_angular_has_radial(n->n_inputs) ? n->attrs.i[0] * n->inputs[8].rows : 0;
}

/* ANI_ANGULAR with the radial features: their part, an ANI_RADIAL node
 * that writes the first columns of the output's rows. */
static inline mlff_exec_node cpu_angular_radial_part(const mlff_exec_node *n)
{
    mlff_exec_node r = {.op = MLFF_OP_ANI_RADIAL, .n_inputs = 4, .output = n->output};
    for (int k = 0; k < 4; k++)
        r.inputs[k] = n->inputs[mlff_angular_radial_input(k)];
    r.attrs = mlff_angular_radial_attrs(&n->attrs);
    r.output.cols = cpu_angular_head_cols(n);
    r.output.ld = n->output.cols;
    return r;
}

/* Entries between rows of a tensor (a view's, or its columns). */
static inline int64_t cpu_row_stride(const mlff_exec_tensor *t)
{
    return t->ld ? t->ld : t->cols;
}

/* ANI_ANGULAR_VJP: where the angular block starts in g, its last columns. */
static inline int64_t cpu_angular_vjp_offset(const mlff_exec_node *n)
{
    const int64_t species = n->attrs.i[0];
    return n->inputs[0].cols - species * (species + 1) / 2 * n->inputs[5].rows * n->inputs[6].rows;
}

/* Slot of the unordered species pair (a, b) in upper-triangle order. */
static inline int64_t cpu_species_pair(int64_t a, int64_t b, int64_t n_species)
{
    if (a > b) {
        const int64_t t = a;
        a = b;
        b = t;
    }
    return a * n_species - a * (a - 1) / 2 + (b - a);
}

/* Every CPU buffer starts CPU_BUFFER_HEADER bytes after a header that keeps
 * packed copies of it (weights laid out for the GEMM). A write bumps the
 * generation, which makes those copies stale; they are rebuilt on next use. */
#define CPU_BUFFER_HEADER 64
struct cpu_pack;
typedef struct cpu_buffer_header {
    uint64_t generation;
    struct cpu_pack *packs;
} cpu_buffer_header;

static inline cpu_buffer_header *cpu_buffer_header_of(const void *data)
{
    return (cpu_buffer_header *)((char *)(uintptr_t)data - CPU_BUFFER_HEADER);
}

void cpu_buffer_drop_packs(cpu_buffer_header *h);

/* Every op as plain loops, per type: [0] float, [1] double (cpu_kernels.c).
 * They are the reference that the faster float32 kernels are tested against. */
extern const cpu_kernel_fn cpu_plain_kernels[2][MLFF_OP_COUNT];
/* Faster float32 kernels: dense layers on the packed GEMM (cpu_dense.c),
 * vectorised activations (cpu_activation.c) and ANI features (cpu_aev.c). */
mlff_status cpu_linear_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_linear_vjp_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_celu_mlp_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_celu_mlp_vjp_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
/* gx[k] += gy[k] * celu'(from y[k]) for k < n. */
void cpu_celu_vjp_accumulate_f32(const float *gy, const float *y, float *gx, int64_t n, float alpha);
mlff_status cpu_celu_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_celu_vjp_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
/* ANI features vectorised over blocks of pairs and triples (cpu_aev.c). */
mlff_status cpu_ani_radial_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_ani_radial_vjp_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_ani_angular_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_ani_angular_vjp_f32(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
/* Kernels that mix types (gather, scatter): one each. */
mlff_status cpu_gather_rows(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_scatter_add_rows(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_pair_triples(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
mlff_status cpu_index_column(mlff_backend *be, const mlff_exec_node *node, mlff_error *err);
/* UNARY's function u(x) (core/ops.h), in double: the reference of every type. */
double cpu_unary(double x, mlff_unary_kind kind, double p);

/* Reads element k of a tensor of any real dtype as double. */
static inline double cpu_load(const mlff_exec_tensor *t, int64_t k)
{
    return t->dtype == MLFF_DTYPE_F32 ? (double)((const float *)t->buffer)[k]
                                      : ((const double *)t->buffer)[k];
}

static inline void cpu_store(const mlff_exec_tensor *t, int64_t k, double v)
{
    if (t->dtype == MLFF_DTYPE_F32)
        ((float *)t->buffer)[k] = (float)v;
    else
        ((double *)t->buffer)[k] = v;
}

#endif
