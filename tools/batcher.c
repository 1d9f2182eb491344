/* Batches of frames (batcher.h). */
#include "batcher.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

batch *batch_new(void)
{
    batch *b = calloc(1, sizeof *b);
    if (b && !(b->offsets = calloc(1, sizeof *b->offsets))) {
        free(b);
        return NULL;
    }
    return b;
}

void batch_free(batch *b)
{
    if (!b)
        return;
    for (size_t k = 0; k < b->n_frames; k++) {
        b->frames[k].frame.numbers = NULL; /* the packed arrays', freed below */
        b->frames[k].frame.positions = NULL;
        xyz_frame_free(&b->frames[k].frame);
    }
    for (size_t k = 0; k < b->n_notes; k++)
        free(b->notes[k].message);
    free(b->notes);
    free(b->fatal.message);
    free(b->frames);
    free(b->offsets);
    free(b->numbers);
    free(b->positions);
    free(b->cells);
    free(b->pbc);
    free(b->energies);
    free(b->forces);
    free(b->virials);
    free(b);
}

static int grow(void **p, size_t size, size_t count)
{
    void *grown = realloc(*p, size * count);
    if (!grown)
        return -1;
    *p = grown;
    return 0;
}

static int add(batch *b, xyz_frame *f, const frame_origin *origin, int parsed)
{
    if (b->n_frames == b->frames_capacity) {
        size_t cap = b->frames_capacity ? 2 * b->frames_capacity : 64;
        if (grow((void **)&b->frames, sizeof *b->frames, cap) ||
            grow((void **)&b->offsets, sizeof *b->offsets, cap + 1) ||
            grow((void **)&b->cells, sizeof *b->cells, 9 * cap) ||
            grow((void **)&b->pbc, sizeof *b->pbc, 3 * cap))
            return -1;
        b->frames_capacity = cap;
    }
    if (b->n_atoms + f->n_atoms > b->atoms_capacity) {
        int64_t cap = b->atoms_capacity ? 2 * b->atoms_capacity : 4096;
        while (cap < b->n_atoms + f->n_atoms)
            cap *= 2;
        if (grow((void **)&b->numbers, sizeof *b->numbers, (size_t)cap) ||
            grow((void **)&b->positions, 3 * sizeof *b->positions, (size_t)cap))
            return -1;
        b->atoms_capacity = cap;
    }
    size_t k = b->n_frames++;
    if (parsed) {
        memcpy(b->numbers + b->n_atoms, f->numbers, (size_t)f->n_atoms * sizeof *b->numbers);
        memcpy(b->positions + 3 * b->n_atoms, f->positions, 3 * (size_t)f->n_atoms * sizeof *b->positions);
    }
    memcpy(b->cells + 9 * k, f->cell, sizeof f->cell);
    memcpy(b->pbc + 3 * k, f->pbc, 3);
    b->any_cell |= f->has_cell;
    b->n_atoms += f->n_atoms;
    b->offsets[k + 1] = b->n_atoms;
    free(f->numbers);
    free(f->positions);
    f->numbers = NULL;
    f->positions = NULL;
    b->frames[k].frame = *f;
    b->frames[k].origin = *origin;
    memset(f, 0, sizeof *f);
    if (origin->index > b->last_index)
        b->last_index = origin->index;
    return 0;
}

int batch_add(batch *b, xyz_frame *f, const frame_origin *origin)
{
    return add(b, f, origin, 1);
}

int batch_add_split(batch *b, xyz_frame *f, const frame_origin *origin)
{
    return add(b, f, origin, 0);
}

int batch_note_bad(batch *b, int64_t index, const char *message)
{
    if (b->n_notes == b->notes_capacity) {
        size_t cap = b->notes_capacity ? 2 * b->notes_capacity : 16;
        if (grow((void **)&b->notes, sizeof *b->notes, cap))
            return -1;
        b->notes_capacity = cap;
    }
    char *copy = strdup(message);
    if (!copy)
        return -1;
    b->notes[b->n_notes].index = index;
    b->notes[b->n_notes].message = copy;
    b->n_notes++;
    if (index > b->last_index)
        b->last_index = index;
    return 0;
}

int batch_set_fatal(batch *b, int64_t index, const char *message)
{
    if (b->fatal.message && b->fatal.index <= index)
        return 0;
    char *copy = strdup(message);
    if (!copy)
        return -1;
    free(b->fatal.message);
    b->fatal.message = copy;
    b->fatal.index = index;
    return 0;
}

int batch_alloc_results(batch *b, int forces, int virials)
{
    size_t n = b->n_frames ? b->n_frames : 1, atoms = b->n_atoms ? (size_t)b->n_atoms : 1;
    b->energies = malloc(n * sizeof *b->energies);
    if (forces)
        b->forces = malloc(3 * atoms * sizeof *b->forces);
    if (virials)
        b->virials = malloc(9 * n * sizeof *b->virials);
    return b->energies && (!forces || b->forces) && (!virials || b->virials) ? 0 : -1;
}

