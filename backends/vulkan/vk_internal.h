/* Internals of the Vulkan backend. */
#ifndef MLFF_BACKENDS_VULKAN_INTERNAL_H
#define MLFF_BACKENDS_VULKAN_INTERNAL_H

#include <vulkan/vulkan.h>

#include <stdint.h>

#include "backends/backend.h"
#include "core/grow.h"
#include "core/profile.h"
#include "backends/common/kernel_cache.h"
#include "backends/common/lowering.h"
#include "backends/common/segments.h"
#include "backends/common/shader_sources.h"

extern const mlff_shader_source mlff_vulkan_shaders[];

/* The descriptor layout every pipeline shares (shaders/vulkan/prelude.glsl):
 * 0 the output, 1..9 the inputs, 10 and 11 the segments, 12 the epilogue
 * input, 13 and 14 a second index's segments; the cell lists bind their
 * MLFF_CELL_BUFFERS from 0 on. Each dispatch binds VK_BINDINGS of its own,
 * then its slot of the table of dispatches (VK_BIND_DISPATCH,
 * shaders/vulkan/dispatch.glsl). */
enum {
    VK_BIND_OUT = 0,
    VK_BIND_IN0 = 1,
    VK_BIND_SEG_OFF = 1 + MLFF_MAX_OP_INPUTS,
    VK_BIND_SEG_ITEMS,
    VK_BIND_EPI,
    VK_BIND_SEG2_OFF, /* a second index's segments (pair_vectors_vjp of two lists, ani_angular's radial pairs) */
    VK_BIND_SEG2_ITEMS,
    VK_NODE_BINDINGS,
    VK_BINDINGS = VK_NODE_BINDINGS > MLFF_CELL_BUFFERS ? VK_NODE_BINDINGS : MLFF_CELL_BUFFERS,
    VK_BIND_DISPATCH = VK_BINDINGS,
    VK_LAYOUT_BINDINGS
};
_Static_assert(VK_BIND_DISPATCH == 16, "shaders/vulkan/dispatch.glsl binds the table of dispatches at 16");

#define VK_GROUP_1D 64 /* local_size_x of one-dimensional shaders */
/* A dispatch's values: VK_PUSH_WORDS words its shader reads as pc
 * (shaders/vulkan/dispatch.glsl), then its work groups, in a slot of the
 * table of dispatches (table_slot bytes: VK_SLOT_WORDS words rounded up
 * to the device's uniform buffer offset alignment). */
#define VK_PUSH_WORDS 8
#define VK_SLOT_WORDS 11
#define VK_GEMM_TILE 16 /* TS in shaders/vulkan/linear.comp */
/* shaders/vulkan/linear_subgroup.comp: a work group of VK_GROUP_1D lanes
 * keeps VK_SG_ROWS x (VK_SG_COLS * VK_GROUP_1D) outputs in registers. */
#define VK_SG_ROWS 8
#define VK_SG_COLS 2
/* CPU implementations with subgroup shuffles take it at every size; GPUs
 * take linear_tiled.kernel where a layer makes enough tiles (the record's
 * vulkan_tiled_gemm_from_tiles: bench/RESULTS.md),
 * else linear_rows.kernel (the GEMM for few rows of lowering.h, with more
 * lanes an output than 32 while a dispatch would have fewer work groups
 * than vulkan_rows_few_groups). */

/* Which GEMM shader runs the dense layers (vk_gemm_for). */
typedef enum vk_gemm {
    VK_GEMM_DIRECT,   /* linear.comp straight from the buffers: CPU implementations */
    VK_GEMM_TILED,    /* linear_tiled.kernel: tiles in shared memory, outputs in registers */
    VK_GEMM_SUBGROUP, /* linear_subgroup.comp: registers and subgroup shuffles */
    VK_GEMM_ROWS,     /* linear_rows.kernel: few rows, K spread over a work group */
} vk_gemm;
/* The tile side of linear_tiled.kernel; 0 for the other forms. */
static inline int vk_gemm_tile(vk_gemm gemm)
{
    return gemm == VK_GEMM_TILED ? MLFF_TILED_GEMM_TS : 0;
}
/* The signature variant of a LINEAR_VJP's sums after a split K
 * (gemm_splits.kernel), beside its GEMM forms. */
