/*
 * The backend interface: a small table of functions that every backend
 * (CPU now; OpenCL and Vulkan next) fills in. A backend sees resolved
 * tensors (device buffer, dtype, shape) and ops, never models.
 */
#ifndef MLFF_BACKENDS_BACKEND_H
#define MLFF_BACKENDS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/thread_pool.h"
#include "core/tuning.h"

/* A tensor as a backend sees it: concrete dtype (never REAL), concrete rows. */
typedef struct mlff_exec_tensor {
    void *buffer;   /* the backend's buffer handle */
    mlff_dtype dtype;
    int64_t rows, cols;
    int ascending;  /* an index whose column 0 never decreases (mlff_graph_ascending) */
    /* A pair list [P, 2] ordered by i, then j, holding for each (i, j, n) its
     * (j, i, -n) (mlff_plan_set_symmetric): GPU backends then place the pair
     * gradients' entries by atom in sorted order without sorting them. */
    int symmetric;
    /* A view into a wider buffer (a block of a CELU_MLP's output, which the
     * GPU backends' GEMMs read and write a layer at a time: lowering.h; the
     * radial block of an AEV, which the CPU writes apart): the entries
     * between rows and its first column; 0 and 0 when packed. */
    int64_t ld, col;
} mlff_exec_tensor;

/* Work the planner may fold into the node before it (backends say which
 * they can do): it saves a pass over that node's output, and a launch. */
typedef enum mlff_epilogue {
    MLFF_EPILOGUE_NONE = 0,
    MLFF_EPILOGUE_CELU = 1,      /* LINEAR: out = celu(x W^T + b) */
    MLFF_EPILOGUE_CELU_GRAD = 2, /* LINEAR_VJP, CELU_MLP_VJP: out = (its gradient) * celu'(x), from y = celu(x) */
    MLFF_EPILOGUE_ADD = 3        /* SCATTER_ADD_ROWS, PAIR_VECTORS_VJP: out = (its result) + y, y shaped like
                                  * out (the add of two gradients, of an energy and a constant) */
} mlff_epilogue;

/* The epilogues that read a second tensor (mlff_exec_node.epilogue_input). */
static inline int mlff_epilogue_reads_input(mlff_epilogue e)
{
    return e == MLFF_EPILOGUE_CELU_GRAD || e == MLFF_EPILOGUE_ADD;
}

/* What PAIR_VECTORS of images reads besides each list's pairs. */
enum {
    MLFF_VECTORS_POSITIONS,
    MLFF_VECTORS_CELLS,
    MLFF_VECTORS_SYSTEM,
    MLFF_VECTORS_IMAGES,        /* of the angular list (input 1) */
    MLFF_VECTORS_RADIAL_IMAGES, /* of the radial list (input 7) */
    MLFF_VECTORS_POSITIONS_LOW, /* the low parts (core/graph.h) */
    MLFF_VECTORS_CELLS_LOW,
    MLFF_VECTOR_SOURCES
};

typedef struct mlff_exec_node {
    mlff_op op;
    int n_inputs;
    mlff_exec_tensor inputs[MLFF_MAX_OP_INPUTS];
    mlff_exec_tensor output;
    mlff_op_attrs attrs;
    mlff_epilogue epilogue;
    double epilogue_alpha;
    mlff_exec_tensor epilogue_input; /* CELU_GRAD: y, shaped like the output */
    /* An ANI_ANGULAR with the radial features where launches cost makes
     * the pair vectors it reads, inputs 0 and 6 (core/plan.c folds the
     * PAIR_VECTORS of images of its two lists into it, each pair's vector
     * written by the group of the pair's center), from these sources. */
    int makes_vectors;
    mlff_exec_tensor vector_sources[MLFF_VECTOR_SOURCES];
} mlff_exec_node;

/* A CELU_MLP (or its VJP) node's layers: widths[0..layers] per group, and
 * where each layer's block of columns starts in the forward output (the
 * result's block, layer `layers`, first). */
