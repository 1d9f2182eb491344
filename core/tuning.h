/*
 * The tuning record: every choice of kernel or graph form and every
 * measured threshold that picks one, for one device. The runtime fills it
 * once when the device opens, in layers: the table row of the device's
 * API, vendor and kind (mlff_tuning_for_device), then a record measured by
 * `mlff tune` (runtime/tuning_record.c), then the environment, then the
 * API's settings.tuning. Every choice is then a pure function of (node,
 * record) and of what the device can do, so that contexts of one process
 * may run different forms.
 *
 * Each field is described once, in mlff_tuning_keys: its name (the key of
 * settings.tuning and of the record file), the environment variable it
 * answers to, and the values it takes. One parser (mlff_tuning_set) serves
 * the API's string, the environment and the record file, one printer
 * (mlff_tuning_format) `mlff tune --keys`, the record file and `mlff
 * devices`.
 *
 * Conventions of the values: forms that can be forced take 0 for "auto"
 * (chosen by the thresholds); a threshold named *_most or *_from takes
 * "never" (-1) where the form it enables is not to be taken; one named
 * *_below takes 0 for that.
 */
#ifndef MLFF_CORE_TUNING_H
#define MLFF_CORE_TUNING_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* How a model's per-element networks run (ANI: models/ani_networks.c):
 * each element's on its atoms, every element in one op a layer (stacked);
 * op by op, element after element (separate); or every element's on every
 * atom (merged: the fewest launches, n elements times the work). */
typedef enum mlff_element_networks {
    MLFF_ELEMENT_NETWORKS_AUTO = 0,
    MLFF_ELEMENT_NETWORKS_STACKED,
    MLFF_ELEMENT_NETWORKS_MERGED,
    MLFF_ELEMENT_NETWORKS_SEPARATE
} mlff_element_networks;

/* The element networks' fused layers (CELU_MLP, backends/common/lowering.h). */
typedef enum mlff_mlp_forms {
    MLFF_MLP_AUTO = 0,
    MLFF_MLP_NARROW,
    MLFF_MLP_HALF,
    MLFF_MLP_WIDE,
    MLFF_MLP_LAYERS
} mlff_mlp_forms;

/* Where the GPU backends sort index entries for their sums (backends/common/segments.h). */
typedef enum mlff_segment_sort {
    MLFF_SEGMENT_SORT_DEVICE = 0,
    MLFF_SEGMENT_SORT_HOST,
    MLFF_SEGMENT_SORT_DEVICE_UNFUSED /* on the device, a symmetric list's entries in two launches at any size */
} mlff_segment_sort;

/* Who runs OpenCL's dense layers (backends/opencl/cl_internal.h). */
typedef enum mlff_opencl_gemm {
    MLFF_OPENCL_GEMM_AUTO = 0,
    MLFF_OPENCL_GEMM_OWN,
    MLFF_OPENCL_GEMM_CLBLAST,
    MLFF_OPENCL_GEMM_TILED
} mlff_opencl_gemm;

/* Which shader runs Vulkan's dense layers (backends/vulkan/vk_internal.h). */
typedef enum mlff_vulkan_gemm {
    MLFF_VULKAN_GEMM_AUTO = 0,
    MLFF_VULKAN_GEMM_ROWS,
    MLFF_VULKAN_GEMM_TILED,
    MLFF_VULKAN_GEMM_SUBGROUP,
    MLFF_VULKAN_GEMM_DIRECT
} mlff_vulkan_gemm;

/* Who makes the pair vectors of an ANI AEV's lists where launches cost
 * (OpenCL: runtime/vectors_in_aev.h): the AEV's kernel, two launches fewer
 * (the molecules' form), or PAIR_VECTORS kernels of their own, a work-item
 * a pair (measured against it on large boxes); auto: the AEV. */
typedef enum mlff_pair_vectors_form {
    MLFF_PAIR_VECTORS_AUTO = 0,
    MLFF_PAIR_VECTORS_IN_AEV,
    MLFF_PAIR_VECTORS_APART
} mlff_pair_vectors_form;

typedef enum mlff_cell_lists_place { MLFF_CELL_LISTS_HOST = 0, MLFF_CELL_LISTS_DEVICE } mlff_cell_lists_place;

/* The value of thresholds that enable a form never. */
#define MLFF_TUNING_NEVER (-1)

