/* The output of `mlff energy` (output.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int output_open(output *o, const char *path, int append, char *err, size_t err_size)
{
    memset(o, 0, sizeof *o);
    o->last_sync = now();
    if (!path) {
        o->fd = STDOUT_FILENO;
        o->name = "standard output";
        return 0;
    }
    o->name = path;
    o->is_file = 1;
    o->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0666);
    if (o->fd < 0) {
        snprintf(err, err_size, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int output_write(output *o, const char *data, size_t n, char *err, size_t err_size)
{
    while (n > 0) {
        ssize_t got = write(o->fd, data, n);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (o->is_file)
                snprintf(err, err_size, "%s: cannot write: %s", o->name, strerror(errno));
            else
                snprintf(err, err_size, "mlff: cannot write to standard output: %s", strerror(errno));
            return -1;
        }
        data += got;
        n -= (size_t)got;
    }
    return 0;
}

/* fsync where the descriptor can (not on pipes and terminals). */
static int sync_fd(output *o, char *err, size_t err_size)
{
    o->last_sync = now();
    if (fsync(o->fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP) {
        snprintf(err, err_size, "%s: cannot write: %s", o->name, strerror(errno));
        return -1;
    }
    return 0;
}

int output_checkpoint(output *o, char *err, size_t err_size)
{
    if (o->is_file && now() - o->last_sync >= OUTPUT_SYNC_SECONDS)
        return sync_fd(o, err, err_size);
#ifdef SYNC_FILE_RANGE_WRITE
    /* The disk starts on what was written, without waiting for it: the
     * fsync at the end then has little left to wait for, and the page
     * cache does not fill with dirty pages that hold the writer back.
     * Only a hint: where it cannot (pipes, devices), nothing is lost. */
    if (o->is_file)
        (void)sync_file_range(o->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
    return 0;
}

int output_close(output *o, char *err, size_t err_size)
{
    int status = 0;
    if (o->is_file) {
        status = sync_fd(o, err, err_size);
        if (close(o->fd) != 0 && status == 0) {
            snprintf(err, err_size, "%s: cannot write: %s", o->name, strerror(errno));
            status = -1;
        }
    }
    o->fd = -1;
    return status;
}
