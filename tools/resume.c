/* --resume (resume.h). */
#include "resume.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "interrupt.h"

static long read_fd(void *self, char *buffer, size_t size, char *why, size_t why_size)
{
    const int fd = *(const int *)self;
    for (;;) {
        ssize_t got = read(fd, buffer, size);
        if (got >= 0)
            return (long)got;
        if (errno != EINTR) {
            snprintf(why, why_size, "%s", strerror(errno));
            return -1;
        }
    }
}

static const char *info_value(const xyz_frame *f, const char *key)
{
    for (size_t i = 0; i < f->n_info; i++)
        if (strcmp(f->info[i].key, key) == 0)
            return f->info[i].value ? f->info[i].value : "";
    return NULL;
}

/* The input frame an OUT frame names (input_frame=N), else the one after prev; -1 if malformed. */
static int64_t input_index(const xyz_frame *f, int64_t prev)
{
    const char *tag = info_value(f, "input_frame");
    if (!tag)
        return prev + 1;
    char *end;
    errno = 0;
    long long v = strtoll(tag, &end, 10);
    return errno || end == tag || *end || v <= prev ? -1 : (int64_t)v;
}

static int same_frame(const xyz_frame *a, const xyz_frame *b)
{
    return a->n_atoms == b->n_atoms &&
           memcmp(a->numbers, b->numbers, (size_t)a->n_atoms * sizeof *a->numbers) == 0 &&
           memcmp(a->positions, b->positions, 3 * (size_t)a->n_atoms * sizeof *a->positions) == 0 &&
           a->has_cell == b->has_cell && (!a->has_cell || memcmp(a->cell, b->cell, sizeof a->cell) == 0) &&
           memcmp(a->pbc, b->pbc, 3) == 0;
}

/*
 * Passes over the input up to frame index, which must match out; EXIT_OK,
 * or EXIT_BAD_INPUT with err.
 */
static int match_input(frame_input *in, const char *out_path, const xyz_frame *out, size_t out_number,
                       int64_t index, char *err, size_t err_size)
{
    char message[XYZ_ERROR_SIZE];
    for (;;) {
        xyz_frame g;
        frame_origin origin;
        int status = frame_input_next(in, &g, &origin, message, sizeof message);
        if (status == XYZ_END) {
            snprintf(err, err_size,
                     "%s:%ld: frame %zu came from input frame %lld, but the input has fewer frames "
                     "(not the same input?); not resuming",
                     out_path, out->count_line, out_number, (long long)index);
            return EXIT_BAD_INPUT;
        }
        /* Without --on-error skip, the first run stopped at a bad frame: OUT cannot go past one. */
        if (status != XYZ_OK && (frame_input_failed(in) || !frame_input_recovers(in) || origin.index == 0)) {
            snprintf(err, err_size, "%s", message);
            return interrupt_requested() > 0 ? EXIT_INTERRUPTED : EXIT_BAD_INPUT;
        }
        if (origin.index < index) {
            xyz_frame_free(&g);
            continue;
        }
        int same = status == XYZ_OK && same_frame(out, &g);
        xyz_frame_free(&g);
        if (same)
            return EXIT_OK;
        if (status != XYZ_OK)
            snprintf(err, err_size, "%s:%ld: frame %zu came from input frame %lld, which is bad: %s; "
                     "not resuming", out_path, out->count_line, out_number, (long long)index, message);
        else
            snprintf(err, err_size,
                     "%s:%ld: frame %zu is not the input's frame %lld (%s frame %zu): not the same "
                     "input; not resuming",
                     out_path, out->count_line, out_number, (long long)index, origin.file,
                     origin.frame_in_file);
        return EXIT_BAD_INPUT;
    }
}

/* Whether any whole frame follows a damaged one: then the damage is no torn end. */
static int frames_follow(xyz_stream *s)
{
    char message[XYZ_ERROR_SIZE];
    for (;;) {
        xyz_frame f;
        int status = xyz_stream_next(s, &f, message, sizeof message);
        xyz_frame_free(&f);
        if (status == XYZ_OK)
            return 1;
        if (status == XYZ_END || xyz_stream_failed(s))
            return 0;
    }
}

