#include "memory_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#define HOST_BUDGET_CAP ((uint64_t)2 << 30)
#define UNKNOWN_MEMORY ((uint64_t)4 << 30) /* what we assume when the device does not say */

uint64_t mlff_host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t memory = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
    /* A process limited in address space (ulimit -v, as batch systems and
     * tests set it) has that much at most. */
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && (memory == 0 || as.rlim_cur < memory))
        memory = (uint64_t)as.rlim_cur;
    return memory;
}

void mlff_memory_limits_for(int is_gpu, uint64_t device_memory, uint64_t available, uint64_t max_buffer,
                            mlff_memory_limits *limits)
{
    if (device_memory == 0)
        device_memory = UNKNOWN_MEMORY;
    uint64_t budget = device_memory / 2;
    if (is_gpu && available && available / 4 * 3 < budget)
        budget = available / 4 * 3;
    if (!is_gpu) {
        /* What such a device reports is often made up (lavapipe: 2 GiB); the
         * host's memory is what it really uses. */
        const uint64_t host = mlff_host_memory() ? mlff_host_memory() / 8 : UNKNOWN_MEMORY / 8;
        budget = device_memory < host ? device_memory : host;
        if (budget > HOST_BUDGET_CAP)
            budget = HOST_BUDGET_CAP;
    }
    if (max_buffer == 0 || max_buffer > MLFF_MAX_BUFFER_BYTES)
        max_buffer = MLFF_MAX_BUFFER_BYTES;
    limits->budget = (size_t)budget;
    limits->max_buffer = (size_t)max_buffer;
}
