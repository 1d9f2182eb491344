/*
 * mlff devices [--tuning]: each device of each backend, with what a long
 * run needs to know first (memory and what is free of it, the largest
 * buffer, fp64, subgroup sizes, whether the kernel cache holds its kernels,
 * the tuning record a context on it uses; --tuning: every key of it).
 */
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

int command_devices(int argc, char **argv)
{
    int records = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--tuning"))
            records = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return usage_error("devices: unknown option '%s'", argv[i]);
        else
            return usage_error("devices: unexpected argument '%s'", argv[i]);
    }
    size_t needed = 0;
    mlff_status status = mlff_describe_devices(records, NULL, 0, &needed);
    char *text = status == MLFF_OK ? malloc(needed) : NULL;
    if (text)
        status = mlff_describe_devices(records, text, needed, NULL);
    if (!text || status != MLFF_OK) {
        free(text);
        error_line("mlff: cannot describe the devices: %s", mlff_strerror(text ? status : MLFF_ERROR_OUT_OF_MEMORY));
        return EXIT_BAD_INPUT;
    }
    const int code = print_text(text);
    free(text);
    return code;
}
