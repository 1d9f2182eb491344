/* XYZ streams: lines from any source, frames from lines, whole files (see xyz.h). */
#include "xyz.h"

#include "xyz_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Lines from a source                                                      */

/* Bytes asked of the source at a time. */
#define READ_CHUNK ((size_t)1 << 16)

/* A frame larger than this is read by xyz_stream_next, a line at a time:
 * split reading keeps a frame's text whole until it is parsed. */
#define SPLIT_MAX_ATOMS ((int64_t)1 << 20)
#define SPLIT_MAX_BYTES ((int64_t)64 << 20)

enum { STREAM_READING, STREAM_RESYNC, STREAM_ENDED, STREAM_FAILED };

typedef struct memory_source {
    const char *data;
    size_t size, at;
} memory_source;

struct xyz_stream {
    char *name;
    xyz_source source;
    memory_source *owned_source; /* xyz_stream_open_memory's */
    int recover;
    int state;
    int failed_status;
    char *failed_message;

    char *buf;          /* unconsumed bytes are buf[start, end); one spare byte after end */
    size_t capacity, start, end;
    size_t scanned;     /* bytes after start known to hold no line feed */
    int source_done;
    int64_t bytes;      /* read from the source */
    int64_t base;       /* stream offset of buf[0] */
    /* A source that failed fails again when a rewound stream reaches it. */
    int source_status;
    char *source_message;

    /* Split reading (xyz_stream_split): lines are copied out, never changed
     * in place, so that the text from keep on can be read again. */
    int split;
    int64_t keep;       /* stream offset of the first pending frame's text; -1: none */
    int64_t call_at;    /* where the split call in progress started */
    char *scratch;      /* the current line, copied */
    size_t scratch_capacity;

    /* The current line starts at buf[start], NUL-terminated. */
    char *line;
    size_t consumed;    /* its bytes with the line feed */
    int line_ended;     /* it ended with a line feed */
    long line_no;       /* its number, from 1 */
    int64_t line_offset;
    int pushed_back;    /* return the current line again */
    long last_nonblank; /* number of the last line read that is not blank */

    size_t frame_no;
    int64_t frame_offset;
};

/* Remember a failure of the file itself: every later call returns it. */
static int stream_fail(xyz_stream *s, xyz_reader *r, int status)
{
    s->state = STREAM_FAILED;
    s->failed_status = status;
    free(s->failed_message);
    s->failed_message = r->err && r->err_size ? strdup(r->err) : NULL;
    return status;
}

/* The source failed (own holds the message): so it does again for a
 * stream rewound before this, whatever reader asks. */
static int source_failed(xyz_stream *s, xyz_reader *r, const xyz_reader *own, int status)
{
    s->source_status = status;
    free(s->source_message);
    s->source_message = strdup(own->err);
    if (r->err && r->err_size)
        snprintf(r->err, r->err_size, "%s", own->err);
    return status;
}

/* Read more bytes; 0 at the end of the source, < 0 (reported) on failure. */
static int refill(xyz_stream *s, xyz_reader *r)
{
    if (s->source_status) {
        if (r->err && r->err_size)
            snprintf(r->err, r->err_size, "%s", s->source_message ? s->source_message : "failed");
        return s->source_status;
    }
    /* Bytes before the current line go, except a pending frame's. */
    size_t drop = s->start;
    if (s->keep >= 0 && s->keep - s->base < (int64_t)drop)
        drop = (size_t)(s->keep - s->base);
    if (drop > 0) {
        memmove(s->buf, s->buf + drop, s->end - drop);
        s->end -= drop;
        s->start -= drop;
        s->base += (int64_t)drop;
        s->buf[s->end] = '\0'; /* the last line's end, where it has no line feed */
    }
    if (s->capacity - s->end < READ_CHUNK + 1) {
        size_t cap = s->capacity ? 2 * s->capacity : 2 * READ_CHUNK;
        while (cap - s->end < READ_CHUNK + 1)
            cap *= 2;
        char *grown = realloc(s->buf, cap);
        if (!grown)
            return xyz_fail_file(r, XYZ_ERROR_MEMORY, "out of memory");
        s->buf = grown;
        s->capacity = cap;
    }
    char why[256] = "read error";
    long got = s->source.read(s->source.self, s->buf + s->end, s->capacity - s->end - 1, why,
                              sizeof why);
    char message[XYZ_ERROR_SIZE];
    xyz_reader own = {s->name, message, sizeof message};
    if (got < 0) {
        why[sizeof why - 1] = '\0';
        return source_failed(s, r, &own, xyz_fail_file(&own, XYZ_ERROR_IO, "cannot read: %s", why));
    }
    if (got == 0) {
        s->source_done = 1;
        return 0;
    }
    const char *nul = memchr(s->buf + s->end, '\0', (size_t)got);
    if (nul) {
        long line = s->line_no + 1;
        for (const char *p = s->buf + s->start; p < nul; p++)
            line += *p == '\n';
        return source_failed(s, r, &own,
                             xyz_fail_file(&own, XYZ_ERROR_FORMAT, "not a text file (a NUL byte on line %ld)", line));
    }
    s->end += (size_t)got;
    s->buf[s->end] = '\0'; /* the last line's end, where it has no line feed */
    s->bytes += got;
    return 1;
}

