/*
 * `mlff hessian`: for each frame of the inputs, the Hessian (the library's
 * mlff_compute_hessians) and its harmonic analysis (harmonic.h), one line
 * of JSON a frame (hessian_json.h), in input order, to standard output or
 * -o OUT. Exit statuses: cli_util.h.
 *
 * Frames are gathered into one library call until their Hessians would
 * take HESSIAN_BATCH_BYTES or they hold the device's batch of atoms
 * (batcher.h), so that memory stays bounded whatever the input's size; a
 * larger frame is a call of its own. A call costs about the largest
 * frame's atoms times all its atoms (mlff.h: the tangent directions of the
 * largest system run over every system), against the sum of the squares
 * of the frames' atoms one call each: frames of a size (a trajectory) share
 * a call, and a frame that would make the call cost more than 5/4 of that
 * starts the next one. Each line is written as soon as it is
 * formatted, so an interrupted or failed run leaves the lines before it
 * whole; SIGINT or SIGTERM finishes the batch in hand (interrupt.h).
 */
#include "commands.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batcher.h"
#include "cli_util.h"
#include "frame_reader.h"
#include "harmonic.h"
#include "hessian_json.h"
#include "interrupt.h"
#include "mlff.h"
#include "output.h"
#include "xyz.h"

/* The Hessians (8 (3N)^2 bytes a frame) one batch may hold. */
#define HESSIAN_BATCH_BYTES ((int64_t)256 << 20)

typedef enum projection_choice { PROJECT_AUTO = -1 } projection_choice;

typedef struct hessian_options {
    run_options run; /* --model, --device, --precision, --verbose, -o */
    int projection;  /* PROJECT_AUTO or a harmonic_projection */
    command_files in;
} hessian_options;

/* Returns -1 when the options are fine, else the exit status. */
static int parse_options(int argc, char **argv, hessian_options *o)
{
    /* The CPU unless --device says otherwise: float64 (the default
     * precision) runs on every CPU, not on every GPU. */
    o->run.device = MLFF_DEVICE_CPU;
    o->run.precision = MLFF_PRECISION_FLOAT64; /* wavenumbers need it: see README */
    o->projection = PROJECT_AUTO;
    int r = command_files_init(&o->in, argc);
    if (r >= 0)
        return r;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        if ((r = command_argument(argc, argv, &i, &o->in, &o->run)) != ARGUMENT_OWN) {
            if (r == ARGUMENT_TAKEN)
                continue;
            return r;
        }
        if ((r = option_value(argc, argv, &i, "--project", &value)) == 0)
            return usage_error("hessian: unknown option '%s'", arg);
        /* auto, then harmonic_projection's values in order */
        static const char *const projections[] = {"auto", "none", "translations", "rigid"};
        const int k = r < 0 ? -1 : option_choice("--project", value, projections, 4);
        if (k < 0)
            return EXIT_USAGE;
        o->projection = k == 0 ? PROJECT_AUTO : k - 1;
    }
    if (o->in.n_files == 0)
        return usage_error("hessian: no input files");
    return -1;
}

/* A frame read and waiting for its batch. */
typedef struct pending_frame {
    xyz_frame frame;
    frame_origin origin;
    double *masses; /* the frame's masses column, else the standard masses */
} pending_frame;

/* Everything a run holds, freed in one place. */
typedef struct hessian_run {
    hessian_options opt;
    frame_input *input;
    mlff_context *ctx;
    mlff_model *model;
    output out;
    int out_open;
    xyz_buffer line;
    pending_frame *frames;
    size_t n_frames, capacity;
    int64_t frames_written;
    char err[XYZ_ERROR_SIZE + 256];
} hessian_run;

/* "FILE:LINE: frame N[, atom M]: what" for a frame of the batch (atom from 0, -1: the frame). */
static void frame_error(const pending_frame *p, int64_t atom, const char *what)
{
    if (atom >= 0 && atom < p->frame.n_atoms)
        error_line("%s:%ld: frame %zu, atom %lld: %s", p->origin.file, xyz_atom_line(&p->frame, atom),
                   p->origin.frame_in_file, (long long)atom + 1, what);
    else
        error_line("%s:%ld: frame %zu: %s", p->origin.file, p->frame.comment_line, p->origin.frame_in_file, what);
}

