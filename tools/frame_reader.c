/* The inputs of `mlff energy`, streamed and decompressed (frame_reader.h). */
#include "frame_reader.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "interrupt.h"

enum codec { CODEC_PLAIN, CODEC_GZIP, CODEC_BZIP2, CODEC_XZ };
static const char *const codec_names[] = {"plain", "gzip", "bzip2", "xz"};

/* Compressed bytes read at a time. */
#define RAW_CHUNK ((size_t)1 << 16)

/* How long a read waits for a pipe before the batcher is told (seconds / 1000). */
#define WAIT_NOTICE_MS 50

typedef struct input_file {
    frame_input *owner;
    const char *name, *path;
    int fd, owns_fd;
    int detected;
    enum codec codec;
    unsigned char *raw; /* compressed bytes not yet decoded: raw[raw_start, raw_end) */
    size_t raw_start, raw_end;
    int raw_eof;
    int member_ended;   /* a gzip or bzip2 stream ended where the data may go on */
    int finished;       /* the xz decoder saw the end of its data */
    int decoder_live;
    z_stream z;
    bz_stream bz;
    lzma_stream xz;
} input_file;

struct frame_input {
    const char *const *paths;
    size_t n_paths;
    int recover;
    char **names;
    size_t current;
    input_file *file;
    xyz_stream *stream;
    int64_t frames_before; /* frames of the inputs already finished */
    int failed;
    void (*on_wait)(void *arg);
    void *wait_arg;
    input_progress progress;
    int countable;
};

/* ------------------------------------------------------------------------ */
/* Raw bytes                                                                */

/* Up to n bytes from the file descriptor: the count, 0 at its end, -1 with why. */
static long raw_read(input_file *f, void *dst, size_t n, char *why, size_t why_size)
{
    int waited = 0;
    for (;;) {
        if (interrupt_requested()) {
            snprintf(why, why_size, "interrupted");
            return -1;
        }
        struct pollfd p[2] = {{.fd = f->fd, .events = POLLIN}, {.fd = interrupt_wake_fd(), .events = POLLIN}};
        int n_fds = p[1].fd >= 0 ? 2 : 1;
        int timeout = f->owner->on_wait && !waited ? WAIT_NOTICE_MS : -1;
        int ready = poll(p, (nfds_t)n_fds, timeout);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            snprintf(why, why_size, "%s", strerror(errno));
            return -1;
        }
        if (ready == 0) {
            waited = 1;
            f->owner->on_wait(f->owner->wait_arg);
            continue;
        }
        if (n_fds == 2 && p[1].revents)
            continue; /* the top of the loop says why */
        ssize_t got = read(f->fd, dst, n);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            snprintf(why, why_size, "%s", strerror(errno));
            return -1;
        }
        atomic_fetch_add(&f->owner->progress.bytes_read, (long long)got);
        return (long)got;
    }
}