/* Find the next line at buf[start] (consumed, line_ended): 1, 0 at the end
 * of the input, < 0 on a failure (reported). */
static int find_line(xyz_stream *s, xyz_reader *r)
{
    s->start += s->consumed;
    s->line_offset += (int64_t)s->consumed;
    s->consumed = 0;
    s->scanned = 0;
    for (;;) {
        size_t have = s->end - s->start;
        char *nl = have > s->scanned ? memchr(s->buf + s->start + s->scanned, '\n', have - s->scanned) : NULL;
        if (nl) {
            s->consumed = (size_t)(nl - (s->buf + s->start)) + 1;
            s->line_ended = 1;
            return 1;
        }
        s->scanned = have;
        if (s->source_done) {
            if (have == 0)
                return 0;
            s->consumed = have;
            s->line_ended = 0;
            return 1;
        }
        if (have >= XYZ_MAX_LINE)
            return xyz_fail_file(r, XYZ_ERROR_FORMAT, "line %ld is longer than %zu MiB",
                             s->line_no + 1, XYZ_MAX_LINE >> 20);
        int status = refill(s, r);
        if (status < 0)
            return status;
    }
}

static int blank_bytes(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\v' && p[i] != '\f')
            return 0;
    return 1;
}

/* Make the next line current, NUL-terminated without its line end: 1, 0 at
 * the end of the input, < 0 on a failure (reported). Split reading copies
 * it; otherwise it is terminated where it lies. */
static int next_line(xyz_stream *s, xyz_reader *r)
{
    if (s->pushed_back) {
        s->pushed_back = 0;
        return 1;
    }
    int got = find_line(s, r);
    if (got <= 0)
        return got;
    char *text = s->buf + s->start;
    size_t n = s->consumed - (size_t)s->line_ended;
    if (s->split) {
        if (n + 1 > s->scratch_capacity) {
            size_t cap = 2 * (n + 1) > 256 ? 2 * (n + 1) : 256;
            char *grown = realloc(s->scratch, cap);
            if (!grown)
                return xyz_fail_file(r, XYZ_ERROR_MEMORY, "out of memory");
            s->scratch = grown;
            s->scratch_capacity = cap;
        }
        memcpy(s->scratch, text, n);
        text = s->scratch;
    }
    text[n] = '\0';
    s->line = text;
    if (n > 0 && s->line[n - 1] == '\r')
        s->line[n - 1] = '\0';
    s->line_no++;
    if (!xyz_is_blank(s->line))
        s->last_nonblank = s->line_no;
    return 1;
}

/* Split reading passes over an atom line: as next_line, without the line. */
static int skip_line(xyz_stream *s, xyz_reader *r)
{
    if (s->pushed_back) {
        s->pushed_back = 0;
        return 1;
    }
    int got = find_line(s, r);
    if (got <= 0)
        return got;
    s->line_no++;
    if (!blank_bytes(s->buf + s->start, s->consumed - (size_t)s->line_ended))
        s->last_nonblank = s->line_no;
    return 1;
}

