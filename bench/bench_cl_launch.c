/*
 * What one kernel launch costs an OpenCL driver, by the kernel's arguments:
 * the host's time in clEnqueueNDRangeKernel and the time to the end of a
 * run of launches (clFinish), for trivial kernels of 1 to 16 buffer
 * arguments, distinct buffers or one buffer bound to every argument. The
 * graph's launch count and arguments are what an evaluation of a small
 * molecule pays for on NVIDIA's OpenCL (bench/RESULTS.md). Not a test.
 *
 *   bench_cl_launch [gpu|cpu] [launches]
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define MOST_BUFFERS 16

static cl_device_id pick_device(cl_device_type type)
{
    cl_platform_id platforms[8];
    cl_uint n_platforms = 0;
    if (clGetPlatformIDs(8, platforms, &n_platforms) != CL_SUCCESS)
        return NULL;
    for (cl_uint p = 0; p < n_platforms; p++) {
        cl_device_id device;
        cl_uint n = 0;
        if (clGetDeviceIDs(platforms[p], type, 1, &device, &n) == CL_SUCCESS && n > 0)
            return device;
    }
    return NULL;
}

/* A kernel of `buffers` global float arguments (it writes the first), then
 * `offsets` longs (byte offsets into the first buffer) and a long. */
static cl_kernel make_kernel(cl_context ctx, cl_device_id dev, int buffers, int offsets, int local_memory)
{
    char src[4096];
    int len = snprintf(src, sizeof src, "kernel %svoid k(",
                       local_memory ? "__attribute__((reqd_work_group_size(64, 1, 1))) " : "");
    for (int b = 0; b < buffers; b++)
        len += snprintf(src + len, sizeof src - len, "global float *b%d, ", b);
    for (int o = 0; o < offsets; o++)
        len += snprintf(src + len, sizeof src - len, "long o%d, ", o);
    len += snprintf(src + len, sizeof src - len, "long n) { long i = get_global_id(0);%s if (i < n) b0[i] += 1.0f",
                    local_memory ? " local float t[64]; t[get_local_id(0)] = i; barrier(CLK_LOCAL_MEM_FENCE);"
                                   " b0[i] = t[63 - get_local_id(0)];"
                                 : "");
    for (int b = 1; b < buffers; b++)
        len += snprintf(src + len, sizeof src - len, " + b%d[i]", b);
    for (int o = 0; o < offsets; o++)
        len += snprintf(src + len, sizeof src - len, " + ((global float *)((global char *)b0 + o%d))[i]", o);
    snprintf(src + len, sizeof src - len, "; }\n");
    const char *p = src;
    cl_int rc;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &p, NULL, &rc);
    if (rc != CL_SUCCESS || clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS)
        return NULL;
    cl_kernel k = clCreateKernel(prog, "k", &rc);
    clReleaseProgram(prog);
    return rc == CL_SUCCESS ? k : NULL;
}

typedef struct variant {
    const char *name;
    int buffers, distinct, set_every_launch, local, offsets, host_no_access, two_dims, local_memory;
} variant;

static int set_args(cl_kernel k, const variant *v, cl_mem *mems, cl_long n)
{
    cl_int rc = CL_SUCCESS;
    const cl_long zero = 0;
    for (int b = 0; b < v->buffers && rc == CL_SUCCESS; b++)
        rc = clSetKernelArg(k, (cl_uint)b, sizeof(cl_mem), &mems[v->distinct ? b : 0]);
    for (int o = 0; o < v->offsets && rc == CL_SUCCESS; o++)
        rc = clSetKernelArg(k, (cl_uint)(v->buffers + o), sizeof zero, &zero);
    if (rc == CL_SUCCESS)
        rc = clSetKernelArg(k, (cl_uint)(v->buffers + v->offsets), sizeof n, &n);
    return rc == CL_SUCCESS;
}

