/* Short parallel loops (parallel.h). */
#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

int parallel_default_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long threads = cpus / 4;
    return threads < 1 ? 1 : threads > 8 ? 8 : (int)threads;
}

int parallel_parts(int threads, int64_t atoms)
{
    int64_t most = atoms / PARALLEL_MIN_ATOMS;
    int parts = threads < most ? threads : (int)most;
    return parts < 1 ? 1 : parts;
}

typedef struct part_call {
    void (*fn)(void *arg, int part);
    void *arg;
    int part;
} part_call;

static void *run_part(void *p)
{
    part_call *c = p;
    c->fn(c->arg, c->part);
    return NULL;
}

/* Threads a call starts at most; parts beyond run in the calling thread. */
#define MAX_PARTS 64

void parallel_run(int n_parts, void (*fn)(void *arg, int part), void *arg)
{
    pthread_t threads[MAX_PARTS];
    part_call calls[MAX_PARTS];
    int started[MAX_PARTS];
    const int n_threads = n_parts < MAX_PARTS ? n_parts : MAX_PARTS;
    for (int k = 1; k < n_threads; k++) {
        calls[k] = (part_call){fn, arg, k};
        started[k] = pthread_create(&threads[k], NULL, run_part, &calls[k]) == 0;
    }
    fn(arg, 0);
    for (int k = n_threads; k < n_parts; k++)
        fn(arg, k);
    for (int k = 1; k < n_threads; k++) {
        if (started[k])
            pthread_join(threads[k], NULL);
        else
            fn(arg, k);
    }
}

/* The first frame whose atoms start at or after atom `at`. */
static size_t first_at(const int64_t *offsets, size_t n, int64_t at)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (offsets[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void parallel_range(const int64_t *offsets, size_t n, int part, int n_parts, size_t *first, size_t *end)
{
    const int64_t start = offsets[0], atoms = offsets[n] - start;
    *first = part == 0 ? 0 : first_at(offsets, n, start + atoms * part / n_parts);
    *end = part == n_parts - 1 ? n : first_at(offsets, n, start + atoms * (part + 1) / n_parts);
}
