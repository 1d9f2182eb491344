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
 * `numbers`); positions come from `pos` (or `positions`), masses (amu) from
 * `masses` (R:1) where there is one. Every other column is skipped, whatever its count; columns beyond those declared are ignored.
 * Species are element symbols, case-insensitive as in ASE ("CL" is Cl), or
 * atomic numbers. Defaults when keys are absent: Properties =
 * species:S:1:pos:R:3; pbc = T T T when Lattice is given, else F F F.
 * Blank lines between frames and at the end of the file are skipped.
 *
 * Numbers are parsed and printed in the C locale whatever the process locale
 * (uselocale, per thread). There is no global mutable state.
 *
 * Two ways to read: a whole file or buffer at once (xyz_read_file,
 * xyz_read_memory: every frame in memory), or a stream (xyz_stream_*: one
 * frame at a time from any source of bytes, in memory bounded by the largest
 * frame and the longest line). Both parse the same way and report the same
 * errors; a stream can also go on after a bad frame (recover mode).
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
    XYZ_END = 1,           /* a stream has no more frames */
    XYZ_OK = 0,
    XYZ_ERROR_IO = -1,     /* file missing or unreadable */
    XYZ_ERROR_FORMAT = -2, /* the contents are malformed */
    XYZ_ERROR_MEMORY = -3  /* out of memory */
};

/* One comment-line pair other than Lattice, pbc and Properties. */
typedef struct xyz_info {
    char *key;   /* unescaped key */
    char *value; /* unescaped value; NULL for a key without '=' */
    char *text;  /* the pair as the writer prints it: the input text (`key=value`,
                    spaces around '=' dropped) where it reads back as key and
                    value, else xyz_pair_text (a quote never closed, a value
                    ending in a backslash, an empty value) */
} xyz_info;

typedef struct xyz_frame {
    int64_t n_atoms;
    int32_t *numbers;   /* n_atoms atomic numbers, 1..118 */
    double *positions;  /* n_atoms x 3, Angstrom, all finite */
    double *masses;     /* n_atoms, amu, all finite, from a masses:R:1 column (as ASE writes
                           it; mlff hessian weights by them); NULL without one */
    int has_cell;       /* Lattice= was given */
    double cell[9];     /* rows are lattice vectors; zeros without Lattice */
    int has_pbc;        /* pbc= was given */
    uint8_t pbc[3];     /* 0/1, defaulted as ASE does when not given */
    size_t n_info;
    xyz_info *info;     /* other comment-line pairs, in input order */
    long count_line;    /* 1-based line of the number of atoms */
    long comment_line;  /* 1-based line of the comment (count_line + 1) */
    int n_columns;      /* columns the atom lines declare (Properties; 4 without) */
} xyz_frame;

/* Frees what the frame owns and zeroes it. */
void xyz_frame_free(xyz_frame *frame);

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

/* Longest line a reader accepts: a longer one (or a file without line ends,
 * such as /dev/zero) is an error, not unbounded memory. */
#define XYZ_MAX_LINE ((size_t)16 << 20)

/*
 * Where a stream's bytes come from: read() stores up to size bytes at
 * buffer and returns how many (0 at the end of the input), or -1 on an
 * error, with the reason in why (why_size bytes).
 */
typedef struct xyz_source {
    long (*read)(void *self, char *buffer, size_t size, char *why, size_t why_size);
    void *self;
} xyz_source;

typedef struct xyz_stream xyz_stream;

/*
 * A stream of frames from source; name is used in messages. recover = 0:
 * the first bad frame ends the stream (and, as xyz_read_file does, a frame
 * that is both bad and cut short by the end of the file is reported as
 * truncated). recover = 1: after a bad frame the stream looks for the next
 * line that holds nothing but an atom count and goes on from there. NULL when
 * out of memory.
 */
xyz_stream *xyz_stream_open(const char *name, xyz_source source, int recover);

/* A stream over size bytes at data (kept, not copied: they must outlive it). */
xyz_stream *xyz_stream_open_memory(const char *name, const char *data, size_t size, int recover);

/*
 * The next frame into *frame (which the caller frees with xyz_frame_free).
 * Returns XYZ_OK, XYZ_END when there are no more frames, or a negative
 * XYZ_ERROR_* with the message in err (as for xyz_read_file). After
 * XYZ_ERROR_FORMAT in recover mode a bad frame was passed over: call again
 * for the next one (xyz_stream_failed says whether the file itself failed,
 * as I/O errors, NUL bytes, over-long lines and empty files do; then every
 * later call returns the same error). *frame is left empty on any error.
 */
int xyz_stream_next(xyz_stream *s, xyz_frame *frame, char *err, size_t err_size);

/* Whether the stream failed for good (see xyz_stream_next). */
int xyz_stream_failed(const xyz_stream *s);

/* Number (from 1) of the frame last returned or reported bad; 0 before any. */
size_t xyz_stream_frame_number(const xyz_stream *s);

/* Byte offset of that frame's atom-count line. */
int64_t xyz_stream_frame_offset(const xyz_stream *s);

/* Byte offset just past the last line read (after a frame: its end), and
 * whether that line ended with a line feed (a frame cut in the middle of its
 * last line may still parse). */
int64_t xyz_stream_end_offset(const xyz_stream *s);
int xyz_stream_line_ended(const xyz_stream *s);

/* Bytes read from the source so far (read ahead of the frames returned). */
int64_t xyz_stream_bytes_read(const xyz_stream *s);

void xyz_stream_close(xyz_stream *s);

