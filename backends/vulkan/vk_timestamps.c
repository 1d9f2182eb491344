/*
 * MLFF_LOG=profile on Vulkan (core/profile.h): a recording writes a
 * timestamp before its first dispatch and one after each; after the wait,
 * the span from one to the next goes to the row of the dispatch that ends
 * it, in the order recorded. Dispatches that run side by side (no barrier
 * between them) share their span, so a row holds the time its dispatches
 * added to the run, not their own length. Replays write the same
 * timestamps again.
 */
#include <stdlib.h>

#include "vk_internal.h"

static const char *row_name(int row)
{
    if (row >= VK_ROW_CELLS)
        return mlff_cell_kernel_name((mlff_cell_kernel)(row - VK_ROW_CELLS));
    return row == VK_ROW_SORTS        ? "segment sorts"
           : row == VK_ROW_SPLIT_SUMS ? "gemm split sums"
                                      : mlff_op_get((mlff_op)row)->name;
}

mlff_status vk_timestamps_begin(mlff_backend *be, vk_recording *rec, int n_dispatches, mlff_error *err)
{
    const uint32_t count = (uint32_t)n_dispatches + 1;
    if (!be->profile.events || !be->timestamp_bits) {
        vk_timestamps_free(be, rec);
        return MLFF_OK;
    }
    if (rec->timestamp_capacity < count) {
        vk_timestamps_free(be, rec);
        const VkQueryPoolCreateInfo info = {
            .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            .queryType = VK_QUERY_TYPE_TIMESTAMP,
            .queryCount = (uint32_t)mlff_grown_capacity(0, count),
        };
        VkResult r = vkCreateQueryPool(be->device, &info, NULL, &rec->timestamps);
        if (r != VK_SUCCESS) {
            rec->timestamps = VK_NULL_HANDLE;
            return vk_fail(err, r, "vkCreateQueryPool");
        }
        rec->timestamp_capacity = info.queryCount;
    }
    vkCmdResetQueryPool(rec->commands, rec->timestamps, 0, count);
    vkCmdWriteTimestamp(rec->commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, rec->timestamps, 0);
    return MLFF_OK;
}

void vk_timestamp_after(const vk_recording *rec, int dispatch)
{
    if (rec->timestamps)
        vkCmdWriteTimestamp(rec->commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, rec->timestamps,
                            (uint32_t)dispatch + 1);
}

void vk_timestamps_collect(mlff_backend *be, const vk_recording *rec)
{
    const int n = rec->n_dispatches;
    if (!rec->timestamps || n == 0)
        return;
    uint64_t *ticks = malloc(((size_t)n + 1) * sizeof *ticks);
    if (!ticks)
        return; /* this run goes unmeasured */
    if (vkGetQueryPoolResults(be->device, rec->timestamps, 0, (uint32_t)n + 1, ((size_t)n + 1) * sizeof *ticks,
                              ticks, sizeof *ticks, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS) {
        const uint64_t mask = be->timestamp_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << be->timestamp_bits) - 1;
        const double tick = 1e-9 * (double)be->props.limits.timestampPeriod;
        for (int k = 0; k < n; k++) {
            const int row = rec->dispatches[rec->order[k]].row;
            mlff_profile_add(&be->profile, row, row_name(row), tick * (double)((ticks[k + 1] - ticks[k]) & mask));
        }
    }
    free(ticks);
}

void vk_timestamps_free(mlff_backend *be, vk_recording *rec)
{
    if (rec->timestamps)
        vkDestroyQueryPool(be->device, rec->timestamps, NULL);
    rec->timestamps = VK_NULL_HANDLE;
    rec->timestamp_capacity = 0;
}
