/*
 * Running a node list: each node becomes one or more dispatches (split to
 * respect maxComputeWorkGroupCount), described by what they bind and launch.
 * A command buffer recorded for the same pipelines and buffers is replayed
 * (the reduce-overhead idea: an MD loop records once): the inputs change
 * through buffer contents, the sizes through the table of dispatches,
 * which holds each dispatch's values and work groups, is written before
 * every submission, and is read by the shaders (a uniform buffer at each
 * dispatch's slot: shaders/vulkan/dispatch.glsl) and by
 * vkCmdDispatchIndirect. So a new pair count replays too. Otherwise a
 * recording is made again, one whose descriptor sets serve if there is one
 * (the same buffers bound), else the least recently used: a descriptor set
 * per dispatch from its own pool, the dispatches recorded level by level
 * with a barrier between levels (schedule()).
 */
#include <stdlib.h>
#include <string.h>

#include "vk_internal.h"
#include "core/ds.h"

static VkBuffer buffer_of(const mlff_exec_tensor *t)
{
    return ((const vk_buffer *)t->buffer)->buffer;
}

static mlff_status push_dispatch(mlff_backend *be, const vk_dispatch *d, mlff_error *err)
{
    /* Reads queued see the buffers as they were when asked for. */
    mlff_status s = be->n_readbacks ? vk_run(be, err) : MLFF_OK;
    if (s != MLFF_OK)
        return s;
    if (!mlff_grow((void **)&be->pending, &be->cap_pending, be->n_pending + 1, sizeof *be->pending))
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    be->pending[be->n_pending++] = *d;
    return MLFF_OK;
}

/* A dense node's items: its rows, or with stacks (core/ops.h) its row
 * blocks' rows, the shaders finding each block's run (row_block in
 * prelude.glsl). */
static int64_t stacked_items(const mlff_exec_node *n, int64_t rows, int64_t block_rows)
{
    return mlff_op_stacks(&n->attrs) > 1 ? mlff_row_blocks(n, block_rows) * block_rows : rows;
}

