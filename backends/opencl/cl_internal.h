/* Internals of the OpenCL backend. */
#ifndef MLFF_BACKENDS_OPENCL_INTERNAL_H
#define MLFF_BACKENDS_OPENCL_INTERNAL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <stdint.h>

#include "backends/backend.h"
#include "core/profile.h"
#include "backends/common/kernel_cache.h"
#include "backends/common/lowering.h"
#include "backends/common/segments.h"
#include "backends/common/shader_sources.h"

extern const mlff_shader_source mlff_opencl_shaders[];

/* Where a buffer lives on the device (cl_arena.c): a range of the backend's
 * arena, or a buffer of its own. */
typedef struct cl_region {
    cl_mem own;           /* NULL: in the arena */
    size_t offset, bytes; /* the range in the arena (offset 0 for its own); 0 bytes: none yet */
    cl_mem sub;           /* the arena's range as a buffer, for kernels built for buffers */
    uint64_t sub_generation; /* ... of the arena buffer it was made of */
} cl_region;

typedef struct cl_arena_gap {
    size_t offset, bytes;
} cl_arena_gap;

typedef struct cl_arena {
    cl_mem mem;
    size_t capacity, end; /* end: past the last range in use */
    size_t most, most_one, align; /* its largest size; the largest region it takes; ranges' alignment */
    uint64_t generation;  /* one more each time mem is replaced */
    cl_arena_gap *gaps;    /* free ranges below end, in order, none adjacent (a core/ds.h array) */
} cl_arena;

/* A device buffer. Index buffers (I32) that an op sums by segments also keep
 * a host copy (see backends/common/segments.h). */
typedef struct cl_buffer {
    mlff_index_shadow host; /* first: the segment cache sees buffers as this */
    cl_region region;
    /* Dense-layer weights transposed per group for our GEMM's reverse pass
     * and CELU_MLP (cl_gemm.c), made again when the buffer's version or the
     * groups change. */
    cl_region transposed;
    uint64_t transposed_version;
    int64_t transposed_groups;
} cl_buffer;

/* The device copy of one sorted index. */
typedef struct cl_segment_buffers {
    cl_region offsets, items;
} cl_segment_buffers;

/* The device segment sort: its program, and scratch reused between sorts. */
typedef struct cl_sort_scratch {
    cl_program program[2]; /* [1]: the arena form (cl_arena.c) */
    cl_kernel kernels[2][MLFF_SORT_KERNELS];
    cl_region scratch[MLFF_SORT_SCRATCH];
    cl_region flag;     /* the last entry with a key out of range, + 1; 0 if none */
    cl_int flag_read;   /* ... read back after the sorts of a plan execution, */
    int flag_pending;   /* until the next wait, which checks it */
} cl_sort_scratch;

/* The kernels of one node list, built once per distinct list (see cl_program.c). */
typedef struct cl_prepared {
    uint64_t hash;
    uint64_t program_form; /* of the record it was built for (cl_program_form) */
    int arena; /* its kernels built in the arena form (cl_arena.c), else for buffers */
    void *signature;
    size_t signature_size;
    cl_program program;
    int n_nodes;
    cl_kernel *kernels;  /* per node: its kernel (shared between identical nodes); for a
                          * dense layer our GEMM for few rows, NULL when only CLBlast runs it */
    cl_kernel *tiled;    /* per dense layer: our tiled GEMM (linear_tiled.kernel), or NULL */
    cl_kernel *splits;   /* per LINEAR_VJP: the sums of its split K (gemm_splits.kernel), or NULL */
    cl_kernel *wide;     /* per CELU_MLP node: its wide form (lowering.h) where asked for, or NULL */
    cl_kernel *half;     /* per CELU_MLP node: its half form (lowering.h) where asked for, or NULL */
    cl_kernel *epilogue; /* per dense layer: the kernel after a CLBlast GEMM, or NULL */
    size_t *group, *epilogue_group; /* per node: work-group size for those kernels */
    int n_unique;
    cl_kernel *unique;   /* what to release */
} cl_prepared;

