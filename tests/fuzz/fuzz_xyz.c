/*
 * The XYZ reader and writer (tools/xyz.h): any bytes are read or refused
 * with a message naming the input; what is read is written as extended XYZ
 * and read again, which must give the same frames: atoms, positions (bit
 * for bit), cell, pbc, and the key=value pairs the writer keeps (all but
 * earlier results), in order. And split reading (xyz_stream_split, atoms
 * parsed later, as `mlff energy` does in threads) gives what a stream read
 * a frame at a time gives, in both modes: the same frames, errors and
 * messages, in the same order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "xyz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static int same_string(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The pairs of f the writer keeps, as indices into f->info. */
static size_t kept_pairs(const xyz_frame *f, size_t *kept)
{
    size_t n = 0;
    for (size_t k = 0; k < f->n_info; k++)
        if (!xyz_key_is_result(f->info[k].key))
            kept[n++] = k;
    return n;
}

static void compare(const xyz_frame *a, const xyz_frame *b, size_t frame, const char *text)
{
    FUZZ_CHECK(a->n_atoms == b->n_atoms, "frame %zu: %lld atoms written, %lld read back", frame,
               (long long)a->n_atoms, (long long)b->n_atoms);
    for (int64_t i = 0; i < a->n_atoms; i++) {
        FUZZ_CHECK(a->numbers[i] == b->numbers[i], "frame %zu atom %lld: element %d written, %d read back", frame,
                   (long long)i, a->numbers[i], b->numbers[i]);
        FUZZ_CHECK(!memcmp(a->positions + 3 * i, b->positions + 3 * i, 3 * sizeof(double)),
                   "frame %zu atom %lld: position %.17g %.17g %.17g written, %.17g %.17g %.17g read back", frame,
                   (long long)i, a->positions[3 * i], a->positions[3 * i + 1], a->positions[3 * i + 2],
                   b->positions[3 * i], b->positions[3 * i + 1], b->positions[3 * i + 2]);
    }
    FUZZ_CHECK(a->has_cell == b->has_cell && !memcmp(a->cell, b->cell, sizeof a->cell),
               "frame %zu: the cell does not read back", frame);
    FUZZ_CHECK(!memcmp(a->pbc, b->pbc, sizeof a->pbc), "frame %zu: pbc %d%d%d written, %d%d%d read back", frame,
               a->pbc[0], a->pbc[1], a->pbc[2], b->pbc[0], b->pbc[1], b->pbc[2]);
    size_t ka[a->n_info + 1], kb[b->n_info + 1];
    const size_t na = kept_pairs(a, ka), nb = kept_pairs(b, kb);
    FUZZ_CHECK(na == nb, "frame %zu: %zu pairs written, %zu read back from:\n%s", frame, na, nb, text);
    for (size_t k = 0; k < na; k++) {
        const xyz_info *x = &a->info[ka[k]], *y = &b->info[kb[k]];
        FUZZ_CHECK(same_string(x->key, y->key) && same_string(x->value, y->value),
                   "frame %zu: pair %zu [%s]=[%s] written, [%s]=[%s] read back from:\n%s", frame, k, x->key,
                   x->value ? x->value : "(none)", y->key, y->value ? y->value : "(none)", text);
    }
}

/* What a reader returned, as text to compare. */
static void log_result(xyz_buffer *log, int status, const char *err, const xyz_frame *f)
{
    xyz_buffer_printf(log, "status %d: %s\n", status, status == XYZ_OK ? "" : err);
    if (status != XYZ_OK)
        return;
    xyz_buffer_printf(log, "%lld atoms, lines %ld %ld, %d columns, cell %d, pbc %d %d %d %d\n",
                      (long long)f->n_atoms, f->count_line, f->comment_line, f->n_columns, f->has_cell,
                      f->has_pbc, f->pbc[0], f->pbc[1], f->pbc[2]);
    for (int k = 0; k < 9; k++)
        xyz_buffer_printf(log, "%a ", f->cell[k]);
    for (size_t k = 0; k < f->n_info; k++)
        xyz_buffer_printf(log, "[%s]=[%s] ", f->info[k].key, f->info[k].value ? f->info[k].value : "(none)");
    for (int64_t a = 0; a < f->n_atoms; a++)
        xyz_buffer_printf(log, "\n%d %a %a %a %a", f->numbers[a], f->positions[3 * a], f->positions[3 * a + 1],
                          f->positions[3 * a + 2], f->masses ? f->masses[a] : 0.0);
    xyz_buffer_printf(log, "\n");
}

/* Whether a reader goes on after this status (as `mlff energy` does). */
static int goes_on(const xyz_stream *s, int status, int recover)
{
    return status == XYZ_OK || (status == XYZ_ERROR_FORMAT && recover && !xyz_stream_failed(s));
}

/* Most frames a reading logs: enough for any input the fuzzer makes quickly. */
#define MAX_CALLS 4096

static void read_by_frames(const uint8_t *data, size_t size, int recover, xyz_buffer *log)
{
    char err[XYZ_ERROR_SIZE];
    xyz_stream *s = xyz_stream_open_memory("fuzz.xyz", (const char *)data, size, recover);
    FUZZ_CHECK(s, "out of memory");
    for (int calls = 0; calls < MAX_CALLS; calls++) {
        xyz_frame f;
        int status = xyz_stream_next(s, &f, err, sizeof err);
        log_result(log, status, err, &f);
        xyz_frame_free(&f);
        if (!goes_on(s, status, recover))
            break;
    }
    xyz_stream_close(s);
}