mlff_status vk_add_node(mlff_backend *be, const mlff_exec_node *n, VkPipeline pipeline,
                        const mlff_segments *const seg[MLFF_NODE_SEGMENTS], mlff_error *err)
{
    const int64_t items = mlff_node_work_items(n);
    if (items == 0)
        return MLFF_OK;
    vk_dispatch d;
    memset(&d, 0, sizeof d); /* compared as bytes */
    d.pipeline = pipeline;
    d.row = (int32_t)n->op;
    d.bindings[VK_BIND_OUT] = buffer_of(&n->output);
    d.writes = 1u << VK_BIND_OUT; /* the inputs are readonly (prelude.glsl) */
    for (int k = 0; k < n->n_inputs; k++)
        d.bindings[VK_BIND_IN0 + k] = buffer_of(&n->inputs[k]);
    static const int offsets_at[MLFF_NODE_SEGMENTS] = {VK_BIND_SEG_OFF, VK_BIND_SEG2_OFF};
    for (int part = 0; seg && part < MLFF_NODE_SEGMENTS && seg[part]; part++) {
        const vk_segment_buffers *s = seg[part]->device;
        d.bindings[offsets_at[part]] = s->offsets.buffer;
        d.bindings[offsets_at[part] + 1] = s->items.buffer;
    }
    if (mlff_epilogue_reads_input(n->epilogue))
        d.bindings[VK_BIND_EPI] = buffer_of(&n->epilogue_input);

    const uint32_t *most = be->props.limits.maxComputeWorkGroupCount;
    const int gemm = mlff_op_is_gemm(n->op);
    const vk_gemm shader = gemm ? vk_gemm_for(be, n) : VK_GEMM_DIRECT;
    /* Dense layers: x the row blocks, y the column blocks, z the groups. */
    const int lanes = mlff_op_group_lanes(n->op, &n->attrs);
    const int tile = vk_gemm_tile(shader);
    int splits = 1; /* of K (lowering.h): then the output is the scratch of partial sums */
    const uint64_t per_group = !gemm ? (lanes ? (uint64_t)lanes : VK_GROUP_1D)
                               : shader == VK_GEMM_SUBGROUP ? VK_SG_ROWS
                               : shader == VK_GEMM_ROWS     ? MLFF_ROWS_GEMM_ROWS
                               : tile                       ? (uint64_t)tile
                                                            : VK_GEMM_TILE;
    if (gemm) {
        const int64_t groups = n->attrs.i[0];
        const int64_t cols = n->output.cols / groups;
        int64_t cols_per_group = shader == VK_GEMM_SUBGROUP ? VK_SG_COLS * VK_GROUP_1D
                                 : tile                       ? tile
                                                              : VK_GEMM_TILE;
        if (shader == VK_GEMM_ROWS) { /* linear_rows.kernel: its lanes an output */
            const int lanes = mlff_rows_gemm_lanes(cols, items, groups, be->tuning.vulkan_rows_few_groups);
            d.push[2] = (uint32_t)lanes;
            cols_per_group = MLFF_ROWS_GEMM_GROUP / lanes;
        }
        mlff_status s = vk_gemm_splits(be, n, tile, &splits, err);
        if (s != MLFF_OK)
            return s;
        if (splits > 1)
            d.bindings[VK_BIND_OUT] = be->split_sums.buffer;
        d.groups[1] = (uint32_t)((cols + cols_per_group - 1) / cols_per_group);
        d.groups[2] = (uint32_t)(groups * splits);
        if (d.groups[1] > most[1] || d.groups[2] > most[2])
            return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "vulkan: a dense layer of %lld x %lld is too wide for the device",
                             (long long)groups, (long long)cols);
    } else if (vk_mlp_layered(be, n)) {
        return vk_add_mlp_layers(be, n, err);
    } else if (mlff_op_is_mlp(n->op)) {
        /* x the row blocks, y the groups (celu_mlp.comp). */
        d.groups[1] = (uint32_t)n->attrs.i[0];
        d.groups[2] = 1;
        if (d.groups[1] > most[1])
            return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "vulkan: %u groups of layers are too many for the device",
                             d.groups[1]);
        const int64_t rows = mlff_mlp_node_rows(n, MLFF_DIALECT_GLSL, vk_mlp_kernel(be, n));
        return vk_add_dispatch(be, &d, stacked_items(n, items, rows), (uint64_t)rows, err);
    } else if (mlff_op_sums_in_lanes(n->op)) {
        /* Its outputs' lanes (lowering.h): pc.n_items counts the invocations. */
        const int sum_lanes = mlff_sum_lanes(n, &be->tuning);
        d.push[2] = (uint32_t)sum_lanes;
        d.groups[1] = d.groups[2] = 1;
        return vk_add_dispatch(be, &d, items * sum_lanes, MLFF_SUM_GROUP, err);
    } else {
        d.groups[1] = d.groups[2] = 1;
    }
    mlff_status s = vk_add_dispatch(be, &d, gemm ? stacked_items(n, items, (int64_t)per_group) : items, per_group, err);
    return s == MLFF_OK && splits > 1 ? vk_add_split_sums(be, n, splits, err) : s;
}

static void segment_buffers(const mlff_segments *const seg[MLFF_NODE_SEGMENTS], VkBuffer out[2 * MLFF_NODE_SEGMENTS])
{
    for (int part = 0; part < MLFF_NODE_SEGMENTS; part++) {
        const vk_segment_buffers *s = seg && seg[part] ? seg[part]->device : NULL;
        out[2 * part] = s ? s->offsets.buffer : VK_NULL_HANDLE;
        out[2 * part + 1] = s ? s->items.buffer : VK_NULL_HANDLE;
    }
}

/* A node that is, byte for byte, the one at its position last time, with
 * the same segments and no buffer made again since (the epoch), adds the
 * same dispatches: an MD loop's node list then costs a comparison a node
 * instead of a signature hashed, a pipeline looked up and the work groups
 * worked out again. */