void batch_remove(batch *b, size_t k)
{
    if (k >= b->n_frames)
        return;
    const int64_t first = b->offsets[k], count = b->offsets[k + 1] - first;
    const size_t after = b->n_frames - k - 1;
    const size_t atoms_after = (size_t)(b->n_atoms - first - count);
    batch_frame *gone = &b->frames[k];
    gone->frame.numbers = NULL;
    gone->frame.positions = NULL;
    xyz_frame_free(&gone->frame);
    memmove(b->frames + k, b->frames + k + 1, after * sizeof *b->frames);
    memmove(b->numbers + first, b->numbers + first + count, atoms_after * sizeof *b->numbers);
    memmove(b->positions + 3 * first, b->positions + 3 * (first + count),
            3 * atoms_after * sizeof *b->positions);
    if (b->forces)
        memmove(b->forces + 3 * first, b->forces + 3 * (first + count), 3 * atoms_after * sizeof *b->forces);
    memmove(b->cells + 9 * k, b->cells + 9 * (k + 1), 9 * after * sizeof *b->cells);
    memmove(b->pbc + 3 * k, b->pbc + 3 * (k + 1), 3 * after);
    if (b->energies)
        memmove(b->energies + k, b->energies + k + 1, after * sizeof *b->energies);
    if (b->virials)
        memmove(b->virials + 9 * k, b->virials + 9 * (k + 1), 9 * after * sizeof *b->virials);
    for (size_t j = k; j < k + after; j++)
        b->offsets[j + 1] = b->offsets[j + 2] - count;
    b->n_frames--;
    b->n_atoms -= count;
}

void batch_truncate(batch *b, size_t k)
{
    while (b->n_frames > k)
        batch_remove(b, b->n_frames - 1);
}

void batch_forget(batch *b, size_t k)
{
    batch_truncate(b, k);
    b->last_index = 0;
    for (size_t j = 0; j < b->n_frames; j++)
        if (b->frames[j].origin.index > b->last_index)
            b->last_index = b->frames[j].origin.index;
    for (size_t j = 0; j < b->n_notes; j++)
        if (b->notes[j].index > b->last_index)
            b->last_index = b->notes[j].index;
}

void batch_drop(batch *b, size_t first, const uint8_t *drop, size_t n)
{
    size_t out = first;
    int64_t atoms = b->offsets[first];
    for (size_t j = first; j < b->n_frames; j++) {
        const int64_t start = b->offsets[j], count = b->offsets[j + 1] - start;
        if (j - first < n && drop[j - first]) {
            b->frames[j].frame.numbers = NULL; /* the packed arrays' */
            b->frames[j].frame.positions = NULL;
            xyz_frame_free(&b->frames[j].frame);
            continue;
        }
        if (out != j) {
            b->frames[out] = b->frames[j];
            memmove(b->numbers + atoms, b->numbers + start, (size_t)count * sizeof *b->numbers);
            memmove(b->positions + 3 * atoms, b->positions + 3 * start, 3 * (size_t)count * sizeof *b->positions);
            if (b->forces)
                memmove(b->forces + 3 * atoms, b->forces + 3 * start, 3 * (size_t)count * sizeof *b->forces);
            memcpy(b->cells + 9 * out, b->cells + 9 * j, 9 * sizeof *b->cells);
            memcpy(b->pbc + 3 * out, b->pbc + 3 * j, 3);
            if (b->energies)
                b->energies[out] = b->energies[j];
            if (b->virials)
                memcpy(b->virials + 9 * out, b->virials + 9 * j, 9 * sizeof *b->virials);
        }
        atoms += count;
        b->offsets[++out] = atoms;
    }
    b->n_frames = out;
    b->n_atoms = atoms;
}

xyz_frame batch_frame_view(const batch *b, size_t k)
{
    xyz_frame f = b->frames[k].frame;
    f.numbers = b->numbers + b->offsets[k];
    f.positions = b->positions + 3 * b->offsets[k];
    return f;
}

/* Whether the description names a GPU: OpenCL's says "gpu", Vulkan's "GPU". */
static int describes_gpu(const char *s)
{
    for (; s && *s; s++)
        if (tolower((unsigned char)s[0]) == 'g' && tolower((unsigned char)s[1]) == 'p' &&
            tolower((unsigned char)s[2]) == 'u')
            return 1;
    return 0;
}

int64_t batch_target_atoms(const char *device_description)
{
    return describes_gpu(device_description) ? BATCH_TARGET_ATOMS_GPU : BATCH_TARGET_ATOMS_CPU;
}