#define VK_VARIANT_SPLIT_SUMS 16

typedef struct vk_buffer {
    mlff_index_shadow host; /* first: the segment cache sees buffers as this */
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped; /* when the device memory is host-visible */
} vk_buffer;

/* The device copy of one sorted index, in host-visible memory. */
typedef struct vk_segment_buffers {
    vk_buffer offsets, items;
    size_t capacity_offsets, capacity_items; /* in entries */
} vk_segment_buffers;

/* The device segment sort: its pipelines, and scratch reused between sorts. */
typedef struct vk_sort_scratch {
    VkPipeline pipelines[MLFF_SORT_KERNELS];
    vk_buffer scratch[MLFF_SORT_SCRATCH];
    size_t capacity[MLFF_SORT_SCRATCH]; /* in entries */
    vk_buffer flag;     /* host memory: the last entry with a key out of range, + 1; 0 if none */
    uint64_t sorts_checked; /* the sorts (mlff_segment_cache.sorts) the flag was read after */
} vk_sort_scratch;

/* A pipeline per distinct node signature (and SUM_LANES_MAX, the one
 * constant of its source that comes from the record, not the node). */
typedef struct vk_kernel {
    mlff_node_sig sig;
    int sum_lanes_max;
    uint64_t hash;
    VkPipeline pipeline;
} vk_kernel;

/* Everything one dispatch binds and launches. A node list whose dispatches
 * bind what a recording's do, with the same pipelines, replays it
 * (vk_record.c); push and groups go to the table of dispatches. */
typedef struct vk_dispatch {
    VkPipeline pipeline;
    VkBuffer bindings[VK_BINDINGS];
    uint32_t push[VK_PUSH_WORDS]; /* n_items, base, then what a shader's own struct Push adds */
    uint32_t groups[3];
    uint32_t writes; /* bit b: it writes binding b (a node: its output); 0: it may write any */
    int32_t row;     /* its row of MLFF_LOG=profile: the node's op, or a VK_ROW_* */
} vk_dispatch;

/* A read that arrives with the next submission (vk_run): from the
 * buffer's mapping, or copied into the staging buffer at staged_at. */
typedef struct vk_readback {
    const vk_buffer *src;
    size_t offset, bytes, staged_at;
    int staged;
    void *dst;
} vk_readback;

/* What the node at one position of the last node list added (vk_record.c). */
typedef struct vk_node_memo {
    mlff_exec_node node;
    VkBuffer segments[2 * MLFF_NODE_SEGMENTS]; /* the offsets and items it bound (none: VK_NULL_HANDLE) */
    uint64_t epoch;
    vk_dispatch *dispatches;
    int n_dispatches, valid;
    int64_t capacity;
} vk_node_memo;

typedef struct vk_recording {
    vk_dispatch *dispatches; /* core/ds.h arrays, as long as the last list recorded */
    int n_dispatches;
    uint64_t epoch; /* the buffer epoch it was recorded in */
    uint64_t last_use;
    VkCommandBuffer commands;
    VkDescriptorPool pool;
    int pool_sets;
    VkDescriptorSet *sets; /* per dispatch, from pool */
    int *order; /* the dispatches in the order recorded, then each one's level (vk_record.c) */
    VkQueryPool timestamps; /* MLFF_LOG=profile: one before the first dispatch, one after each */
    uint32_t timestamp_capacity;
} vk_recording;

#define VK_RECORDINGS 8

struct mlff_backend {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice physical;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties memory_props;
    VkDeviceSize max_allocation;
    uint64_t memory_free_at_open; /* VK_EXT_memory_budget's, 0 where unknown (vk_memory_limits) */
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    uint32_t timestamp_bits; /* the queue's valid timestamp bits; 0: no timestamps */
    int is_gpu, has_fp64;
    uint32_t subgroup_size;
    int has_shuffle; /* subgroup shuffles in compute, subgroups dividing VK_GROUP_1D */
    char description[1024];
    char identity[512]; /* vendor, device, driver, pipelineCacheUUID: part of cache keys */