/* Split reading with up to batch frames pending before their atoms are parsed. */
static void read_split(const uint8_t *data, size_t size, int recover, size_t batch, xyz_buffer *log)
{
    char err[XYZ_ERROR_SIZE];
    xyz_frame frames[8];
    xyz_split_frame splits[8];
    size_t n = 0;
    xyz_stream *s = xyz_stream_open_memory("fuzz.xyz", (const char *)data, size, recover);
    FUZZ_CHECK(s && batch <= 8, "out of memory");
    for (int calls = 0; calls < MAX_CALLS;) {
        int status = xyz_stream_split(s, &frames[n], &splits[n]);
        FUZZ_CHECK(status == XYZ_OK || status == XYZ_SPLIT_SEQUENTIAL, "split: status %d", status);
        if (status == XYZ_OK) {
            xyz_frame *f = &frames[n];
            f->numbers = malloc((size_t)f->n_atoms * sizeof *f->numbers);
            f->positions = malloc((size_t)f->n_atoms * 3 * sizeof *f->positions);
            FUZZ_CHECK(f->numbers && f->positions, "out of memory");
            if (++n < batch)
                continue;
        }
        /* The pending frames' atoms: the good ones before the first bad one are read. */
        size_t good = 0;
        while (good < n && xyz_parse_split(xyz_stream_split_text(s, &splits[good]), &splits[good], &frames[good]) == XYZ_OK)
            good++;
        for (size_t k = 0; k < good && calls < MAX_CALLS; k++, calls++)
            log_result(log, XYZ_OK, "", &frames[k]);
        if (good < n)
            xyz_stream_rewind(s, &splits[good]);
        else
            xyz_stream_settle(s);
        for (size_t k = 0; k < n; k++)
            xyz_frame_free(&frames[k]);
        const int sequential = good < n || status != XYZ_OK;
        n = 0;
        if (!sequential || calls >= MAX_CALLS)
            continue;
        xyz_frame f;
        status = xyz_stream_next(s, &f, err, sizeof err);
        log_result(log, status, err, &f);
        xyz_frame_free(&f);
        calls++;
        if (!goes_on(s, status, recover))
            break;
    }
    xyz_stream_close(s);
}

static void split_reads_the_same(const uint8_t *data, size_t size)
{
    for (int recover = 0; recover <= 1; recover++) {
        xyz_buffer one = {0};
        read_by_frames(data, size, recover, &one);
        FUZZ_CHECK(!one.failed, "out of memory");
        for (size_t batch = 1; batch <= 8; batch *= 8) {
            xyz_buffer split = {0};
            read_split(data, size, recover, batch, &split);
            FUZZ_CHECK(!split.failed, "out of memory");
            size_t at = 0;
            while (at < one.size && at < split.size && one.data[at] == split.data[at])
                at++;
            FUZZ_CHECK(one.size == split.size && at == one.size,
                       "recover %d, %zu pending: split reading differs at byte %zu:\n%.300s\n---\n%.300s", recover,
                       batch, at, one.data ? one.data + (at > 100 ? at - 100 : 0) : "",
                       split.data ? split.data + (at > 100 ? at - 100 : 0) : "");
            xyz_buffer_free(&split);
        }
        xyz_buffer_free(&one);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    split_reads_the_same(data, size);

    char err[XYZ_ERROR_SIZE];
    err[0] = '\0';
    xyz_file in = {0};
    const int s = xyz_read_memory("fuzz.xyz", (const char *)data, size, &in, err, sizeof err);
    if (s != XYZ_OK) {
        FUZZ_CHECK(s == XYZ_ERROR_FORMAT || s == XYZ_ERROR_MEMORY, "read: status %d", s);
        FUZZ_CHECK(!strncmp(err, "fuzz.xyz", 8) && strlen(err) > 10 && !strchr(err, '\n'),
                   "read: the message '%s' does not name the input in one line", err);
        xyz_file_free(&in);
        return 0;
    }
    FUZZ_CHECK(in.n_frames > 0, "read: no frames and no error");
    xyz_buffer out = {0};
    for (size_t f = 0; f < in.n_frames; f++)
        FUZZ_CHECK(xyz_write_frame(&out, &in.frames[f], NULL, NULL, NULL) == 0, "write: out of memory");
    /* A NUL after the text, for the messages; not read. */
    FUZZ_CHECK(xyz_buffer_append(&out, "", 1) == 0, "write: out of memory");
    xyz_file back = {0};
    FUZZ_CHECK(xyz_read_memory("written.xyz", out.data, out.size - 1, &back, err, sizeof err) == XYZ_OK,
               "what the writer wrote does not read back: %s\n%s", err, out.data);
    FUZZ_CHECK(back.n_frames == in.n_frames, "%zu frames written, %zu read back", in.n_frames, back.n_frames);
    for (size_t f = 0; f < in.n_frames; f++)
        compare(&in.frames[f], &back.frames[f], f + 1, out.data);
    xyz_file_free(&back);
    xyz_buffer_free(&out);
    xyz_file_free(&in);
    return 0;
}
