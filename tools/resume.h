/*
 * --resume: go on with an interrupted `mlff energy -o OUT`. OUT is read
 * beside the input: each of its frames must be whole, be mlff's output
 * (energy=, forces where asked) and match, atom for atom and bit for bit,
 * the input frame it came from (the frame after the one before, or the one
 * its input_frame=N names, as --on-error skip writes). Those input frames
 * are passed over; a torn frame at OUT's end (a process killed while
 * writing) is cut off, and OUT ends after its last whole frame. Damage with
 * whole frames after it, or frames of another input, end the run instead:
 * OUT is then left alone.
 */
#ifndef MLFF_TOOLS_RESUME_H
#define MLFF_TOOLS_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "frame_reader.h"
#include "progress.h"

typedef struct resume_state {
    int64_t frames;     /* whole frames kept in OUT */
    int64_t last_index; /* the input frame the last of them came from; 0 for none */
    int64_t cut_bytes;  /* bytes cut off OUT's end */
} resume_state;

/*
 * Prepares OUT (which need not exist) and the input as above. forces:
 * whether this run writes forces. Returns EXIT_OK, EXIT_BAD_INPUT with one
 * line in err, or EXIT_INTERRUPTED.
 */
int resume_prepare(const char *out_path, frame_input *in, int forces, progress *p, resume_state *st,
                   char *err, size_t err_size);

#endif