static long read_from_memory(void *self, char *buffer, size_t size, char *why, size_t why_size)
{
    (void)why;
    (void)why_size;
    memory_source *m = self;
    size_t n = m->size - m->at < size ? m->size - m->at : size;
    if (n > (size_t)LONG_MAX)
        n = (size_t)LONG_MAX;
    if (n)
        memcpy(buffer, m->data + m->at, n);
    m->at += n;
    return (long)n;
}

xyz_stream *xyz_stream_open(const char *name, xyz_source source, int recover)
{
    xyz_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->name = strdup(name);
    if (!s->name) {
        free(s);
        return NULL;
    }
    s->source = source;
    s->recover = recover;
    s->keep = -1;
    return s;
}

xyz_stream *xyz_stream_open_memory(const char *name, const char *data, size_t size, int recover)
{
    memory_source *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    m->data = data;
    m->size = size;
    m->at = 0;
    xyz_source source = {read_from_memory, m};
    xyz_stream *s = xyz_stream_open(name, source, recover);
    if (!s) {
        free(m);
        return NULL;
    }
    s->owned_source = m;
    return s;
}

void xyz_stream_close(xyz_stream *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->failed_message);
    free(s->source_message);
    free(s->scratch);
    free(s->buf);
    free(s->owned_source);
    free(s);
}

int xyz_stream_failed(const xyz_stream *s)
{
    return s->state == STREAM_FAILED;
}

size_t xyz_stream_frame_number(const xyz_stream *s)
{
    return s->frame_no;
}

int64_t xyz_stream_frame_offset(const xyz_stream *s)
{
    return s->frame_offset;
}

int64_t xyz_stream_end_offset(const xyz_stream *s)
{
    return s->line_offset + (int64_t)(s->pushed_back ? 0 : s->consumed);
}

int xyz_stream_line_ended(const xyz_stream *s)
{
    return s->line_ended;
}

int64_t xyz_stream_bytes_read(const xyz_stream *s)
{
    return s->bytes;
}

/* ------------------------------------------------------------------------ */
/* Frames from a stream                                                     */

/* "3 atoms" or "too many atoms", for the truncation messages. */
static void count_text(int64_t n, char out[32])
{
    if (n == INT64_MAX)
        snprintf(out, 32, "too many atoms");
    else
        snprintf(out, 32, "%lld atom%s", (long long)n, n == 1 ? "" : "s");
}

/* The frame declared n atoms but the input ended: report how far it got
 * (blank lines at the end do not count), as a whole-file reader sees it. */
static int fail_truncated(xyz_stream *s, xyz_reader *r, const xyz_frame *f, int64_t n)
{
    char text[32];
    count_text(n, text);
    s->state = STREAM_ENDED;
    if (s->last_nonblank <= f->count_line)
        return xyz_fail_frame(r, f->count_line, s->frame_no,
                          "truncated: %s declared but the file ends after the atom count", text);
    long available = s->last_nonblank - f->comment_line;
    return xyz_fail_frame(r, f->count_line, s->frame_no,
                      "truncated: %s declared but the file ends after %ld atom line%s", text,
                      available, available == 1 ? "" : "s");
}

/*
 * A bad comment or atom line (already reported) in a frame of n atoms.
 * Without recovery, a frame that the input also cuts short is reported as
 * truncated, as a reader that has the whole file sees first. With recovery,
 * the stream goes on from the next line that can start a frame: the bad line
 * itself where it is an atom count (the frame declared too many atoms).
 */
static int bad_line(xyz_stream *s, xyz_reader *r, const xyz_frame *f, int64_t n, int status)
{
    if (status == XYZ_ERROR_MEMORY || status == XYZ_ERROR_IO)
        return stream_fail(s, r, status);
    if (s->recover) {
        if (s->line_no > f->comment_line && xyz_is_count_line(s->line))
            s->pushed_back = 1;
        s->state = STREAM_RESYNC;
        return status;
    }
    long last = n >= LONG_MAX - f->comment_line ? LONG_MAX : f->comment_line + (long)n;
    char *saved = r->err && r->err_size ? strdup(r->err) : NULL;
    int got = 1;
    while (s->last_nonblank < last && (got = next_line(s, r)) > 0)
        ;
    if (got < 0) {
        free(saved);
        return stream_fail(s, r, got);
    }
    if (s->last_nonblank < last) {
        free(saved);
        return fail_truncated(s, r, f, n);
    }
    if (saved)
        snprintf(r->err, r->err_size, "%s", saved);
    free(saved);
    s->state = STREAM_ENDED;
    return status;
}