mlff_status vk_add_node_at(mlff_backend *be, int64_t position, const mlff_exec_node *n,
                           const mlff_segments *const seg[MLFF_NODE_SEGMENTS], mlff_error *err)
{
    VkBuffer segments[2 * MLFF_NODE_SEGMENTS];
    segment_buffers(seg, segments);
    vk_node_memo *m = position < be->n_memos ? &be->memos[position] : NULL;
    if (m && m->valid && m->epoch == be->epoch && memcmp(m->segments, segments, sizeof segments) == 0 &&
        memcmp(&m->node, n, sizeof *n) == 0) {
        mlff_status s = MLFF_OK;
        for (int k = 0; k < m->n_dispatches && s == MLFF_OK; k++)
            s = push_dispatch(be, &m->dispatches[k], err);
        return s;
    }
    if (position >= be->n_memos) {
        const int64_t had = be->n_memos;
        if (!mlff_grow((void **)&be->memos, &be->n_memos, position + 1, sizeof *be->memos))
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
        memset(be->memos + had, 0, (size_t)(be->n_memos - had) * sizeof *be->memos);
    }
    m = &be->memos[position];
    m->valid = 0;
    VkPipeline pipeline;
    mlff_status s = vk_kernel_for(be, n, &pipeline, err);
    const uint64_t runs = be->runs;
    const int first = be->n_pending;
    if (s == MLFF_OK)
        s = vk_add_node(be, n, pipeline, seg, err);
    const int added = be->n_pending - first;
    /* Kept only when this call's dispatches are all still pending. */
    if (s != MLFF_OK || be->runs != runs ||
        !mlff_grow((void **)&m->dispatches, &m->capacity, added, sizeof *m->dispatches))
        return s;
    if (added > 0)
        memcpy(m->dispatches, be->pending + first, (size_t)added * sizeof *m->dispatches);
    m->n_dispatches = added;
    m->node = *n;
    memcpy(m->segments, segments, sizeof segments);
    m->epoch = be->epoch;
    m->valid = 1;
    return MLFF_OK;
}

mlff_status vk_add_dispatch(mlff_backend *be, vk_dispatch *d, int64_t items, uint64_t per_group, mlff_error *err)
{
    if (items > UINT32_MAX)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "vulkan: %lld work-items in one dispatch; split the batch",
                         (long long)items);
    const uint32_t most = be->props.limits.maxComputeWorkGroupCount[0];
    const uint64_t groups_x = ((uint64_t)items + per_group - 1) / per_group;
    d->push[0] = (uint32_t)items;
    mlff_status s = MLFF_OK;
    for (uint64_t first = 0; first < groups_x && s == MLFF_OK; first += most) {
        const uint64_t count = groups_x - first < most ? groups_x - first : most;
        d->groups[0] = (uint32_t)count;
        d->push[1] = (uint32_t)(first * per_group);
        s = push_dispatch(be, d, err);
    }
    return s;
}

static mlff_status ensure_pool(mlff_backend *be, vk_recording *rec, int sets, mlff_error *err)
{
    VkResult r;
    if (rec->pool && rec->pool_sets >= sets) {
        r = vkResetDescriptorPool(be->device, rec->pool, 0);
        return r == VK_SUCCESS ? MLFF_OK : vk_fail(err, r, "vkResetDescriptorPool");
    }
    if (rec->pool)
        vkDestroyDescriptorPool(be->device, rec->pool, NULL);
    rec->pool = VK_NULL_HANDLE;
    rec->pool_sets = 0;
    const int capacity = (int)mlff_grown_capacity(0, (size_t)sets);
    const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, (uint32_t)capacity * VK_BINDINGS},
                                          {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, (uint32_t)capacity}};
    const VkDescriptorPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = (uint32_t)capacity,
        .poolSizeCount = 2,
        .pPoolSizes = sizes,
    };
    if ((r = vkCreateDescriptorPool(be->device, &info, NULL, &rec->pool)) != VK_SUCCESS) {
        rec->pool = VK_NULL_HANDLE;
        return vk_fail(err, r, "vkCreateDescriptorPool");
    }
    rec->pool_sets = capacity;
    return MLFF_OK;
}

