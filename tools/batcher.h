/*
 * Batches of frames for `mlff energy`: the frames a reader collected, packed
 * as the library takes them, then their results; and what went wrong with
 * some of them (notes), carried along so that messages come out in input
 * order with the frames around them.
 */
#ifndef MLFF_TOOLS_BATCHER_H
#define MLFF_TOOLS_BATCHER_H

#include <stddef.h>
#include <stdint.h>

#include "frame_reader.h"
#include "xyz.h"

typedef struct batch_frame {
    xyz_frame frame;  /* its numbers and positions live in the batch's packed arrays */
    frame_origin origin;
} batch_frame;

typedef struct batch_note {
    int64_t index;    /* the input frame it concerns (frame_origin.index) */
    char *message;    /* one line */
} batch_note;

typedef struct batch {
    size_t n_frames, frames_capacity;
    batch_frame *frames;
    /* Packed as mlff_batch wants them: */
    int64_t n_atoms, atoms_capacity;
    int64_t *offsets;   /* n_frames + 1 */
    int32_t *numbers;
    double *positions;
    double *cells;      /* n_frames x 9, zeros without a Lattice */
    uint8_t *pbc;       /* n_frames x 3 */
    int any_cell;
    /* Results, once evaluated (batch_alloc_results): */
    double *energies, *forces, *virials;
    /* Bad frames left out (each a note), and at most one note that ends the run. */
    size_t n_notes, notes_capacity;
    batch_note *notes;
    batch_note fatal;   /* message NULL: none */
    int64_t last_index; /* the last input frame this batch accounts for, good or bad */
} batch;

batch *batch_new(void);
void batch_free(batch *b);

/* Takes the frame (its arrays are moved into the batch's; *frame is left empty). 0, or -1 out of memory. */
int batch_add(batch *b, xyz_frame *frame, const frame_origin *origin);

/* The same for a split frame (xyz_stream_split): room for its atoms, which
 * the caller parses into the packed arrays at offsets[k]. */
int batch_add_split(batch *b, xyz_frame *frame, const frame_origin *origin);

/* A bad frame left out: a note reported with the batch. 0, or -1 out of memory. */
int batch_note_bad(batch *b, int64_t index, const char *message);

/* The note that ends the run: the one of the earliest input frame is kept. */
int batch_set_fatal(batch *b, int64_t index, const char *message);

/* Room for the results (forces and virials where asked). 0, or -1 out of memory. */
int batch_alloc_results(batch *b, int forces, int virials);

/* Frame k leaves the batch (with its results); the others keep their order. */
void batch_remove(batch *b, size_t k);

/* Frames k and after leave the batch. */
void batch_truncate(batch *b, size_t k);

/* The same for frames that are to be read again: the batch no longer accounts for them. */
void batch_forget(batch *b, size_t k);

/* Frames first + j leave the batch where drop[j] (j < n), in one pass; the others keep their order. */
void batch_drop(batch *b, size_t first, const uint8_t *drop, size_t n);

/* Frame k with its numbers and positions pointing into the packed arrays (for writing). */
xyz_frame batch_frame_view(const batch *b, size_t k);

/*
 * Atoms a batch should gather before it is evaluated. The library cuts a
 * batch into passes that fit the device's memory on its own; what the
 * batcher chooses is how much one call gets: enough that a GPU has work
 * for all its units and the cost of a call (launches, transfers,
 * synchronisation) is spread thin, yet a fixed amount, so that memory stays
 * flat whatever the dataset's size. On CPUs a call's overhead is small
 * against 10 MFLOP an atom, and a small batch keeps the library's work
 * area (about 150 KB an atom) small; GPUs reach their speed with tens of
 * thousands of atoms a call. A frame larger than the target is a batch of
 * its own.
 */
int64_t batch_target_atoms(const char *device_description);

#define BATCH_TARGET_ATOMS_CPU 1024
#define BATCH_TARGET_ATOMS_GPU 65536

/* Most bad-frame notes one batch carries before it is handed on. */
#define BATCH_MAX_NOTES 256

#endif