/* Who runs the dense layers is the record's opencl_gemm (core/tuning.h):
 * auto gives a layer our tiled GEMM (linear_tiled.kernel) where it makes
 * opencl_tiled_gemm_from_tiles work-groups of it or more (an input
 * gradient opencl_vjp_tiled_from_tiles, its K split: lowering.h), else our
 * GEMM for few rows (linear_rows.kernel) below opencl_gemm_own_below_rows rows and
 * CLBlast's above; `own` takes ours alone, `tiled` and `clblast` one for
 * every layer. */

/* Transfers under way through pinned host memory (cl_pinned.c); an
 * evaluation asks for five reads at most (results, sort flag, lists'
 * check), and one more than this waits for those before it. */
#define CL_PINNED_READS 8
typedef struct cl_pending_read {
    void *dst;
    size_t offset, bytes; /* where in the pinned buffer */
} cl_pending_read;
typedef struct cl_pinned {
    cl_mem buffer;
    void *host; /* mapped */
    size_t capacity, used; /* used: by transfers that may be under way */
    cl_pending_read reads[CL_PINNED_READS];
    int n_reads;
} cl_pinned;

struct mlff_backend {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    int is_gpu, has_fp64; /* has_fp64: the device's doubles, where the record lets the kernels use them */
    int device_fp64;      /* the device's doubles */
    cl_device_type type;
    int index;            /* among the devices (cl_device.c's order) */
    cl_ulong max_alloc, global_memory;
    size_t base_align; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes */
    cl_arena arena;
    cl_uint compute_units;
    char name[256], description[1024];
    char identity[1100]; /* vendor, driver, versions: part of every cache key */
    char version[256], driver[256];
    /* Every choice of form (core/tuning.h), and what of it the programs'
     * sources depend on (cl_program_form): programs built for another are
     * not used again. */
    mlff_tuning tuning;
    uint64_t program_form;
    /* Whether the device takes work-groups of MLFF_MLP_WIDE_THREADS items
     * (CL_DEVICE_MAX_WORK_GROUP_SIZE; each wide kernel's own limit is
     * asked for when it is built: runs_wide, cl_program.c; cleared where a
     * launch finds it does not after all). */
    int mlp_wide_fits;
    cl_uint vendor_id;
    cl_region split_sums; /* the partial sums of a split K (cl_gemm.c), grown as needed */
    mlff_kernel_cache cache;
    uint64_t builds; /* programs compiled from source */
    uint64_t allocations; /* device buffers created */
    cl_prepared **prepared; /* every program made (a core/ds.h array) */
    struct cl_prepared_slot {
        uint64_t key;       /* the signature's hash, with the form of program and the arena form */
        cl_prepared *value; /* the last made for it */
    } *by_key;              /* ... looked up (a core/ds.h hash map) */
    const cl_prepared *last_prepared; /* the one the previous call ran */
    void *scratch; /* signature being matched */
    size_t scratch_size;
    mlff_segment_cache segments;
    cl_sort_scratch sort;
    cl_pinned pinned;
    cl_program cell_program[2]; /* shaders/cell_lists.kernel, built at first use; [1]: the arena form */
    cl_kernel cell_kernels[2][MLFF_CELL_KERNELS];
    cl_program transpose_program; /* shaders/opencl/transpose.cl, built at first use */
    cl_kernel transpose_kernels[2]; /* words of 4 and 8 bytes */
    mlff_thread_pool *pool; /* the context's threads, for the segment sorts */
    /* MLFF_LOG=profile: one event per kernel of the current call, and the row it counts in */
    mlff_profile profile;
    struct cl_profiled {
        cl_event event;
        int row;
    } *events; /* a core/ds.h array */
};