int main(int argc, char **argv)
{
    const int gpu = argc < 2 || strcmp(argv[1], "cpu") != 0;
    const int launches = argc > 2 ? atoi(argv[2]) : 2000;
    cl_device_id dev = pick_device(gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU);
    if (!dev) {
        fprintf(stderr, "bench_cl_launch: no OpenCL %s device\n", gpu ? "GPU" : "CPU");
        return 1;
    }
    char name[256], driver[128];
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof driver, driver, NULL);
    cl_int rc;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &rc);
    if (rc != CL_SUCCESS)
        return fprintf(stderr, "bench_cl_launch: no queue (%d)\n", rc), 1;
    const cl_long n = 256;
    cl_mem plain[MOST_BUFFERS], no_access[MOST_BUFFERS];
    for (int b = 0; b < MOST_BUFFERS; b++) {
        plain[b] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)n * sizeof(float), NULL, &rc);
        no_access[b] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS, (size_t)n * sizeof(float),
                                      NULL, &rc);
    }

    static const variant variants[] = {
        {.name = "1 buffer", .buffers = 1, .distinct = 1, .local = 1},
        {.name = "4 buffers", .buffers = 4, .distinct = 1, .local = 1},
        {.name = "8 buffers", .buffers = 8, .distinct = 1, .local = 1},
        {.name = "12 buffers", .buffers = 12, .distinct = 1, .local = 1},
        {.name = "16 buffers", .buffers = 16, .distinct = 1, .local = 1},
        {.name = "12 args, one buffer", .buffers = 12, .local = 1},
        {.name = "12 buffers, set each launch", .buffers = 12, .distinct = 1, .set_every_launch = 1, .local = 1},
        {.name = "12 buffers, no local size", .buffers = 12, .distinct = 1},
        {.name = "12 buffers, host no access", .buffers = 12, .distinct = 1, .local = 1, .host_no_access = 1},
        {.name = "1 buffer, 12 offsets", .buffers = 1, .distinct = 1, .local = 1, .offsets = 12},
        {.name = "1 buffer, 24 offsets", .buffers = 1, .distinct = 1, .local = 1, .offsets = 24},
        {.name = "1 buffer, two dimensions", .buffers = 1, .distinct = 1, .local = 1, .two_dims = 1},
        {.name = "1 buffer, local memory", .buffers = 1, .distinct = 1, .local = 1, .local_memory = 1},
    };
    printf("device: %s, driver %s; %d launches a round, median of 5 rounds, us a launch\n\n", name, driver,
           launches);
    printf("| kernel | enqueue | to finish |\n|---|---:|---:|\n");
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        const variant *var = &variants[v];
        cl_mem *mems = var->host_no_access ? no_access : plain;
        cl_kernel k = make_kernel(ctx, dev, var->buffers, var->offsets, var->local_memory);
        if (!k || !set_args(k, var, mems, n))
            return fprintf(stderr, "bench_cl_launch: kernel of %d buffers failed\n", var->buffers), 1;
        double enqueue[5], total[5];
        const size_t global[2] = {(size_t)n, 1}, local[2] = {64, 1};
        for (int round = -1; round < 5; round++) { /* round -1 warms up */
            clFinish(q);
            const double t0 = bench_now();
            for (int i = 0; i < launches; i++) {
                if (var->set_every_launch)
                    set_args(k, var, mems, n);
                clEnqueueNDRangeKernel(q, k, var->two_dims ? 2 : 1, NULL, global, var->local ? local : NULL, 0, NULL,
                                       NULL);
            }
            const double t1 = bench_now();
            clFinish(q);
            const double t2 = bench_now();
            if (round >= 0) {
                enqueue[round] = (t1 - t0) / launches * 1e6;
                total[round] = (t2 - t0) / launches * 1e6;
            }
        }
        qsort(enqueue, 5, sizeof *enqueue, bench_compare_doubles);
        qsort(total, 5, sizeof *total, bench_compare_doubles);
        printf("| %s | %.2f | %.2f |\n", var->name, enqueue[2], total[2]);
        clReleaseKernel(k);
    }
    for (int b = 0; b < MOST_BUFFERS; b++) {
        clReleaseMemObject(plain[b]);
        clReleaseMemObject(no_access[b]);
    }
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