/* One descriptor set per dispatch, written in one call. */
static mlff_status write_sets(mlff_backend *be, vk_recording *rec, const vk_dispatch *list, int n,
                              VkDescriptorSet *sets, mlff_error *err)
{
    mlff_status s = ensure_pool(be, rec, n, err);
    if (s != MLFF_OK)
        return s;
    if (be->cap_layouts < n) {
        VkDescriptorSetLayout *l = realloc(be->layouts, (size_t)n * sizeof *l);
        if (!l)
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
        for (int k = be->cap_layouts; k < n; k++)
            l[k] = be->set_layout;
        be->layouts = l;
        be->cap_layouts = n;
    }
    const VkDescriptorSetAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = rec->pool,
        .descriptorSetCount = (uint32_t)n,
        .pSetLayouts = be->layouts,
    };
    VkResult r = vkAllocateDescriptorSets(be->device, &alloc, sets);
    if (r != VK_SUCCESS)
        return vk_fail(err, r, "vkAllocateDescriptorSets");
    VkWriteDescriptorSet *writes = malloc((size_t)n * VK_LAYOUT_BINDINGS * sizeof *writes);
    VkDescriptorBufferInfo *infos = malloc((size_t)n * VK_LAYOUT_BINDINGS * sizeof *infos);
    if (!writes || !infos) {
        free(writes);
        free(infos);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    }
    uint32_t count = 0;
    for (int k = 0; k < n; k++)
        for (uint32_t b = 0; b < VK_LAYOUT_BINDINGS; b++) {
            const int slot = b == VK_BIND_DISPATCH; /* at the dispatch's offset (record) */
            const VkBuffer buffer = slot ? be->table.buffer : list[k].bindings[b];
            if (!buffer)
                continue; /* not declared by that shader */
            infos[count] = (VkDescriptorBufferInfo){buffer, 0, slot ? VK_PUSH_WORDS * sizeof(uint32_t) : VK_WHOLE_SIZE};
            writes[count] = (VkWriteDescriptorSet){
                .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                .dstSet = sets[k],
                .dstBinding = b,
                .descriptorCount = 1,
                .descriptorType = slot ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                .pBufferInfo = &infos[count],
            };
            count++;
        }
    vkUpdateDescriptorSets(be->device, count, writes, 0, NULL);
    free(writes);
    free(infos);
    return MLFF_OK;
}

static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst)
{
    const VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src, .dstAccessMask = dst};
    vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, NULL, 0, NULL);
}

/* A buffer's last uses in a schedule: one past the deepest level that
 * wrote it, and that read or wrote it (0: none yet). */
typedef struct buffer_use {
    VkBuffer buffer;
    int written, touched;
} buffer_use;

static buffer_use *use_of(buffer_use *uses, int *n_uses, VkBuffer b)
{
    for (int k = 0; k < *n_uses; k++)
        if (uses[k].buffer == b)
            return &uses[k];
    uses[*n_uses] = (buffer_use){b, 0, 0};
    return &uses[(*n_uses)++];
}

static int writes_binding(const vk_dispatch *d, int b)
{
    return d->writes == 0 || (d->writes >> b & 1u); /* a write may read too (an accumulation) */
}

/*
 * The order the dispatches are recorded in, level by level (order[], then
 * each position's level): a dispatch's level is one past the deepest one
 * it depends on, where it reads a buffer written or writes one read or
 * written. Independent work (the self energies, the segment sorts, the
 * energy's sum beside the gradient's first layer) so runs beside the
 * longest chain wherever it stands in the node list, one barrier a level.
 */
static mlff_status schedule(const vk_dispatch *list, int n, int *order, mlff_error *err)
{
    int *level = malloc((size_t)n * sizeof *level), *count = calloc((size_t)n + 1, sizeof *count);
    buffer_use *uses = malloc((size_t)n * VK_BINDINGS * sizeof *uses);
    mlff_status s =
        level && count && uses ? MLFF_OK : mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    int n_uses = 0;
    for (int k = 0; k < n && s == MLFF_OK; k++) {
        buffer_use *bound[VK_BINDINGS] = {NULL};
        int after = 0;
        for (int b = 0; b < VK_BINDINGS; b++)
            if (list[k].bindings[b]) {
                bound[b] = use_of(uses, &n_uses, list[k].bindings[b]);
                const int dep = writes_binding(&list[k], b) ? bound[b]->touched : bound[b]->written;
                after = dep > after ? dep : after;
            }
        level[k] = after;
        count[after + 1]++;
        for (int b = 0; b < VK_BINDINGS; b++)
            if (bound[b]) {
                if (writes_binding(&list[k], b) && bound[b]->written < after + 1)
                    bound[b]->written = after + 1;
                if (bound[b]->touched < after + 1)
                    bound[b]->touched = after + 1;
            }
    }
    for (int l = 1; l <= n && s == MLFF_OK; l++)
        count[l] += count[l - 1];
    for (int k = 0; k < n && s == MLFF_OK; k++) {
        const int at = count[level[k]]++;
        order[at] = k;
        order[n + at] = level[k];
    }
    free(level);
    free(count);
    free(uses);
    return s;
}

/* True when each pending dispatch binds the buffers that rec's does (and
 * none was freed since): its descriptor sets serve as they are. The usual
 * case of a list recorded again: another pipeline (a GEMM's form chosen
 * for the new rows), the same buffers. */
