/*
 * XYZ / extended XYZ reading and writing for the mlff command line.
 *
 * The reader understands the files ASE writes (ase.io.write(..., format=
 * "extxyz")) and plain XYZ:
 *
 *   N                                   number of atoms (a positive integer)
 *   comment line                        key=value pairs (extended XYZ) or any text
 *   SYMBOL X Y Z [more columns ...]     N atom lines
 *
 * repeated for every frame. Comment line rules follow ASE: values may be
 * quoted with "", '', {} or []; a backslash escapes the next character;
 * `key = value` is allowed; a key without a value is kept as it is.
 * Understood keys (case-sensitive, as in ASE):
 *   Lattice="a1 a2 a3 b1 b2 b3 c1 c2 c3"   rows are the lattice vectors
 *   pbc="T F T"                            also True/False/t/f/1/0, or one value for all three
 *   Properties=species:S:1:pos:R:3:...     NAME:TYPE:COUNT triples, TYPE in S R I L
 * The species column is the first named `species` or `symbols` (else `Z` or
 * `numbers`); positions come from `pos` (or `positions`). Every other column
 * is skipped, whatever its count; columns beyond those declared are ignored.
 * Species are element symbols, case-insensitive as in ASE ("CL" is Cl), or
 * atomic numbers. Defaults when keys are absent: Properties =
 * species:S:1:pos:R:3; pbc = T T T when Lattice is given, else F F F.
 * Blank lines between frames and at the end of the file are skipped.
 *
 * Numbers are parsed and printed in the C locale whatever the process locale
 * (uselocale, per thread). There is no global mutable state.
 *
 * Errors are reported as one line (no trailing newline) in the caller's
 * buffer:
 *   FILE: what is wrong                          (file-level)
 *   FILE:LINE: frame N: what is wrong            (frame-level; LINE is the
 *                                                 offending line: atom count
 *                                                 or comment line)
 *   FILE:LINE: frame N, atom M: what is wrong    (LINE is the atom's line)
 * with LINE, N and M counted from 1 (N within the file).
 */
#ifndef MLFF_TOOLS_XYZ_H
#define MLFF_TOOLS_XYZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define XYZ_MAX_ATOMIC_NUMBER 118

/* A size for error buffers that always holds the whole message. */
#define XYZ_ERROR_SIZE 8192

enum {
    XYZ_OK = 0,
    XYZ_ERROR_IO = -1,     /* file missing or unreadable */
    XYZ_ERROR_FORMAT = -2, /* the contents are malformed */
    XYZ_ERROR_MEMORY = -3  /* out of memory */
};

/* One comment-line pair other than Lattice, pbc and Properties. */
typedef struct xyz_info {
    char *key;   /* unescaped key */
    char *value; /* unescaped value; NULL for a key without '=' */
    char *text;  /* the pair as the writer prints it: the input text, verbatim
                    (`key=value`), or quoted anew if its quote was never closed */
} xyz_info;

typedef struct xyz_frame {
    int64_t n_atoms;
    int32_t *numbers;   /* n_atoms atomic numbers, 1..118 */
    double *positions;  /* n_atoms x 3, Angstrom, all finite */
    int has_cell;       /* Lattice= was given */
    double cell[9];     /* rows are lattice vectors; zeros without Lattice */
    int has_pbc;        /* pbc= was given */
    uint8_t pbc[3];     /* 0/1, defaulted as ASE does when not given */
    size_t n_info;
    xyz_info *info;     /* other comment-line pairs, in input order */
    long count_line;    /* 1-based line of the number of atoms */
    long comment_line;  /* 1-based line of the comment (count_line + 1) */
} xyz_frame;

/* 1-based line of atom i (0-based) of the frame: atom lines follow the comment. */
static inline long xyz_atom_line(const xyz_frame *frame, int64_t i)
{
    return frame->comment_line + 1 + (long)i;
}

typedef struct xyz_file {
    char *name; /* as given to the reader, used in messages */
    size_t n_frames;
    xyz_frame *frames;
} xyz_file;

/*
 * Read every frame of a file ("-" reads standard input, named "<stdin>").
 * On success returns XYZ_OK and fills *file (free with xyz_file_free).
 * On failure returns a negative XYZ_ERROR_*, leaves *file empty (safe to
 * free) and writes the message into err (err_size bytes, XYZ_ERROR_SIZE is
 * always enough; err may be NULL).
 */
int xyz_read_file(const char *path, xyz_file *file, char *err, size_t err_size);

/* The same from memory; name is used in messages. data need not be NUL-terminated. */
int xyz_read_memory(const char *name, const char *data, size_t size, xyz_file *file, char *err,
                    size_t err_size);

void xyz_file_free(xyz_file *file);

/* Symbol of an element ("Cl"), NULL outside 1..118. */
const char *xyz_element_symbol(int z);

/* Atomic number of a symbol of len bytes, case-insensitive; 0 if none. */
int xyz_element_number(const char *symbol, size_t len);

/*
 * Whether a comment-line key holds results of an earlier calculation:
 * energy, free_energy, stress, virial, forces, or any key starting with
 * energy, forces or stress (case-insensitive). The writer drops them.
 */
int xyz_key_is_result(const char *key);

/* A growing byte buffer. Zero-initialise it; after a failed append it stays
 * failed (and every later append fails too). */
typedef struct xyz_buffer {
    char *data;
    size_t size;
    size_t capacity;
    int failed;
} xyz_buffer;

int xyz_buffer_append(xyz_buffer *buffer, const char *bytes, size_t n);
int xyz_buffer_printf(xyz_buffer *buffer, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void xyz_buffer_free(xyz_buffer *buffer);

/*
 * Append one frame as extended XYZ:
 *   N
 *   [Lattice="..." ]Properties=species:S:1:pos:R:3[:forces:R:3] [kept pairs] [energy=E ]pbc="T T T"
 *   Sym  x y z [fx fy fz]
 * Kept pairs are the frame's info except results (xyz_key_is_result).
 * Positions are printed with %.16e (exact round trip), the energy (when
 * energy is not NULL) with %.17g, forces (when not NULL, n_atoms x 3) with
 * %.10e, Lattice numbers with the shortest text that reads back exactly;
 * stress (when not NULL, 3 x 3 row-major, eV/Angstrom^3) as stress="..." with
 * %.10e, after the energy, as ASE writes it.
 * Returns 0, or -1 when out of memory.
 */
int xyz_write_frame(xyz_buffer *out, const xyz_frame *frame, const double *energy,
                    const double *forces, const double *stress);

#endif /* MLFF_TOOLS_XYZ_H */
