/*
 * `mlff energy`: options, the inputs, --resume, the device and the model,
 * then the streamed evaluation (energy_pipeline.h) and what the run says at
 * its end. Exit statuses: cli_util.h.
 */
#include "commands.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batcher.h"
#include "cli_util.h"
#include "energy_pipeline.h"
#include "frame_reader.h"
#include "interrupt.h"
#include "mlff.h"
#include "parallel.h"
#include "output.h"
#include "progress.h"
#include "resume.h"
#include "xyz.h"

typedef struct energy_options {
    run_options run; /* --model, --device, --precision, --verbose, -o */
    int forces;
    int stress;
    mlff_neighbors neighbors;
    long long chunk_atoms; /* 0: the library chooses */
    long long batch_atoms; /* 0: from the device */
    long long io_threads;  /* 0: from the CPUs */
    int progress;          /* --progress */
    int quiet;             /* --quiet */
    int resume;
    int skip_bad;          /* --on-error skip */
    command_files in;
} energy_options;

/* Returns -1 when the options are fine, else the exit status. */
static int parse_options(int argc, char **argv, energy_options *o)
{
    int r = command_files_init(&o->in, argc);
    if (r >= 0)
        return r;
    static const struct {
        const char *name;
        size_t offset;
    } flags[] = {
        {"--forces", offsetof(energy_options, forces)},     {"--stress", offsetof(energy_options, stress)},
        {"--progress", offsetof(energy_options, progress)}, {"--quiet", offsetof(energy_options, quiet)},
        {"--resume", offsetof(energy_options, resume)},
    };
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        if ((r = command_argument(argc, argv, &i, &o->in, &o->run)) != ARGUMENT_OWN) {
            if (r == ARGUMENT_TAKEN)
                continue;
            return r;
        }
        int is_flag = 0;
        for (size_t k = 0; k < sizeof flags / sizeof *flags && !is_flag; k++)
            if (strcmp(arg, flags[k].name) == 0) {
                *(int *)((char *)o + flags[k].offset) = 1;
                is_flag = 1;
            }
        if (is_flag)
            continue;
        if ((r = option_value(argc, argv, &i, "--neighbors", &value)) != 0) {
            static const char *const kinds[] = {"auto", "dense", "sparse"}; /* mlff_neighbors */
            const int k = r < 0 ? -1 : option_choice("--neighbors", value, kinds, 3);
            if (k < 0)
                return EXIT_USAGE;
            o->neighbors = (mlff_neighbors)k;
        } else if ((r = option_value(argc, argv, &i, "--chunk-atoms", &value)) != 0) {
            if (r < 0 || option_positive("--chunk-atoms", value, INT64_MAX, &o->chunk_atoms) != 0)
                return EXIT_USAGE;
        } else if ((r = option_value(argc, argv, &i, "--batch-atoms", &value)) != 0) {
            if (r < 0 || option_positive("--batch-atoms", value, (long long)1 << 40, &o->batch_atoms) != 0)
                return EXIT_USAGE;
        } else if ((r = option_value(argc, argv, &i, "--io-threads", &value)) != 0) {
            if (r < 0 || option_positive("--io-threads", value, 64, &o->io_threads) != 0)
                return EXIT_USAGE;
        } else if ((r = option_value(argc, argv, &i, "--on-error", &value)) != 0) {
            static const char *const choices[] = {"stop", "skip"};
            const int k = r < 0 ? -1 : option_choice("--on-error", value, choices, 2);
            if (k < 0)
                return EXIT_USAGE;
            o->skip_bad = k;
        } else {
            return usage_error("energy: unknown option '%s'", arg);
        }
    }
    if (o->in.n_files == 0)
        return usage_error("energy: no input files");
    if (o->resume && !o->run.output)
        return usage_error("energy: --resume needs -o OUT (the output to go on with)");
    if (o->progress && o->quiet)
        return usage_error("energy: --progress and --quiet contradict each other");
    return -1;
}

/* Every named file can be opened, before any work is done on the first;
 * and OUT is none of them: it is written while they are read. */