/* Profile rows beyond the ops' own (which are their op ids). */
enum {
    CL_ROW_CLBLAST = MLFF_OP_COUNT,
    CL_ROW_EPILOGUE,
    CL_ROW_SPLIT_SUMS,
    CL_ROW_SORTS,
    CL_ROW_DEVICE_SORTS,
    CL_ROW_SEGMENTS,
    CL_ROW_READ_BACK,
    CL_ROW_IDLE,
    CL_ROW_ENQUEUE, /* MLFF_LOG=phases: the host enqueueing, then waiting */
    CL_ROW_WAIT,
    CL_ROW_CELLS, /* + mlff_cell_kernel */
};

/* cl_error.c */
const char *cl_error_name(cl_int code);
mlff_status cl_fail(mlff_error *err, cl_int code, const char *what);

/* cl_device.c */
void cl_list_devices(char *buf, size_t size);
int cl_count_devices(int *gpus);
int cl_device_info_at(int index, mlff_device_info *info);
void cl_opened_device(const mlff_backend *be, mlff_device_info *info);
mlff_status cl_choose_device(mlff_backend *be, const mlff_backend_options *opts, mlff_error *err);
/* be->description, for its record's choices. */
void cl_describe(mlff_backend *be);

/* cl_program.c: the kernels for a node list (from memory, the disk cache,
 * or compiled), in the arena form or for buffers. */
mlff_status cl_prepare(mlff_backend *be, const mlff_exec_node *nodes, int n_nodes, int arena,
                       const cl_prepared **out, mlff_error *err);
void cl_prepared_free_all(mlff_backend *be);
/* A program from source, through the disk cache. */
mlff_status cl_build_program(mlff_backend *be, const char *source, cl_program *out, mlff_error *err);
/* The program of kernels `shader` (shaders/<shader>.kernel, or OpenCL's
 * own; unless *program is built already), in the arena form or for buffers
 * (arena.cl), with the dialect's header, and its kernels
 * names[0..n) that kernels[] lacks. */
mlff_status cl_build_kernels(mlff_backend *be, const char *shader, int arena, cl_program *program,
                             const char *const *names, cl_kernel *kernels, int n, mlff_error *err);
/* Releases what cl_build_kernels made. */
void cl_release_kernels(cl_program *program, cl_kernel *kernels, int n);
/* Work-items per group for a one-dimensional kernel: 64, or `most`, or
 * fewer where the kernel's registers allow fewer on this device. */
size_t cl_group_size(const mlff_backend *be, cl_kernel kernel);
size_t cl_group_size_within(const mlff_backend *be, cl_kernel kernel, size_t most);
/* What of be->tuning the programs' sources depend on, as a number. */
uint64_t cl_program_form(const mlff_backend *be);
/* True when this call of a dense-layer node goes through CLBlast. */
int cl_node_uses_clblast(const mlff_backend *be, const mlff_exec_node *n);

/* cl_pinned.c: a read of bytes at offset of mem that arrives in dst once
 * the queue finished and cl_pinned_settle ran (which every wait of the
 * backend calls); a write of src's bytes, which src need not outlive. */
mlff_status cl_pinned_read(mlff_backend *be, cl_mem mem, size_t offset, void *dst, size_t bytes, mlff_error *err);
mlff_status cl_pinned_write(mlff_backend *be, cl_mem mem, size_t offset, const void *src, size_t bytes,
                            mlff_error *err);
void cl_pinned_settle(mlff_backend *be);
void cl_pinned_free(mlff_backend *be);

/* cl_arena.c: the arena (as the record's opencl_arena and opencl_arena_most
 * say), and regions of device memory. */
void cl_arena_init(mlff_backend *be);
void cl_arena_free(mlff_backend *be);
/* A region of `bytes` (in the arena where it fits); `what` names it in errors. */
mlff_status cl_region_alloc(mlff_backend *be, cl_region *r, size_t bytes, const char *what, mlff_error *err);
void cl_region_free(mlff_backend *be, cl_region *r);
/* r holding `need` bytes at least: made again when it holds fewer (its
 * contents lost), with the headroom of mlff_grown_capacity_within. */
