/* The one rule of every backend's memory budget (backends/common/memory_limits.h):
 * half of a GPU's memory, no more than three quarters of what its driver said
 * this process could hold; devices in the host's memory by the host's. */
#include <stdint.h>

#include "backends/common/memory_limits.h"
#include "tests/common/check.h"

#define GIB ((uint64_t)1 << 30)

static size_t budget(int is_gpu, uint64_t memory, uint64_t available)
{
    mlff_memory_limits limits;
    mlff_memory_limits_for(is_gpu, memory, available, 0, &limits);
    return limits.budget;
}

int main(void)
{
    CHECK(budget(1, 80 * GIB, 0) == 40 * GIB, "a GPU whose driver says nothing of what is free: half its memory");
    CHECK(budget(1, 80 * GIB, 79 * GIB) == 40 * GIB, "an idle GPU: half its memory");
    /* Another process holds 60 GB. */
    CHECK(budget(1, 80 * GIB, 20 * GIB) == 15 * GIB, "three quarters of the 20 GB the driver says it could hold: %zu",
          budget(1, 80 * GIB, 20 * GIB));
    const size_t host = budget(0, 64 * GIB, 0);
    CHECK(host > 0 && host <= 2 * GIB && budget(0, 64 * GIB, GIB / 16) == host,
          "a device in the host's memory: the host's rule, whatever its driver says (%zu)", host);
    CHECK(budget(1, 0, 0) > 0, "a GPU that tells nothing: an assumed size");
    return failures ? 1 : 0;
}
