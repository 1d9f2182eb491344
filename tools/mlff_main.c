/*
 * mlff: the command line. This file dispatches; each command lives in its
 * own file (cmd_energy.c, ...), what they share in cli_util.c.
 *
 *   mlff energy [OPTIONS] FILE...   (cmd_energy.c and the files beside it)
 *   mlff hessian [OPTIONS] FILE...  (cmd_hessian.c, harmonic.c, hessian_json.c)
 *   mlff devices [--tuning]         (cmd_devices.c)
 *   mlff tune [...] | --keys        (cmd_tune.c)
 *   mlff bench [...]                (cmd_bench.c)
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
#include "commands.h"
#include "mlff.h"

const char mlff_usage_text[] =
    "Usage: mlff energy [OPTIONS] FILE...\n"
    "       mlff hessian [OPTIONS] FILE...\n"
    "       mlff devices [--tuning]\n"
    "       mlff tune [--device KIND] [--device-index N] [--quick] [--dry-run] [--tuning KEYS]\n"
    "       mlff tune --keys [--device KIND] [--device-index N] [--tuning KEYS]\n"
    "       mlff bench [--device all|KIND] [--device-index N] [--precision P] [--reference DIR] [--quick]\n"
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
    "  --io-threads N               threads parsing the input, and threads formatting\n"
    "                               the output, of a batch (default: a quarter of the\n"
    "                               CPUs, 1 to 8; same results)\n"
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
    "hessian: for every frame of the FILEs (read as energy reads them), the Hessian\n"
    "(eV/Angstrom^2) and its harmonic analysis: the Hessian weighted by the masses\n"
    "(amu: a masses column of the extended XYZ, else the standard atomic weights,\n"
    "IUPAC 2016 as ASE's), with the rigid motions projected out, its wavenumbers\n"
    "(cm^-1, ascending, imaginary ones negative, the rigid motions 0), normal modes\n"
    "and the zero-point energy (eV); one line of JSON a frame, in input order:\n"
    "{\"input_frame\", \"energy\", \"forces\", \"hessian\" (3N x 3N), \"masses\",\n"
    "\"projection\", \"rigid_modes\", \"wavenumbers\", \"modes\" (3N rows of 3N:\n"
    "mode k's displacements), \"zero_point_energy\"}.\n"
    "\n"
    "Options of hessian:\n"
    "  --model PATH, --verbose, -o OUT   as for energy\n"
    "  --device auto|cpu|opencl|vulkan\n"
    "                               where to compute (default: cpu, which has float64\n"
    "                               everywhere; every backend computes Hessians)\n"
    "  --precision float32|float64  compute precision (default: float64)\n"
    "  --project auto|none|translations|rigid\n"
    "                               rigid motions projected out: translations and\n"
    "                               rotations (6; 5 for a linear molecule), the\n"
    "                               translations alone, or none (default: auto, rigid\n"
    "                               for molecules, translations for periodic frames)\n"
    "\n"
    "devices: the backends and devices this build can use, with each device's memory\n"
    "(and what is free of it, where the API tells), largest buffer, fp64, subgroup sizes,\n"
    "whether the kernel cache holds its kernels, and the tuning record a context on it\n"
    "uses (--tuning: every key of it).\n"
    "\n"
    "tune: measure on the device (default: auto) which kernel forms serve it best\n"
    "(a few seconds; --quick: fewer sizes) and write them as its tuning record into the\n"
    "cache directory (not with --dry-run), where later processes read them; the record\n"
    "goes to standard output, progress to standard error. --keys lists the record's\n"
    "keys, their environment variables, the values in use on the device and the values\n"
    "they take (settings.tuning and --tuning take \"key=value ...\").\n"
    "\n"
    "bench: time ANI-2x energy + forces of methane, benzene, the 100-water cluster and\n"
    "64 small molecules on each device (all: the CPU and every GPU), a table of the\n"
    "median ms a call and atoms/s; the structures from --reference DIR (default: the\n"
    "repository's tests/data/reference), else made in code.\n"
    "\n"
    "Exit status: 0 success (with --on-error skip, also when frames were left out),\n"
    "1 bad input or failure, 2 bad usage, 3 interrupted by SIGINT or SIGTERM (the\n"
    "batch in hand was finished; the output holds whole frames: --resume goes on).\n";

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("missing command: energy, hessian, devices, tune or bench");
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
        return command_energy(argc - 2, argv + 2);
    if (strcmp(command, "hessian") == 0)
        return command_hessian(argc - 2, argv + 2);
    if (strcmp(command, "devices") == 0)
        return command_devices(argc - 2, argv + 2);
    if (strcmp(command, "tune") == 0)
        return command_tune(argc - 2, argv + 2);
    if (strcmp(command, "bench") == 0)
        return command_bench(argc - 2, argv + 2);
    if (command[0] == '-')
        return usage_error("unknown option '%s'", command);
    return usage_error("unknown command '%s' (expected energy, hessian, devices, tune or bench)", command);
}