typedef struct mlff_mlp_shape {
    int layers;
    int64_t groups, stacks, width[MLFF_MLP_MAX_LAYERS + 1], block[MLFF_MLP_MAX_LAYERS + 1], cols;
    const mlff_exec_tensor *weights[MLFF_MLP_MAX_LAYERS + 1]; /* weights[l], l = 1..layers */
} mlff_mlp_shape;

/* Sets block[] and cols from layers, groups and width[]. */
static inline void mlff_mlp_place_blocks(mlff_mlp_shape *s)
{
    s->block[s->layers] = 0;
    s->cols = s->groups * s->width[s->layers];
    for (int l = 1; l < s->layers; l++) {
        s->block[l] = s->cols;
        s->cols += s->groups * s->width[l];
    }
}

/* The input that holds layer l's weights (l = 1..layers). */
static inline int mlff_mlp_weight_input(mlff_op op, int l)
{
    return op == MLFF_OP_CELU_MLP_VJP ? 1 + l : 2 * l - 1;
}

static inline mlff_mlp_shape mlff_mlp_shape_of(const mlff_exec_node *n)
{
    mlff_mlp_shape s = {0};
    s.layers = mlff_mlp_layers(n->op, n->n_inputs, &n->attrs);
    s.groups = n->attrs.i[0];
    s.stacks = mlff_op_stacks(&n->attrs);
    for (int l = 1; l <= s.layers; l++)
        s.weights[l] = &n->inputs[mlff_mlp_weight_input(n->op, l)];
    s.width[0] = s.weights[1]->cols;
    for (int l = 1; l <= s.layers; l++)
        s.width[l] = s.weights[l]->rows / (s.groups * s.stacks);
    mlff_mlp_place_blocks(&s);
    return s;
}

typedef struct mlff_backend mlff_backend; /* each backend defines its own */

/* What the runtime read from the environment for the backends
 * (runtime/environment.c): they read none of it themselves. */
typedef struct mlff_backend_options {
    int device_index;   /* -1: best */
    int n_threads;      /* 0: all */
    mlff_thread_pool *pool; /* the context's threads: the CPU backend computes on them
                             * (NULL: it starts n_threads of its own) */
    int allow_cpu_devices; /* OpenCL/Vulkan: accept CPU implementations (PoCL, lavapipe) */
    const char *cache_dir; /* the kernel cache's directory, or NULL: no disk cache (MLFF_CACHE=off) */
    int log_cache;      /* MLFF_LOG=cache: hits, misses, compile times on stderr */
    int profile;        /* MLFF_LOG: 0, 1 (phases: host timings) or 2 (profile: device timings too) */
    int vulkan_validation; /* MLFF_VULKAN_VALIDATION: load the validation layer */
} mlff_backend_options;

/* What a device is and has, for its tuning record and `mlff devices`. */
typedef struct mlff_device_info {
    const char *api;       /* "cpu", "opencl", "vulkan" */
    int index;             /* its number among the API's devices (settings.device_index) */
    char name[256];
    char identity[1100];   /* vendor, driver and API versions: with the name and the library version, the key of
                            * the device's kernel cache files and tuning record */
    char driver[256];      /* the driver's name and version, for people */
    uint32_t vendor;       /* PCI vendor ID (core/tuning.h), 0 when unknown */
    int is_gpu;            /* else a CPU: the CPU backend, PoCL, lavapipe */
    int has_fp64;          /* what the device has, whatever its record says */
    uint64_t memory, memory_free; /* bytes; 0 where the API does not tell */
    uint64_t largest_buffer;
    uint32_t compute_units;       /* 0 where the API does not tell */
    uint32_t subgroup_min, subgroup_max; /* 0 where it has none or does not tell */
    char memory_note[256]; /* how memory is laid out (Vulkan's heaps), or "" */
} mlff_device_info;