typedef struct mlff_tuning {
    /* The runtime: plans, pair lists, graphs. */
    int element_plans;                      /* a graph per element set of a batch (1), or every element's (0) */
    mlff_element_networks element_networks; /* forced, or AUTO: by the two below */
    int64_t merged_networks_most_extra;     /* merged while (elements - 1) x atoms stays within it */
    int64_t stacked_networks_most_atoms;    /* ... else stacked up to this many atoms, then separate */
    int64_t dense_most_atoms;               /* all pairs (no cell lists) for batches of up to this many atoms */
    mlff_cell_lists_place cell_lists;       /* where the sparse path's cell lists run */
    int64_t cells_sorted_in_one_group_most; /* the device cell lists (runtime/device_cells.c) */
    int64_t cells_one_bin_most;
    int64_t cells_placed_on_host_most;
    int64_t cells_counted_on_host_most;
    int64_t cells_listed_on_host_most;
    int64_t hessian_groups_from_atoms;      /* a molecule's Hessian by groups of atoms from this many (hessian.c) */
    int64_t hessian_group_atoms;            /* the atoms a group owns; 0: by the molecule's size */
    /* The GPU backends (backends/common/lowering.h, segments.h). */
    int device_fp64;                        /* the kernels may use doubles where the device has them */
    mlff_pair_vectors_form pair_vectors;    /* made in the AEV or apart, where launches cost */
    mlff_segment_sort segment_sort;
    int64_t sort_fused_pairs;               /* symmetric lists below this many pairs: one launch */
    int64_t sum_lanes;                      /* forced lanes an output, or 0: by the three below */
    int64_t sum_fill_items;
    int64_t sum_lane_entries;
    int64_t sum_few_items;
    mlff_mlp_forms mlp;                     /* forced, or AUTO: by the three below */
    int64_t mlp_wide_below_groups;
    int64_t mlp_half_below_groups;
    int64_t mlp_vjp_half_below_groups;
    int64_t gemm_splits;                    /* forced, or 0: by the two below and the API's fill */
    int64_t gemm_splits_most;
    int64_t gemm_split_least_k;
    /* OpenCL (backends/opencl/). */
    mlff_opencl_gemm opencl_gemm;
    int64_t opencl_tiled_gemm_from_tiles;
    int64_t opencl_vjp_tiled_from_tiles;
    int64_t opencl_gemm_own_below_rows;
    int64_t opencl_split_fill_per_cu;
    int64_t opencl_rows_few_groups_per_cu;
    int64_t opencl_arena;                   /* the largest region in the arena: 0 (on) an eighth of it,
                                             * -1 (off) none */
    int64_t opencl_arena_most;              /* the arena's largest size */
    /* Vulkan (backends/vulkan/). */
    mlff_vulkan_gemm vulkan_gemm;
    int64_t vulkan_tiled_gemm_from_tiles;
    int64_t vulkan_vjp_tiled_from_tiles;
    int64_t vulkan_rows_few_groups;
    int64_t vulkan_split_fill;
    int64_t vulkan_mlp_layers_from_tiles;
    int64_t vulkan_fence_spin_us;           /* the host polls a submission's fence this long before it blocks */
    int vulkan_replay;
    int vulkan_staging;
} mlff_tuning;

/* A named value of a key ("auto" 0, "never" -1, an enum's names). */
typedef struct mlff_tuning_name {
    const char *name;
    int64_t value;
} mlff_tuning_name;

typedef struct mlff_tuning_key {
    const char *key;               /* "sum_lanes" */
    const char *env;               /* "MLFF_SUM_LANES", or NULL */
    size_t offset, size;           /* of the field in mlff_tuning (int or int64_t) */
    const mlff_tuning_name *names; /* NULL-ended, or NULL; a value prints as its first name */
    int64_t min, max;              /* numbers taken besides the names (none when min > max) */
    int power_of_two;              /* numbers: powers of 2 only */
    int fixed;                     /* may not change once the device holds buffers */
    const char *help;              /* one line */
} mlff_tuning_key;

extern const mlff_tuning_key mlff_tuning_keys[];
extern const int mlff_n_tuning_keys;
#define MLFF_TUNING_MAX_KEYS 64 /* at least mlff_n_tuning_keys */

/* The key called name, or NULL. */
const mlff_tuning_key *mlff_tuning_key_named(const char *name);
int64_t mlff_tuning_get(const mlff_tuning *t, const mlff_tuning_key *k);
void mlff_tuning_put(mlff_tuning *t, const mlff_tuning_key *k, int64_t value);

/* Sets key k from text: a name or a number in range. An error names the
 * value, where it came from (`where`: "MLFF_SUM_LANES", "settings.tuning
 * key sum_lanes") and what the key takes. */
mlff_status mlff_tuning_set_value(mlff_tuning *t, const mlff_tuning_key *k, const char *text, const char *where,
                                  mlff_error *err);

/* Sets every "key=value" of text (separated by spaces, commas or new
 * lines; '#' starts a comment to the end of its line). `where` names the
 * text in errors ("settings.tuning"). changed[k] (may be NULL) is set for
 * each key set. */
mlff_status mlff_tuning_set(mlff_tuning *t, const char *text, const char *where, unsigned char *changed,
                            mlff_error *err);

/* Key k's value as text (its name, else the number), as snprintf. */
int mlff_tuning_format_value(const mlff_tuning *t, const mlff_tuning_key *k, char *buf, size_t size);
/* What key k takes, in words ("auto, 1, 2, 4, 8 or 16"), as snprintf. */
int mlff_tuning_format_values(const mlff_tuning_key *k, char *buf, size_t size);
/* Every key as "key=value\n", as snprintf (mlff_tuning_set reads it back). */
int mlff_tuning_format(const mlff_tuning *t, char *buf, size_t size);

/* The defaults: NVIDIA's numbers, measured on the H100 and H200
 * (bench/RESULTS.md), for every GPU until it is measured. */
void mlff_tuning_defaults(mlff_tuning *t);

/* PCI vendor IDs the table knows. */
#define MLFF_VENDOR_NVIDIA 0x10de
#define MLFF_VENDOR_AMD 0x1002
#define MLFF_VENDOR_INTEL 0x8086

/* The table's record for a device of an API ("cpu", "opencl", "vulkan"), a
 * vendor (0: unknown) and kind (a GPU, or a CPU: the CPU backend, PoCL,
 * lavapipe); *row (may be NULL) receives a description of the row used.
 * Not MLFF_OK only where a row of the table is wrong (a test tries them all). */
mlff_status mlff_tuning_for_device(mlff_tuning *t, const char *api, uint32_t vendor, int is_gpu, const char **row);

#endif
