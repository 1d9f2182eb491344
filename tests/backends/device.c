#include "device.h"

#include "tests/common/skip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mlff_backend *test_open_backend(const mlff_backend_iface *iface)
{
    mlff_backend_options opts = {.device_index = -1, .n_threads = 2, .allow_cpu_devices = 1};
    mlff_backend *be = NULL;
    mlff_error err;
    mlff_error_clear(&err);
    if (iface->open(&opts, &be, &err) != MLFF_OK)
        test_skip(err.message);
    printf("device: %s\n", iface->describe(be));
    return be;
}
