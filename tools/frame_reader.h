/*
 * The frames of `mlff energy`'s inputs, one at a time, in order: plain files,
 * standard input ("-"), and gzip, bzip2 or xz compressed data (recognised by
 * their first bytes, so compressed standard input works too; a file named
 * .gz, .bz2 or .xz must hold what its name says). Reads wait in poll()
 * beside interrupt_wake_fd(), so a stop request ends a wait for a slow pipe.
 */
#ifndef MLFF_TOOLS_FRAME_READER_H
#define MLFF_TOOLS_FRAME_READER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "xyz.h"

/* Where a frame came from. */
typedef struct frame_origin {
    const char *file;     /* name for messages ("<stdin>" for "-"); lives as long as the frame_input */
    size_t frame_in_file; /* from 1 */
    int64_t index;        /* from 1, across all inputs in order, bad frames counted */
} frame_origin;

typedef struct frame_input frame_input;

/*
 * The inputs named by paths (kept, not copied). recover: go on after a bad
 * frame (xyz_stream's recover mode). NULL when out of memory.
 */
frame_input *frame_input_new(const char *const *paths, size_t n_paths, int recover);
void frame_input_free(frame_input *in);

/*
 * The next frame, as xyz_stream_next: XYZ_OK (with *origin), XYZ_END after
 * the last input, XYZ_ERROR_FORMAT for a bad frame (*origin says which; with
 * recover, call again unless frame_input_failed), or another error that ends
 * the input (a file that cannot be opened or read, or was interrupted).
 */
int frame_input_next(frame_input *in, xyz_frame *frame, frame_origin *origin, char *err,
                     size_t err_size);

/*
 * Split reading (xyz_stream_split, whose protocol this follows): the next
 * frame of the current input with its atom lines found, not parsed, and
 * where it came from; XYZ_OK, or XYZ_SPLIT_SEQUENTIAL: settle the pending
 * frames, then take the next one with frame_input_next (which also opens
 * the inputs, ends them and reports their errors).
 */
int frame_input_split(frame_input *in, xyz_frame *frame, xyz_split_frame *split, frame_origin *origin);

/* A pending frame's atom lines (xyz_stream_split_text). */
const char *frame_input_split_text(const frame_input *in, const xyz_split_frame *split);

/* The pending frames were good (xyz_stream_settle). */
void frame_input_settle(frame_input *in);

/* Back to before a pending frame (xyz_stream_rewind). */
void frame_input_rewind(frame_input *in, const xyz_split_frame *split);

/* xyz_stream_tell and xyz_stream_seek in the current input. */
void frame_input_tell(const frame_input *in, xyz_stream_pos *pos);
void frame_input_seek(frame_input *in, const xyz_stream_pos *pos);

/* Whether the last error ends the input. */
int frame_input_failed(const frame_input *in);

/* Whether the input goes on after a bad frame (frame_input_new's recover). */
int frame_input_recovers(const frame_input *in);

/*
 * Called when a read would wait for a pipe more than a moment: a batcher
 * hands on the frames it holds instead of keeping them while a slow
 * producer thinks. NULL: none.
 */
void frame_input_on_wait(frame_input *in, void (*fn)(void *arg), void *arg);

/* Progress through the inputs, readable from any thread: bytes read from
 * the files (compressed bytes for compressed ones) and their total size, -1
 * while unknown (standard input, pipes). */
typedef struct input_progress {
    atomic_llong bytes_read;
    atomic_llong bytes_total;
} input_progress;

const input_progress *frame_input_progress(const frame_input *in);

/* Whether every input is a regular file without compression (frames can be
 * counted before they are read). */
int frame_input_countable(const frame_input *in);

/*
 * Counts the frames of the plain files (atom count lines, then that many
 * lines after the comment), without parsing atoms: -1 if a file does not
 * have that shape (its bad frames count differently), or cancel became
 * nonzero. Meant for a thread beside the run.
 */
int64_t frame_input_count(const frame_input *in, const atomic_int *cancel);

#endif
