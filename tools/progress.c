/* The progress line (progress.h). */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Seconds between redraws. */
#define TERMINAL_INTERVAL 0.2
#define LINES_INTERVAL 5.0

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void progress_init(progress *p, progress_mode mode, const input_progress *input)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    p->mode = mode;
    p->input = input;
    atomic_init(&p->total_frames, -1);
    p->start = p->last_draw = now();
}

void progress_destroy(progress *p)
{
    pthread_mutex_destroy(&p->lock);
}

/* The share of the input's bytes read, or -1 when the size is unknown. */
static double byte_fraction(const progress *p)
{
    if (!p->input)
        return -1;
    long long total = atomic_load(&p->input->bytes_total);
    long long read = atomic_load(&p->input->bytes_read);
    if (total <= 0)
        return -1;
    double f = (double)read / (double)total;
    return f > 1 ? 1 : f;
}

static void duration(double seconds, char *out, size_t size)
{
    long s = seconds < 0 ? 0 : seconds > 3.6e8 ? 360000000L : (long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(out, size, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, size, "%ld:%02ld", s / 60, s % 60);
}

static void rate(double per_second, char *out, size_t size)
{
    if (per_second >= 1e6)
        snprintf(out, size, "%.2fM", per_second / 1e6);
    else if (per_second >= 1e4)
        snprintf(out, size, "%.1fk", per_second / 1e3);
    else
        snprintf(out, size, "%.0f", per_second);
}

/* The progress text, without a line end. */
static void compose(progress *p, char *line, size_t size)
{
    if (p->phase) {
        snprintf(line, size, "mlff: %s: %lld frames", p->phase, (long long)p->frames_done);
        return;
    }
    double t = now(), elapsed = t - p->start;
    int64_t done = p->frames_done, total = atomic_load(&p->total_frames);
    int64_t this_run = done - p->frames_before;
    double fraction = byte_fraction(p);
    char where[128], speed[128] = "", times[128], e[32], left[64] = "";
    if (total >= done && total > 0)
        snprintf(where, sizeof where, "%lld of %lld frames (%.1f%%)", (long long)done, (long long)total,
                 100.0 * (double)done / (double)total);
    else if (fraction >= 0)
        snprintf(where, sizeof where, "%lld frames (%.1f%% of the input)", (long long)done, 100 * fraction);
    else
        snprintf(where, sizeof where, "%lld frames", (long long)done);
    if (elapsed > 0.05 && this_run > 0) {
        char fr[32], ar[32];
        rate((double)this_run / elapsed, fr, sizeof fr);
        rate((double)p->atoms_done / elapsed, ar, sizeof ar);
        snprintf(speed, sizeof speed, ", %s frames/s, %s atoms/s", fr, ar);
        double remaining = -1;
        if (total >= done && total > 0)
            remaining = (double)(total - done) * elapsed / (double)this_run;
        else if (fraction > p->fraction_before)
            remaining = (1 - fraction) * elapsed / (fraction - p->fraction_before);
        if (remaining >= 0) {
            char r[32];
            duration(remaining, r, sizeof r);
            snprintf(left, sizeof left, ", %s left", r);
        }
    }
    duration(elapsed, e, sizeof e);
    snprintf(times, sizeof times, ", %s elapsed%s", e, left);
    snprintf(line, size, "mlff: %s%s%s", where, speed, times);
}

/* With the lock held. */
static void draw(progress *p)
{
    if (p->mode == PROGRESS_OFF)
        return;
    char line[512];
    compose(p, line, sizeof line);
    if (p->mode == PROGRESS_TERMINAL) {
        fprintf(stderr, "\r\033[K%s", line);
        p->line_shown = 1;
    } else {
        fprintf(stderr, "%s\n", line);
    }
    fflush(stderr);
    p->last_draw = now();
}

static void draw_if_due(progress *p, int force)
{
    double interval = p->mode == PROGRESS_TERMINAL ? TERMINAL_INTERVAL : LINES_INTERVAL;
    if (p->mode != PROGRESS_OFF && (force || now() - p->last_draw >= interval))
        draw(p);
}

void progress_start(progress *p, int64_t frames_before)
{
    pthread_mutex_lock(&p->lock);
    p->phase = NULL;
    p->frames_before = p->frames_done = frames_before;
    p->atoms_done = 0;
    p->fraction_before = byte_fraction(p);
    if (p->fraction_before < 0)
        p->fraction_before = 0;
    p->start = now();
    pthread_mutex_unlock(&p->lock);
}

void progress_phase(progress *p, const char *phase, int64_t count)
{
    pthread_mutex_lock(&p->lock);
    int changed = p->phase != phase;
    p->phase = phase;
    p->frames_done = count;
    draw_if_due(p, changed);
    pthread_mutex_unlock(&p->lock);
}

void progress_set_total(progress *p, int64_t frames)
{
    atomic_store(&p->total_frames, frames);
}

void progress_advance(progress *p, int64_t frames_done, int64_t atoms)
{
    pthread_mutex_lock(&p->lock);
    if (frames_done > p->frames_done)
        p->frames_done = frames_done;
    p->atoms_done += atoms;
    draw_if_due(p, 0);
    pthread_mutex_unlock(&p->lock);
}

void progress_tick(progress *p, int force)
{
    pthread_mutex_lock(&p->lock);
    draw_if_due(p, force);
    pthread_mutex_unlock(&p->lock);
}

void progress_message(progress *p, const char *line)
{
    pthread_mutex_lock(&p->lock);
    if (p->line_shown)
        fputs("\r\033[K", stderr);
    fprintf(stderr, "%s\n", line);
    if (p->line_shown)
        draw(p);
    fflush(stderr);
    pthread_mutex_unlock(&p->lock);
}

void progress_finish(progress *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->mode != PROGRESS_OFF) {
        draw(p);
        if (p->mode == PROGRESS_TERMINAL)
            fputc('\n', stderr);
        fflush(stderr);
    }
    p->line_shown = 0;
    p->mode = PROGRESS_OFF;
    pthread_mutex_unlock(&p->lock);
}