static int check_files(const energy_options *o)
{
    struct stat out_info;
    int out_exists = o->run.output && stat(o->run.output, &out_info) == 0 && S_ISREG(out_info.st_mode);
    for (size_t k = 0; out_exists && k < o->in.n_files; k++) {
        struct stat in_info;
        if (strcmp(o->in.files[k], "-") != 0 && stat(o->in.files[k], &in_info) == 0 &&
            in_info.st_dev == out_info.st_dev && in_info.st_ino == out_info.st_ino) {
            error_line("mlff: %s is both an input and the output", o->in.files[k]);
            return -1;
        }
    }
    /* Pipes and devices (process substitution's /dev/fd/N) are left alone:
     * opening or reading them here would take what the run must read. */
    for (size_t k = 0; k < o->in.n_files; k++) {
        struct stat info;
        if (strcmp(o->in.files[k], "-") == 0)
            continue;
        if (stat(o->in.files[k], &info) != 0) {
            error_line("%s: cannot open: %s", o->in.files[k], strerror(errno));
            return -1;
        }
        if (S_ISDIR(info.st_mode)) {
            error_line("%s: cannot read: %s", o->in.files[k], strerror(EISDIR));
            return -1;
        }
        if (!S_ISREG(info.st_mode))
            continue;
        int fd = open(o->in.files[k], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            error_line("%s: cannot open: %s", o->in.files[k], strerror(errno));
            return -1;
        }
        close(fd);
    }
    return 0;
}

/* Counts the input's frames beside the run, for the progress line. */
typedef struct counting {
    const frame_input *input;
    progress *progress;
    atomic_int cancel;
} counting;

static void *count_main(void *arg)
{
    counting *c = arg;
    int64_t total = frame_input_count(c->input, &c->cancel);
    if (total >= 0)
        progress_set_total(c->progress, total);
    return NULL;
}