static void drop_frames(hessian_run *r)
{
    for (size_t k = 0; k < r->n_frames; k++) {
        xyz_frame_free(&r->frames[k].frame);
        free(r->frames[k].masses);
    }
    r->n_frames = 0;
}

/* Takes the frame into the batch with its masses: 0; -1 out of memory
 * (reported); 1 for a bad mass, the message in r->err (the frame is freed). */
static int add_frame(hessian_run *r, xyz_frame *frame, const frame_origin *origin)
{
    pending_frame p = {*frame, *origin, NULL};
    memset(frame, 0, sizeof *frame);
    p.masses = malloc((size_t)p.frame.n_atoms * sizeof *p.masses);
    if (r->n_frames == r->capacity && p.masses) {
        size_t capacity = r->capacity ? 2 * r->capacity : 64;
        pending_frame *grown = realloc(r->frames, capacity * sizeof *grown);
        if (grown) {
            r->frames = grown;
            r->capacity = capacity;
        }
    }
    if (!p.masses || r->n_frames == r->capacity) {
        xyz_frame_free(&p.frame);
        free(p.masses);
        error_line("mlff: out of memory");
        return -1;
    }
    for (int64_t a = 0; a < p.frame.n_atoms; a++) {
        const double m = p.frame.masses ? p.frame.masses[a] : harmonic_standard_mass(p.frame.numbers[a]);
        if (!(m > 0)) {
            snprintf(r->err, sizeof r->err, "%s:%ld: frame %zu, atom %lld: mass %.17g is not positive",
                     p.origin.file, xyz_atom_line(&p.frame, a), p.origin.frame_in_file, (long long)a + 1, m);
            xyz_frame_free(&p.frame);
            free(p.masses);
            return 1;
        }
        p.masses[a] = m;
    }
    r->frames[r->n_frames++] = p;
    return 0;
}

static harmonic_projection projection_of(const hessian_options *o, const xyz_frame *f)
{
    if (o->projection != PROJECT_AUTO)
        return (harmonic_projection)o->projection;
    return f->pbc[0] || f->pbc[1] || f->pbc[2] ? HARMONIC_PROJECT_TRANSLATIONS : HARMONIC_PROJECT_RIGID;
}

static const char *const projection_names[] = {"none", "translations", "rigid"};

/* The first count frames of the batch: Hessians, analyses, lines written.
 * EXIT_OK, or EXIT_BAD_INPUT after a message (the lines of the frames
 * before the one at fault written). */
