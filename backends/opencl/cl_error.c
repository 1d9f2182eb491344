/* OpenCL error codes as words, and as mlff statuses. */
#include "cl_internal.h"

const char *cl_error_name(cl_int code)
{
    switch (code) {
#define NAME(c) case c: return #c
    NAME(CL_SUCCESS);
    NAME(CL_DEVICE_NOT_FOUND);
    NAME(CL_DEVICE_NOT_AVAILABLE);
    NAME(CL_COMPILER_NOT_AVAILABLE);
    NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    NAME(CL_OUT_OF_RESOURCES);
    NAME(CL_OUT_OF_HOST_MEMORY);
    NAME(CL_BUILD_PROGRAM_FAILURE);
    NAME(CL_INVALID_VALUE);
    NAME(CL_INVALID_DEVICE);
    NAME(CL_INVALID_BINARY);
    NAME(CL_INVALID_BUILD_OPTIONS);
    NAME(CL_INVALID_PROGRAM);
    NAME(CL_INVALID_PROGRAM_EXECUTABLE);
    NAME(CL_INVALID_KERNEL_NAME);
    NAME(CL_INVALID_KERNEL);
    NAME(CL_INVALID_ARG_INDEX);
    NAME(CL_INVALID_ARG_VALUE);
    NAME(CL_INVALID_ARG_SIZE);
    NAME(CL_INVALID_KERNEL_ARGS);
    NAME(CL_INVALID_WORK_DIMENSION);
    NAME(CL_INVALID_WORK_GROUP_SIZE);
    NAME(CL_INVALID_WORK_ITEM_SIZE);
    NAME(CL_INVALID_GLOBAL_OFFSET);
    NAME(CL_INVALID_MEM_OBJECT);
    NAME(CL_INVALID_BUFFER_SIZE);
    NAME(CL_INVALID_COMMAND_QUEUE);
    NAME(CL_INVALID_CONTEXT);
    NAME(CL_INVALID_OPERATION);
    NAME(CL_INVALID_GLOBAL_WORK_SIZE);
    NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET);
    NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
#undef NAME
    default:
        return "unknown OpenCL error";
    }
}

mlff_status cl_fail(mlff_error *err, cl_int code, const char *what)
{
    /* Out of device memory is the caller's to handle (a smaller batch), not a crash. */
    const int oom = code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES ||
                    code == CL_OUT_OF_HOST_MEMORY || code == CL_INVALID_BUFFER_SIZE;
    return mlff_fail(err, oom ? MLFF_ERROR_OUT_OF_MEMORY : MLFF_ERROR_DEVICE, "opencl: %s: %s (%d)%s",
                     what, cl_error_name(code), (int)code,
                     oom ? ": the device ran out of memory; split the batch" : "");
}