    /* Memory: device buffers are host-visible when the device has enough
     * such memory (integrated GPUs, CPUs, resizable BAR), else device-local
     * behind a staging buffer. */
    int mapped, mapped_cached; /* device buffers host-visible; and cached for the host */
    uint32_t device_type, host_type; /* memory type indices */
    uint32_t local_type;   /* device-local memory (the host's where there is none) */
    int shared_type;       /* device-local and host-visible, in a heap large enough to hold every buffer; -1: none */
    vk_buffer staging;
    size_t staging_size;
    vk_readback *readbacks; /* reads waiting for the next submission */
    int n_readbacks;
    int64_t cap_readbacks;
    size_t readback_bytes; /* of the staging buffer they take */

    VkDescriptorSetLayout set_layout;
    VkPipelineLayout pipeline_layout;
    VkPipelineCache pipeline_cache;
    int pipeline_cache_dirty;
    VkCommandPool command_pool;
    VkCommandBuffer transfer;
    VkFence fence;

    mlff_kernel_cache cache;
    void *compiler; /* shaderc_compiler_t, created at the first compile */
    vk_kernel *kernels; /* every pipeline made (a core/ds.h array) */
    struct vk_kernel_slot {
        uint64_t key; /* the signature's hash, with SUM_LANES_MAX */
        int value;    /* the last of kernels made for it */
    } *kernel_index;  /* ... looked up (a core/ds.h hash map) */
    VkPipeline cell_pipelines[MLFF_CELL_KERNELS]; /* shaders/cell_lists.kernel, built at first use */

    mlff_segment_cache segments;
    vk_sort_scratch sort;
    mlff_thread_pool *pool; /* the context's threads, for the segment sorts */
    vk_recording recordings[VK_RECORDINGS];
    vk_dispatch *pending; /* the dispatches of the call being prepared */
    /* The pending dispatches' values and work groups, a slot each, written
     * before every submission; every recording binds it (one submission
     * runs at a time). Grown, it bumps the epoch. */
    vk_buffer table;
    size_t table_slots, table_slot;
    int n_pending;
    int64_t cap_pending;
    uint64_t runs; /* vk_run's submissions, to tell whether one came between two points */
    vk_node_memo *memos; /* by position in the node list */
    int64_t n_memos;
    VkDescriptorSetLayout *layouts; /* set_layout repeated, to allocate sets */
    int cap_layouts;
    uint64_t epoch, clock;
    mlff_tuning tuning; /* every choice of form (core/tuning.h) */
    int mlp_wide_fits;  /* the device runs work groups of MLFF_MLP_WIDE_THREADS */
    int device_fp64;    /* the device's doubles (has_fp64: where the record lets the kernels use them) */
    int index;          /* among the devices (vk_device.c's order) */
    vk_buffer split_sums; /* the partial sums of a split K (vk_split_sums.c), grown as needed */
    size_t split_sums_bytes;
    vk_buffer mlp_grads; /* CELU_MLP_VJP's layers' gradients (vk_mlp_layers.c), grown as needed */
    size_t mlp_grads_entries;

    uint64_t builds, allocations, replays, recordings_made;
    mlff_profile profile; /* MLFF_LOG=phases or profile: the host's side of a node list's run */
    int validation;
    uint64_t validation_errors;
    char validation_message[512];
};

/* vk_error.c */
const char *vk_result_name(VkResult r);
mlff_status vk_fail(mlff_error *err, VkResult r, const char *what);

/* vk_device.c */
void vk_list_devices(char *buf, size_t size);
int vk_count_devices(int *gpus);
int vk_device_info(int index, mlff_device_info *info);
void vk_opened_device(const mlff_backend *be, mlff_device_info *info);
mlff_status vk_open_device(mlff_backend *be, const mlff_backend_options *opts, mlff_error *err);
/* be->description, for its record's choices. */
void vk_describe(mlff_backend *be);

