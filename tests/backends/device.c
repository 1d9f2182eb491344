#include "device.h"

#include "runtime/environment.h"
#include "tests/common/skip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mlff_backend *test_open_backend(const mlff_backend_iface *iface, const char *tuning)
{
    mlff_environment env;
    mlff_environment_read(&env);
    mlff_backend_options opts = {.device_index = -1, .n_threads = 2, .allow_cpu_devices = 1};
    mlff_environment_backend_options(&env, &opts);
    mlff_backend *be = NULL;
    mlff_error err;
    mlff_error_clear(&err);
    if (iface->open(&opts, &be, &err) != MLFF_OK)
        test_skip(err.message);
    if (iface->set_tuning) {
        mlff_device_info info;
        iface->opened_device(be, &info);
        mlff_tuning t;
        mlff_tuning_for_device(&t, info.api, info.vendor, info.is_gpu, NULL);
        if (mlff_environment_tuning(&t, NULL, &err) != MLFF_OK ||
            mlff_tuning_set(&t, tuning, "the test's tuning", NULL, &err) != MLFF_OK ||
            iface->set_tuning(be, &t, &err) != MLFF_OK) {
            fprintf(stderr, "FAIL: %s\n", err.message);
            exit(1);
        }
    }
    printf("device: %s%s%s\n", iface->describe(be), tuning ? "; tuning: " : "", tuning ? tuning : "");
    return be;
}
