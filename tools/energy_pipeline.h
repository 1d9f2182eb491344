/*
 * The streamed evaluation of `mlff energy`: three stages joined by bounded
 * queues, so that parsing, computing and writing overlap and at most a few
 * batches are in memory whatever the input's size:
 *
 *   reader thread:  frames from the inputs -> batches of about target_atoms
 *   calling thread: each batch evaluated by the library (bad frames left
 *                   out, or the run ended, as --on-error says)
 *   writer thread:  each batch formatted and written, in input order, with
 *                   its messages; the progress line
 *
 * With io_threads > 1 the reader only splits the input into frames and a
 * batch's atom lines are parsed in up to io_threads threads; the writer
 * formats a batch in as many, each a range of frames into a buffer of its
 * own, written in order. Messages and output are those of one thread.
 *
 * One thread calls the library: a context must not be used from two.
 */
#ifndef MLFF_TOOLS_ENERGY_PIPELINE_H
#define MLFF_TOOLS_ENERGY_PIPELINE_H

#include <stdint.h>

#include "frame_reader.h"
#include "mlff.h"
#include "output.h"
#include "progress.h"
#include "xyz.h"

/* Batches waiting between two stages. */
#define PIPELINE_QUEUE_BATCHES 2

typedef struct energy_run {
    /* What to do. */
    mlff_context *ctx;
    mlff_model *model;
    frame_input *input;
    output *out;
    progress *progress;
    int forces, stress;
    int skip_bad;          /* --on-error skip */
    int64_t target_atoms;  /* atoms a batch gathers */
    int io_threads;        /* threads parsing, and threads formatting, a batch */

    /* What happened (read once the pipeline has returned). */
    int64_t frames_written, atoms_written;
    int64_t bad_frames;    /* left out (--on-error skip) */
    int64_t last_index;    /* the last input frame accounted for */
    int64_t batches;
    double compute_seconds;
    int ended_by_error;    /* a message that ended the run went out */
} energy_run;

/* Runs the stages to the end of the input, an error or a stop request. 0, or -1 if the threads could not start. */
int energy_pipeline_run(energy_run *r);

#endif