/* vk_memory.c */
mlff_status vk_memory_init(mlff_backend *be, mlff_error *err);
/* Mapped or staged device buffers, as the record says (before the first buffer). */
void vk_memory_use_tuning(mlff_backend *be);
void vk_memory_limits(const mlff_backend *be, mlff_memory_limits *limits);
/* The largest buffer the device binds (maxStorageBufferRange, or less to allocate). */
size_t vk_largest_buffer(const mlff_backend *be);
/* Where a buffer lives: the device's buffer memory; host-visible memory
 * (the device's own when it is mapped); the host's (cached where possible). */
typedef enum vk_memory { VK_MEMORY_DEVICE, VK_MEMORY_MAPPED, VK_MEMORY_HOST } vk_memory;
mlff_status vk_buffer_create(mlff_backend *be, vk_buffer *b, size_t bytes, vk_memory where, mlff_error *err);
void vk_buffer_destroy(mlff_backend *be, vk_buffer *b);
/* b holding `need` entries of `entry` bytes at least (*capacity counts
 * them), made again, grown 1.5x, when it holds fewer: after the dispatches
 * pending, and a new epoch for the recordings that bind the old one. */
mlff_status vk_buffer_grow(mlff_backend *be, vk_buffer *b, size_t *capacity, size_t need, size_t entry,
                           vk_memory where, mlff_error *err);
/* The same without running the dispatches pending first: for a buffer that
 * they do not bind (the table of dispatches, from within vk_run). */
mlff_status vk_buffer_reserve(mlff_backend *be, vk_buffer *b, size_t *capacity, size_t need, size_t entry,
                              vk_memory where, mlff_error *err);
mlff_status vk_copy(mlff_backend *be, VkBuffer src, size_t src_offset, VkBuffer dst, size_t dst_offset,
                    size_t bytes, mlff_error *err);
mlff_status vk_staging_reserve(mlff_backend *be, size_t bytes, mlff_error *err);
/* Device to host, through the mapping or the staging buffer: dst is
 * written by the next submission (vk_run), which copies it after the
 * dispatches pending; vk_read submits at once. */
mlff_status vk_read_later(mlff_backend *be, const vk_buffer *b, size_t offset, void *dst, size_t bytes,
                          mlff_error *err);
mlff_status vk_read(mlff_backend *be, const vk_buffer *b, size_t offset, void *dst, size_t bytes, mlff_error *err);
/* For vk_run: the staged reads' copies recorded into be->transfer (*out
 * VK_NULL_HANDLE when none is staged); after the wait, every read
 * delivered where the submission succeeded (arrived), and the queue emptied. */
mlff_status vk_readbacks_record(mlff_backend *be, VkCommandBuffer *out, mlff_error *err);
void vk_readbacks_deliver(mlff_backend *be, int arrived);
mlff_status vk_submit_and_wait(mlff_backend *be, const VkCommandBuffer *cmds, uint32_t n, mlff_error *err);

/* vk_segments.c */
mlff_status vk_segments_init(mlff_backend *be, mlff_error *err);
/* After a submission: an error if a device sort since the last check met
 * a key out of range. */
mlff_status vk_segments_check(mlff_backend *be, mlff_error *err);
void vk_segments_free(mlff_backend *be);

/* vk_shader.c: the pipeline of a node (from memory, the caches, or shaderc). */
mlff_status vk_kernel_for(mlff_backend *be, const mlff_exec_node *n, VkPipeline *out, mlff_error *err);
/* The pipeline of a LINEAR_VJP's sums after a split K. */
mlff_status vk_split_sums_kernel(mlff_backend *be, const mlff_exec_node *n, VkPipeline *out, mlff_error *err);
/* A pipeline from GLSL, through the SPIR-V and pipeline caches. */
mlff_status vk_pipeline_from_source(mlff_backend *be, const char *source, VkPipeline *out, mlff_error *err);
/* vk_backend.c: an error when the validation layer reported anything since
 * its count was errors_before. */
