/* MLFF_LOG=profile on OpenCL (core/profile.h): every kernel launch of a call
 * gets an event; after the queue finished, each event's device time goes to
 * its row, and the rest of the call's span, where the device waited for the
 * host, to "device idle". */
#include <stdlib.h>

#include "cl_internal.h"

cl_event *cl_profile_event(mlff_backend *be, int row)
{
    if (!be->profile.events)
        return NULL;
    if (be->n_events == be->cap_events) {
        const int cap = be->cap_events ? 2 * be->cap_events : 256;
        cl_event *events = realloc(be->events, (size_t)cap * sizeof *events);
        if (events)
            be->events = events;
        int *rows = events ? realloc(be->event_rows, (size_t)cap * sizeof *rows) : NULL;
        if (!rows)
            return NULL; /* this kernel goes unmeasured */
        be->event_rows = rows;
        be->cap_events = cap;
    }
    be->event_rows[be->n_events] = row;
    be->events[be->n_events] = NULL;
    return &be->events[be->n_events++];
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
    for (int e = 0; e < be->n_events; e++) {
        cl_ulong start, end;
        if (!be->events[e])
            continue;
        if (clGetEventProfilingInfo(be->events[e], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL) ==
                CL_SUCCESS &&
            clGetEventProfilingInfo(be->events[e], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) ==
                CL_SUCCESS) {
            const double seconds = 1e-9 * (double)(end - start);
            mlff_profile_add(&be->profile, be->event_rows[e], row_name(be->event_rows[e]), seconds);
            busy += seconds;
            first = first && first < start ? first : start;
            last = last > end ? last : end;
        }
        clReleaseEvent(be->events[e]);
    }
    if (be->n_events > 0)
        mlff_profile_add(&be->profile, CL_ROW_IDLE, "device idle (waits for host)",
                         1e-9 * (double)(last - first) - busy);
    be->n_events = 0;
}

void cl_profile_free(mlff_backend *be)
{
    mlff_profile_print(&be->profile);
    for (int e = 0; e < be->n_events; e++)
        if (be->events[e])
            clReleaseEvent(be->events[e]);
    free(be->events);
    free(be->event_rows);
}
