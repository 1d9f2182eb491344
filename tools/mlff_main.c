/*
 * mlff: the command line.
 *
 *   mlff energy [--model PATH] [--device auto|cpu|opencl|vulkan]
 *               [--precision float32|float64] [--forces] [--verbose] [-o OUT] FILE...
 *   mlff devices [--tuning]      (cmd_devices.c)
 *   mlff tune [...] | --keys     (cmd_tune.c)
 *   mlff bench [...]             (cmd_bench.c)
 *   mlff --help | --version
 *
 * Standard output carries the frames and nothing else; everything else goes
 * to standard error. On any error nothing at all is written to standard
 * output (the output is built in memory and written only once everything
 * succeeded; with -o it goes to OUT.tmp, then is renamed to OUT) and exactly
 * one line goes to standard error. Exit status: 0 success, 1 bad input or
 * failure, 2 bad usage.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "mlff.h"
#include "xyz.h"

static const char usage_text[] =
    "Usage: mlff energy [OPTIONS] FILE...\n"
    "       mlff devices [--tuning]\n"
    "       mlff tune [--device KIND] [--device-index N] [--quick] [--dry-run] [--tuning KEYS]\n"
    "       mlff tune --keys [--device KIND] [--device-index N] [--tuning KEYS]\n"
    "       mlff bench [--device all|KIND] [--device-index N] [--precision P] [--reference DIR] [--quick]\n"
    "       mlff --help | --version\n"
    "\n"
    "energy: evaluate the model on every frame of the XYZ / extended XYZ FILEs\n"
    "(as ASE writes them; '-' reads standard input). All frames of all files are\n"
    "one batch; they are written, in order, as extended XYZ with energy= (eV) and,\n"
    "with --forces, a forces column (eV/Angstrom) and, with --stress, stress=\n"
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
    "  --verbose                    report the device used on standard error\n"
    "  -o, --output OUT             write to OUT instead of standard output\n"
    "  -h, --help                   show this help\n"
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
    "Exit status: 0 success, 1 bad input or failure, 2 bad usage.\n";

/* ------------------------------------------------------------------------ */
/* Messages: always exactly one line on standard error                      */