/*
 * Split reading, for parsing the atom lines of many frames in several
 * threads: xyz_stream_split reads a frame's count and comment lines and
 * only finds its atom lines, which xyz_parse_split parses later, in any
 * thread. The stream keeps the text of every frame split since the last
 * xyz_stream_settle or xyz_stream_rewind (pending frames), so that it can
 * go back to one whose atoms turn out bad and read it again with
 * xyz_stream_next, which reports it exactly as a stream that never split
 * does and goes on from there the same way. Anything else that is not a
 * plain good frame (the end, a bad count or comment line, a frame cut
 * short, a failing source, a frame too large to keep) is left to
 * xyz_stream_next: xyz_stream_split returns XYZ_SPLIT_SEQUENTIAL with the
 * stream where it was.
 *
 * The protocol: split frames while that returns XYZ_OK; parse the pending
 * ones (xyz_parse_split); if all are good, xyz_stream_settle, else
 * xyz_stream_rewind to the first bad one and read it with xyz_stream_next
 * (or, to keep the frames after it where reading it again ends where they
 * start, xyz_stream_tell the end, xyz_stream_seek back to the bad frame,
 * read it, compare, xyz_stream_seek to the end). After
 * XYZ_SPLIT_SEQUENTIAL, settle, then one xyz_stream_next. Pending frames'
 * text stays in memory until they are settled or rewound.
 */
enum { XYZ_SPLIT_SEQUENTIAL = 2 };

/* Where a stream stood (private to xyz_stream.c). */
typedef struct xyz_stream_pos {
    int64_t line_offset, frame_offset;
    size_t consumed, frame_no;
    long line_no, last_nonblank;
    int line_ended, pushed_back, state;
} xyz_stream_pos;

/* A frame whose atom lines are found but not parsed. */
typedef struct xyz_split_frame {
    xyz_stream_pos before;   /* the stream before the frame's count line */
    int64_t atoms_offset;    /* where its atom lines start in the stream */
    int64_t atoms_size;      /* their bytes */
    int columns, species, pos, masses; /* the atom lines' layout (masses -1: none) */
} xyz_split_frame;

/*
 * The next frame with everything but its atoms' numbers and positions:
 * n_atoms, the comment line's pairs, cell, pbc, lines, and a masses array
 * to fill where the frame has a masses column. XYZ_OK or
 * XYZ_SPLIT_SEQUENTIAL (frame left empty).
 */
int xyz_stream_split(xyz_stream *s, xyz_frame *frame, xyz_split_frame *split);

/* The atom lines of a pending frame: atoms_size bytes, valid until the
 * stream reads again (except from inside its source's read). */
const char *xyz_stream_split_text(const xyz_stream *s, const xyz_split_frame *split);

/* The pending frames were good: their text may go. */
void xyz_stream_settle(xyz_stream *s);

/* Back to before a pending frame (those after it are forgotten). */
void xyz_stream_rewind(xyz_stream *s, const xyz_split_frame *split);

/* Where the stream is; back there, anywhere in the pending frames' text (or
 * after it), the pending frames staying pending. */
void xyz_stream_tell(const xyz_stream *s, xyz_stream_pos *pos);
void xyz_stream_seek(xyz_stream *s, const xyz_stream_pos *pos);

/*
 * Parses a split frame's atom lines (text from xyz_stream_split_text) into
 * frame->numbers and positions (n_atoms of each, the caller's) and masses.
 * XYZ_OK, or XYZ_ERROR_FORMAT without a message: xyz_stream_next says what
 * is wrong. Any thread, several at once on different frames.
 */
int xyz_parse_split(const char *text, const xyz_split_frame *split, xyz_frame *frame);

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
 * The text that writes key=value (value NULL: the key alone) so that the
 * reader gives back exactly key and value: bare where that reads back, else
 * in double quotes with '"' and '\\' escaped. Never starts with '='. NULL
 * when out of memory; free it.
 */
char *xyz_pair_text(const char *key, const char *value);

/* Whether text, followed by a space and another pair, reads back as exactly
 * key and value (value NULL: the key alone). */
int xyz_pair_text_reads_back(const char *text, const char *key, const char *value);

/*
 * Append one frame as extended XYZ:
 *   N
 *   [Lattice="..." ]Properties=species:S:1:pos:R:3[:forces:R:3] [kept pairs] [energy=E ]pbc="T T T"
 *   Sym  x y z [fx fy fz]
 * Kept pairs are the frame's info except results (xyz_key_is_result), each
 * as its text (or, where text is NULL, xyz_pair_text of key and value); a
 * text that would not read back as its key and value (hand-made frames) is
 * written as xyz_pair_text makes it.
 * Positions are printed with %.16e (exact round trip), the energy (when
 * energy is not NULL) with %.17g, forces (when not NULL, n_atoms x 3) with
 * %.10e, Lattice numbers with the shortest text that reads back exactly;
 * stress (when not NULL, 3 x 3 row-major, eV/Angstrom^3) as stress="..." with
 * %.10e, after the energy, as ASE writes it.
 * Returns 0, or -1 when out of memory.
 */
int xyz_write_frame(xyz_buffer *out, const xyz_frame *frame, const double *energy,
                    const double *forces, const double *stress);

/* What xyz_write_frame_with adds to a frame; NULL pointers add nothing. */
typedef struct xyz_results {
    const double *energy;
    const double *forces;
    const double *stress;
    int64_t input_frame; /* > 0: input_frame=N after the kept pairs (an input_frame pair
                            of the frame's own is dropped) */
} xyz_results;

int xyz_write_frame_with(xyz_buffer *out, const xyz_frame *frame, const xyz_results *results);

#endif /* MLFF_TOOLS_XYZ_H */
