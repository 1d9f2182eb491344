/* The stages of a streamed `mlff energy` (energy_pipeline.h). */
#include "energy_pipeline.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batcher.h"
#include "cli_util.h"
#include "interrupt.h"
#include "parallel.h"
#include "queue.h"

typedef struct pipeline {
    energy_run *run;
    queue parsed, evaluated;
    batch *gathering; /* the reader's batch being filled */
    /* Split reading (io_threads > 1): the gathering batch's last n_pending
     * frames are split, their atoms not parsed yet. */
    xyz_split_frame *pending;
    uint8_t *bad;     /* per pending frame: its atoms did not parse */
    size_t n_pending, pending_capacity;
    int settling;     /* settle() is reading: on_wait leaves the batch alone */
} pipeline;

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* Reader                                                                   */

static void hand_on(pipeline *p)
{
    if (p->gathering) {
        queue_push(&p->parsed, p->gathering);
        p->gathering = NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* Split reading: atoms parsed in threads                                   */

typedef struct parse_job {
    pipeline *p;
    size_t first; /* the batch's first pending frame */
    int n_parts;
} parse_job;

static void parse_part(void *arg, int part)
{
    parse_job *j = arg;
    pipeline *p = j->p;
    batch *b = p->gathering;
    size_t lo, hi;
    parallel_range(b->offsets + j->first, p->n_pending, part, j->n_parts, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        xyz_frame view = batch_frame_view(b, j->first + k);
        const char *text = frame_input_split_text(p->run->input, &p->pending[k]);
        p->bad[k] = xyz_parse_split(text, &p->pending[k], &view) != XYZ_OK;
    }
}

/* The pending frames' atoms into the batch; whether any is bad. */
static int parse_pending(pipeline *p)
{
    batch *b = p->gathering;
    parse_job j = {p, b->n_frames - p->n_pending, 1};
    j.n_parts = parallel_parts(p->run->io_threads, b->n_atoms - b->offsets[j.first]);
    parallel_run(j.n_parts, parse_part, &j);
    for (size_t k = 0; k < p->n_pending; k++)
        if (p->bad[k])
            return 1;
    return 0;
}

/* A split frame joins the gathering batch, pending. 0, or -1 out of memory. */
static int add_pending(pipeline *p, batch *b, xyz_frame *f, const xyz_split_frame *split, const frame_origin *origin)
{
    if (p->n_pending == p->pending_capacity) {
        size_t cap = p->pending_capacity ? 2 * p->pending_capacity : 256;
        xyz_split_frame *pending = realloc(p->pending, cap * sizeof *pending);
        if (pending)
            p->pending = pending;
        uint8_t *bad = pending ? realloc(p->bad, cap) : NULL;
        if (!bad)
            return -1;
        p->bad = bad;
        p->pending_capacity = cap;
    }
    if (batch_add_split(b, f, origin) != 0)
        return -1;
    p->pending[p->n_pending++] = *split;
    return 0;
}

enum { SETTLED, SETTLE_SEQUENTIAL, SETTLE_NO_MEMORY };

/* Marks of settle_bad() in bad[]: */
enum { PARSED = 0, NOT_PARSED = 1, LEFT_OUT = 2 };

/*
 * The end of settle_bad(): pending frames from `cut` on leave the batch (to
 * be read again), and those before it that were left out go too, in one
 * pass. Then nothing is pending.
 */
static int settle_end(pipeline *p, size_t cut, int status)
{
    batch *b = p->gathering;
    const size_t first = b->n_frames - p->n_pending;
    if (cut < p->n_pending)
        batch_forget(b, first + cut);
    batch_drop(b, first, p->bad, cut < p->n_pending ? cut : p->n_pending);
    p->n_pending = 0;
    if (status == SETTLED)
        frame_input_settle(p->run->input);
    return status;
}

/* settle() where a pending frame is bad. */
static int settle_bad(pipeline *p)
{
    energy_run *r = p->run;
    batch *b = p->gathering;
    const size_t first = b->n_frames - p->n_pending;
    for (size_t k = 0;;) {
        while (k < p->n_pending && p->bad[k] != NOT_PARSED)
            k++;
        if (k == p->n_pending)
            return settle_end(p, k, SETTLED);
        if (!r->skip_bad) {
            frame_input_rewind(r->input, &p->pending[k]);
            return settle_end(p, k, SETTLE_SEQUENTIAL);
        }
        xyz_stream_pos end;
        frame_input_tell(r->input, &end);
        frame_input_seek(r->input, &p->pending[k].before);
        char message[XYZ_ERROR_SIZE];
        xyz_frame f;
        frame_origin origin;
        int status = frame_input_next(r->input, &f, &origin, message, sizeof message);
        if (status != XYZ_ERROR_FORMAT || frame_input_failed(r->input)) {
            /* Not what the parse said: the reader takes it from before the frame. */
            xyz_frame_free(&f);
            frame_input_rewind(r->input, &p->pending[k]);
            return settle_end(p, k, SETTLE_SEQUENTIAL);
        }
        if (batch_note_bad(b, origin.index, message) != 0)
            return settle_end(p, k, SETTLE_NO_MEMORY);
        /* Does reading go on where the next pending frame starts? */
        int same = 0;
        xyz_frame g;
        xyz_split_frame next;
        frame_origin next_origin;
        if (k + 1 < p->n_pending && frame_input_split(r->input, &g, &next, &next_origin) == XYZ_OK) {
            const batch_frame *kept = &b->frames[first + k + 1];
            same = next_origin.frame_in_file == kept->origin.frame_in_file &&
                   g.count_line == kept->frame.count_line;
            xyz_frame_free(&g);
            frame_input_seek(r->input, same ? &end : &next.before);
        }
        if (same) {
            p->bad[k++] = LEFT_OUT;
            continue;
        }
        /* It does not (or the bad frame was the last): the frames after it go; read on from here. */
        return settle_end(p, k, SETTLED);
    }
}

/*
 * The pending frames parsed. A bad one is read again by frame_input_next,
 * which says what is wrong and goes on from there as a reader that never
 * split does: with --on-error skip it is noted and left out here, and the
 * frames after it stay where reading goes on exactly where they start (a
 * bad atom line, then the next frame's count line, as usual); otherwise
 * the batch ends before it and the input is back before it
 * (SETTLE_SEQUENTIAL): the reader's next frame_input_next reads it.
 */
static int settle(pipeline *p)
{
    if (p->n_pending == 0 || !parse_pending(p)) {
        frame_input_settle(p->run->input);
        p->n_pending = 0;
        return SETTLED;
    }
    p->settling = 1;
    int status = settle_bad(p);
    p->settling = 0;
    /* Bad frames take no room: the notes bound what a batch carries. */
    if (status != SETTLE_NO_MEMORY && p->gathering->n_notes >= BATCH_MAX_NOTES)
        hand_on(p);
    return status;
}

/* A pipe is slow to give more: what was gathered goes on meanwhile. Called
 * from inside a read: pending frames go on if they are good, else they
 * wait for the reader to settle them. */
static void on_wait(void *arg)
{
    pipeline *p = arg;
    if (p->settling || !p->gathering || p->gathering->n_frames == 0)
        return;
    if (p->n_pending > 0) {
        if (parse_pending(p))
            return;
        frame_input_settle(p->run->input);
        p->n_pending = 0;
    }
    hand_on(p);
}

/* The batch being gathered, made if needed; NULL when out of memory. */
static batch *gathering(pipeline *p)
{
    if (!p->gathering)
        p->gathering = batch_new();
    return p->gathering;
}

/* What ends the reading goes on in a batch of its own, after the frames before it. */
static void end_with(pipeline *p, int64_t index, const char *message)
{
    hand_on(p);
    batch *b = batch_new();
    if (b && batch_set_fatal(b, index, message) == 0) {
        queue_push(&p->parsed, b);
        return;
    }
    batch_free(b);
    static const char out_of_memory[] = "mlff: out of memory";
    /* Nothing to carry the message: the stop request says it. */
    fprintf(stderr, "%s\n", out_of_memory);
    interrupt_stop();
}

/*
 * Split reading's turn of the reader: 1 when the next frame is for
 * frame_input_next, 0 to go on, -1 when the reading ends.
 */
static int split_step(pipeline *p)
{
    energy_run *r = p->run;
    xyz_frame f;
    xyz_split_frame split;
    frame_origin origin;
    int status = frame_input_split(r->input, &f, &split, &origin);
    int settled = SETTLED;
    if (status == XYZ_OK) {
        batch *b = gathering(p);
        if (!b || add_pending(p, b, &f, &split, &origin) != 0) {
            xyz_frame_free(&f);
            settled = settle(p);
            end_with(p, settled == SETTLED ? origin.index : INT64_MAX, "mlff: out of memory");
            return -1;
        }
        if (b->n_atoms < r->target_atoms)
            return 0;
        settled = settle(p);
        if (settled == SETTLED) {
            hand_on(p);
            return 0;
        }
    } else {
        settled = settle(p);
        if (settled == SETTLED)
            return 1;
    }
    if (settled == SETTLE_NO_MEMORY) {
        end_with(p, INT64_MAX, "mlff: out of memory");
        return -1;
    }
    return 1;
}

static void *reader_main(void *arg)
{
    pipeline *p = arg;
    energy_run *r = p->run;
    char message[XYZ_ERROR_SIZE];
    frame_input_on_wait(r->input, on_wait, p);
    int sequential = r->io_threads <= 1;
    while (!interrupt_requested()) {
        if (r->io_threads > 1 && !sequential) {
            int step = split_step(p);
            if (step < 0)
                break;
            sequential = step;
            continue;
        }
        sequential = r->io_threads <= 1;
        xyz_frame f;
        frame_origin origin;
        int status = frame_input_next(r->input, &f, &origin, message, sizeof message);
        if (status == XYZ_END)
            break;
        if (status != XYZ_OK && interrupt_requested())
            break; /* a read cut short by the stop request */
        batch *b = gathering(p);
        if (!b) {
            xyz_frame_free(&f);
            end_with(p, INT64_MAX, "mlff: out of memory");
            break;
        }
        if (status == XYZ_OK) {
            if (batch_add(b, &f, &origin) != 0) {
                xyz_frame_free(&f);
                end_with(p, origin.index, "mlff: out of memory");
                break;
            }
            if (b->n_atoms >= r->target_atoms)
                hand_on(p);
            continue;
        }
        if (status == XYZ_ERROR_FORMAT && r->skip_bad && !frame_input_failed(r->input)) {
            if (batch_note_bad(b, origin.index, message) != 0) {
                end_with(p, origin.index, "mlff: out of memory");
                break;
            }
            if (b->n_notes >= BATCH_MAX_NOTES)
                hand_on(p);
            continue;
        }
        /* The first bad frame (--on-error stop), or an input that cannot go on. */
        end_with(p, origin.index ? origin.index : INT64_MAX, message);
        break;
    }
    /* Stopped: the frames split so far go on if they are good (to the first bad one). */
    if (p->gathering && p->n_pending > 0 && parse_pending(p)) {
        size_t k = 0;
        while (!p->bad[k])
            k++;
        batch_forget(p->gathering, p->gathering->n_frames - p->n_pending + k);
    }
    p->n_pending = 0;
    frame_input_on_wait(r->input, NULL, NULL);
    hand_on(p);
    queue_close(&p->parsed);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Evaluation                                                               */

/* "FILE:LINE: frame N[, atom M]: what" for frame k of the batch. */
static void frame_message(const batch *b, size_t k, int64_t atom, const char *what, char *out, size_t size)
{
    const batch_frame *bf = &b->frames[k];
    if (atom >= 0 && atom < bf->frame.n_atoms)
        snprintf(out, size, "%s:%ld: frame %zu, atom %lld: %s", bf->origin.file,
                 xyz_atom_line(&bf->frame, atom), bf->origin.frame_in_file, (long long)atom + 1, what);
    else
        snprintf(out, size, "%s:%ld: frame %zu: %s", bf->origin.file, bf->frame.comment_line,
                 bf->origin.frame_in_file, what);
}

/* Frame k is bad: left out with a note, or the run ends before it. */
static int bad_frame(energy_run *r, batch *b, size_t k, const char *message)
{
    int64_t index = b->frames[k].origin.index;
    int status = r->skip_bad ? batch_note_bad(b, index, message) : batch_set_fatal(b, index, message);
    if (r->skip_bad)
        batch_remove(b, k);
    else
        batch_truncate(b, k);
    return status;
}

static int finite_results(const energy_run *r, const batch *b, size_t k)
{
    if (!isfinite(b->energies[k]))
        return 0;
    for (int64_t i = 3 * b->offsets[k]; r->forces && i < 3 * b->offsets[k + 1]; i++)
        if (!isfinite(b->forces[i]))
            return 0;
    return 1;
}

/*
 * The library checks a batch before it computes and names the first bad
 * system it finds: that frame goes (with everything after it, to stop) and
 * the rest is evaluated again. A batch with several bad frames costs a
 * check for each, not a whole evaluation.
 */
static void evaluate(energy_run *r, batch *b)
{
    char message[XYZ_ERROR_SIZE + 1024];
    if (b->n_frames == 0)
        return;
    if (batch_alloc_results(b, r->forces, r->stress) != 0) {
        batch_set_fatal(b, b->frames[0].origin.index, "mlff: out of memory");
        batch_truncate(b, 0);
        return;
    }
    while (b->n_frames > 0) {
        mlff_batch in = {
            .n_systems = (int64_t)b->n_frames,
            .system_offsets = b->offsets,
            .atomic_numbers = b->numbers,
            .positions = b->positions,
            .cells = b->any_cell ? b->cells : NULL,
            .pbc = b->pbc,
        };
        mlff_results out = {.energies = b->energies, .forces = b->forces, .virials = b->virials};
        double start = seconds_now();
        mlff_status status = mlff_compute(r->model, &in, &out);
        r->compute_seconds += seconds_now() - start;
        if (status == MLFF_OK)
            break;
        int64_t system = -1, atom = -1;
        if ((status == MLFF_ERROR_BAD_INPUT || status == MLFF_ERROR_UNSUPPORTED) &&
            mlff_last_error_location(r->ctx, &system, &atom) == MLFF_OK && system >= 0 &&
            system < (int64_t)b->n_frames) {
            frame_message(b, (size_t)system, atom, library_message(r->ctx, status), message, sizeof message);
            if (bad_frame(r, b, (size_t)system, message) != 0) {
                batch_set_fatal(b, b->frames[0].origin.index, "mlff: out of memory");
                batch_truncate(b, 0);
            }
            continue;
        }
        /* Not one frame's fault (the device, memory): nothing of this batch can be written. */
        snprintf(message, sizeof message, "mlff: %s", library_message(r->ctx, status));
        batch_set_fatal(b, b->frames[0].origin.index, message);
        batch_truncate(b, 0);
        return;
    }
    for (size_t k = 0; k < b->n_frames;) {
        if (finite_results(r, b, k)) {
            k++;
            continue;
        }
        frame_message(b, k, -1, isfinite(b->energies[k]) ? "the model returned a non-finite force"
                                                          : "the model returned a non-finite energy",
                      message, sizeof message);
        size_t before = b->n_frames;
        bad_frame(r, b, k, message);
        if (!r->skip_bad || b->n_frames == before)
            break;
    }
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                   */

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

static int by_index(const void *a, const void *b)
{
    int64_t x = ((const batch_note *)a)->index, y = ((const batch_note *)b)->index;
    return (x > y) - (x < y);
}

/* Most threads formatting a batch (--io-threads' limit). */
#define WRITER_MAX_PARTS 64

typedef struct writer_state {
    pipeline *p;
    xyz_buffer text[WRITER_MAX_PARTS]; /* a range of frames each, written in order */
    int failed;
    /* The batch being formatted, in parts: */
    batch *b;
    int n_parts;
} writer_state;

static void format_part(void *arg, int part)
{
    writer_state *w = arg;
    const energy_run *r = w->p->run;
    const batch *b = w->b;
    xyz_buffer *text = &w->text[part];
    size_t lo, hi;
    parallel_range(b->offsets, b->n_frames, part, w->n_parts, &lo, &hi);
    text->size = 0;
    for (size_t k = lo; k < hi; k++) {
        xyz_frame view = batch_frame_view(b, k);
        double stress[9];
        xyz_results results = {
            .energy = &b->energies[k],
            .forces = b->forces ? b->forces + 3 * b->offsets[k] : NULL,
            .stress = b->virials && frame_stress(&view, b->virials + 9 * k, stress) ? stress : NULL,
            .input_frame = r->skip_bad ? b->frames[k].origin.index : 0,
        };
        xyz_write_frame_with(text, &view, &results);
    }
}

static void write_batch(writer_state *w, batch *b)
{
    energy_run *r = w->p->run;
    char message[XYZ_ERROR_SIZE];
    if (b->n_notes > 1)
        qsort(b->notes, b->n_notes, sizeof *b->notes, by_index);
    for (size_t k = 0; k < b->n_notes; k++)
        progress_message(r->progress, b->notes[k].message);
    r->bad_frames += (int64_t)b->n_notes;

    w->b = b;
    w->n_parts = parallel_parts(r->io_threads < WRITER_MAX_PARTS ? r->io_threads : WRITER_MAX_PARTS, b->n_atoms);
    if (b->n_frames > 0)
        parallel_run(w->n_parts, format_part, w);
    for (int part = 0; part < w->n_parts && b->n_frames > 0 && !w->failed; part++) {
        xyz_buffer *text = &w->text[part];
        if (text->failed) {
            progress_message(r->progress, "mlff: out of memory formatting the output");
            w->failed = 1;
        } else if (text->size && output_write(r->out, text->data, text->size, message, sizeof message) != 0) {
            progress_message(r->progress, message);
            w->failed = 1;
        }
    }
    if (!w->failed && b->n_frames > 0 && output_checkpoint(r->out, message, sizeof message) != 0) {
        progress_message(r->progress, message);
        w->failed = 1;
    }
    if (w->failed) {
        r->ended_by_error = 1;
        interrupt_stop();
        return;
    }
    r->frames_written += (int64_t)b->n_frames;
    r->atoms_written += b->n_atoms;
    r->batches++;
    if (b->last_index > r->last_index)
        r->last_index = b->last_index;
    progress_advance(r->progress, r->last_index, b->n_atoms);
    if (b->fatal.message) {
        progress_message(r->progress, b->fatal.message);
        r->ended_by_error = 1;
    }
}

static void *writer_main(void *arg)
{
    writer_state *w = arg;
    for (;;) {
        void *item;
        int got = queue_pop_timed(&w->p->evaluated, &item, 0.2);
        if (got == 0) {
            progress_tick(w->p->run->progress, 0);
            continue;
        }
        if (got < 0)
            break;
        batch *b = item;
        if (!w->failed)
            write_batch(w, b);
        batch_free(b);
    }
    for (int part = 0; part < WRITER_MAX_PARTS; part++)
        xyz_buffer_free(&w->text[part]);
    return NULL;
}

/* ------------------------------------------------------------------------ */

int energy_pipeline_run(energy_run *r)
{
    pipeline p;
    memset(&p, 0, sizeof p);
    p.run = r;
    if (queue_init(&p.parsed, PIPELINE_QUEUE_BATCHES) != 0)
        return -1;
    if (queue_init(&p.evaluated, PIPELINE_QUEUE_BATCHES) != 0) {
        queue_destroy(&p.parsed);
        return -1;
    }
    writer_state w;
    memset(&w, 0, sizeof w);
    w.p = &p;
    pthread_t reader, writer;
    if (pthread_create(&writer, NULL, writer_main, &w) != 0) {
        queue_destroy(&p.parsed);
        queue_destroy(&p.evaluated);
        return -1;
    }
    if (pthread_create(&reader, NULL, reader_main, &p) != 0) {
        queue_close(&p.evaluated);
        pthread_join(writer, NULL);
        queue_destroy(&p.parsed);
        queue_destroy(&p.evaluated);
        return -1;
    }

    /* Evaluation here. After an error that ends the run, or a stop request,
     * the batch in hand is finished and the rest only freed: the reader must
     * not wait forever on a full queue. */
    int stopping = 0;
    batch *b;
    while ((b = queue_pop(&p.parsed))) {
        if (stopping) {
            batch_free(b);
            continue;
        }
        evaluate(r, b);
        if (b->fatal.message) {
            stopping = 1;
            interrupt_stop();
        }
        queue_push(&p.evaluated, b);
        if (interrupt_requested())
            stopping = 1;
    }
    queue_close(&p.evaluated);
    pthread_join(reader, NULL);
    pthread_join(writer, NULL);
    queue_destroy(&p.parsed);
    queue_destroy(&p.evaluated);
    free(p.pending);
    free(p.bad);
    return 0;
}
