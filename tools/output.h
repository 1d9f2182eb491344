/*
 * Where `mlff energy` writes its frames: standard output or OUT, a batch
 * at a time. Every write holds whole frames, so whatever the writer did
 * last, the output is extended XYZ that ends where a frame ends; only a
 * process killed in the middle of a write (a second signal, SIGKILL) can
 * leave a torn frame, which --resume cuts off.
 *
 * Durability: a batch goes to the kernel as soon as it is formatted (the
 * output survives the process, whatever kills it). fsync, which makes it
 * survive the machine, runs at most every OUTPUT_SYNC_SECONDS and at the
 * end: on every batch it would cost more than small batches on a GPU take
 * (and far more on network file systems), while a machine that fails loses
 * at most that much work, which --resume recomputes.
 */
#ifndef MLFF_TOOLS_OUTPUT_H
#define MLFF_TOOLS_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#define OUTPUT_SYNC_SECONDS 30.0

typedef struct output {
    int fd;
    const char *name; /* for messages: the path, or "standard output" */
    int is_file;
    double last_sync;
} output;

/* path NULL: standard output. append: keep what OUT holds (--resume). 0, or -1 with err. */
int output_open(output *o, const char *path, int append, char *err, size_t err_size);

/* All n bytes, or -1 with err. */
int output_write(output *o, const char *data, size_t n, char *err, size_t err_size);

/* After a batch: fsync if it is due. */
int output_checkpoint(output *o, char *err, size_t err_size);

/* fsync (files) and close; 0, or -1 with err. */
int output_close(output *o, char *err, size_t err_size);

#endif