/* Counters of the kernel compilers and caches (zero for the CPU). */
typedef struct mlff_backend_stats {
    uint64_t kernel_builds; /* programs or shaders compiled from source */
    uint64_t cache_hits, cache_misses, cache_rejects;
    uint64_t device_allocations; /* device buffers created (none in an MD loop's steady state) */
    uint64_t segment_sorts;      /* indices sorted for segment sums (backends/common/segments.h) */
    uint64_t segments_in_order;  /* ... of which the device found in order already (offsets only) */
    uint64_t recordings;         /* command buffers recorded (Vulkan: a replay records none) */
} mlff_backend_stats;

/* How much work one plan execution may take on the device (core/chunks.c
 * splits larger batches into chunks of atoms that fit). */
typedef struct mlff_memory_limits {
    size_t budget;     /* bytes all of a plan's buffers together may use */
    size_t max_buffer; /* bytes one buffer may have (the device's allocation or binding limit) */
} mlff_memory_limits;

/* The most any backend puts in one buffer: under 4 GiB, so that the
 * elements (4 bytes or more) of a buffer number under 2^30 and every
 * kernel's int32 index of them, products of rows and columns included,
 * stays in range (every kernel was checked for it); byte offsets are size_t
 * on the host and never reach a kernel. */
#define MLFF_MAX_BUFFER_BYTES (((size_t)1 << 32) - 4096)

/* The cell-list neighbour search on a GPU backend (the host side is
 * runtime/device_cells.c; the kernels shaders/cell_lists.kernel). Every
 * kernel binds the same buffers, in this order; what each holds is
 * described in device_cells.c. */
typedef enum mlff_cell_kernel {
    MLFF_CELL_BIN,   /* per atom: its bin and wrapping shift; counts atoms per bin */
    MLFF_CELL_PLACE, /* per atom: its slot in bin order */
    MLFF_CELL_COUNT, /* a work-group per atom: its pairs within the search radius, counted */
    MLFF_CELL_PAIRS, /* a work-group per atom of a range: its pairs, written and sorted */
    MLFF_CELL_SCAN,  /* one work-group (one item): atoms per bin into bin starts */
    MLFF_CELL_SORT,  /* one work-group (one item): BIN, SCAN and PLACE for few atoms, in one launch */
    MLFF_CELL_KERNELS
} mlff_cell_kernel;

/* cell_sort's work-group: Vulkan's least maxComputeWorkGroupSize (OpenCL:
 * fewer where the kernel's limit is lower). */
#define MLFF_CELL_SORT_LANES 128

/* True for the kernels that take a work-group per item (of any size up to
 * 64 that the backend chooses, the Vulkan shaders' 64; cell_sort's up to
 * MLFF_CELL_SORT_LANES). */
static inline int mlff_cell_kernel_per_group(mlff_cell_kernel k)
{
    return k == MLFF_CELL_COUNT || k == MLFF_CELL_PAIRS || k == MLFF_CELL_SCAN || k == MLFF_CELL_SORT;
}

/* A kernel's row in the GPU backends' MLFF_LOG=profile tables. */
static inline const char *mlff_cell_kernel_name(mlff_cell_kernel k)
{
    static const char *const names[MLFF_CELL_KERNELS] = {
        [MLFF_CELL_BIN] = "cell lists: bins",
        [MLFF_CELL_PLACE] = "cell lists: atoms placed",
        [MLFF_CELL_COUNT] = "cell lists: pairs counted",
        [MLFF_CELL_PAIRS] = "cell lists: pairs written",
        [MLFF_CELL_SCAN] = "cell lists: bin starts",
        [MLFF_CELL_SORT] = "cell lists: binned in one work-group",
    };
    return names[k];
}