static int check_out(xyz_stream *s, frame_input *in, const char *out_path, int forces, progress *p,
                     resume_state *st, int64_t *keep, char *err, size_t err_size)
{
    char message[XYZ_ERROR_SIZE];
    for (;;) {
        if (interrupt_requested() > 0)
            return EXIT_INTERRUPTED;
        xyz_frame f;
        int status = xyz_stream_next(s, &f, message, sizeof message);
        if (status == XYZ_END)
            return EXIT_OK;
        if (status == XYZ_ERROR_IO || status == XYZ_ERROR_MEMORY) {
            snprintf(err, err_size, "%s", message);
            return EXIT_BAD_INPUT;
        }
        if (status != XYZ_OK) {
            /* A torn end, or an empty file; unless whole frames follow the damage. */
            if (!xyz_stream_failed(s) && frames_follow(s)) {
                snprintf(err, err_size, "%s; whole frames follow it (not a torn end): not resuming",
                         message);
                return EXIT_BAD_INPUT;
            }
            return EXIT_OK;
        }
        size_t number = xyz_stream_frame_number(s);
        int torn = !xyz_stream_line_ended(s);
        int has_forces = f.n_columns == 7;
        int64_t index = input_index(&f, st->last_index);
        int code = EXIT_OK;
        if (torn) {
            /* The last line of the file, cut in the middle: a number may still read. */
        } else if (!info_value(&f, "energy")) {
            snprintf(err, err_size, "%s:%ld: frame %zu has no energy: not the output of mlff energy; "
                     "not resuming", out_path, f.count_line, number);
            code = EXIT_BAD_INPUT;
        } else if (has_forces != forces) {
            snprintf(err, err_size, "%s:%ld: frame %zu has %s: resume with the options of the first "
                     "run (%s --forces)", out_path, f.count_line, number, has_forces ? "forces" : "no forces",
                     has_forces ? "with" : "without");
            code = EXIT_BAD_INPUT;
        } else if (index < 0) {
            snprintf(err, err_size, "%s:%ld: frame %zu: input_frame=%s does not follow the frame before; "
                     "not resuming", out_path, f.count_line, number, info_value(&f, "input_frame"));
            code = EXIT_BAD_INPUT;
        } else {
            code = match_input(in, out_path, &f, number, index, err, err_size);
        }
        xyz_frame_free(&f);
        if (torn || code != EXIT_OK)
            return code;
        *keep = xyz_stream_end_offset(s);
        st->frames++;
        st->last_index = index;
        progress_phase(p, "checking the frames of OUT", st->frames);
    }
}

int resume_prepare(const char *out_path, frame_input *in, int forces, progress *p, resume_state *st,
                   char *err, size_t err_size)
{
    memset(st, 0, sizeof *st);
    int fd = open(out_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return EXIT_OK;
        snprintf(err, err_size, "%s: cannot open: %s", out_path, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        snprintf(err, err_size, "%s: --resume needs a regular file", out_path);
        close(fd);
        return EXIT_BAD_INPUT;
    }
    xyz_source source = {read_fd, &fd};
    xyz_stream *s = xyz_stream_open(out_path, source, 1);
    if (!s) {
        snprintf(err, err_size, "mlff: out of memory");
        close(fd);
        return EXIT_BAD_INPUT;
    }
    int64_t keep = 0;
    int code = check_out(s, in, out_path, forces, p, st, &keep, err, err_size);
    xyz_stream_close(s);
    if (code == EXIT_OK && fstat(fd, &info) == 0 && info.st_size > keep) {
        if (ftruncate(fd, (off_t)keep) != 0) {
            snprintf(err, err_size, "%s: cannot cut off its torn end: %s", out_path, strerror(errno));
            code = EXIT_BAD_INPUT;
        } else {
            st->cut_bytes = (int64_t)info.st_size - keep;
        }
    }
    close(fd);
    return code;
}
