/*
 * mlff: the command line. This file dispatches; each command lives in its
 * own file (cmd_energy.c, ...), what they share in cli_util.c.
 *
 *   mlff energy [OPTIONS] FILE...
 *   mlff devices
 *   mlff --help | --version
 *
 * Standard output carries the frames and nothing else; everything else goes
 * to standard error. Exit statuses: cli_util.h (and README).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "cmd_energy.h"
#include "mlff.h"

const char mlff_usage_text[] =
    "Usage: mlff energy [OPTIONS] FILE...\n"
    "       mlff devices\n"
    "       mlff --help | --version\n"
    "\n"
    "energy: evaluate the model on every frame of the XYZ / extended XYZ FILEs\n"
    "(as ASE writes them; '-' reads standard input; .gz, .bz2 and .xz files, and\n"
    "compressed standard input, are decompressed as they are read). Frames are\n"
    "streamed: read, evaluated in batches that fill the device, and written in\n"
    "order, batch by batch, in constant memory, as extended XYZ with energy= (eV)\n"
    "and, with --forces, a forces column (eV/Angstrom) and, with --stress, stress=\n"
    "(eV/Angstrom^3, periodic frames only), to standard output or OUT.\n"
    "\n"
    "Options of energy:\n"
    "  --model PATH                 model file (default: $MLFF_MODEL, else ANI-2x)\n"
    "  --device auto|cpu|opencl|vulkan\n"
    "                               where to compute (default: auto)\n"
    "  --precision float32|float64  compute precision (default: float32)\n"
    "  --forces                     also compute forces\n"
    "  --stress                     also compute the stress of periodic frames\n"
    "  --neighbors auto|dense|sparse\n"
    "                               pair search: all pairs or cell lists (default: auto)\n"
    "  --chunk-atoms N              evaluate at most N atoms per pass (default: as many\n"
    "                               as the device's memory allows; same results)\n"
    "  --batch-atoms N              gather about N atoms per library call (default:\n"
    "                               65536 on GPUs, 1024 elsewhere; same results)\n"
    "  --on-error stop|skip         at a bad frame, stop (default: the output keeps the\n"
    "                               frames before it) or skip it: report it, leave it\n"
    "                               out, and tag every frame written input_frame=N\n"
    "  --resume                     go on with an interrupted run: keep the whole frames\n"
    "                               OUT holds (cut a torn one off) and evaluate the rest\n"
    "  --progress                   a progress line on standard error even when it is\n"
    "                               not a terminal (on a terminal it is the default)\n"
    "  --quiet                      no progress line\n"
    "  --verbose                    report the device, the model and the time taken\n"
    "  -o, --output OUT             write to OUT instead of standard output\n"
    "  -h, --help                   show this help\n"
    "\n"
    "devices: list the backends and devices this build can use.\n"
    "\n"
    "Exit status: 0 success (with --on-error skip, also when frames were left out),\n"
    "1 bad input or failure, 2 bad usage, 3 interrupted by SIGINT or SIGTERM (the\n"
    "batch in hand was finished; the output holds whole frames: --resume goes on).\n";

/* ------------------------------------------------------------------------ */
/* devices                                                                  */

static int command_devices(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return print_usage();
        if (argv[i][0] == '-' && argv[i][1])
            return usage_error("devices: unknown option '%s'", argv[i]);
        return usage_error("devices: unexpected argument '%s'", argv[i]);
    }
    size_t size = 4096, needed = 0;
    char *buf = malloc(size);
    if (!buf) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    mlff_status status = mlff_list_devices(buf, size, &needed);
    if (needed > size) {
        char *grown = realloc(buf, needed);
        if (!grown) {
            free(buf);
            error_line("mlff: out of memory");
            return EXIT_BAD_INPUT;
        }
        buf = grown;
        size = needed;
        status = mlff_list_devices(buf, size, &needed);
    }
    if (status != MLFF_OK) {
        free(buf);
        error_line("mlff: cannot list the devices: %s", mlff_strerror(status));
        return EXIT_BAD_INPUT;
    }
    buf[size - 1] = '\0';
    size_t n = strlen(buf);
    fputs(buf, stdout);
    if (n > 0 && buf[n - 1] != '\n')
        fputc('\n', stdout);
    free(buf);
    if (fflush(stdout) != 0) {
        error_line("mlff: cannot write to standard output: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("missing command: energy or devices");
    const char *command = argv[1];
    if (strcmp(command, "-h") == 0 || strcmp(command, "--help") == 0 ||
        strcmp(command, "help") == 0)
        return print_usage();
    if (strcmp(command, "--version") == 0 || strcmp(command, "-V") == 0 ||
        strcmp(command, "version") == 0) {
        const char *runtime = mlff_version_string();
        if (runtime && strcmp(runtime, MLFF_VERSION_STRING) != 0)
            printf("mlff %s (library %s)\n", MLFF_VERSION_STRING, runtime);
        else
            printf("mlff %s\n", MLFF_VERSION_STRING);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_BAD_INPUT;
    }
    if (strcmp(command, "energy") == 0)
        return cmd_energy(argc - 2, argv + 2);
    if (strcmp(command, "devices") == 0)
        return command_devices(argc - 2, argv + 2);
    if (command[0] == '-')
        return usage_error("unknown option '%s'", command);
    return usage_error("unknown command '%s' (expected energy or devices)", command);
}