typedef enum mlff_cell_buffer {
    MLFF_CELL_BUF_PARAMS,
    MLFF_CELL_BUF_POSITIONS,
    MLFF_CELL_BUF_SYSTEM_REALS,
    MLFF_CELL_BUF_SYSTEM_INTS,
    MLFF_CELL_BUF_ATOM_BINS,
    MLFF_CELL_BUF_BIN_ENDS,
    MLFF_CELL_BUF_SLOT_POSITIONS,
    MLFF_CELL_BUF_SLOT_SHIFTS,
    MLFF_CELL_BUF_COUNTS,
    MLFF_CELL_BUF_PAIRS,
    MLFF_CELL_BUF_IMAGES,
    MLFF_CELL_BUF_LIST_PAIRS,      /* + list (0, 1): a graph's input buffers, written in place */
    MLFF_CELL_BUF_LIST_IMAGES = MLFF_CELL_BUF_LIST_PAIRS + 2,
    MLFF_CELL_BUF_TRIPLE_STARTS = MLFF_CELL_BUF_LIST_IMAGES + 2,
    MLFF_CELL_BUFFERS
} mlff_cell_buffer;

#define MLFF_CELL_BIT(b) (1u << MLFF_CELL_BUF_##b)
/* The buffers each kernel writes (bit b: mlff_cell_buffer b), the rest it
 * only reads: the backends drop the host copies of these alone (the rest
 * keep skipping rewrites of the same bytes), and Vulkan schedules the
 * kernels by them. */
static inline uint32_t mlff_cell_kernel_writes(mlff_cell_kernel k)
{
    static const uint32_t writes[MLFF_CELL_KERNELS] = {
        [MLFF_CELL_BIN] = MLFF_CELL_BIT(ATOM_BINS) | MLFF_CELL_BIT(BIN_ENDS),
        [MLFF_CELL_PLACE] = MLFF_CELL_BIT(BIN_ENDS) | MLFF_CELL_BIT(SLOT_POSITIONS) | MLFF_CELL_BIT(SLOT_SHIFTS),
        [MLFF_CELL_COUNT] = MLFF_CELL_BIT(PARAMS) | MLFF_CELL_BIT(COUNTS),
        /* ... and the graph's lists: every buffer from LIST_PAIRS on */
        [MLFF_CELL_PAIRS] = MLFF_CELL_BIT(PARAMS) | MLFF_CELL_BIT(PAIRS) | MLFF_CELL_BIT(IMAGES) |
                            ((1u << MLFF_CELL_BUFFERS) - MLFF_CELL_BIT(LIST_PAIRS)),
        [MLFF_CELL_SCAN] = MLFF_CELL_BIT(PARAMS) | MLFF_CELL_BIT(BIN_ENDS),
        [MLFF_CELL_SORT] = MLFF_CELL_BIT(PARAMS) | MLFF_CELL_BIT(ATOM_BINS) | MLFF_CELL_BIT(BIN_ENDS) |
                           MLFF_CELL_BIT(SLOT_POSITIONS) | MLFF_CELL_BIT(SLOT_SHIFTS),
    };
    return writes[k];
}
#undef MLFF_CELL_BIT

