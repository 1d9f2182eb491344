/*
 * The XYZ reader and writer (tools/xyz.h): any bytes are read or refused
 * with a message naming the input; what is read is written as extended XYZ
 * and read again, which must give the same frames: atoms, positions (bit
 * for bit), cell, pbc, and the key=value pairs the writer keeps (all but
 * earlier results), in order.
 */
#include <stdio.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