static int same_bindings(const mlff_backend *be, const vk_recording *rec)
{
    if (!rec->commands || rec->n_dispatches != be->n_pending || rec->epoch != be->epoch)
        return 0;
    for (int k = 0; k < be->n_pending; k++)
        if (memcmp(rec->dispatches[k].bindings, be->pending[k].bindings, sizeof rec->dispatches[k].bindings) != 0)
            return 0;
    return 1;
}

/* True when rec runs the pending dispatches, whatever their sizes: the
 * same pipelines, buffers and profile rows (the sizes are in the table). */
static int same_work(const mlff_backend *be, const vk_recording *rec)
{
    if (!same_bindings(be, rec))
        return 0;
    for (int k = 0; k < be->n_pending; k++) {
        const vk_dispatch *a = &rec->dispatches[k], *b = &be->pending[k];
        if (a->pipeline != b->pipeline || a->writes != b->writes || a->row != b->row)
            return 0;
    }
    return 1;
}

/* Room in the table for the pending dispatches (a new buffer leaves every
 * recording's descriptor sets stale: vk_buffer_reserve's new epoch). */
static mlff_status reserve_table(mlff_backend *be, mlff_error *err)
{
    return be->n_pending == 0 ? MLFF_OK
                              : vk_buffer_reserve(be, &be->table, &be->table_slots, (size_t)be->n_pending,
                                                  be->table_slot, VK_MEMORY_MAPPED, err);
}

/* The pending dispatches' values and work groups, into the table. */
static void write_table(mlff_backend *be)
{
    for (int k = 0; k < be->n_pending; k++) {
        uint32_t *slot = (uint32_t *)((char *)be->table.mapped + (size_t)k * be->table_slot);
        memcpy(slot, be->pending[k].push, sizeof be->pending[k].push);
        memcpy(slot + VK_PUSH_WORDS, be->pending[k].groups, sizeof be->pending[k].groups);
    }
}

static mlff_status record(mlff_backend *be, vk_recording *rec, mlff_error *err)
{
    const int n = be->n_pending;
    const vk_dispatch *list = be->pending;
    VkResult r;
    if (!rec->commands) {
        const VkCommandBufferAllocateInfo alloc = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
            .commandPool = be->command_pool,
            .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            .commandBufferCount = 1,
        };
        if ((r = vkAllocateCommandBuffers(be->device, &alloc, &rec->commands)) != VK_SUCCESS) {
            rec->commands = VK_NULL_HANDLE;
            return vk_fail(err, r, "vkAllocateCommandBuffers");
        }
    }
    const int same_sets = same_bindings(be, rec);
    rec->n_dispatches = 0; /* invalid until recorded */
    arrsetlen(rec->dispatches, n);
    arrsetlen(rec->sets, n);
    arrsetlen(rec->order, 2 * n);
    VkDescriptorSet *sets = rec->sets;
    mlff_status s = n && !same_sets ? write_sets(be, rec, list, n, sets, err) : MLFF_OK;
    if (s == MLFF_OK && n)
        s = schedule(list, n, rec->order, err);
    const VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if (s == MLFF_OK && (r = vkBeginCommandBuffer(rec->commands, &begin)) != VK_SUCCESS)
        s = vk_fail(err, r, "vkBeginCommandBuffer");
    if (s != MLFF_OK)
        return s;
    VkCommandBuffer cmd = rec->commands;
    /* Host writes (the table among them) and copies before this submission,
     * then each dispatch after those it depends on, then the host and
     * copies after the last. */
    barrier(cmd, VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if ((s = vk_timestamps_begin(be, rec, n, err)) != MLFF_OK) {
        vkEndCommandBuffer(cmd);
        return s;
    }
    VkPipeline bound = VK_NULL_HANDLE;
    for (int at = 0; at < n; at++) {
        const int k = rec->order[at];
        if (at > 0 && rec->order[n + at] != rec->order[n + at - 1])
            barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        if (list[k].pipeline != bound)
            vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, bound = list[k].pipeline);
        const uint32_t slot = (uint32_t)((size_t)k * be->table_slot);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, be->pipeline_layout, 0, 1, &sets[k], 1, &slot);
        vkCmdDispatchIndirect(cmd, be->table.buffer, slot + VK_PUSH_WORDS * sizeof(uint32_t));
        vk_timestamp_after(rec, at);
    }
    barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT);
    if ((r = vkEndCommandBuffer(cmd)) != VK_SUCCESS)
        return vk_fail(err, r, "vkEndCommandBuffer");
    memcpy(rec->dispatches, list, (size_t)n * sizeof *list);
    rec->n_dispatches = n;
    rec->epoch = be->epoch;
    be->recordings_made++;
    return MLFF_OK;
}