typedef struct mlff_backend_iface {
    const char *name;
    /* Append one line per device to buf ("cpu 0: ..."): for `mlff devices`. */
    void (*list_devices)(char *buf, size_t size);
    /* The devices `open` can be given an index of (CPU implementations
     * included) and how many of them, numbered first, are GPUs. */
    int (*count_devices)(int *gpus);
    /* What device `index` of the API is and has, without opening it: 0
     * when there is no such device. */
    int (*device_info)(int index, mlff_device_info *info);
    /* Open a device. A missing device is MLFF_ERROR_DEVICE with a message.
     * It starts with the table's tuning record for the device
     * (mlff_tuning_for_device) until set_tuning gives it another. */
    mlff_status (*open)(const mlff_backend_options *opts, mlff_backend **out, mlff_error *err);
    /* The open device's mlff_device_info. */
    void (*opened_device)(const mlff_backend *be, mlff_device_info *info);
    /* The device's tuning record: copied, checked (a form the device cannot
     * run is MLFF_ERROR_UNSUPPORTED), and from then on the backend's every
     * choice of form. The keys marked fixed (core/tuning.h) may change only
     * before the first buffer; the others at any time between calls. NULL:
     * the backend chooses no form (the CPU). */
    mlff_status (*set_tuning)(mlff_backend *be, const mlff_tuning *t, mlff_error *err);
    void (*close)(mlff_backend *be);
    const char *(*describe)(const mlff_backend *be);
    int (*supports_dtype)(const mlff_backend *be, mlff_dtype dtype);
    /* True when the backend runs `op` in `dtype` with that epilogue folded in. */
    int (*fuses)(const mlff_backend *be, mlff_op op, mlff_epilogue epilogue, mlff_dtype dtype);
    /* True for a GPU (used by the automatic device choice). */
    int (*is_gpu)(const mlff_backend *be);
    /* Whether each kernel launch costs host time of its own (OpenCL's
     * enqueues; Vulkan replays a recorded submission, the CPU calls
     * functions): a model's graph then repeats some work to save a launch
     * (mlff_graph.radial_gradients_apart), and a plan has the AEV make its
     * pair vectors (mlff_exec_node.makes_vectors). */
    int launches_cost;
    /* Whether it runs the second-order ops and T-blocked forms (core/ops.h,
     * "Tangents"): the graphs of Hessians. */
    int second_order;
    void (*memory_limits)(const mlff_backend *be, mlff_memory_limits *limits);

    mlff_status (*buffer_alloc)(mlff_backend *be, size_t bytes, void **buffer, mlff_error *err);
    void (*buffer_free)(mlff_backend *be, void *buffer);
    /* src may change once it returned; the device may take the data later,
     * before anything enqueued after it. */
    mlff_status (*buffer_write)(mlff_backend *be, void *buffer, size_t offset, const void *src,
                                size_t bytes, mlff_error *err);
    /* A parameter's one write, before the plan first runs: it may wait for
     * the device. NULL: buffer_write. */
    mlff_status (*buffer_upload)(mlff_backend *be, void *buffer, const void *src, size_t bytes, mlff_error *err);
    mlff_status (*buffer_read)(mlff_backend *be, const void *buffer, size_t offset, void *dst,
                               size_t bytes, mlff_error *err);
    /* As buffer_read, but it may return before dst was written: dst holds
     * the data once `finish` returned, and stays untouched until then (so
     * that one evaluation's results wait for the device once: each wait
     * costs a GPU driver tens of microseconds). May be NULL. */
    mlff_status (*buffer_read_async)(mlff_backend *be, const void *buffer, size_t offset, void *dst,
                                     size_t bytes, mlff_error *err);
    /* Waits for everything enqueued, and reports what went wrong there. NULL
     * where compute and the reads wait themselves. */
    mlff_status (*finish)(mlff_backend *be, mlff_error *err);
    /* Run the nodes in order (one plan execution); it waits until done
     * unless the backend has `finish` (then reads wait for the nodes). */
    mlff_status (*compute)(mlff_backend *be, const mlff_exec_node *nodes, int n_nodes,
                           mlff_error *err);
    /* Runs one cell-list kernel over n_items work-items with buffers[0 ..
     * MLFF_CELL_BUFFERS) bound, in order with the buffer transfers and the
     * nodes (it may return before it ran). NULL: the host searches. */
    mlff_status (*cell_kernel)(mlff_backend *be, mlff_cell_kernel kernel, void *const *buffers, int64_t n_items,
                               mlff_error *err);
    /* May be NULL (nothing to count). */
    void (*get_stats)(const mlff_backend *be, mlff_backend_stats *stats);
} mlff_backend_iface;

/* Each backend's table; registry.h lists those this build has. */
extern const mlff_backend_iface mlff_backend_cpu;
extern const mlff_backend_iface mlff_backend_opencl;
extern const mlff_backend_iface mlff_backend_vulkan;

#endif