/* More compressed bytes after the ones not yet decoded: 1, 0 at the end, -1 with why. */
static int raw_fill(input_file *f, char *why, size_t why_size)
{
    if (f->raw_start > 0) {
        memmove(f->raw, f->raw + f->raw_start, f->raw_end - f->raw_start);
        f->raw_end -= f->raw_start;
        f->raw_start = 0;
    }
    if (f->raw_eof || f->raw_end == RAW_CHUNK)
        return f->raw_end > 0;
    long got = raw_read(f, f->raw + f->raw_end, RAW_CHUNK - f->raw_end, why, why_size);
    if (got < 0)
        return -1;
    if (got == 0)
        f->raw_eof = 1;
    f->raw_end += (size_t)got;
    return got > 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Which compression the first bytes show; and the decoder for it. */
static int detect(input_file *f, char *why, size_t why_size)
{
    while (!f->raw_eof && f->raw_end < 6)
        if (raw_fill(f, why, why_size) < 0)
            return -1;
    const unsigned char *b = f->raw;
    size_t n = f->raw_end;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        f->codec = CODEC_GZIP;
    else if (n >= 4 && b[0] == 'B' && b[1] == 'Z' && b[2] == 'h' && b[3] >= '1' && b[3] <= '9')
        f->codec = CODEC_BZIP2;
    else if (n >= 6 && memcmp(b, "\xfd" "7zXZ\0", 6) == 0)
        f->codec = CODEC_XZ;
    else
        f->codec = CODEC_PLAIN;
    const enum codec named = ends_with(f->path, ".gz")    ? CODEC_GZIP
                             : ends_with(f->path, ".bz2") ? CODEC_BZIP2
                             : ends_with(f->path, ".xz")  ? CODEC_XZ
                                                          : CODEC_PLAIN;
    if (named != CODEC_PLAIN && f->codec != named) {
        snprintf(why, why_size, "not %s data (the name says %s)", codec_names[named],
                 ends_with(f->path, ".gz") ? ".gz" : ends_with(f->path, ".bz2") ? ".bz2" : ".xz");
        return -1;
    }
    int ok = 1;
    if (f->codec == CODEC_GZIP)
        ok = inflateInit2(&f->z, 15 + 16) == Z_OK;
    else if (f->codec == CODEC_BZIP2)
        ok = BZ2_bzDecompressInit(&f->bz, 0, 0) == BZ_OK;
    else if (f->codec == CODEC_XZ)
        ok = lzma_stream_decoder(&f->xz, UINT64_MAX, LZMA_CONCATENATED) == LZMA_OK;
    if (!ok) {
        snprintf(why, why_size, "cannot start the %s decoder", codec_names[f->codec]);
        return -1;
    }
    f->decoder_live = f->codec != CODEC_PLAIN;
    f->detected = 1;
    return 0;
}

static void end_decoder(input_file *f)
{
    if (!f->decoder_live)
        return;
    if (f->codec == CODEC_GZIP)
        inflateEnd(&f->z);
    else if (f->codec == CODEC_BZIP2)
        BZ2_bzDecompressEnd(&f->bz);
    else if (f->codec == CODEC_XZ)
        lzma_end(&f->xz);
    f->decoder_live = 0;
}

/* ------------------------------------------------------------------------ */
/* Decoded bytes (the xyz_source of an input)                               */

/*
 * gzip and bzip2 data may be several streams one after the other (cat
 * a.gz b.gz > c.gz): a stream that ends where more data follows is followed
 * by a new one, as gzip -d and bzip2 -d read them. xz's decoder does that
 * itself (LZMA_CONCATENATED).
 */
static long decode(input_file *f, char *out, size_t size, char *why, size_t why_size)
{
    size_t produced = 0;
    int stalled = 0; /* the decoder took nothing from what it has: give it more */
    if (f->finished)
        return 0;
    while (produced == 0) {
        if ((f->raw_start == f->raw_end || stalled) && !f->raw_eof) {
            int got = raw_fill(f, why, why_size);
            if (got < 0)
                return -1;
        }
        size_t in_before = f->raw_end - f->raw_start;
        if (f->member_ended) {
            if (in_before == 0 && f->raw_eof)
                return 0;
            if (in_before == 0)
                continue;
            f->member_ended = 0;
            if (f->codec == CODEC_GZIP) {
                inflateReset(&f->z);
            } else {
                BZ2_bzDecompressEnd(&f->bz);
                f->decoder_live = 0;
                if (BZ2_bzDecompressInit(&f->bz, 0, 0) != BZ_OK) {
                    snprintf(why, why_size, "cannot restart the bzip2 decoder");
                    return -1;
                }
                f->decoder_live = 1;
            }
        }
        int stream_end = 0, error = 0;
        const char *message = NULL;
        size_t in_left = in_before, out_left = size;
        if (f->codec == CODEC_GZIP) {
            f->z.next_in = f->raw + f->raw_start;
            f->z.avail_in = (uInt)in_before;
            f->z.next_out = (Bytef *)out;
            f->z.avail_out = (uInt)(size > UINT32_MAX ? UINT32_MAX : size);
            size_t asked = f->z.avail_out;
            int ret = inflate(&f->z, Z_NO_FLUSH);
            in_left = f->z.avail_in;
            out_left = size - (asked - f->z.avail_out);
            stream_end = ret == Z_STREAM_END;
            error = ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR;
            message = f->z.msg;
        } else if (f->codec == CODEC_BZIP2) {
            f->bz.next_in = (char *)f->raw + f->raw_start;
            f->bz.avail_in = (unsigned)in_before;
            f->bz.next_out = out;
            f->bz.avail_out = (unsigned)(size > UINT32_MAX ? UINT32_MAX : size);
            size_t asked = f->bz.avail_out;
            int ret = BZ2_bzDecompress(&f->bz);
            in_left = f->bz.avail_in;
            out_left = size - (asked - f->bz.avail_out);
            stream_end = ret == BZ_STREAM_END;
            error = ret != BZ_OK && ret != BZ_STREAM_END;
        } else {
            f->xz.next_in = f->raw + f->raw_start;
            f->xz.avail_in = in_before;
            f->xz.next_out = (uint8_t *)out;
            f->xz.avail_out = size;
            lzma_ret ret = lzma_code(&f->xz, f->raw_eof && in_before == 0 ? LZMA_FINISH : LZMA_RUN);
            in_left = f->xz.avail_in;
            out_left = f->xz.avail_out;
            stream_end = ret == LZMA_STREAM_END;
            error = ret != LZMA_OK && ret != LZMA_STREAM_END && ret != LZMA_BUF_ERROR;
        }
        f->raw_start += in_before - in_left;
        produced = size - out_left;
        if (error) {
            snprintf(why, why_size, "corrupt %s data%s%s", codec_names[f->codec], message ? ": " : "",
                     message ? message : "");
            return -1;
        }
        if (stream_end) {
            if (f->codec == CODEC_XZ) {
                f->finished = 1;
                return (long)produced;
            }
            f->member_ended = 1;
            continue;
        }
        stalled = produced == 0 && in_before == in_left;
        if (produced == 0 && in_before == in_left && f->raw_eof && f->raw_start == f->raw_end) {
            snprintf(why, why_size, "the %s data ends early (a truncated file?)", codec_names[f->codec]);
            return -1;
        }
    }
    return (long)produced;
}

static long input_read(void *self, char *buffer, size_t size, char *why, size_t why_size)
{
    input_file *f = self;
    if (!f->detected && detect(f, why, why_size) != 0)
        return -1;
    if (f->codec != CODEC_PLAIN)
        return decode(f, buffer, size, why, why_size);
    if (f->raw_start < f->raw_end) { /* what detection read */
        size_t n = f->raw_end - f->raw_start < size ? f->raw_end - f->raw_start : size;
        memcpy(buffer, f->raw + f->raw_start, n);
        f->raw_start += n;
        return (long)n;
    }
    return raw_read(f, buffer, size, why, why_size);
}

static void input_close(input_file *f)
{
    if (!f)
        return;
    end_decoder(f);
    if (f->owns_fd && f->fd >= 0)
        close(f->fd);
    free(f->raw);
    free(f);
}

/* Opens paths[k]; NULL with the message in err. */
static input_file *input_open(frame_input *in, size_t k, char *err, size_t err_size)
{
    const char *path = in->paths[k];
    input_file *f = calloc(1, sizeof *f);
    unsigned char *raw = malloc(RAW_CHUNK);
    if (!f || !raw) {
        free(f);
        free(raw);
        snprintf(err, err_size, "mlff: out of memory");
        return NULL;
    }
    f->owner = in;
    f->raw = raw;
    f->name = in->names[k];
    f->path = path;
    if (strcmp(path, "-") == 0) {
        f->fd = STDIN_FILENO;
    } else {
        f->fd = open(path, O_RDONLY | O_CLOEXEC);
        f->owns_fd = 1;
        if (f->fd < 0) {
            snprintf(err, err_size, "%s: cannot open: %s", f->name, strerror(errno));
            input_close(f);
            return NULL;
        }
    }
    return f;
}

/* ------------------------------------------------------------------------ */
/* Frames of every input                                                    */

frame_input *frame_input_new(const char *const *paths, size_t n_paths, int recover)
{
    frame_input *in = calloc(1, sizeof *in);
    if (!in)
        return NULL;
    in->paths = paths;
    in->n_paths = n_paths;
    in->recover = recover;
    in->names = calloc(n_paths ? n_paths : 1, sizeof *in->names);
    if (!in->names) {
        free(in);
        return NULL;
    }
    long long total = 0;
    in->countable = 1;
    for (size_t k = 0; k < n_paths; k++) {
        in->names[k] = strdup(strcmp(paths[k], "-") == 0 ? "<stdin>" : paths[k]);
        if (!in->names[k]) {
            frame_input_free(in);
            return NULL;
        }
        struct stat st;
        if (strcmp(paths[k], "-") != 0 && stat(paths[k], &st) == 0 && S_ISREG(st.st_mode)) {
            if (total >= 0)
                total += st.st_size;
            if (ends_with(paths[k], ".gz") || ends_with(paths[k], ".bz2") || ends_with(paths[k], ".xz"))
                in->countable = 0;
        } else {
            total = -1;
            in->countable = 0;
        }
    }
    atomic_init(&in->progress.bytes_read, 0);
    atomic_init(&in->progress.bytes_total, total);
    return in;
}

void frame_input_free(frame_input *in)
{
    if (!in)
        return;
    xyz_stream_close(in->stream);
    input_close(in->file);
    for (size_t k = 0; k < in->n_paths; k++)
        free(in->names[k]);
    free(in->names);
    free(in);
}

void frame_input_on_wait(frame_input *in, void (*fn)(void *arg), void *arg)
{
    in->on_wait = fn;
    in->wait_arg = arg;
}

const input_progress *frame_input_progress(const frame_input *in)
{
    return &in->progress;
}

int frame_input_failed(const frame_input *in)
{
    return in->failed;
}

int frame_input_recovers(const frame_input *in)
{
    return in->recover;
}

int frame_input_countable(const frame_input *in)
{
    return in->countable;
}

int frame_input_next(frame_input *in, xyz_frame *frame, frame_origin *origin, char *err,
                     size_t err_size)
{
    memset(frame, 0, sizeof *frame);
    memset(origin, 0, sizeof *origin);
    if (err && err_size)
        err[0] = '\0';
    for (;;) {
        if (in->failed) {
            snprintf(err, err_size, "mlff: the input failed before");
            return XYZ_ERROR_IO;
        }
        if (!in->stream) {
            if (in->current == in->n_paths)
                return XYZ_END;
            in->file = input_open(in, in->current, err, err_size);
            xyz_source source = {input_read, in->file};
            in->stream = in->file ? xyz_stream_open(in->names[in->current], source, in->recover) : NULL;
            if (!in->stream) {
                if (in->file && err && err_size)
                    snprintf(err, err_size, "mlff: out of memory");
                in->failed = 1;
                return in->file ? XYZ_ERROR_MEMORY : XYZ_ERROR_IO;
            }
        }
        int status = xyz_stream_next(in->stream, frame, err, err_size);
        size_t number = xyz_stream_frame_number(in->stream);
        if (status == XYZ_END) {
            in->frames_before += (int64_t)number;
            xyz_stream_close(in->stream);
            input_close(in->file);
            in->stream = NULL;
            in->file = NULL;
            in->current++;
            continue;
        }
        origin->file = in->names[in->current];
        origin->frame_in_file = number;
        origin->index = in->frames_before + (int64_t)number;
        if (status != XYZ_OK && xyz_stream_failed(in->stream))
            in->failed = 1;
        return status;
    }
}

int frame_input_split(frame_input *in, xyz_frame *frame, xyz_split_frame *split, frame_origin *origin)
{
    memset(frame, 0, sizeof *frame);
    memset(origin, 0, sizeof *origin);
    if (in->failed || !in->stream || xyz_stream_split(in->stream, frame, split) != XYZ_OK)
        return XYZ_SPLIT_SEQUENTIAL;
    size_t number = xyz_stream_frame_number(in->stream);
    origin->file = in->names[in->current];
    origin->frame_in_file = number;
    origin->index = in->frames_before + (int64_t)number;
    return XYZ_OK;
}

const char *frame_input_split_text(const frame_input *in, const xyz_split_frame *split)
{
    return xyz_stream_split_text(in->stream, split);
}

void frame_input_settle(frame_input *in)
{
    if (in->stream)
        xyz_stream_settle(in->stream);
}

void frame_input_rewind(frame_input *in, const xyz_split_frame *split)
{
    xyz_stream_rewind(in->stream, split);
    in->failed = 0;
}

void frame_input_tell(const frame_input *in, xyz_stream_pos *pos)
{
    xyz_stream_tell(in->stream, pos);
}

void frame_input_seek(frame_input *in, const xyz_stream_pos *pos)
{
    xyz_stream_seek(in->stream, pos);
    in->failed = 0;
}

/* ------------------------------------------------------------------------ */
/* Counting frames ahead                                                    */

typedef struct counter {
    int64_t frames;
    int64_t lines_left; /* of the frame being skipped: comment and atom lines */
    char head[64];      /* the start of a line that may be an atom count */
    size_t head_len;
    int head_long;
} counter;

static int blank_char(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* A whole line that should be an atom count: 0, or -1 if it is not one. */
static int count_line_done(counter *c)
{
    size_t i = 0, n = c->head_len;
    while (i < n && blank_char(c->head[i]))
        i++;
    if (i == n && !c->head_long)
        return 0; /* blank line between frames */
    if (c->head_long)
        return -1;
    if (i < n && c->head[i] == '+')
        i++;
    int64_t v = 0;
    size_t digits = 0;
    while (i < n && c->head[i] >= '0' && c->head[i] <= '9') {
        if (v > (INT64_MAX - 9) / 10)
            return -1;
        v = 10 * v + (c->head[i++] - '0');
        digits++;
    }
    while (i < n && blank_char(c->head[i]))
        i++;
    if (!digits || i != n || v == 0)
        return -1;
    c->frames++;
    c->lines_left = v + 1;
    return 0;
}

static int count_block(counter *c, const char *p, size_t n)
{
    const char *end = p + n;
    while (p < end) {
        if (c->lines_left > 0) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                return 0;
            p = nl + 1;
            c->lines_left--;
            continue;
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t take = (size_t)((nl ? nl : end) - p);
        if (c->head_len + take > sizeof c->head) {
            c->head_long = 1;
            take = sizeof c->head - c->head_len;
        }
        memcpy(c->head + c->head_len, p, take);
        c->head_len += take;
        if (!nl)
            return 0;
        p = nl + 1;
        if (count_line_done(c) != 0)
            return -1;
        c->head_len = 0;
        c->head_long = 0;
    }
    return 0;
}

int64_t frame_input_count(const frame_input *in, const atomic_int *cancel)
{
    if (!in->countable)
        return -1;
    char *block = malloc((size_t)1 << 20);
    if (!block)
        return -1;
    int64_t total = 0;
    for (size_t k = 0; k < in->n_paths && total >= 0; k++) {
        int fd = open(in->paths[k], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            total = -1;
            break;
        }
        counter c;
        memset(&c, 0, sizeof c);
        ssize_t got;
        while ((got = read(fd, block, (size_t)1 << 20)) > 0) {
            if (atomic_load(cancel) || count_block(&c, block, (size_t)got) != 0) {
                got = -1;
                break;
            }
        }
        if (got == 0 && c.lines_left == 0 && c.head_len > 0 && count_line_done(&c) != 0)
            got = -1;
        close(fd);
        total = got < 0 ? -1 : total + c.frames;
    }
    free(block);
    return total;
}
