/*
 * Short parallel loops for `mlff energy`'s reader and writer: a batch's
 * frames parsed or formatted in a few threads, each a range of frames
 * holding about the same number of atoms.
 */
#ifndef MLFF_TOOLS_PARALLEL_H
#define MLFF_TOOLS_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* Fewest atoms worth a thread of their own: below this a thread's start
 * costs more than it saves. */
#define PARALLEL_MIN_ATOMS 2048

/*
 * Threads for parsing and for formatting by default: a quarter of the
 * online CPUs, at most 8, so that a GPU's reader and writer keep up with it
 * on a many-core host; 1 (no threads) on small machines, where evaluating
 * on the CPU needs every core.
 */
int parallel_default_threads(void);

/* How many parts to cut atoms into with at most threads threads. */
int parallel_parts(int threads, int64_t atoms);

/*
 * fn(arg, part) for part 0 .. n_parts - 1, part 0 in the calling thread
 * and each other in a thread of its own (in the calling thread where one
 * cannot start); returns when all are done.
 */
void parallel_run(int n_parts, void (*fn)(void *arg, int part), void *arg);

/* Part `part` of n_parts of the frames [0, n) whose atoms start at
 * offsets[0..n] (offsets[n] the end): frames [*first, *end). */
void parallel_range(const int64_t *offsets, size_t n, int part, int n_parts, size_t *first, size_t *end);

#endif
