/* What the XYZ grammar (xyz.c), streams (xyz_stream.c) and writer
 * (xyz_write.c) share, and nothing else does. */
#ifndef MLFF_TOOLS_XYZ_INTERNAL_H
#define MLFF_TOOLS_XYZ_INTERNAL_H

#include <locale.h>
#include <stddef.h>
#include <stdint.h>

#include "xyz.h"

/* Where messages go: "name:line: frame N[, atom M]: ..." into err. */
typedef struct xyz_reader {
    const char *name;
    char *err;
    size_t err_size;
} xyz_reader;

/* Where the needed columns are in an atom line. */
typedef struct xyz_layout {
    int total;   /* columns declared */
    int species; /* column of the species (symbol or atomic number) */
    int pos;     /* first of the three position columns */
    int masses;  /* column of the masses (masses:R:1, as ASE writes them), -1 if none */
} xyz_layout;

/* Report and return code (file-level), or XYZ_ERROR_FORMAT (frame, atom from 1). */
int xyz_fail_file(xyz_reader *r, int code, const char *format, ...) __attribute__((format(printf, 3, 4)));
int xyz_fail_frame(xyz_reader *r, long line, size_t frame, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
int xyz_fail_atom(xyz_reader *r, long line, size_t frame, int64_t atom, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

int xyz_is_blank(const char *s);

/* The atom count of a count line; 0, or an error already reported. *huge:
 * more than int64 holds (then *n is INT64_MAX). */
int xyz_parse_count(xyz_reader *r, const char *s, long line, size_t frame_no, int64_t *n, int *huge);

/* Whether the line holds an atom count and nothing else: where a frame may start. */
int xyz_is_count_line(const char *s);

/* The comment line into f (Lattice, pbc, other pairs) and the atom lines' layout. */
int xyz_parse_comment_line(xyz_reader *r, const char *line, long line_no, size_t frame_no, xyz_frame *f,
                           xyz_layout *lay);

/* Atom a (from 0) of f from its line; f's arrays hold it already. */
int xyz_parse_atom(xyz_reader *r, const char *line, long lineno, size_t frame_no, const xyz_layout *lay,
                   xyz_frame *f, int64_t a);

/* The C locale for the calling thread until leave, whatever the process uses. */
typedef struct xyz_c_locale_scope {
    locale_t previous;
} xyz_c_locale_scope;

void xyz_c_locale_enter(xyz_c_locale_scope *scope);
void xyz_c_locale_leave(xyz_c_locale_scope *scope);

/* snprintf(out, ..., "%*.*e", width, precision, x), exactly, faster for the
 * common magnitudes; out holds width + 32 bytes. Returns the length. */
int xyz_format_e(double x, int precision, int width, char *out);

#endif