static vk_recording *matching(mlff_backend *be)
{
    if (!be->tuning.vulkan_replay)
        return NULL;
    for (int k = 0; k < VK_RECORDINGS; k++) {
        vk_recording *rec = &be->recordings[k];
        if (same_work(be, rec))
            return rec;
    }
    return NULL;
}

/* The recording of the dispatches pending: a match, replayed, else one
 * recorded now (in a slot whose descriptor sets serve, else the least
 * recently used); NULL when nothing is pending. */
static mlff_status recording_of_pending(mlff_backend *be, vk_recording **out, mlff_error *err)
{
    *out = NULL;
    if (be->n_pending == 0)
        return MLFF_OK;
    vk_recording *rec = matching(be);
    if (rec) {
        be->replays++;
        *out = rec;
        return MLFF_OK;
    }
    rec = &be->recordings[0];
    for (int k = 1; k < VK_RECORDINGS; k++)
        if (be->recordings[k].last_use < rec->last_use)
            rec = &be->recordings[k];
    for (int k = 0; k < VK_RECORDINGS; k++)
        if (same_bindings(be, &be->recordings[k]))
            rec = &be->recordings[k];
    mlff_status s = record(be, rec, err);
    if (s == MLFF_OK)
        *out = rec;
    return s;
}

mlff_status vk_run(mlff_backend *be, mlff_error *err)
{
    if (be->n_pending == 0 && be->n_readbacks == 0)
        return MLFF_OK;
    be->runs++;
    const double start = be->profile.enabled ? mlff_seconds() : 0;
    VkCommandBuffer cmds[2];
    uint32_t n_cmds = 0;
    vk_recording *rec = NULL;
    mlff_status s = reserve_table(be, err);
    if (s == MLFF_OK)
        s = recording_of_pending(be, &rec, err);
    if (s != MLFF_OK) {
        vk_readbacks_deliver(be, 0);
        return s;
    }
    if (rec) {
        rec->last_use = ++be->clock;
        write_table(be);
        cmds[n_cmds++] = rec->commands;
    }
    be->n_pending = 0;
    /* The reads queued come in the same submission, after the dispatches. */
    VkCommandBuffer copies;
    s = vk_readbacks_record(be, &copies, err);
    if (s == MLFF_OK && copies)
        cmds[n_cmds++] = copies;
    const double wait_start = be->profile.enabled ? mlff_seconds() : 0;
    if (s == MLFF_OK && n_cmds)
        s = vk_submit_and_wait(be, cmds, n_cmds, err);
    vk_readbacks_deliver(be, s == MLFF_OK);
    if (be->profile.enabled)
        mlff_profile_add(&be->profile, VK_ROW_RECORD, "host: recorded or matched", wait_start - start);
    if (rec && rec->timestamps && s == MLFF_OK) /* the dispatches' rows add up to the wait */
        vk_timestamps_collect(be, rec);
    else if (be->profile.enabled)
        mlff_profile_add(&be->profile, VK_ROW_WAIT, "host: submitted, waited for", mlff_seconds() - wait_start);
    return s;
}

void vk_recordings_free(mlff_backend *be)
{
    for (int k = 0; k < VK_RECORDINGS; k++) {
        vk_recording *rec = &be->recordings[k];
        vk_timestamps_free(be, rec);
        if (rec->pool)
            vkDestroyDescriptorPool(be->device, rec->pool, NULL);
        if (rec->commands)
            vkFreeCommandBuffers(be->device, be->command_pool, 1, &rec->commands);
        arrfree(rec->dispatches);
        arrfree(rec->sets);
        arrfree(rec->order);
        memset(rec, 0, sizeof *rec);
    }
    vk_buffer_destroy(be, &be->table);
    be->table_slots = 0;
    for (int64_t k = 0; k < be->n_memos; k++)
        free(be->memos[k].dispatches);
    free(be->memos);
    be->memos = NULL;
    be->n_memos = 0;
    free(be->pending);
    free(be->layouts);
    be->pending = NULL;
    be->layouts = NULL;
    be->n_pending = be->cap_layouts = 0;
    be->cap_pending = 0;
}