static int evaluate(hessian_run *r, size_t count)
{
    int64_t atoms = 0, entries = 0;
    for (size_t k = 0; k < count; k++) {
        atoms += r->frames[k].frame.n_atoms;
        entries += 9 * r->frames[k].frame.n_atoms * r->frames[k].frame.n_atoms;
    }
    int64_t *offsets = malloc((count + 1) * sizeof *offsets);
    int32_t *numbers = malloc((size_t)atoms * sizeof *numbers);
    double *positions = malloc((size_t)atoms * 3 * sizeof *positions);
    double *cells = malloc(count * 9 * sizeof *cells);
    uint8_t *pbc = malloc(count * 3);
    double *energies = malloc(count * sizeof *energies);
    double *forces = malloc((size_t)atoms * 3 * sizeof *forces);
    double *hessians = malloc((size_t)entries * sizeof *hessians);
    int code = EXIT_OK;
    if (!offsets || !numbers || !positions || !cells || !pbc || !energies || !forces || !hessians) {
        error_line("mlff: out of memory (the Hessians of %zu frames, %lld atoms)", count, (long long)atoms);
        code = EXIT_BAD_INPUT;
        goto done;
    }
    offsets[0] = 0;
    for (size_t k = 0; k < count; k++) {
        const xyz_frame *f = &r->frames[k].frame;
        memcpy(numbers + offsets[k], f->numbers, (size_t)f->n_atoms * sizeof *numbers);
        memcpy(positions + 3 * offsets[k], f->positions, (size_t)f->n_atoms * 3 * sizeof *positions);
        memcpy(cells + 9 * k, f->cell, sizeof f->cell);
        memcpy(pbc + 3 * k, f->pbc, 3);
        offsets[k + 1] = offsets[k] + f->n_atoms;
    }
    const mlff_batch batch = {(int64_t)count, offsets, numbers, positions, cells, pbc};
    mlff_hessian_results results;
    memset(&results, 0, sizeof results);
    results.energies = energies;
    results.forces = forces;
    results.hessians = hessians;
    mlff_status status = mlff_compute_hessians(r->model, &batch, &results);
    if (status != MLFF_OK) {
        int64_t system = -1, atom = -1;
        char what[1024];
        snprintf(what, sizeof what, "%s", library_message(r->ctx, status));
        if (status == MLFF_ERROR_BAD_INPUT && mlff_last_error_location(r->ctx, &system, &atom) == MLFF_OK &&
            system >= 0 && system < (int64_t)count) {
            /* The frames before the bad one are good: their lines first. */
            code = system > 0 ? evaluate(r, (size_t)system) : EXIT_OK;
            if (code == EXIT_OK)
                frame_error(&r->frames[system], atom, what);
        } else {
            error_line("mlff: %s", what);
        }
        code = EXIT_BAD_INPUT;
        goto done;
    }
    const double *hessian = hessians;
    for (size_t k = 0; k < count; k++) {
        const pending_frame *p = &r->frames[k];
        const int64_t n = 3 * p->frame.n_atoms;
        const harmonic_projection projection = projection_of(&r->opt, &p->frame);
        harmonic_result analysis;
        if (!isfinite(energies[k])) {
            frame_error(p, -1, "the model returned a non-finite energy");
            code = EXIT_BAD_INPUT;
            goto done;
        }
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(forces[3 * offsets[k] + i])) {
                frame_error(p, i / 3, "the model returned a non-finite force");
                code = EXIT_BAD_INPUT;
                goto done;
            }
        if (harmonic_analysis(p->frame.n_atoms, p->masses, p->frame.positions, hessian, projection, &analysis,
                              r->err, sizeof r->err) != 0) {
            frame_error(p, -1, r->err);
            code = EXIT_BAD_INPUT;
            goto done;
        }
        const hessian_frame line = {p->origin.index, p->frame.n_atoms, energies[k], forces + 3 * offsets[k],
                                    hessian, p->masses, projection_names[projection], &analysis};
        int failed = hessian_json_write(&r->out, &r->line, &line, r->err, sizeof r->err);
        harmonic_result_free(&analysis);
        if (failed) {
            error_line("%s", r->err);
            code = EXIT_BAD_INPUT;
            goto done;
        }
        r->frames_written++;
        hessian += n * n;
    }
    if (output_checkpoint(&r->out, r->err, sizeof r->err) != 0) {
        error_line("%s", r->err);
        code = EXIT_BAD_INPUT;
    }
done:
    free(offsets);
    free(numbers);
    free(positions);
    free(cells);
    free(pbc);
    free(energies);
    free(forces);
    free(hessians);
    return code;
}