mlff_status vk_validation_status(const mlff_backend *be, uint64_t errors_before, mlff_error *err);
/* vk_backend.c: the GEMM shader for dense layer n. */
vk_gemm vk_gemm_for(const mlff_backend *be, const mlff_exec_node *n);
/* The form CELU_MLP node n runs in (lowering.h). */
static inline mlff_mlp_kernel vk_mlp_kernel(const mlff_backend *be, const mlff_exec_node *n)
{
    return mlff_mlp_kernel_for(n, &be->tuning, be->mlp_wide_fits, MLFF_DIALECT_GLSL);
}
/* vk_mlp_layers.c: whether CELU_MLP or CELU_MLP_VJP node n runs a layer at
 * a time (the record's mlp=layers, or auto where its first layer makes
 * vulkan_mlp_layers_from_tiles tiles or more), and its dispatches so. */
int vk_mlp_layered(const mlff_backend *be, const mlff_exec_node *n);
mlff_status vk_add_mlp_layers(mlff_backend *be, const mlff_exec_node *n, mlff_error *err);
void vk_kernels_free(mlff_backend *be);

/* vk_pipeline_cache.c */
void vk_pipeline_cache_open(mlff_backend *be);
void vk_pipeline_cache_save(mlff_backend *be);
/* True when data (from disk) was made by this device's driver. */
int vk_pipeline_cache_data_matches(const VkPhysicalDeviceProperties *props, const void *data, size_t size);

/* vk_record.c: a node's dispatches join the pending list; vk_run records
 * that list, or replays a recording of the same, submits it with the reads
 * queued (vk_read_later), and waits. */
mlff_status vk_add_node(mlff_backend *be, const mlff_exec_node *n, VkPipeline pipeline,
                        const mlff_segments *const seg[MLFF_NODE_SEGMENTS], mlff_error *err);
/* vk_add_node for the node at `position` of a node list, its pipeline
 * looked up, or the dispatches it added last time at that position. */
mlff_status vk_add_node_at(mlff_backend *be, int64_t position, const mlff_exec_node *n,
                           const mlff_segments *const seg[MLFF_NODE_SEGMENTS], mlff_error *err);
mlff_status vk_run(mlff_backend *be, mlff_error *err);
/* Rows of be->profile after the ops': the host's phases, the device's
 * segment sorts and cell-list kernels. */
enum {
    VK_ROW_NODES = MLFF_OP_COUNT,
    VK_ROW_RECORD,
    VK_ROW_WAIT,
    VK_ROW_SORTS,
    VK_ROW_SPLIT_SUMS,
    VK_ROW_CELLS /* + mlff_cell_kernel */
};
/* d (pipeline, bindings, groups[1..2] set) over items work-items of
 * per_group each, split to respect maxComputeWorkGroupCount. */
mlff_status vk_add_dispatch(mlff_backend *be, vk_dispatch *d, int64_t items, uint64_t per_group, mlff_error *err);

/* vk_split_sums.c: the splits of K for dense node n in tiles of `tile`
 * (1: none), with the scratch for them reserved; the dispatch of their sums. */
mlff_status vk_gemm_splits(mlff_backend *be, const mlff_exec_node *n, int tile, int *splits, mlff_error *err);
mlff_status vk_add_split_sums(mlff_backend *be, const mlff_exec_node *n, int splits, mlff_error *err);

/* vk_cells.c: the cell-list kernels (backend.h) */
mlff_status vk_cell_kernel(mlff_backend *be, mlff_cell_kernel kernel, void *const *buffers, int64_t n_items,
                           mlff_error *err);
void vk_cells_free(mlff_backend *be);
void vk_recordings_free(mlff_backend *be);

/* vk_timestamps.c: MLFF_LOG=profile times each dispatch of a recording on
 * the device (nothing without events or timestamps). Begin after the
 * recording's first barrier, one after each dispatch, collect after the wait. */
mlff_status vk_timestamps_begin(mlff_backend *be, vk_recording *rec, int n_dispatches, mlff_error *err);
void vk_timestamp_after(const vk_recording *rec, int dispatch);
void vk_timestamps_collect(mlff_backend *be, const vk_recording *rec);
void vk_timestamps_free(mlff_backend *be, vk_recording *rec);

#endif