/* Grow the frame's atom arrays to hold at least want atoms. */
static int reserve_atoms(xyz_frame *f, int64_t *capacity, int64_t want, int64_t declared, int masses)
{
    if (want <= *capacity)
        return 0;
    /* What the count line declares, unless that is huge: then grow as lines come. */
    int64_t cap = declared <= ((int64_t)1 << 20) ? declared : *capacity ? 2 * *capacity : 4096;
    if (cap < want)
        cap = want;
    int32_t *numbers = realloc(f->numbers, (size_t)cap * sizeof *numbers);
    if (numbers)
        f->numbers = numbers;
    double *positions = numbers ? realloc(f->positions, (size_t)cap * 3 * sizeof *positions) : NULL;
    if (!numbers || !positions)
        return -1;
    f->positions = positions;
    if (masses) {
        double *grown = realloc(f->masses, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        f->masses = grown;
    }
    *capacity = cap;
    return 0;
}

static int stream_next(xyz_stream *s, xyz_reader *r, xyz_frame *f, xyz_split_frame *split)
{
    if (s->state == STREAM_FAILED) {
        if (r->err && r->err_size)
            snprintf(r->err, r->err_size, "%s", s->failed_message ? s->failed_message : "failed");
        return s->failed_status;
    }
    if (s->state == STREAM_ENDED)
        return XYZ_END;

    /* The atom count, past blank lines (and, after a bad frame, anything that cannot start one). */
    for (;;) {
        int got = next_line(s, r);
        if (got < 0)
            return stream_fail(s, r, got);
        if (got == 0) {
            s->state = STREAM_ENDED;
            if (s->frame_no > 0)
                return XYZ_END;
            return stream_fail(s, r, xyz_fail_file(r, XYZ_ERROR_FORMAT, s->bytes ? "file is empty (only blank lines)" : "file is empty"));
        }
        if (xyz_is_blank(s->line))
            continue;
        if (s->state == STREAM_RESYNC && !xyz_is_count_line(s->line))
            continue;
        break;
    }
    s->state = STREAM_READING;
    s->frame_no++;
    s->frame_offset = s->line_offset;
    f->count_line = s->line_no;
    f->comment_line = s->line_no + 1;
    int64_t n = 0;
    int huge = 0;
    int status = xyz_parse_count(r, s->line, f->count_line, s->frame_no, &n, &huge);
    if (status != XYZ_OK) {
        if (s->recover)
            s->state = STREAM_RESYNC;
        else
            s->state = STREAM_ENDED;
        return status;
    }

    int got = next_line(s, r);
    if (got < 0)
        return stream_fail(s, r, got);
    if (got == 0)
        return fail_truncated(s, r, f, n);
    xyz_layout lay = {4, 0, 1, -1}; /* species:S:1:pos:R:3 */
    status = xyz_parse_comment_line(r, s->line, f->comment_line, s->frame_no, f, &lay);
    if (status != XYZ_OK)
        return bad_line(s, r, f, n, status);
    if (!f->has_pbc)
        f->pbc[0] = f->pbc[1] = f->pbc[2] = f->has_cell ? 1 : 0;
    f->n_columns = lay.total;

    if (s->split) {
        /* Found, not parsed; what split reading does not keep goes to xyz_stream_next. */
        if (n > SPLIT_MAX_ATOMS)
            return XYZ_SPLIT_SEQUENTIAL;
        split->atoms_offset = s->line_offset + (int64_t)s->consumed;
        for (int64_t a = 0; a < n; a++) {
            got = skip_line(s, r);
            if (got <= 0)
                return XYZ_SPLIT_SEQUENTIAL;
            if (s->line_offset + (int64_t)s->consumed - s->keep > SPLIT_MAX_BYTES)
                return XYZ_SPLIT_SEQUENTIAL;
        }
        split->atoms_size = s->line_offset + (int64_t)s->consumed - split->atoms_offset;
        split->columns = lay.total;
        split->species = lay.species;
        split->pos = lay.pos;
        split->masses = lay.masses;
        if (lay.masses >= 0 && !(f->masses = malloc((size_t)n * sizeof *f->masses)))
            return XYZ_SPLIT_SEQUENTIAL;
        f->n_atoms = n;
        return XYZ_OK;
    }
    int64_t capacity = 0;
    for (int64_t a = 0; a < n; a++) {
        got = next_line(s, r);
        if (got < 0)
            return stream_fail(s, r, got);
        if (got == 0)
            return fail_truncated(s, r, f, n);
        if (reserve_atoms(f, &capacity, a + 1, n, lay.masses >= 0) != 0)
            return stream_fail(s, r, xyz_fail_file(r, XYZ_ERROR_MEMORY, "out of memory (%lld atoms)",
                                               (long long)a + 1));
        status = xyz_parse_atom(r, s->line, s->line_no, s->frame_no, &lay, f, a);
        if (status != XYZ_OK)
            return bad_line(s, r, f, n, status);
    }
    f->n_atoms = n;
    return XYZ_OK;
}

int xyz_stream_next(xyz_stream *s, xyz_frame *frame, char *err, size_t err_size)
{
    xyz_reader r = {s->name, err, err_size};
    if (err && err_size)
        err[0] = '\0';
    memset(frame, 0, sizeof *frame);
    xyz_c_locale_scope scope;
    xyz_c_locale_enter(&scope);
    int status = stream_next(s, &r, frame, NULL);
    xyz_c_locale_leave(&scope);
    if (status != XYZ_OK)
        xyz_frame_free(frame);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Split reading                                                            */

static void save_pos(const xyz_stream *s, xyz_stream_pos *p)
{
    p->line_offset = s->line_offset;
    p->frame_offset = s->frame_offset;
    p->consumed = s->consumed;
    p->frame_no = s->frame_no;
    p->line_no = s->line_no;
    p->last_nonblank = s->last_nonblank;
    p->line_ended = s->line_ended;
    p->pushed_back = s->pushed_back;
    p->state = s->state;
}

/* Back to p, whose text the stream still holds (keep). */
static void restore_pos(xyz_stream *s, const xyz_stream_pos *p)
{
    s->start = (size_t)(p->line_offset - s->base);
    s->line_offset = p->line_offset;
    s->frame_offset = p->frame_offset;
    s->consumed = p->consumed;
    s->scanned = 0;
    s->frame_no = p->frame_no;
    s->line_no = p->line_no;
    s->last_nonblank = p->last_nonblank;
    s->line_ended = p->line_ended;
    s->pushed_back = p->pushed_back;
    s->state = p->state;
    /* Only xyz_stream_next pushes a line back, and it terminates lines in place. */
    s->line = s->buf + s->start;
}

int xyz_stream_split(xyz_stream *s, xyz_frame *frame, xyz_split_frame *split)
{
    memset(frame, 0, sizeof *frame);
    memset(split, 0, sizeof *split);
    save_pos(s, &split->before);
    if (s->state == STREAM_FAILED || s->state == STREAM_ENDED)
        return XYZ_SPLIT_SEQUENTIAL;
    if (s->keep < 0)
        s->keep = s->line_offset;
    s->call_at = s->line_offset;
    xyz_reader quiet = {s->name, NULL, 0};
    s->split = 1;
    xyz_c_locale_scope scope;
    xyz_c_locale_enter(&scope);
    int status = stream_next(s, &quiet, frame, split);
    xyz_c_locale_leave(&scope);
    s->split = 0;
    if (status == XYZ_OK)
        return XYZ_OK;
    xyz_frame_free(frame);
    restore_pos(s, &split->before);
    return XYZ_SPLIT_SEQUENTIAL;
}

const char *xyz_stream_split_text(const xyz_stream *s, const xyz_split_frame *split)
{
    return s->buf + (split->atoms_offset - s->base);
}

void xyz_stream_settle(xyz_stream *s)
{
    /* From inside the source's read, the frame being split stays. */
    s->keep = s->split ? s->call_at : -1;
}

void xyz_stream_rewind(xyz_stream *s, const xyz_split_frame *split)
{
    restore_pos(s, &split->before);
    s->keep = -1;
}

void xyz_stream_tell(const xyz_stream *s, xyz_stream_pos *pos)
{
    save_pos(s, pos);
}

void xyz_stream_seek(xyz_stream *s, const xyz_stream_pos *pos)
{
    restore_pos(s, pos);
}

int xyz_parse_split(const char *text, const xyz_split_frame *split, xyz_frame *frame)
{
    xyz_reader quiet = {"", NULL, 0};
    const xyz_layout lay = {split->columns, split->species, split->pos, split->masses};
    const char *p = text, *end = text + split->atoms_size;
    xyz_c_locale_scope scope;
    xyz_c_locale_enter(&scope);
    int status = XYZ_OK;
    for (int64_t a = 0; a < frame->n_atoms && status == XYZ_OK; a++) {
        status = xyz_parse_atom(&quiet, p, 0, 0, &lay, frame, a);
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    xyz_c_locale_leave(&scope);
    return status == XYZ_OK ? XYZ_OK : XYZ_ERROR_FORMAT;
}

/* ------------------------------------------------------------------------ */
/* Whole files                                                              */

/* Every frame of the stream into file; the first error ends it. */
static int read_all(xyz_stream *s, const char *name, xyz_file *file, char *err, size_t err_size)
{
    xyz_reader r = {name, err, err_size};
    file->name = strdup(name);
    if (!file->name)
        return xyz_fail_file(&r, XYZ_ERROR_MEMORY, "out of memory");
    size_t capacity = 0;
    for (;;) {
        xyz_frame f;
        int status = xyz_stream_next(s, &f, err, err_size);
        if (status == XYZ_END)
            return XYZ_OK;
        if (status != XYZ_OK)
            return status;
        if (file->n_frames == capacity) {
            size_t cap = capacity ? 2 * capacity : 4;
            xyz_frame *grown = realloc(file->frames, cap * sizeof *grown);
            if (!grown) {
                xyz_frame_free(&f);
                return xyz_fail_file(&r, XYZ_ERROR_MEMORY, "out of memory");
            }
            file->frames = grown;
            capacity = cap;
        }
        file->frames[file->n_frames++] = f;
    }
}

int xyz_read_memory(const char *name, const char *data, size_t size, xyz_file *file, char *err,
                    size_t err_size)
{
    xyz_reader r = {name, err, err_size};
    memset(file, 0, sizeof *file);
    if (err && err_size)
        err[0] = '\0';
    /* A NUL byte anywhere makes it no text file, whatever comes before it. */
    const char *nul = size ? memchr(data, '\0', size) : NULL;
    if (nul) {
        long line = 1;
        for (const char *p = data; p < nul; p++)
            line += *p == '\n';
        return xyz_fail_file(&r, XYZ_ERROR_FORMAT, "not a text file (a NUL byte on line %ld)", line);
    }
    xyz_stream *s = xyz_stream_open_memory(name, data ? data : "", size, 0);
    if (!s)
        return xyz_fail_file(&r, XYZ_ERROR_MEMORY, "out of memory");
    int status = read_all(s, name, file, err, err_size);
    xyz_stream_close(s);
    if (status != XYZ_OK)
        xyz_file_free(file);
    return status;
}

static long read_from_file(void *self, char *buffer, size_t size, char *why, size_t why_size)
{
    FILE *fp = self;
    size_t got = fread(buffer, 1, size, fp);
    if (got == 0 && ferror(fp)) {
        snprintf(why, why_size, "%s", errno ? strerror(errno) : "read error");
        return -1;
    }
    return (long)got;
}

int xyz_read_file(const char *path, xyz_file *file, char *err, size_t err_size)
{
    int from_stdin = strcmp(path, "-") == 0;
    const char *name = from_stdin ? "<stdin>" : path;
    xyz_reader r = {name, err, err_size};
    memset(file, 0, sizeof *file);
    if (err && err_size)
        err[0] = '\0';
    FILE *fp = from_stdin ? stdin : fopen(path, "rb");
    if (!fp)
        return xyz_fail_file(&r, XYZ_ERROR_IO, "cannot open: %s", strerror(errno));
    xyz_source source = {read_from_file, fp};
    xyz_stream *s = xyz_stream_open(name, source, 0);
    int status = s ? read_all(s, name, file, err, err_size)
                   : xyz_fail_file(&r, XYZ_ERROR_MEMORY, "out of memory");
    xyz_stream_close(s);
    if (!from_stdin)
        fclose(fp);
    if (status != XYZ_OK)
        xyz_file_free(file);
    return status;
}