static int run_hessian(hessian_run *r)
{
    hessian_options *o = &r->opt;
    if (interrupt_install() != 0) {
        error_line("mlff: cannot install the signal handlers: %s", strerror(errno));
        return EXIT_BAD_INPUT;
    }
    r->input = frame_input_new(o->in.files, o->in.n_files, 0);
    if (!r->input) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.device = o->run.device;
    settings.precision = o->run.precision;
    mlff_status status = mlff_open(&settings, o->run.model, &r->ctx, &r->model);
    if (status != MLFF_OK) {
        error_line("mlff: cannot open the device or the model: %s", library_message(r->ctx, status));
        return EXIT_BAD_INPUT;
    }
    const char *device = mlff_device_description(r->ctx);
    if (o->run.verbose) {
        mlff_model_info info;
        memset(&info, 0, sizeof info);
        error_line("mlff: device: %s", device);
        if (mlff_model_get_info(r->model, &info) == MLFF_OK)
            error_line("mlff: model: %s (%s)", info.name ? info.name : "?", info.path ? info.path : "?");
    }
    if (output_open(&r->out, o->run.output, 0, r->err, sizeof r->err) != 0) {
        error_line("%s", r->err);
        return EXIT_BAD_INPUT;
    }
    r->out_open = 1;

    const int64_t target_atoms = batch_target_atoms(device);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int64_t atoms = 0, bytes = 0, largest = 0, squares = 0;
    int code = EXIT_OK, ended = 0;
    while (!ended && code == EXIT_OK && !interrupt_requested()) {
        xyz_frame frame;
        frame_origin origin;
        int got = frame_input_next(r->input, &frame, &origin, r->err, sizeof r->err);
        if (got == XYZ_OK) {
            const int64_t n = frame.n_atoms, wider = n > largest ? n : largest;
            if (r->n_frames > 0 && wider * (atoms + n) * 4 > (squares + n * n) * 5) {
                code = evaluate(r, r->n_frames);
                drop_frames(r);
                atoms = bytes = largest = squares = 0;
            }
            atoms += n;
            bytes += 72 * n * n;
            squares += n * n;
            largest = n > largest ? n : largest;
            if (code != EXIT_OK) {
                xyz_frame_free(&frame);
                break;
            }
            int added = add_frame(r, &frame, &origin);
            if (added < 0)
                return EXIT_BAD_INPUT;
            if (added > 0) {
                /* The frames before the bad one are written first. */
                char message[sizeof r->err];
                memcpy(message, r->err, sizeof message);
                if (r->n_frames > 0 && evaluate(r, r->n_frames) != EXIT_OK)
                    return EXIT_BAD_INPUT;
                error_line("%s", message);
                return EXIT_BAD_INPUT;
            }
        } else if (got == XYZ_END) {
            ended = 1;
        } else if (interrupt_requested()) {
            break; /* the read was cut short by the signal: the frames in hand are still done */
        } else {
            /* The frames before the bad one are written first. */
            char message[sizeof r->err];
            memcpy(message, r->err, sizeof message);
            if (r->n_frames > 0 && evaluate(r, r->n_frames) != EXIT_OK)
                return EXIT_BAD_INPUT;
            error_line("%s", message);
            return EXIT_BAD_INPUT;
        }
        if (code == EXIT_OK && r->n_frames > 0 && (ended || atoms >= target_atoms || bytes >= HESSIAN_BATCH_BYTES)) {
            code = evaluate(r, r->n_frames);
            drop_frames(r);
            atoms = bytes = largest = squares = 0;
        }
    }
    if (code != EXIT_OK)
        return code;
    int sig = interrupt_requested();
    if (sig != 0 && r->n_frames > 0) {
        code = evaluate(r, r->n_frames);
        drop_frames(r);
        if (code != EXIT_OK)
            return code;
    }
    r->out_open = 0;
    if (output_close(&r->out, r->err, sizeof r->err) != 0) {
        error_line("%s", r->err);
        return EXIT_BAD_INPUT;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (o->run.verbose)
        error_line("mlff: %lld frames in %.3f s", (long long)r->frames_written,
                   (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    if (sig > 0) {
        error_line("mlff: interrupted (%s) after %lld frames: the output holds their lines, whole",
                   sig == SIGINT ? "SIGINT" : "SIGTERM", (long long)r->frames_written);
        return EXIT_INTERRUPTED;
    }
    return EXIT_OK;
}

int command_hessian(int argc, char **argv)
{
    hessian_run *r = calloc(1, sizeof *r);
    if (!r) {
        error_line("mlff: out of memory");
        return EXIT_BAD_INPUT;
    }
    int code = parse_options(argc, argv, &r->opt);
    if (code < 0)
        code = run_hessian(r);
    if (r->out_open)
        output_close(&r->out, r->err, sizeof r->err); /* after a failure, reported already */
    interrupt_uninstall();
    drop_frames(r);
    free(r->frames);
    xyz_buffer_free(&r->line);
    mlff_context_destroy(r->ctx);
    frame_input_free(r->input);
    free(r->opt.in.files);
    free(r);
    return code;
}
