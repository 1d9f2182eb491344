/* MLFF_LOG=profile on OpenCL (core/profile.h): every kernel launch of a call
 * gets an event; after the queue finished, each event's device time goes to
 * its row, and the rest of the call's span, where the device waited for the
 * host, to "device idle". */
#include <stdlib.h>

#include "cl_internal.h"
#include "core/ds.h"

cl_event *cl_profile_event(mlff_backend *be, int row)
{
    if (!be->profile.events)
        return NULL;
    const struct cl_profiled e = {NULL, row};
    arrput(be->events, e);
    return &arrlast(be->events).event;
}

static const char *row_name(int row)
{
    if (row >= CL_ROW_CELLS)
        return mlff_cell_kernel_name((mlff_cell_kernel)(row - CL_ROW_CELLS));
    switch (row) {
    case CL_ROW_CLBLAST:
        return "gemm (CLBlast)";
    case CL_ROW_EPILOGUE:
        return "gemm epilogue";
    case CL_ROW_SPLIT_SUMS:
        return "gemm split sums";
    case CL_ROW_DEVICE_SORTS:
        return "segment sorts";
    default:
        return mlff_op_get((mlff_op)row)->name;
    }
}

void cl_profile_collect(mlff_backend *be)
{
    cl_ulong first = 0, last = 0;
    double busy = 0;
    const int n = (int)arrlen(be->events);
    for (int e = 0; e < n; e++) {
        cl_ulong start, end;
        const cl_event event = be->events[e].event;
        if (!event)
            continue;
        if (clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) == CL_SUCCESS) {
            const double seconds = 1e-9 * (double)(end - start);
            mlff_profile_add(&be->profile, be->events[e].row, row_name(be->events[e].row), seconds);
            busy += seconds;
            first = first && first < start ? first : start;
            last = last > end ? last : end;
        }
        clReleaseEvent(event);
    }
    if (n > 0)
        mlff_profile_add(&be->profile, CL_ROW_IDLE, "device idle (waits for host)",
                         1e-9 * (double)(last - first) - busy);
    mlff_arrclear(be->events);
}

void cl_profile_free(mlff_backend *be)
{
    mlff_profile_print(&be->profile);
    for (int e = 0; e < (int)arrlen(be->events); e++)
        if (be->events[e].event)
            clReleaseEvent(be->events[e].event);
    arrfree(be->events);
}
