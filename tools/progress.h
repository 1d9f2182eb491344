/*
 * Progress of a streamed run on standard error: on a terminal one line,
 * redrawn in place a few times a second; elsewhere (with --progress) a line
 * every few seconds. Frames done of the total where it is known (plain
 * files are counted beside the run), else the share of the input's bytes
 * read; frames and atoms a second; elapsed and remaining time.
 *
 * Every message of a run goes through progress_message while a progress
 * line may be on the screen, so that the two never mix on one line.
 */
#ifndef MLFF_TOOLS_PROGRESS_H
#define MLFF_TOOLS_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "frame_reader.h"

typedef enum progress_mode {
    PROGRESS_OFF,
    PROGRESS_TERMINAL, /* redrawn in place */
    PROGRESS_LINES     /* a line at a time, for logs */
} progress_mode;

typedef struct progress {
    pthread_mutex_t lock;
    progress_mode mode;
    const input_progress *input;
    double start, last_draw;
    int64_t frames_before; /* done by an earlier run (--resume) */
    int64_t frames_done;   /* input frames accounted for, good or bad, earlier runs included */
    int64_t atoms_done;    /* in this run */
    double fraction_before;
    int line_shown;
    atomic_llong total_frames; /* -1 while unknown */
    const char *phase;     /* NULL, or what happens before frames flow ("checking OUT") */
} progress;

void progress_init(progress *p, progress_mode mode, const input_progress *input);
void progress_destroy(progress *p);

/* Frames are about to flow; frames_before were done by an earlier run. */
void progress_start(progress *p, int64_t frames_before);

/* A short word for a phase before frames flow (NULL: none), shown at once. */
void progress_phase(progress *p, const char *phase, int64_t count);

/* The input's frames, once counted (any thread). */
void progress_set_total(progress *p, int64_t frames);

/* Input frames up to frames_done are accounted for; atoms more were evaluated. Redraws if due. */
void progress_advance(progress *p, int64_t frames_done, int64_t atoms);

/* Redraws if due (force: now). */
void progress_tick(progress *p, int force);

/* One line on standard error, around the progress line. */
void progress_message(progress *p, const char *line);

/* The last progress line, and the line ended, so that what follows starts clean. */
void progress_finish(progress *p);

#endif
