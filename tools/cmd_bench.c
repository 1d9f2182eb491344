/*
 * mlff bench [--device all|auto|cpu|opencl|vulkan] [--device-index N] [--precision float32|float64]
 *            [--reference DIR] [--tuning KEYS] [--quick]
 *
 * ANI-2x energy + forces of the cases of bench/bench_ani (methane, benzene,
 * the 100-water cluster, a batch of 64 molecules of 8-9 atoms), on each
 * device, for users comparing machines: a table of the median time of a
 * call (each returns after the forces are back) and atoms a second. The
 * structures are the repository's (tests/data/reference), or, where those
 * are not at hand, made in code (runtime/sample_systems.h: methane,
 * benzene, 100 waters, 64 molecules of 3 to 6 atoms). Each case warms up
 * first (a GPU left idle clocks down), and the positions move a little at
 * every call, so that nothing is cached between calls. --device all (the
 * default): the CPU and every GPU; --device opencl or vulkan: every device
 * of that API (CPU implementations too).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "commands.h"
#include "runtime/sample_systems.h"
#include "xyz.h"

#ifndef MLFF_REFERENCE_DIR
#define MLFF_REFERENCE_DIR ""
#endif

typedef struct bench_case {
    const char *name;
    mlff_sample s;
} bench_case;

/* A case of reference structures (cycled through for n systems); 0 when a file is missing. */
static int load_case(const char *dir, const char *const *names, int n, mlff_sample *s)
{
    xyz_file files[4];
    int n_files = 0, ok = 1;
    char err[512];
    memset(s, 0, sizeof *s);
    memset(files, 0, sizeof files);
    for (; ok && n_files < 4 && names[n_files]; n_files++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.extxyz", dir, names[n_files]);
        ok = xyz_read_file(path, &files[n_files], err, sizeof err) == XYZ_OK && files[n_files].n_frames >= 1;
    }
    int64_t atoms = 0;
    for (int k = 0; ok && k < n; k++)
        atoms += files[k % n_files].frames[0].n_atoms;
    s->n_systems = n;
    s->n_atoms = atoms;
    s->offsets = ok ? calloc((size_t)n + 1, sizeof *s->offsets) : NULL;
    s->numbers = ok ? malloc((size_t)atoms * sizeof *s->numbers) : NULL;
    s->positions = ok ? malloc((size_t)atoms * 3 * sizeof *s->positions) : NULL;
    ok = ok && s->offsets && s->numbers && s->positions;
    for (int k = 0; ok && k < n; k++) {
        const xyz_frame *f = &files[k % n_files].frames[0];
        memcpy(s->numbers + s->offsets[k], f->numbers, (size_t)f->n_atoms * sizeof *s->numbers);
        memcpy(s->positions + 3 * s->offsets[k], f->positions, (size_t)f->n_atoms * 3 * sizeof *s->positions);
        s->offsets[k + 1] = s->offsets[k] + f->n_atoms;
    }
    for (int k = 0; k < n_files; k++)
        xyz_file_free(&files[k]); /* a file that failed is empty */
    if (!ok)
        mlff_sample_free(s);
    return ok;
}