__attribute__((format(printf, 1, 2))) static void error_line(const char *format, ...)
{
    char line[XYZ_ERROR_SIZE + 1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    for (char *p = line; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *format, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    error_line("mlff: %s (see 'mlff --help')", line);
    return EXIT_USAGE;
}

static int print_usage(void)
{
    fputs(usage_text, stdout);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_BAD_INPUT;
}

/* The library's message for the last error, else the status text. */
static const char *library_message(const mlff_context *ctx, mlff_status status)
{
    const char *message = ctx ? mlff_last_error(ctx) : NULL;
    return message && *message ? message : mlff_strerror(status);
}

/* ------------------------------------------------------------------------ */
/* Stress of a periodic frame: -virial / volume, the sign ASE uses. Frames
 * that are not periodic in all three directions have no volume: no stress. */

static int frame_stress(const xyz_frame *f, const double *virial, double stress[9])
{
    if (!f->has_cell || !f->pbc[0] || !f->pbc[1] || !f->pbc[2])
        return 0;
    const double *c = f->cell;
    const double volume = fabs(c[0] * (c[4] * c[8] - c[5] * c[7]) - c[1] * (c[3] * c[8] - c[5] * c[6]) +
                               c[2] * (c[3] * c[7] - c[4] * c[6]));
    if (!(volume > 0))
        return 0;
    for (int k = 0; k < 9; k++)
        stress[k] = -virial[k] / volume;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Options of `energy`                                                      */

typedef struct energy_options {
    const char *model;
    int device_set;
    mlff_device_kind device;
    int precision_set;
    mlff_precision precision;
    int forces;
    int stress;
    int neighbors_set;
    mlff_neighbors neighbors;
    long long chunk_atoms; /* 0: the library chooses */
    int verbose;
    const char *output;
    const char **files;
    size_t n_files;
} energy_options;

/*
 * If argv[*i] is the option `name` (as "--name VALUE", "--name=VALUE", or for
 * a short name "-o VALUE"/"-oVALUE"), store its value and return 1; return 0
 * if it is another argument, -1 after a usage error (already reported).
 */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    int is_short = n == 2 && name[0] == '-' && name[1] != '-';
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '\0') {
        if (*i + 1 >= argc) {
            usage_error("option %s needs a value", name);
            return -1;
        }
        *value = argv[++*i];
    } else if (arg[n] == '=' && !is_short) {
        *value = arg + n + 1;
    } else if (is_short) {
        *value = arg + n;
    } else {
        return 0; /* a longer option that starts with the same letters */
    }
    if (**value == '\0') {
        usage_error("option %s needs a non-empty value", name);
        return -1;
    }
    return 1;
}

/* Returns -1 when the options are fine, else the exit status. */
static int parse_energy_options(int argc, char **argv, energy_options *o)
{
    int only_files = 0;
    o->files = calloc((size_t)argc + 1, sizeof *o->files);
    if (!o->files) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
            o->files[o->n_files++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_files = 1;
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0)
            return print_usage();
        if (strcmp(arg, "--forces") == 0) {
            o->forces = 1;
            continue;
        }
        if (strcmp(arg, "--stress") == 0) {
            o->stress = 1;
            continue;
        }
        if (strcmp(arg, "--verbose") == 0) {
            o->verbose = 1;
            continue;
        }
        int r;
        if ((r = option_value(argc, argv, &i, "--model", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            o->model = value;
        } else if ((r = option_value(argc, argv, &i, "--output", &value)) != 0 ||
                   (r = option_value(argc, argv, &i, "-o", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            o->output = value;
        } else if ((r = option_value(argc, argv, &i, "--device", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (strcmp(value, "auto") == 0)
                o->device = MLFF_DEVICE_AUTO;
            else if (strcmp(value, "cpu") == 0)
                o->device = MLFF_DEVICE_CPU;
            else if (strcmp(value, "opencl") == 0)
                o->device = MLFF_DEVICE_OPENCL;
            else if (strcmp(value, "vulkan") == 0)
                o->device = MLFF_DEVICE_VULKAN;
            else
                return usage_error("invalid --device '%s' (expected auto, cpu, opencl or vulkan)",
                                   value);
            o->device_set = 1;
        } else if ((r = option_value(argc, argv, &i, "--neighbors", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (strcmp(value, "auto") == 0)
                o->neighbors = MLFF_NEIGHBORS_AUTO;
            else if (strcmp(value, "dense") == 0)
                o->neighbors = MLFF_NEIGHBORS_DENSE;
            else if (strcmp(value, "sparse") == 0)
                o->neighbors = MLFF_NEIGHBORS_SPARSE;
            else
                return usage_error("invalid --neighbors '%s' (expected auto, dense or sparse)", value);
            o->neighbors_set = 1;
        } else if ((r = option_value(argc, argv, &i, "--chunk-atoms", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            char *end;
            errno = 0;
            o->chunk_atoms = strtoll(value, &end, 10);
            if (errno || end == value || *end || o->chunk_atoms < 1)
                return usage_error("invalid --chunk-atoms '%s' (expected a positive number of atoms)", value);
        } else if ((r = option_value(argc, argv, &i, "--precision", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (strcmp(value, "float32") == 0)
                o->precision = MLFF_PRECISION_FLOAT32;
            else if (strcmp(value, "float64") == 0)
                o->precision = MLFF_PRECISION_FLOAT64;
            else
                return usage_error("invalid --precision '%s' (expected float32 or float64)",
                                   value);
            o->precision_set = 1;
        } else {
            return usage_error("energy: unknown option '%s'", arg);
        }
    }
    if (o->n_files == 0)
        return usage_error("energy: no input files");
    return -1;
}

/* ------------------------------------------------------------------------ */
/* energy                                                                   */

typedef struct run {
    energy_options opt;
    xyz_file *files;
    size_t n_files_read;
    size_t *first_system;  /* per file, its first system in the batch; n_files + 1 */
    int64_t n_systems, n_atoms;
    int64_t *offsets;
    int32_t *numbers;
    double *positions, *cells, *energies, *forces, *virials;
    uint8_t *pbc;
    mlff_context *ctx;
    xyz_buffer out, notes;
} run;

static void run_free(run *r)
{
    for (size_t i = 0; i < r->n_files_read; i++)
        xyz_file_free(&r->files[i]);
    free(r->files);
    free(r->first_system);
    free(r->offsets);
    free(r->numbers);
    free(r->positions);
    free(r->cells);
    free(r->pbc);
    free(r->energies);
    free(r->forces);
    free(r->virials);
    free(r->opt.files);
    mlff_context_destroy(r->ctx);
    xyz_buffer_free(&r->out);
    xyz_buffer_free(&r->notes);
}

/* The frame of global system s, and its file. */
static const xyz_frame *system_frame(const run *r, int64_t s, const xyz_file **file,
                                     size_t *frame_index)
{
    size_t lo = 0, hi = r->opt.n_files; /* first_system[lo] <= s < first_system[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int64_t)r->first_system[mid] <= s)
            lo = mid;
        else
            hi = mid;
    }
    *file = &r->files[lo];
    *frame_index = (size_t)s - r->first_system[lo];
    return &r->files[lo].frames[*frame_index];
}

/* Report an error of mlff_evaluate (or model loading) as FILE:LINE: frame N[, atom M]: ... */
static void report_evaluation_error(const run *r, mlff_status status)
{
    const char *message = library_message(r->ctx, status);
    int64_t system = -1, atom = -1;
    if ((status == MLFF_ERROR_BAD_INPUT || status == MLFF_ERROR_UNSUPPORTED) &&
        mlff_last_error_location(r->ctx, &system, &atom) == MLFF_OK && system >= 0 &&
        system < r->n_systems) {
        const xyz_file *file;
        size_t frame_index;
        const xyz_frame *f = system_frame(r, system, &file, &frame_index);
        if (atom >= 0 && atom < f->n_atoms)
            error_line("%s:%ld: frame %zu, atom %lld: %s", file->name, xyz_atom_line(f, atom),
                       frame_index + 1, (long long)atom + 1, message);
        else
            error_line("%s:%ld: frame %zu: %s", file->name, f->comment_line, frame_index + 1,
                       message);
        return;
    }
    error_line("mlff: %s", message);
}

static int build_batch(run *r)
{
    size_t n_files = r->opt.n_files;
    r->first_system = calloc(n_files + 1, sizeof *r->first_system);
    if (!r->first_system)
        return -1;
    int any_cell = 0;
    int64_t n_systems = 0, n_atoms = 0;
    for (size_t i = 0; i < n_files; i++) {
        r->first_system[i] = (size_t)n_systems;
        for (size_t k = 0; k < r->files[i].n_frames; k++) {
            n_atoms += r->files[i].frames[k].n_atoms;
            any_cell |= r->files[i].frames[k].has_cell;
        }
        n_systems += (int64_t)r->files[i].n_frames;
    }
    r->first_system[n_files] = (size_t)n_systems;
    r->n_systems = n_systems;
    r->n_atoms = n_atoms;
    size_t ns = (size_t)n_systems, na = (size_t)n_atoms;
    r->offsets = malloc((ns + 1) * sizeof *r->offsets);
    r->numbers = malloc(na * sizeof *r->numbers);
    r->positions = malloc(3 * na * sizeof *r->positions);
    r->pbc = malloc(3 * ns * sizeof *r->pbc);
    r->energies = malloc(ns * sizeof *r->energies);
    if (any_cell)
        r->cells = calloc(9 * ns, sizeof *r->cells);
    if (r->opt.forces)
        r->forces = malloc(3 * na * sizeof *r->forces);
    if (r->opt.stress)
        r->virials = malloc(9 * ns * sizeof *r->virials);
    if (!r->offsets || !r->numbers || !r->positions || !r->pbc || !r->energies ||
        (any_cell && !r->cells) || (r->opt.forces && !r->forces) || (r->opt.stress && !r->virials))
        return -1;
    int64_t s = 0, a = 0;
    r->offsets[0] = 0;
    for (size_t i = 0; i < n_files; i++) {
        for (size_t k = 0; k < r->files[i].n_frames; k++, s++) {
            const xyz_frame *f = &r->files[i].frames[k];
            memcpy(r->numbers + a, f->numbers, (size_t)f->n_atoms * sizeof *r->numbers);
            memcpy(r->positions + 3 * a, f->positions, 3 * (size_t)f->n_atoms * sizeof(double));
            if (any_cell && f->has_cell)
                memcpy(r->cells + 9 * s, f->cell, sizeof f->cell);
            memcpy(r->pbc + 3 * s, f->pbc, 3);
            a += f->n_atoms;
            r->offsets[s + 1] = a;
        }
    }
    return 0;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Write the buffer to path through path.tmp and a rename. */
static int write_output_file(const char *path, const xyz_buffer *out)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 5);
    if (!tmp) {
        error_line("mlff: out of memory");
        return -1;
    }
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
    FILE *fp = fopen(tmp, "wb");
    if (!fp) {
        error_line("%s: cannot write: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int ok = fwrite(out->data ? out->data : "", 1, out->size, fp) == out->size;
    ok = fflush(fp) == 0 && ok;
    int saved = errno;
    if (ok && fsync(fileno(fp)) != 0 && errno != EINVAL && errno != EROFS) {
        ok = 0;
        saved = errno;
    }
    if (fclose(fp) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        error_line("%s: cannot write: %s", path, strerror(saved));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

static int energy_main(run *r)
{
    energy_options *o = &r->opt;
    char err[XYZ_ERROR_SIZE];

    /* 1. Read every file; the first problem stops everything. */
    r->files = calloc(o->n_files, sizeof *r->files);
    if (!r->files) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    for (size_t i = 0; i < o->n_files; i++) {
        int status = xyz_read_file(o->files[i], &r->files[i], err, sizeof err);
        if (status != XYZ_OK) {
            error_line("%s", err);
            return EXIT_BAD_INPUT;
        }
        r->n_files_read = i + 1;
    }

    /* 2. One batch for all frames of all files. */
    if (build_batch(r) != 0) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }

    /* 3. Device, model, evaluation. */
    mlff_settings settings;
    mlff_default_settings(&settings);
    if (o->device_set)
        settings.device = o->device;
    if (o->precision_set)
        settings.precision = o->precision;
    if (o->neighbors_set)
        settings.neighbors = o->neighbors;
    settings.max_chunk_atoms = o->chunk_atoms;
    mlff_model *model = NULL;
    mlff_status status = mlff_open(&settings, o->model, &r->ctx, &model);
    if (status != MLFF_OK) {
        error_line("mlff: cannot open the device or the model: %s", library_message(r->ctx, status));
        return EXIT_BAD_INPUT;
    }
    mlff_batch batch = {
        .n_systems = r->n_systems,
        .system_offsets = r->offsets,
        .atomic_numbers = r->numbers,
        .positions = r->positions,
        .cells = r->cells,
        .pbc = r->pbc,
    };
    double start = seconds_now();
    mlff_results results = {.energies = r->energies, .forces = r->forces, .virials = r->virials};
    status = mlff_compute(model, &batch, &results);
    double elapsed = seconds_now() - start;
    if (status != MLFF_OK) {
        report_evaluation_error(r, status);
        return EXIT_BAD_INPUT;
    }

    /* 4. Results: check, then format everything in memory. */
    for (int64_t s = 0; s < r->n_systems; s++) {
        int finite = isfinite(r->energies[s]);
        for (int64_t k = 3 * r->offsets[s]; r->forces && finite && k < 3 * r->offsets[s + 1]; k++)
            finite = isfinite(r->forces[k]);
        if (!finite) {
            const xyz_file *file;
            size_t frame_index;
            const xyz_frame *f = system_frame(r, s, &file, &frame_index);
            error_line("%s:%ld: frame %zu: the model returned a non-finite %s", file->name,
                       f->comment_line, frame_index + 1,
                       isfinite(r->energies[s]) ? "force" : "energy");
            return EXIT_BAD_INPUT;
        }
    }
    int64_t s = 0;
    for (size_t i = 0; i < o->n_files; i++)
        for (size_t k = 0; k < r->files[i].n_frames; k++, s++) {
            const xyz_frame *f = &r->files[i].frames[k];
            double stress[9];
            int has_stress = r->virials && frame_stress(f, r->virials + 9 * s, stress);
            xyz_write_frame(&r->out, f, &r->energies[s], r->forces ? r->forces + 3 * r->offsets[s] : NULL,
                            has_stress ? stress : NULL);
        }
    if (r->out.failed) {
        error_line("mlff: out of memory formatting the output");
        return EXIT_BAD_INPUT;
    }

    /* 5. Only now does anything reach the outside. */
    if (o->verbose) {
        mlff_model_info info;
        memset(&info, 0, sizeof info);
        xyz_buffer_printf(&r->notes, "mlff: device: %s\n", mlff_device_description(r->ctx));
        if (mlff_model_get_info(model, &info) == MLFF_OK)
            xyz_buffer_printf(&r->notes, "mlff: model: %s (%s)\n", info.name ? info.name : "?",
                              info.path ? info.path : "?");
        xyz_buffer_printf(&r->notes, "mlff: %lld frames, %lld atoms, evaluated in %.3f s\n",
                          (long long)r->n_systems, (long long)r->n_atoms, elapsed);
        if (r->notes.data)
            fputs(r->notes.data, stderr);
        fflush(stderr);
    }
    if (o->output)
        return write_output_file(o->output, &r->out) == 0 ? EXIT_OK : EXIT_BAD_INPUT;
    if (r->out.size)
        fwrite(r->out.data, 1, r->out.size, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        error_line("mlff: cannot write to standard output: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

static int command_energy(int argc, char **argv)
{
    run r;
    memset(&r, 0, sizeof r);
    int code = parse_energy_options(argc, argv, &r.opt);
    if (code < 0)
        code = energy_main(&r);
    run_free(&r);
    return code;
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("missing command: energy, devices, tune or bench");
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
    if (strcmp(command, "devices") == 0)
        return command_devices(argc - 2, argv + 2);
    if (strcmp(command, "tune") == 0)
        return command_tune(argc - 2, argv + 2);
    if (strcmp(command, "bench") == 0)
        return command_bench(argc - 2, argv + 2);
    if (command[0] == '-')
        return usage_error("unknown option '%s'", command);
    return usage_error("unknown command '%s' (expected energy, devices, tune or bench)", command);
}
