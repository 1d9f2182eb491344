/*
 * One rule for every backend's mlff_memory_limits, from what the device
 * reports: a GPU may use half of its memory (the rest is for the driver,
 * BLAS libraries and other processes), and no more than three quarters of
 * what its driver said this process could hold when it opened the device,
 * where it says (Vulkan's memory budget; NVIDIA's does not count the
 * process's OpenCL or CUDA memory); a device that works in the host's
 * memory (the CPU backend, PoCL, lavapipe) an eighth of the host's memory,
 * no more than the device reports and at most 2 GiB, which is still chunks
 * of about ten thousand ANI atoms, plenty to keep every core busy. One
 * buffer never exceeds MLFF_MAX_BUFFER_BYTES.
 */
#ifndef MLFF_BACKENDS_COMMON_MEMORY_LIMITS_H
#define MLFF_BACKENDS_COMMON_MEMORY_LIMITS_H

#include <stdint.h>

#include "backends/backend.h"

/* device_memory: the device's memory (the host's RAM for CPU devices);
 * available: what the driver said this process could hold when it opened
 * the device, 0 if it does not say; max_buffer: its per-buffer limit,
 * 0 if none. */
void mlff_memory_limits_for(int is_gpu, uint64_t device_memory, uint64_t available, uint64_t max_buffer,
                            mlff_memory_limits *limits);

/* Physical memory of this machine, or the process's address-space limit
 * where that is less; bytes (0 if unknown). */
uint64_t mlff_host_memory(void);

#endif
