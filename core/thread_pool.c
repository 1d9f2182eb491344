#include "thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* About 20-50 microseconds of polling before a worker goes to sleep. */
#define SPIN_ROUNDS 2000

struct mlff_thread_pool {
    int n_threads;
    pthread_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    atomic_uint_fast64_t generation; /* bumped for every job */
    atomic_int busy;                 /* workers still inside the current job */
    int stop;
    /* The current job. */
    mlff_range_fn fn;
    const void *task;
    void *extra;
    int64_t n, chunk;
    atomic_int_fast64_t next;
};

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void take_chunks(mlff_thread_pool *p)
{
    for (;;) {
        int64_t begin = atomic_fetch_add(&p->next, p->chunk);
        if (begin >= p->n)
            return;
        int64_t end = begin + p->chunk < p->n ? begin + p->chunk : p->n;
        p->fn(p->task, p->extra, begin, end);
    }
}

static void *worker_main(void *arg)
{
    mlff_thread_pool *p = arg;
    uint_fast64_t seen = 0;
    for (;;) {
        for (int spin = 0; spin < SPIN_ROUNDS && atomic_load(&p->generation) == seen; spin++)
            relax();
        pthread_mutex_lock(&p->lock);
        while (atomic_load(&p->generation) == seen && !p->stop)
            pthread_cond_wait(&p->wake, &p->lock);
        int stop = p->stop;
        pthread_mutex_unlock(&p->lock);
        if (stop)
            return NULL;
        seen = atomic_load(&p->generation);
        take_chunks(p);
        if (atomic_fetch_sub(&p->busy, 1) == 1) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

mlff_thread_pool *mlff_thread_pool_create(int n_threads)
{
    mlff_thread_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n_threads = n_threads > 0 ? n_threads : 1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->workers = calloc((size_t)p->n_threads, sizeof *p->workers);
    if (!p->workers) {
        mlff_thread_pool_destroy(p);
        return NULL;
    }
    for (int t = 1; t < p->n_threads; t++)
        if (pthread_create(&p->workers[t], NULL, worker_main, p) != 0) {
            p->n_threads = t; /* the ones started are joined by destroy */
            mlff_thread_pool_destroy(p);
            return NULL;
        }
    return p;
}

void mlff_thread_pool_destroy(mlff_thread_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int t = 1; p->workers && t < p->n_threads; t++)
        pthread_join(p->workers[t], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    free(p->workers);
    free(p);
}

void mlff_thread_pool_for(mlff_thread_pool *p, int64_t n, int64_t serial_below, mlff_range_fn fn,
                          const void *task, void *extra)
{
    if (n <= 0)
        return;
    if (!p || p->n_threads == 1 || n < serial_below) {
        fn(task, extra, 0, n);
        return;
    }
    p->fn = fn;
    p->task = task;
    p->extra = extra;
    p->n = n;
    /* A few chunks per thread balance uneven rows without much bookkeeping. */
    int64_t chunk = n / (4 * p->n_threads);
    p->chunk = chunk > 0 ? chunk : 1;
    atomic_store(&p->next, 0);
    atomic_store(&p->busy, p->n_threads - 1);
    pthread_mutex_lock(&p->lock);
    atomic_fetch_add(&p->generation, 1);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    take_chunks(p);
    for (int spin = 0; spin < SPIN_ROUNDS && atomic_load(&p->busy) > 0; spin++)
        relax();
    pthread_mutex_lock(&p->lock);
    while (atomic_load(&p->busy) > 0)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

int mlff_thread_pool_size(const mlff_thread_pool *p)
{
    return p ? p->n_threads : 1;
}

int mlff_available_threads(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

typedef struct row_gather {
    char *dst;
    const char *src;
    const int32_t *index;
    size_t bytes;
} row_gather;

static void gather_rows(const void *task, void *extra, int64_t k0, int64_t k1)
{
    (void)extra;
    const row_gather *g = task;
    for (int64_t k = k0; k < k1; k++)
        memcpy(g->dst + (size_t)k * g->bytes, g->src + (size_t)g->index[k] * g->bytes, g->bytes);
}

void mlff_thread_pool_gather(mlff_thread_pool *pool, void *dst, const void *src, const int32_t *index, int64_t n,
                             size_t bytes)
{
    const row_gather g = {dst, src, index, bytes};
    mlff_thread_pool_for(pool, n, MLFF_POOL_ATOMS_SERIAL_BELOW, gather_rows, &g, NULL);
}
