/* Instantiates the real-typed CPU kernels for float and double. */
#include <string.h>
#include <tgmath.h> /* exp, pow, ... of float for float: the f32 kernels stay in float */

#include "cpu_internal.h"

#define FN_PASTE(name, suffix) name##_##suffix
#define FN_EXPAND(name, suffix) FN_PASTE(name, suffix)
#define FN(name) FN_EXPAND(name, REAL_SUFFIX)

#define real float
#define REAL_SUFFIX f32
#include "cpu_kernels_tmpl.h"
#undef real
#undef REAL_SUFFIX

#define real double
#define REAL_SUFFIX f64
#include "cpu_kernels_tmpl.h"
#undef real
#undef REAL_SUFFIX

#define KERNEL_TABLE(sfx)                                              \
    {                                                                  \
        [MLFF_OP_FILL] = fill_##sfx,                                   \
        [MLFF_OP_ADD] = add_##sfx,                                     \
        [MLFF_OP_SCALE] = scale_##sfx,                                 \
        [MLFF_OP_MUL] = mul_##sfx,                                     \
        [MLFF_OP_CONCAT_COLS] = concat_cols_##sfx,                     \
        [MLFF_OP_SLICE_COLS] = slice_cols_##sfx,                       \
        [MLFF_OP_GATHER_ROWS] = cpu_gather_rows,                       \
        [MLFF_OP_SCATTER_ADD_ROWS] = cpu_scatter_add_rows,             \
        [MLFF_OP_SUM_COLS] = sum_cols_##sfx,                           \
        [MLFF_OP_BROADCAST_COLS] = broadcast_cols_##sfx,               \
        [MLFF_OP_LINEAR] = linear_##sfx,                               \
        [MLFF_OP_LINEAR_VJP] = linear_vjp_##sfx,                       \
        [MLFF_OP_CELU] = celu_##sfx,                                   \
        [MLFF_OP_CELU_VJP] = celu_vjp_##sfx,                           \
        [MLFF_OP_PAIR_VECTORS] = pair_vectors_##sfx,                   \
        [MLFF_OP_PAIR_VECTORS_VJP] = pair_vectors_vjp_##sfx,           \
        [MLFF_OP_PAIR_SHIFTS] = pair_shifts_##sfx,                     \
        [MLFF_OP_PAIR_SHIFTS_VJP] = pair_shifts_vjp_##sfx,             \
        [MLFF_OP_NORM3] = norm3_##sfx,                                 \
        [MLFF_OP_NORM3_VJP] = norm3_vjp_##sfx,                         \
        [MLFF_OP_COSINE_CUTOFF] = cosine_cutoff_##sfx,                 \
        [MLFF_OP_COSINE_CUTOFF_VJP] = cosine_cutoff_vjp_##sfx,         \
        [MLFF_OP_ANI_RADIAL] = ani_radial_##sfx,                       \
        [MLFF_OP_ANI_RADIAL_VJP] = ani_radial_vjp_##sfx,               \
        [MLFF_OP_ANI_ANGULAR] = ani_angular_##sfx,                     \
        [MLFF_OP_ANI_ANGULAR_VJP] = ani_angular_vjp_##sfx,             \
        [MLFF_OP_PAIR_TRIPLES] = cpu_pair_triples,                     \
        [MLFF_OP_CELU_MLP] = celu_mlp_##sfx,                           \
        [MLFF_OP_CELU_MLP_VJP] = celu_mlp_vjp_##sfx,                   \
        [MLFF_OP_UNARY] = unary_##sfx,                                 \
        [MLFF_OP_GATHER_COLS] = gather_cols_##sfx,                     \
        [MLFF_OP_SCATTER_ADD_COLS] = scatter_add_cols_##sfx,           \
        [MLFF_OP_AFFINE_COLS] = affine_cols_##sfx,                     \
        [MLFF_OP_INDEX_COLUMN] = cpu_index_column,                     \
        [MLFF_OP_ROW_DIFFERENCES] = row_differences_##sfx,             \
        [MLFF_OP_CELU_VJP_JVP] = celu_vjp_jvp_##sfx,                   \
        [MLFF_OP_NORM3_JVP] = norm3_jvp_##sfx,                         \
        [MLFF_OP_NORM3_VJP_JVP] = norm3_vjp_jvp_##sfx,                 \
        [MLFF_OP_COSINE_CUTOFF_VJP_JVP] = cosine_cutoff_vjp_jvp_##sfx, \
        [MLFF_OP_ANI_RADIAL_JVP] = ani_radial_jvp_##sfx,               \
        [MLFF_OP_ANI_RADIAL_VJP_JVP] = ani_radial_vjp_jvp_##sfx,       \
        [MLFF_OP_ANI_ANGULAR_JVP] = ani_angular_jvp_##sfx,             \
        [MLFF_OP_ANI_ANGULAR_VJP_JVP] = ani_angular_vjp_jvp_##sfx,     \
    }

const cpu_kernel_fn cpu_plain_kernels[2][MLFF_OP_COUNT] = {KERNEL_TABLE(f32), KERNEL_TABLE(f64)};
