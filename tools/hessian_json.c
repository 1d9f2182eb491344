/* One frame of `mlff hessian` as a line of JSON (hessian_json.h). */
#include "hessian_json.h"

#include <stdio.h>
#include <string.h>

/* Text held before it goes to the output: a large frame's line is written
 * in pieces of about this size. */
#define PIECE_BYTES ((size_t)8 << 20)

typedef struct line_writer {
    output *out;
    xyz_buffer *buffer;
    char *err;
    size_t err_size;
    int failed; /* 1: err says why */
} line_writer;

static void flush_piece(line_writer *w, int always)
{
    if (w->failed || (!always && w->buffer->size < PIECE_BYTES))
        return;
    if (w->buffer->failed) {
        snprintf(w->err, w->err_size, "mlff: out of memory");
        w->failed = 1;
        return;
    }
    if (output_write(w->out, w->buffer->data, w->buffer->size, w->err, w->err_size) != 0)
        w->failed = 1;
    w->buffer->size = 0;
}

static void text(line_writer *w, const char *s)
{
    xyz_buffer_append(w->buffer, s, strlen(s));
}

static void number(line_writer *w, double x)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%.17g", x);
    xyz_buffer_append(w->buffer, digits, (size_t)n);
}

/* rows x columns, row-major, as a list of lists (columns 0: a flat list of rows). */
static void matrix(line_writer *w, const char *key, const double *a, int64_t rows, int64_t columns)
{
    xyz_buffer_printf(w->buffer, ", \"%s\": [", key);
    for (int64_t i = 0; i < rows; i++) {
        if (i)
            text(w, ", ");
        if (columns == 0) {
            number(w, a[i]);
            continue;
        }
        text(w, "[");
        for (int64_t j = 0; j < columns; j++) {
            if (j)
                text(w, ", ");
            number(w, a[i * columns + j]);
        }
        text(w, "]");
        flush_piece(w, 0);
    }
    text(w, "]");
}

int hessian_json_write(output *out, xyz_buffer *buffer, const hessian_frame *f, char *err, size_t err_size)
{
    line_writer w = {out, buffer, err, err_size, 0};
    const int64_t n = 3 * f->n_atoms;
    buffer->size = 0;
    xyz_buffer_printf(buffer, "{\"input_frame\": %lld, \"energy\": ", (long long)f->input_frame);
    number(&w, f->energy);
    matrix(&w, "forces", f->forces, f->n_atoms, 3);
    matrix(&w, "hessian", f->hessian, n, n);
    matrix(&w, "masses", f->masses, f->n_atoms, 0);
    xyz_buffer_printf(buffer, ", \"projection\": \"%s\", \"rigid_modes\": %d", f->projection, f->analysis->rigid);
    matrix(&w, "wavenumbers", f->analysis->wavenumbers, n, 0);
    matrix(&w, "modes", f->analysis->modes, n, n);
    text(&w, ", \"zero_point_energy\": ");
    number(&w, f->analysis->zero_point_energy);
    text(&w, "}\n");
    flush_piece(&w, 1);
    return w.failed ? -1 : 0;
}