static progress_mode choose_progress(const energy_options *o)
{
    int terminal = isatty(STDERR_FILENO);
    if (o->quiet)
        return PROGRESS_OFF;
    if (o->progress)
        return terminal ? PROGRESS_TERMINAL : PROGRESS_LINES;
    return terminal ? PROGRESS_TERMINAL : PROGRESS_OFF;
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* Everything a run holds, freed in one place. */
typedef struct energy_state {
    energy_options opt;
    frame_input *input;
    mlff_context *ctx;
    progress progress;
    int progress_ready;
    counting counter;
    pthread_t counter_thread;
    int counter_started;
} energy_state;

static int run_energy(energy_state *s)
{
    energy_options *o = &s->opt;
    char err[XYZ_ERROR_SIZE + 256];
    if (check_files(o) != 0)
        return EXIT_BAD_INPUT;
    if (interrupt_install() != 0) {
        error_line("mlff: cannot install the signal handlers: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    s->input = frame_input_new(o->in.files, o->in.n_files, o->skip_bad);
    if (!s->input) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    progress_mode mode = choose_progress(o);
    progress_init(&s->progress, mode, frame_input_progress(s->input));
    s->progress_ready = 1;
    if (mode != PROGRESS_OFF && frame_input_countable(s->input)) {
        s->counter.input = s->input;
        s->counter.progress = &s->progress;
        atomic_init(&s->counter.cancel, 0);
        s->counter_started = pthread_create(&s->counter_thread, NULL, count_main, &s->counter) == 0;
    }

    /* --resume: what OUT holds already is not done again. */
    resume_state resumed;
    memset(&resumed, 0, sizeof resumed);
    if (o->resume) {
        int code = resume_prepare(o->run.output, s->input, o->forces, &s->progress, &resumed, err, sizeof err);
        if (code == EXIT_INTERRUPTED) {
            progress_finish(&s->progress);
            error_line("mlff: interrupted (%s) while checking %s; nothing was changed",
                       signal_name(interrupt_requested()), o->run.output);
            return EXIT_INTERRUPTED;
        }
        if (code != EXIT_OK) {
            progress_finish(&s->progress);
            error_line("%s", err);
            return code;
        }
        if (resumed.cut_bytes > 0 && !o->quiet) {
            snprintf(err, sizeof err, "mlff: %s ended in a torn frame: %lld bytes cut off", o->run.output,
                     (long long)resumed.cut_bytes);
            progress_message(&s->progress, err);
        }
        if ((o->run.verbose || mode != PROGRESS_OFF) && resumed.frames > 0) {
            snprintf(err, sizeof err, "mlff: %s holds %lld frames; going on after input frame %lld",
                     o->run.output, (long long)resumed.frames, (long long)resumed.last_index);
            progress_message(&s->progress, err);
        }
    }

    /* Device and model. */
    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.device = o->run.device;
    settings.precision = o->run.precision;
    settings.neighbors = o->neighbors;
    settings.max_chunk_atoms = o->chunk_atoms;
    mlff_model *model = NULL;
    mlff_status status = mlff_open(&settings, o->run.model, &s->ctx, &model);
    if (status != MLFF_OK) {
        progress_finish(&s->progress);
        error_line("mlff: cannot open the device or the model: %s", library_message(s->ctx, status));
        return EXIT_BAD_INPUT;
    }
    const char *device = mlff_device_description(s->ctx);
    if (o->run.verbose) {
        mlff_model_info info;
        memset(&info, 0, sizeof info);
        snprintf(err, sizeof err, "mlff: device: %s", device);
        progress_message(&s->progress, err);
        if (mlff_model_get_info(model, &info) == MLFF_OK) {
            snprintf(err, sizeof err, "mlff: model: %s (%s)", info.name ? info.name : "?", info.path ? info.path : "?");
            progress_message(&s->progress, err);
        }
    }

    output out;
    if (output_open(&out, o->run.output, o->resume, err, sizeof err) != 0) {
        progress_finish(&s->progress);
        error_line("%s", err);
        return EXIT_BAD_INPUT;
    }
    energy_run run;
    memset(&run, 0, sizeof run);
    run.ctx = s->ctx;
    run.model = model;
    run.input = s->input;
    run.out = &out;
    run.progress = &s->progress;
    run.forces = o->forces;
    run.stress = o->stress;
    run.skip_bad = o->skip_bad;
    run.target_atoms = o->batch_atoms ? o->batch_atoms : batch_target_atoms(device);
    run.io_threads = o->io_threads ? (int)o->io_threads : parallel_default_threads();
    run.last_index = resumed.last_index;
    progress_start(&s->progress, resumed.last_index);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int failed_to_start = energy_pipeline_run(&run) != 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int close_failed = output_close(&out, err, sizeof err) != 0;
    if (s->counter_started) {
        atomic_store(&s->counter.cancel, 1);
        pthread_join(s->counter_thread, NULL);
        s->counter_started = 0;
    }
    progress_finish(&s->progress);

    if (failed_to_start) {
        error_line("mlff: cannot start the threads of the run");
        return EXIT_BAD_INPUT;
    }
    if (close_failed && !run.ended_by_error) {
        error_line("%s", err);
        return EXIT_BAD_INPUT;
    }
    if (run.bad_frames > 0)
        error_line("mlff: %lld bad frame%s left out, %lld written", (long long)run.bad_frames,
                   run.bad_frames == 1 ? "" : "s", (long long)run.frames_written);
    if (o->run.verbose)
        error_line("mlff: %lld frames, %lld atoms, evaluated in %.3f s (%lld batches, %.3f s end to end)",
                   (long long)run.frames_written, (long long)run.atoms_written, run.compute_seconds,
                   (long long)run.batches,
                   (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    if (run.ended_by_error)
        return EXIT_BAD_INPUT;
    int sig = interrupt_requested();
    if (sig > 0) {
        if (o->run.output)
            error_line("mlff: interrupted (%s) after input frame %lld: %s holds whole frames; run the "
                       "same command with --resume to go on",
                       signal_name(sig), (long long)run.last_index, o->run.output);
        else
            error_line("mlff: interrupted (%s) after input frame %lld: the output holds whole frames",
                       signal_name(sig), (long long)run.last_index);
        return EXIT_INTERRUPTED;
    }
    return EXIT_OK;
}

int command_energy(int argc, char **argv)
{
    energy_state s;
    memset(&s, 0, sizeof s);
    int code = parse_options(argc, argv, &s.opt);
    if (code < 0)
        code = run_energy(&s);
    if (s.counter_started) {
        atomic_store(&s.counter.cancel, 1);
        pthread_join(s.counter_thread, NULL);
    }
    interrupt_uninstall();
    if (s.progress_ready)
        progress_destroy(&s.progress);
    mlff_context_destroy(s.ctx);
    frame_input_free(s.input);
    free(s.opt.in.files);
    return code;
}