/* The four cases, from dir where it has them; *generated: how many were made in code. */
static int make_cases(const char *dir, bench_case cases[4], int *generated)
{
    static const char *const methane[] = {"g2_CH4", NULL}, *const benzene[] = {"g2_C6H6", NULL},
                             *const water[] = {"water_cluster_100", NULL},
                             *const small[] = {"g2_CH3CH2OH", "g2_CH3COOH", "g2_CH3CONH2", "g2_C4H4S", NULL};
    static const char *const *const files[4] = {methane, benzene, water, small};
    static const char *const names[4] = {"methane", "benzene", "water cluster (300 atoms)",
                                         "64 molecules of 8-9 atoms"};
    *generated = 0;
    for (int k = 0; k < 4; k++) {
        cases[k].name = names[k];
        if (dir && *dir && load_case(dir, files[k], k == 3 ? 64 : 1, &cases[k].s))
            continue;
        ++*generated;
        const int ok = k == 0   ? mlff_sample_methane(&cases[k].s)
                       : k == 1 ? mlff_sample_benzene(&cases[k].s)
                       : k == 2 ? mlff_sample_water_cluster(&cases[k].s, 100)
                                : mlff_sample_molecules(&cases[k].s, 64);
        if (k == 3)
            cases[k].name = "64 molecules of 3-6 atoms";
        if (!ok)
            return 0;
    }
    return 1;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Times every case on the device settings chooses; 0 when it could not open (a message said why). */
static int bench_device(const mlff_settings *settings, bench_case *cases, int quick)
{
    mlff_context *ctx = NULL;
    mlff_model *model = NULL;
    if (mlff_open(settings, NULL, &ctx, &model) != MLFF_OK) {
        error_line("mlff: bench: %s", ctx ? mlff_last_error(ctx) : "out of memory");
        mlff_context_destroy(ctx);
        return 0;
    }
    mlff_stats stats;
    mlff_get_stats(ctx, &stats);
    printf("\n%s (tuning: %s)\n\n", mlff_device_description(ctx),
           stats.tuning_record ? "a record mlff tune measured" : "the table's numbers");
    printf("| case | atoms | median ms | min ms | calls | atoms/s |\n|---|---:|---:|---:|---:|---:|\n");
    unsigned seed = 1;
    int ok = 1;
    for (int c = 0; c < 4 && ok; c++) {
        const mlff_sample *s = &cases[c].s;
        double *pos = malloc((size_t)s->n_atoms * 3 * sizeof *pos);
        double *forces = malloc((size_t)s->n_atoms * 3 * sizeof *forces);
        double *energies = malloc((size_t)s->n_systems * sizeof *energies);
        enum { MOST = 400 };
        double times[MOST];
        int runs = 0, calls = 0;
        const double warm = quick ? 0.1 : 1.0, measure = quick ? 0.3 : 2.0, started = now();
        double spent = 0;
        ok = pos && forces && energies;
        while (ok && runs < MOST && (runs < (quick ? 3 : 10) || spent < measure)) {
            for (int64_t k = 0; k < 3 * s->n_atoms; k++)
                pos[k] = s->positions[k] + 0.01 * ((double)rand_r(&seed) / RAND_MAX - 0.5);
            const mlff_batch b = {s->n_systems, s->offsets, s->numbers, pos, NULL, NULL};
            const double t0 = now();
            if (mlff_evaluate(model, &b, energies, forces) != MLFF_OK) {
                error_line("mlff: bench: %s: %s", cases[c].name, mlff_last_error(ctx));
                ok = 0;
                break;
            }
            const double t = now() - t0;
            if (calls++ < 5 || now() - started < warm)
                continue;
            times[runs++] = t;
            spent += t;
        }
        if (ok) {
            qsort(times, (size_t)runs, sizeof *times, by_value);
            const double median = times[runs / 2];
            printf("| %s | %lld | %.3f | %.3f | %d | %.3g |\n", cases[c].name, (long long)s->n_atoms, 1e3 * median,
                   1e3 * times[0], runs, (double)s->n_atoms / median);
            fflush(stdout);
        }
        free(pos);
        free(forces);
        free(energies);
    }
    mlff_context_destroy(ctx);
    return ok;
}

int command_bench(int argc, char **argv)
{
    mlff_settings settings;
    mlff_default_settings(&settings);
    const char *reference = MLFF_REFERENCE_DIR, *device = "all";
    int quick = 0, index = -1;
    for (int i = 0; i < argc; i++) {
        const char *value = NULL;
        int r;
        if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if ((r = option_value(argc, argv, &i, "--device", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (strcmp(value, "all") && device_kind_of(value) < 0)
                return usage_error("invalid --device '%s' (expected all, auto, cpu, opencl or vulkan)", value);
            device = value;
        } else if ((r = option_value(argc, argv, &i, "--device-index", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            char *end;
            errno = 0;
            index = (int)strtol(value, &end, 10);
            if (errno || *end || index < 0)
                return usage_error("invalid --device-index '%s'", value);
        } else if ((r = option_value(argc, argv, &i, "--precision", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            if (strcmp(value, "float32") && strcmp(value, "float64"))
                return usage_error("invalid --precision '%s' (expected float32 or float64)", value);
            settings.precision = !strcmp(value, "float64") ? MLFF_PRECISION_FLOAT64 : MLFF_PRECISION_FLOAT32;
        } else if ((r = option_value(argc, argv, &i, "--reference", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            reference = value;
        } else if ((r = option_value(argc, argv, &i, "--tuning", &value)) != 0) {
            if (r < 0)
                return EXIT_USAGE;
            settings.tuning = value;
        } else {
            return usage_error("bench: unknown %s '%s'", argv[i][0] == '-' ? "option" : "argument", argv[i]);
        }
    }
    bench_case cases[4];
    memset(cases, 0, sizeof cases);
    int generated = 0;
    if (!make_cases(reference, cases, &generated)) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    printf("ANI-2x energy + forces, %s%s\n", settings.precision == MLFF_PRECISION_FLOAT64 ? "float64" : "float32",
           generated == 4 ? ", structures made in code (no reference files found)"
           : generated    ? ", some structures made in code"
                          : "");
    int ran = 0, failed = 0;
    if (!strcmp(device, "all")) {
        /* The CPU, then each GPU of each API. */
        static const mlff_device_kind apis[] = {MLFF_DEVICE_CPU, MLFF_DEVICE_OPENCL, MLFF_DEVICE_VULKAN};
        for (int a = 0; a < 3; a++) {
            int n = 0, gpus = 0;
            mlff_count_devices(apis[a], &n, &gpus);
            const int count = apis[a] == MLFF_DEVICE_CPU ? 1 : gpus;
            for (int d = 0; d < count; d++) {
                settings.device = apis[a];
                settings.device_index = apis[a] == MLFF_DEVICE_CPU ? -1 : d;
                ran++;
                failed += !bench_device(&settings, cases, quick);
            }
        }
    } else {
        settings.device = (mlff_device_kind)device_kind_of(device);
        int n = 1, gpus = 0;
        if (index < 0 && (settings.device == MLFF_DEVICE_OPENCL || settings.device == MLFF_DEVICE_VULKAN))
            mlff_count_devices(settings.device, &n, &gpus);
        for (int d = 0; d < n; d++) {
            settings.device_index = index >= 0 ? index : n > 1 ? d : -1;
            ran++;
            failed += !bench_device(&settings, cases, quick);
        }
    }
    for (int k = 0; k < 4; k++)
        mlff_sample_free(&cases[k].s);
    if (!ran)
        error_line("mlff: bench: no device");
    return ran && !failed ? EXIT_OK : EXIT_BAD_INPUT;
}
