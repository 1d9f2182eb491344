#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void mlff_profile_init(mlff_profile *p, const char *title, int mode)
{
    memset(p, 0, sizeof *p);
    p->events = mode >= MLFF_PROFILE_EVENTS;
    p->enabled = mode >= MLFF_PROFILE_PHASES;
    p->title = title;
}

void mlff_profile_begin(mlff_profile *p)
{
    p->evaluations++;
}

void mlff_profile_add(mlff_profile *p, int row, const char *name, double seconds)
{
    if (p->evaluations < 2 || row < 0 || row >= MLFF_PROFILE_ROWS)
        return;
    if (!p->names[row])
        p->names[row] = name;
    p->seconds[row] += seconds;
    p->counts[row]++;
}

void mlff_profile_print(const mlff_profile *p)
{
    if (!p->enabled)
        return;
    if (p->evaluations < 2) {
        fprintf(stderr, "mlff profile: %s: no evaluation after the first\n", p->title);
        return;
    }
    double total = 0;
    for (int r = 0; r < MLFF_PROFILE_ROWS; r++)
        total += p->seconds[r];
    const uint64_t warm = p->evaluations - 1;
    const double per = 1e3 / (double)warm;
    fprintf(stderr, "mlff profile: %s, %llu evaluations after the first, %.3f ms each\n", p->title,
            (unsigned long long)warm, total * per);
    fprintf(stderr, "  %-30s %12s %8s %10s\n", "", "ms each", "share", "count");
    for (int r = 0; r < MLFF_PROFILE_ROWS; r++)
        if (p->counts[r])
            fprintf(stderr, "  %-30s %12.4f %7.1f%% %10llu\n", p->names[r], p->seconds[r] * per,
                    total > 0 ? 100 * p->seconds[r] / total : 0.0, (unsigned long long)p->counts[r]);
}

double mlff_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
