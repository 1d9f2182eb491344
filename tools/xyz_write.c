/* Extended XYZ writer and its growing buffer (see xyz.h). */
#include "xyz.h"

#include "xyz_internal.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xyz_buffer_free(xyz_buffer *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int buffer_reserve(xyz_buffer *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (extra < b->capacity - b->size)
        return 0;
    size_t cap = b->capacity ? b->capacity : 4096;
    while (cap - b->size <= extra) {
        if (cap > SIZE_MAX / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *grown = realloc(b->data, cap);
    if (!grown) {
        b->failed = 1;
        return -1;
    }
    b->data = grown;
    b->capacity = cap;
    return 0;
}

int xyz_buffer_append(xyz_buffer *b, const char *bytes, size_t n)
{
    if (buffer_reserve(b, n) != 0)
        return -1;
    memcpy(b->data + b->size, bytes, n);
    b->size += n;
    b->data[b->size] = '\0';
    return 0;
}

int xyz_buffer_printf(xyz_buffer *b, const char *format, ...)
{
    if (buffer_reserve(b, 256) != 0)
        return -1;
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(b->data + b->size, b->capacity - b->size, format, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return -1;
    }
    if ((size_t)n >= b->capacity - b->size) {
        if (buffer_reserve(b, (size_t)n) != 0)
            return -1;
        va_start(ap, format);
        vsnprintf(b->data + b->size, b->capacity - b->size, format, ap);
        va_end(ap);
    }
    b->size += (size_t)n;
    return 0;
}

/* The shortest %.Ng text (N = 15..17) that reads back as exactly x. */
static void shortest(double x, char out[40])
{
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(out, 40, "%.*g", precision, x);
        if (strtod(out, NULL) == x)
            return;
    }
}

/* A kept pair: its text where that reads back (as the reader's always do),
 * else the text that does. */
static void write_pair(xyz_buffer *b, const xyz_info *in)
{
    if (in->text && xyz_pair_text_reads_back(in->text, in->key, in->value)) {
        xyz_buffer_printf(b, " %s", in->text);
        return;
    }
    char *text = xyz_pair_text(in->key, in->value);
    if (!text) {
        b->failed = 1;
        return;
    }
    xyz_buffer_printf(b, " %s", text);
    free(text);
}

static int write_frame_c(xyz_buffer *b, const xyz_frame *f, const xyz_results *results)
{
    const double *energy = results->energy, *forces = results->forces, *stress = results->stress;
    xyz_buffer_printf(b, "%lld\n", (long long)f->n_atoms);
    if (f->has_cell) {
        xyz_buffer_append(b, "Lattice=\"", 9);
        for (int k = 0; k < 9; k++) {
            char num[40];
            shortest(f->cell[k], num);
            if (k)
                xyz_buffer_append(b, " ", 1);
            xyz_buffer_append(b, num, strlen(num));
        }
        xyz_buffer_append(b, "\" ", 2);
    }
    xyz_buffer_printf(b, "Properties=species:S:1:pos:R:3%s", forces ? ":forces:R:3" : "");
    for (size_t i = 0; i < f->n_info; i++)
        if (!xyz_key_is_result(f->info[i].key) &&
            !(results->input_frame > 0 && strcmp(f->info[i].key, "input_frame") == 0))
            write_pair(b, &f->info[i]);
    if (results->input_frame > 0)
        xyz_buffer_printf(b, " input_frame=%lld", (long long)results->input_frame);
    if (energy)
        xyz_buffer_printf(b, " energy=%.17g", *energy);
    if (stress) {
        xyz_buffer_printf(b, " stress=\"");
        for (int k = 0; k < 9; k++)
            xyz_buffer_printf(b, k ? " %.10e" : "%.10e", stress[k]);
        xyz_buffer_printf(b, "\"");
    }
    xyz_buffer_printf(b, " pbc=\"%c %c %c\"\n", f->pbc[0] ? 'T' : 'F', f->pbc[1] ? 'T' : 'F',
                      f->pbc[2] ? 'T' : 'F');
    for (int64_t a = 0; a < f->n_atoms; a++) {
        const char *symbol = xyz_element_symbol(f->numbers[a]);
        const double *r = f->positions + 3 * a;
        if (symbol)
            xyz_buffer_printf(b, "%-2s", symbol);
        else
            xyz_buffer_printf(b, "%d", f->numbers[a]);
        xyz_buffer_printf(b, " %24.16e %24.16e %24.16e", r[0], r[1], r[2]);
        if (forces) {
            const double *g = forces + 3 * a;
            xyz_buffer_printf(b, " %18.10e %18.10e %18.10e", g[0], g[1], g[2]);
        }
        if (xyz_buffer_append(b, "\n", 1) != 0)
            return -1;
    }
    return b->failed ? -1 : 0;
}

int xyz_write_frame_with(xyz_buffer *out, const xyz_frame *frame, const xyz_results *results)
{
    xyz_c_locale_scope scope;
    xyz_c_locale_enter(&scope);
    int status = write_frame_c(out, frame, results);
    xyz_c_locale_leave(&scope);
    return status;
}

int xyz_write_frame(xyz_buffer *out, const xyz_frame *frame, const double *energy,
                    const double *forces, const double *stress)
{
    xyz_results results = {energy, forces, stress, 0};
    return xyz_write_frame_with(out, frame, &results);
}
