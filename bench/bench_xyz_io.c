/*
 * The reader's and writer's work in `mlff energy`, per atom, without a
 * model: parsing (a frame at a time as one thread does, and split with the
 * atom lines parsed in threads, as --io-threads N does) and formatting
 * with forces (in one thread and in N), on FILE's frames in memory, in
 * batches of --batch-atoms (65536, a GPU's).
 *
 *   build/bench/bench_xyz_io FILE [--threads N] [--batch-atoms A] [--repeat R]
 *
 * Prints the best of R repeats of each, in wall time and in the process's
 * CPU time (all threads): on a busy machine the CPU time is the steadier,
 * and with threads it shows what they cost beyond one.
 * (bench/RESULTS.md, "Streaming".)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parallel.h"
#include "xyz.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fail(const char *what)
{
    fprintf(stderr, "bench_xyz_io: %s\n", what);
    exit(1);
}

/* A frame at a time, every atom parsed by the calling thread. */
static double read_by_frames(const char *data, size_t size, int64_t *atoms)
{
    char err[XYZ_ERROR_SIZE];
    double start = now();
    xyz_stream *s = xyz_stream_open_memory("input", data, size, 1);
    if (!s)
        fail("out of memory");
    *atoms = 0;
    for (;;) {
        xyz_frame f;
        int status = xyz_stream_next(s, &f, err, sizeof err);
        if (status == XYZ_END)
            break;
        if (status != XYZ_OK)
            fail(err);
        *atoms += f.n_atoms;
        xyz_frame_free(&f);
    }
    xyz_stream_close(s);
    return now() - start;
}

typedef struct split_batch {
    xyz_stream *s;
    size_t n, capacity;
    xyz_frame *frames;
    xyz_split_frame *splits;
    int64_t *offsets;
    int32_t *numbers;
    double *positions;
    int64_t atoms_capacity;
    int n_parts, bad;
} split_batch;

static void parse_part(void *arg, int part)
{
    split_batch *b = arg;
    size_t lo, hi;
    parallel_range(b->offsets, b->n, part, b->n_parts, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        xyz_frame view = b->frames[k];
        view.numbers = b->numbers + b->offsets[k];
        view.positions = b->positions + 3 * b->offsets[k];
        if (xyz_parse_split(xyz_stream_split_text(b->s, &b->splits[k]), &b->splits[k], &view) != XYZ_OK)
            b->bad = 1;
    }
}

/* The batch's atoms parsed; the time it took added to *parse_time. */
static void settle(split_batch *b, int threads, double *parse_time)
{
    double start = now();
    if (b->offsets[b->n] > b->atoms_capacity) {
        b->atoms_capacity = 2 * b->offsets[b->n];
        b->numbers = realloc(b->numbers, (size_t)b->atoms_capacity * sizeof *b->numbers);
        b->positions = realloc(b->positions, (size_t)b->atoms_capacity * 3 * sizeof *b->positions);
        if (!b->numbers || !b->positions)
            fail("out of memory");
    }
    b->n_parts = parallel_parts(threads, b->offsets[b->n]);
    parallel_run(b->n_parts, parse_part, b);
    if (b->bad)
        fail("a bad frame (this benchmark takes clean input)");
    xyz_stream_settle(b->s);
    for (size_t k = 0; k < b->n; k++)
        xyz_frame_free(&b->frames[k]);
    b->n = 0;
    *parse_time += now() - start;
}

/* Split reading: the calling thread finds frames, threads parse a batch's atoms. */
static double read_split(const char *data, size_t size, int threads, int64_t batch_atoms, double *split_time)
{
    split_batch b;
    memset(&b, 0, sizeof b);
    double start = now(), parse_time = 0;
    b.s = xyz_stream_open_memory("input", data, size, 1);
    if (!b.s)
        fail("out of memory");
    for (;;) {
        if (b.n + 1 >= b.capacity) {
            b.capacity = b.capacity ? 2 * b.capacity : 1024;
            b.frames = realloc(b.frames, b.capacity * sizeof *b.frames);
            b.splits = realloc(b.splits, b.capacity * sizeof *b.splits);
            b.offsets = realloc(b.offsets, (b.capacity + 1) * sizeof *b.offsets);
            if (!b.frames || !b.splits || !b.offsets)
                fail("out of memory");
            b.offsets[0] = 0;
        }
        int status = xyz_stream_split(b.s, &b.frames[b.n], &b.splits[b.n]);
        if (status == XYZ_OK) {
            b.offsets[b.n + 1] = b.offsets[b.n] + b.frames[b.n].n_atoms;
            b.n++;
            if (b.offsets[b.n] >= batch_atoms)
                settle(&b, threads, &parse_time);
            continue;
        }
        settle(&b, threads, &parse_time);
        char err[XYZ_ERROR_SIZE];
        xyz_frame f;
        status = xyz_stream_next(b.s, &f, err, sizeof err);
        if (status == XYZ_END)
            break;
        if (status != XYZ_OK)
            fail(err);
        xyz_frame_free(&f);
    }
    xyz_stream_close(b.s);
    free(b.frames);
    free(b.splits);
    free(b.offsets);
    free(b.numbers);
    free(b.positions);
    double t = now() - start;
    *split_time = t - parse_time;
    return t;
}

typedef struct format_job {
    const xyz_file *file;
    size_t first;        /* the batch's first frame */
    const int64_t *offsets; /* atoms before each frame of the file */
    const double *forces;
    xyz_buffer text[64];
    size_t n;            /* the batch's frames */
    int n_parts;
} format_job;