mlff_status cl_region_reserve(mlff_backend *be, cl_region *r, size_t need, const char *what, mlff_error *err);
/* The buffer r lies in and where, for transfers and CLBlast. */
static inline cl_mem cl_region_mem(const mlff_backend *be, const cl_region *r)
{
    return r->own ? r->own : be->arena.mem;
}
static inline size_t cl_region_offset(const cl_region *r)
{
    return r->own ? 0 : r->offset;
}
static inline int cl_region_in_arena(const cl_region *r)
{
    return r->own == NULL;
}
/* r as a buffer of its own (its range of the arena as a sub-buffer). */
mlff_status cl_region_buffer(mlff_backend *be, cl_region *r, cl_mem *out, mlff_error *err);
/* Whether the arena is on and every one of regions[0..n) lies in it: a
 * kernel that takes them can be built in the arena form. */
int cl_regions_in_arena(const mlff_backend *be, cl_region *const *regions, int n);
/* A kernel's first buffer arguments: in the arena form the arena, then
 * each region's offset in it; else each region as a buffer. The next
 * argument is arena_form + n. */
mlff_status cl_set_region_args(mlff_backend *be, cl_kernel kernel, int arena_form, cl_region *const *regions, int n,
                               mlff_error *err);

/* cl_segments.c: the device side of the segment cache. */
mlff_status cl_segments_init(mlff_backend *be, mlff_error *err);
/* After the nodes of a plan execution: reads back, if a device sort ran
 * since the count sorts_before, whether one met a key out of range. */
mlff_status cl_segments_read_flag(mlff_backend *be, uint64_t sorts_before, mlff_error *err);
/* After the queue finished: an error if the flag read says so. */
mlff_status cl_segments_check(mlff_backend *be, mlff_error *err);
void cl_segments_free(mlff_backend *be);

/* cl_profile.c: the event for the next kernel of a row, or NULL when not profiling. */
cl_event *cl_profile_event(mlff_backend *be, int row);
/* After the queue finished: the kernels' device times into be->profile. */
void cl_profile_collect(mlff_backend *be);
void cl_profile_free(mlff_backend *be);

/* cl_launch.c: a node list's programs in both forms, each made when a
 * node first needs it: the arena form where the arena is on and all of a
 * node's buffers lie in it, else the form for buffers. */
typedef struct cl_node_programs {
    const mlff_exec_node *nodes;
    int n_nodes;
    int arena; /* the arena is on */
    const cl_prepared *form[2]; /* [1]: the arena form */
} cl_node_programs;
mlff_status cl_enqueue_node(mlff_backend *be, cl_node_programs *programs, int k, mlff_error *err);

/* cl_gemm.c: our GEMM kernel's launch (its arguments set), and for the
 * reverse pass the weights transposed per group. */
mlff_status cl_enqueue_gemm(mlff_backend *be, cl_kernel kernel, int tiled, int splits, const mlff_exec_node *n,
                            mlff_error *err);
/* Whether our GEMM runs dense layer n as linear_tiled.kernel. */
int cl_gemm_tiled(const mlff_backend *be, const mlff_exec_node *n);
/* The work-groups that share each tile's K (1: not split); has_sums: the
 * program has the kernel that adds their partial sums. */
int cl_gemm_splits(mlff_backend *be, int tiled, int has_sums, const mlff_exec_node *n);
/* Weights w [groups * k, n] transposed per group ([groups * n, k]): a copy
 * made on the device at the first call and kept with the buffer. */
mlff_status cl_transposed_weights(mlff_backend *be, const mlff_exec_tensor *w, int64_t groups, cl_region **out,
                                  mlff_error *err);
void cl_gemm_free(mlff_backend *be);

/* cl_cells.c: the cell-list kernels (backend.h) */
mlff_status cl_cell_kernel(mlff_backend *be, mlff_cell_kernel kernel, void *const *buffers, int64_t n_items,
                           mlff_error *err);
void cl_cells_free(mlff_backend *be);

/* cl_blas.c */
mlff_status cl_blas_gemm(mlff_backend *be, const mlff_exec_node *n, mlff_error *err);

#endif