static void format_part(void *arg, int part)
{
    format_job *j = arg;
    size_t lo, hi;
    parallel_range(j->offsets + j->first, j->n, part, j->n_parts, &lo, &hi);
    j->text[part].size = 0;
    for (size_t k = j->first + lo; k < j->first + hi; k++) {
        const xyz_frame *f = &j->file->frames[k];
        double energy = -1000.0 - (double)k / 7;
        xyz_results results = {&energy, j->forces + 3 * j->offsets[k], NULL, 0};
        xyz_write_frame_with(&j->text[part], f, &results);
    }
}

/* Every frame formatted with an energy and forces, batch by batch, in threads ranges of frames each. */
static double format_all(const xyz_file *file, const int64_t *offsets, const double *forces, int threads,
                         int64_t batch_atoms, size_t *bytes)
{
    format_job j;
    memset(&j, 0, sizeof j);
    j.file = file;
    j.offsets = offsets;
    j.forces = forces;
    double start = now();
    *bytes = 0;
    while (j.first < file->n_frames) {
        size_t n = 0;
        while (j.first + n < file->n_frames && offsets[j.first + n] - offsets[j.first] < batch_atoms)
            n++;
        j.n = n;
        j.n_parts = parallel_parts(threads, offsets[j.first + n] - offsets[j.first]);
        parallel_run(j.n_parts, format_part, &j);
        for (int part = 0; part < j.n_parts; part++) {
            if (j.text[part].failed)
                fail("out of memory");
            *bytes += j.text[part].size;
        }
        j.first += n;
    }
    double t = now() - start;
    for (int part = 0; part < 64; part++)
        xyz_buffer_free(&j.text[part]);
    return t;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int threads = parallel_default_threads(), repeat = 3;
    long long batch_atoms = 65536;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--batch-atoms") == 0 && i + 1 < argc)
            batch_atoms = atoll(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else
            path = argv[i];
    }
    if (!path || threads < 1 || threads > 64 || batch_atoms < 1 || repeat < 1) {
        fprintf(stderr, "usage: bench_xyz_io FILE [--threads N (1-64)] [--batch-atoms A] [--repeat R]\n");
        return 2;
    }
    FILE *fp = fopen(path, "rb");
    if (!fp)
        fail("cannot open the file");
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *data = malloc((size_t)size + 1);
    if (!data || fread(data, 1, (size_t)size, fp) != (size_t)size)
        fail("cannot read the file");
    fclose(fp);
    char err[XYZ_ERROR_SIZE];
    xyz_file file;
    if (xyz_read_memory(path, data, (size_t)size, &file, err, sizeof err) != XYZ_OK)
        fail(err);
    int64_t *offsets = malloc((file.n_frames + 1) * sizeof *offsets);
    if (!offsets)
        fail("out of memory");
    offsets[0] = 0;
    for (size_t k = 0; k < file.n_frames; k++)
        offsets[k + 1] = offsets[k] + file.frames[k].n_atoms;
    const int64_t atoms = offsets[file.n_frames];
    double *forces = malloc((size_t)atoms * 3 * sizeof *forces);
    if (!forces)
        fail("out of memory");
    for (int64_t a = 0; a < 3 * atoms; a++)
        forces[a] = 0.37 * (double)(a % 1001) - 150.0 + 1e-3 * (double)a;

    /* Best wall and CPU time of: parse by frames, split parse, splitting alone, format 1, format N. */
    double wall[5], cpu[5];
    for (int k = 0; k < 5; k++)
        wall[k] = cpu[k] = 1e300;
    size_t bytes = 0;
    for (int r = 0; r < repeat; r++) {
        for (int k = 0; k < 5; k++) {
            if (k == 2)
                continue;
            int64_t counted;
            double split_alone = 0, c = cpu_now(), t;
            if (k == 0)
                t = read_by_frames(data, (size_t)size, &counted);
            else if (k == 1)
                t = read_split(data, (size_t)size, threads, batch_atoms, &split_alone);
            else
                t = format_all(&file, offsets, forces, k == 3 ? 1 : threads, batch_atoms, &bytes);
            c = cpu_now() - c;
            wall[k] = t < wall[k] ? t : wall[k];
            cpu[k] = c < cpu[k] ? c : cpu[k];
            if (k == 1)
                wall[2] = split_alone < wall[2] ? split_alone : wall[2];
        }
    }
    const double us = 1e6 / (double)atoms;
    printf("%zu frames, %lld atoms, %ld bytes in, %zu bytes out; batches of %lld atoms; best of %d\n", file.n_frames,
           (long long)atoms, size, bytes, batch_atoms, repeat);
    printf("us/atom (wall, CPU of all threads; M atoms/s in wall time):\n");
    printf("parse, a frame at a time:          %.3f %.3f (%.2f M/s)\n", wall[0] * us, cpu[0] * us, 1 / (wall[0] * us));
    printf("parse, split + %2d thread(s):       %.3f %.3f (%.2f M/s; splitting alone %.3f)\n", threads, wall[1] * us,
           cpu[1] * us, 1 / (wall[1] * us), wall[2] * us);
    printf("format with forces, 1 thread:      %.3f %.3f (%.2f M/s)\n", wall[3] * us, cpu[3] * us, 1 / (wall[3] * us));
    printf("format with forces, %2d thread(s):  %.3f %.3f (%.2f M/s)\n", threads, wall[4] * us, cpu[4] * us,
           1 / (wall[4] * us));
    xyz_file_free(&file);
    free(offsets);
    free(forces);
    free(data);
    return 0;
}
